"""Reading JSON-RPC messages from a stream, robustly.

pygls's own loop drops a body it cannot decode without a word; here every bad frame gets an
answer: -32700 for JSON that does not parse, -32600 for a message that is not a request or
notification, -32602 for params that do not fit the method. The server keeps serving.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol

import cattrs
from pygls.exceptions import JsonRpcException

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024 * 1024


class AsyncReader(Protocol):
    async def readline(self) -> bytes: ...
    async def readexactly(self, n: int) -> bytes: ...


def send_error(protocol: Any, msg_id: Any, code: int, message: str) -> None:
    protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def _describe(exc: BaseException) -> str:
    cause = exc.__cause__ or exc
    if isinstance(cause, cattrs.ClassValidationError):
        return "; ".join(m.replace("@ .", "@ ") for m in cattrs.transform_error(cause, path=""))
    return str(cause) or type(cause).__name__


def handle_body(protocol: Any, body: bytes) -> None:
    """Decode one message and hand it to the pygls protocol; answer what cannot be handled."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        log.warning("parse error: %s", exc)
        send_error(protocol, None, -32700, f"Parse error: {exc}")
        return
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        send_error(protocol, data.get("id") if isinstance(data, dict) else None, -32600,
                   "Invalid Request: expected a JSON-RPC 2.0 object")
        return
    msg_id, method = data.get("id"), data.get("method")
    is_request = "id" in data and method is not None
    if method is not None and not isinstance(method, str):
        send_error(protocol, msg_id, -32600, "Invalid Request: 'method' must be a string")
        return
    try:
        message = protocol.structure_message(data)
    except (JsonRpcException, Exception) as exc:  # params that do not fit the method's type
        if is_request:
            send_error(protocol, msg_id, -32602, f"Invalid params for {method}: {_describe(exc)}")
        else:
            log.warning("dropping %s with invalid params: %s", method, _describe(exc))
        return
    try:
        protocol.handle_message(message)
    except (SystemExit, KeyboardInterrupt):
        raise
    except Exception:
        log.exception("failed to handle %s", method)
        if is_request:
            send_error(protocol, msg_id, -32603, f"Internal error while handling {method}")


async def read_frames(reader: AsyncReader, protocol: Any) -> None:
    """Content-Length framed messages until end of stream."""
    while True:
        length: int | None = None
        while True:
            line = await reader.readline()
            if not line:
                return  # end of stream
            if line in (b"\r\n", b"\n"):
                break
            name, sep, value = line.decode("ascii", errors="replace").partition(":")
            if not sep:
                log.warning("ignoring malformed header line %r", line[:80])
                continue
            if name.strip().lower() == "content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    log.warning("ignoring bad Content-Length %r", value.strip()[:40])
        if length is None or length < 0 or length > MAX_BODY:
            if length is not None:
                log.warning("refusing a frame of %s bytes", length)
            send_error(protocol, None, -32700, "Parse error: a frame without a valid Content-Length header")
            continue
        body = await reader.readexactly(length) if length else b""
        if len(body) < length:
            return  # stream ended inside a frame
        handle_body(protocol, body)
