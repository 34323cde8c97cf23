"""`modus acp`: the agent over stdio, newline-delimited JSON-RPC (the package's agent side).

The transport is ours so that what is not a JSON-RPC message is answered (-32700 for a line that
is not JSON, -32600 for JSON that is not a request), where the package would drop it silently,
so that an invalid-params answer names the bad fields in its message, and so that what no part
of the agent may meet (nesting deeper than server.inbound.MAX_DEPTH, lone surrogates) is taken
out before the package reads a message (see server/inbound.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

import anyio

from .. import inbound
from . import hello

log = logging.getLogger(__name__)

#: A message longer than this is refused (and read to its end, so the next one is read whole).
MAX_MESSAGE_BYTES = 80 * 1024 * 1024  # room for a prompt of 10 images of 5 MiB each, in base64


class LineTransport:
    """JSON-RPC messages as lines of JSON, over asyncio streams (acp's Transport protocol)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer
        #: messages read ahead and handed back (see `unread`), taken before the stream's next
        self._ahead: list[dict[str, Any]] = []

    def unread(self, message: dict[str, Any]) -> None:
        """The next `receive` returns this message."""
        self._ahead.append(message)

    async def send(self, message: dict[str, Any]) -> None:
        """Written at once (the order of the calls is the order on the wire), then drained."""
        error = message.get("error")
        if isinstance(error, dict):
            message = {**message, "error": _named(error)}
        self.writer.write(json.dumps(message, separators=(",", ":"), default=str).encode() + b"\n")
        await self.writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        if self._ahead:
            return self._ahead.pop()
        while True:
            line = await self._line()
            if line is None:
                return None
            if not line.strip():
                continue
            try:
                message, flaw = inbound.decode(line)
            except inbound.TooDeep as exc:
                await self._refuse(None, -32700, f"Parse error: {exc}")
                continue
            except ValueError as exc:
                await self._refuse(None, -32700, f"Parse error: the line is not JSON ({exc})")
                continue
            if flaw is not None:
                message = await self._unfit(message, flaw)
                if message is None:
                    continue
            why = _not_a_message(message)
            if why is not None:
                await self._refuse(message.get("id") if isinstance(message, dict) else None, -32600, f"Invalid request: {why}")
                continue
            return message

    async def _line(self) -> bytes | None:
        """The next line; None at the end of the input. A line over the limit is refused."""
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial or None
        except asyncio.LimitOverrunError as exc:
            dropped = 0
            while True:  # drop the message to its end
                await self.reader.readexactly(exc.consumed)
                dropped += exc.consumed
                try:
                    dropped += len(await self.reader.readuntil(b"\n"))
                    break
                except asyncio.IncompleteReadError:
                    return None
                except asyncio.LimitOverrunError as more:
                    exc = more
            await self._refuse(None, -32600, f"Invalid request: a message of {dropped} bytes, more than {MAX_MESSAGE_BYTES}")
            return b""

    async def _unfit(self, message: Any, flaw: inbound.Flaw) -> dict[str, Any] | None:
        """Answer or drop a message with a flaw (see inbound.verdict); or the message to take in
        its place: its lone surrogates replaced, or an error for the request a response answers."""
        verdict = inbound.verdict(message, flaw, invalid_params="Invalid params")
        if verdict.action == "answer":
            await self._refuse(verdict.msg_id, verdict.code, verdict.text)
            return None
        log.warning("%s", verdict.text)
        if verdict.action == "fail":
            return {"jsonrpc": "2.0", "id": verdict.msg_id, "error": {"code": verdict.code, "message": verdict.text}}
        return verdict.message if verdict.action == "go on" else None

    async def _refuse(self, msg_id: Any, code: int, text: str) -> None:
        log.warning("%s", text)
        msg_id = msg_id if inbound.valid_id(msg_id) else None
        await self.send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": text}})

    async def close(self) -> None:
        try:
            self.writer.close()
        except Exception:  # stdout already gone
            pass


def _not_a_message(message: Any) -> str | None:
    if not isinstance(message, dict):
        return f"expected a JSON object, got {type(message).__name__}"
    if message.get("jsonrpc") != "2.0":
        return "'jsonrpc' must be \"2.0\""
    if "method" in message and not isinstance(message["method"], str):
        return "'method' must be a string"
    if "method" not in message and "id" not in message:
        return "neither a request, a notification nor a response"
    if "params" in message and not isinstance(message["params"], (dict, list, type(None))):
        return "'params' must be an object"
    return None


def _named(error: dict[str, Any]) -> dict[str, Any]:
    """-32602 with pydantic's errors in its data: the message names each bad field, and the data
    keeps what is safe to send back (where, why; not the input)."""
    data = error.get("data")
    if error.get("code") != -32602 or not isinstance(data, dict) or not isinstance(data.get("errors"), list):
        return error
    problems = [e for e in data["errors"] if isinstance(e, dict)]
    named = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())) or 'params'}: {e.get('msg')}" for e in problems)
    kept = [{"loc": e.get("loc"), "msg": e.get("msg"), "type": e.get("type")} for e in problems]
    return {**error, "message": f"Invalid params: {named}", "data": {"errors": kept}}


def configure_logging(level: str) -> None:
    """Log lines go to stderr (stdout is the protocol): Zed and JetBrains show an agent's stderr."""
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("server").setLevel(getattr(logging, level.upper(), logging.INFO))


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, global_modes: Path | None = None) -> None:
    """Answer one client until its input ends; then every session stops and closes.

    The client's `initialize` comes first and is answered at once (hello.py), while the ACP
    package and the agent load in a worker thread: that takes most of a second, which the
    client would otherwise wait for before anything else."""
    from ..startup import started

    transport = LineTransport(reader, writer)
    started()
    async with anyio.create_task_group() as tg:
        loading = _Loading(tg)
        first = await transport.receive()
        version = hello.early(first) if first is not None else None
        if version is not None:
            await transport.send({"jsonrpc": "2.0", "id": first["id"], "result": hello.initialize_result(version)})
        elif first is not None:
            transport.unread(first)  # answered by the package, with its own checks
        AgentSideConnection, ModusAgent = await loading.done()
        agent = ModusAgent(tg, global_modes)
        if version is not None:
            await agent.initialized_early(first["params"])
        conn = AgentSideConnection(agent, transport, listening=False)
        try:
            if first is not None:
                await conn.listen()
        finally:
            await agent.close_all()
            with anyio.CancelScope(shield=True):
                await conn.close()
            tg.cancel_scope.cancel()


class _Loading:
    """The ACP package and the agent, imported in a worker thread from the start."""

    def __init__(self, tg: "anyio.abc.TaskGroup"):
        self._loaded = anyio.Event()
        self._error: BaseException | None = None
        tg.start_soon(self._load)

    async def _load(self) -> None:
        try:
            await anyio.to_thread.run_sync(_import_agent)
        except BaseException as exc:  # noqa: BLE001 - raised where it is awaited
            self._error = exc
        finally:
            self._loaded.set()

    async def done(self) -> tuple[Any, Any]:
        await self._loaded.wait()
        if self._error is not None:
            raise self._error
        return _import_agent()


def _import_agent() -> tuple[Any, Any]:
    from acp.agent.connection import AgentSideConnection

    from .agent import ModusAgent

    return AgentSideConnection, ModusAgent


async def _stdio_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin and stdout as asyncio streams (POSIX pipes; elsewhere, the ACP package's)."""
    if sys.platform == "win32":
        from acp.stdio import stdio_streams

        return await stdio_streams(limit=MAX_MESSAGE_BYTES)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


def serve_stdio(log_level: str = "info") -> int:
    configure_logging(log_level)

    async def main() -> None:
        reader, writer = await _stdio_streams()
        sys.stdout = sys.stderr  # nothing else may write to the protocol's channel
        await serve(reader, writer)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        return 130
    return 0
