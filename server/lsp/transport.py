"""Reading JSON-RPC messages from a stream, robustly.

pygls's own loop drops a body it cannot decode without a word; here every bad frame gets an
answer: -32700 for a frame or JSON that does not parse, -32600 for a message that is not a
request or notification, -32602 for params that do not fit the method. The server keeps
serving, and after a frame with a wrong `Content-Length` the stream finds its feet again on the
next header. What no part of the server may meet (nesting deeper than server.inbound.MAX_DEPTH,
lone surrogates) is taken out here too, before pygls reads a message (see server/inbound.py).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable, Protocol

import cattrs
from pygls.exceptions import JsonRpcException

from .. import inbound
from ..inbound import valid_id

log = logging.getLogger(__name__)

#: A message of 10 images of 5 MiB each (PROTOCOL.md, "Images") is about 67 MiB in base64: room for it.
MAX_BODY = 80 * 1024 * 1024
MAX_HEADERS = 64 * 1024  # a header block longer than this is garbage
CHUNK = 64 * 1024

# A raw `Content-Length: <digits>` line never occurs inside a valid JSON body (JSON strings hold
# no raw newline), so finding one is finding the start of a frame.
HEADER = re.compile(rb"Content-Length[ \t]*:[ \t]*(\d+)[ \t]*\r?\n", re.IGNORECASE)
FIELDS = re.compile(rb"(?:[!-9;-~]+:[^\r\n]*\r?\n)*")  # well-formed header lines
END_OF_HEADERS = re.compile(rb"\n\r?\n")
OVERLAP = 256  # bytes searched again, so that a header cut between two chunks is still found


class Receiver(Protocol):
    """The pygls protocol that messages are handed to (server.py's ModusProtocol)."""

    def structure_message(self, data: dict) -> Any: ...
    def handle_message(self, message: Any) -> None: ...
    def send_payload(self, data: dict) -> None: ...


@dataclass(frozen=True)
class ParseError:
    """A frame that cannot be a message: answered -32700."""

    reason: str


@dataclass(frozen=True)
class Unfit:
    """A message that decoded, but must not be handled as it is: nested too deeply, or with a lone
    surrogate in a string (`dispatch` answers it, drops it or repairs it)."""

    message: Any
    flaw: inbound.Flaw


def decode(body: bytes) -> Any:
    """The JSON value of a body; a ParseError when it has none, an Unfit when it has a flaw."""
    try:
        message, flaw = inbound.decode(body)
    except ValueError as exc:  # not UTF-8, not JSON, or too deep to decode
        return ParseError(str(exc))
    return message if flaw is None else Unfit(message, flaw)


class Frames:
    """Content-Length framing without I/O: feed it bytes, take out the decoded messages (a JSON
    value, or a ParseError for a bad frame).

    A bad frame never costs more than itself: a body whose declared length is too large is cut at
    the next header found inside it, and a body that does not parse (declared length too small,
    or too large by less than a header) is searched again from its start for the next header.
    """

    def __init__(self, max_body: int = MAX_BODY) -> None:
        #: The largest body accepted; a network connection starts lower, until it authenticates.
        self.max_body = max_body
        self._buf = bytearray()
        self._length: int | None = None  # of the body being read; None while reading headers
        self._scanned = 0  # bytes of that body already searched for a header
        self._skipping = False  # dropping bytes up to the next header
        self._skipped = 0
        self._out: list[Any] = []

    def feed(self, data: bytes) -> list[Any]:
        self._buf += data
        while self._skip() if self._skipping else self._headers() if self._length is None else self._body():
            pass
        out, self._out = self._out, []
        return out

    def _bad(self, reason: str, resync: bool) -> bool:
        log.warning("bad frame: %s", reason)
        self._out.append(ParseError(reason))
        self._skipping = resync
        return True

    def _skip(self) -> bool:
        found = HEADER.search(self._buf)
        drop = found.start() if found else max(0, len(self._buf) - OVERLAP)
        del self._buf[:drop]
        self._skipped += drop
        if not found:
            return False
        if self._skipped:
            log.warning("skipped %d bytes up to the next header", self._skipped)
        self._skipping, self._skipped = False, 0
        return True

    def _headers(self) -> bool:
        buf = self._buf
        if buf.startswith(b"\n") or buf.startswith(b"\r\n"):
            del buf[: buf.index(b"\n") + 1]  # a stray blank line between frames
            return True
        end = END_OF_HEADERS.search(buf)
        if end is None:
            if len(buf) > MAX_HEADERS:
                return self._bad(f"no end of headers in {len(buf)} bytes", resync=True)
            return False
        block = bytes(buf[: end.end()])
        del buf[: end.end()]
        header = HEADER.search(block)
        if header is None:
            return self._bad("a frame without a valid Content-Length header", resync=False)
        if not FIELDS.fullmatch(block, 0, header.start()):
            log.warning("skipped %d bytes before a header", header.start())
        length = int(header.group(1))
        if length > self.max_body:
            return self._bad(f"a body of {length} bytes is more than the limit of {self.max_body}", resync=True)
        self._length, self._scanned = length, 0
        return True

    def _body(self) -> bool:
        buf, length = self._buf, self._length
        assert length is not None
        if len(buf) < length:
            header = HEADER.search(buf, max(0, self._scanned - OVERLAP))
            if header is None:
                self._scanned = len(buf)
                return False
            del buf[: header.start()]
            self._length = None
            return self._bad(f"Content-Length {length} is more than the body: a header follows it", resync=False)
        self._length = None
        message = decode(bytes(buf[:length]))
        if isinstance(message, ParseError):  # search again from the body's start for the next header
            return self._bad(message.reason, resync=True)
        del buf[:length]
        self._out.append(message)
        return True


async def read_messages(read: Callable[[int], Awaitable[bytes]], frames: Frames | None = None) -> AsyncIterator[Any]:
    """The messages of a byte stream, until it ends (`read` returns b"")."""
    frames = frames or Frames()
    while chunk := await read(CHUNK):
        for message in frames.feed(chunk):
            yield message


def error(msg_id: Any, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def encode(message: dict, headers: bool = True) -> bytes:
    """One frame (`headers`) or one WebSocket message."""
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body) if headers else body


def send_error(protocol: Receiver, msg_id: Any, code: int, message: str) -> None:
    protocol.send_payload(error(msg_id, code, message))


def _describe(exc: BaseException) -> str:
    cause = exc.__cause__ or exc
    if isinstance(cause, cattrs.ClassValidationError):
        return "; ".join(m.replace("@ .", "@ ") for m in cattrs.transform_error(cause, path=""))
    return str(cause) or type(cause).__name__


def _unfit(protocol: Receiver, unfit: Unfit) -> Any:
    """Answer, fail or drop a message with a flaw (see inbound.verdict); or the message to handle
    in its place, its lone surrogates replaced."""
    verdict = inbound.verdict(unfit.message, unfit.flaw)
    log.warning("%s", verdict.text)
    if verdict.action == "answer":
        send_error(protocol, verdict.msg_id, verdict.code, verdict.text)
    elif verdict.action == "fail":  # the request waiting for this answer gets an error instead
        protocol.handle_message(protocol.structure_message(error(verdict.msg_id, verdict.code, verdict.text)))
    elif verdict.action == "go on":
        return verdict.message
    return None


def dispatch(protocol: Receiver, data: Any) -> None:
    """Hand one decoded message to the pygls protocol; answer what cannot be handled.
    The `exit` notification raises SystemExit through here."""
    if isinstance(data, ParseError):
        send_error(protocol, None, -32700, f"Parse error: {data.reason}")
        return
    if isinstance(data, Unfit):
        data = _unfit(protocol, data)
        if data is None:
            return
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        msg_id = data.get("id") if isinstance(data, dict) else None
        send_error(protocol, msg_id if valid_id(msg_id) else None, -32600,
                   "Invalid Request: expected a JSON-RPC 2.0 object")
        return
    msg_id, method = data.get("id"), data.get("method")
    is_request = "id" in data and method is not None
    if is_request and not valid_id(msg_id):
        send_error(protocol, None, -32600, "Invalid Request: 'id' must be an integer or a string")
        return
    if msg_id is not None and not valid_id(msg_id):  # a response that cannot answer anything of ours
        log.warning("dropping a response whose id is neither an integer nor a string")
        return
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
