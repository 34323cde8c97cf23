"""Running the server over stdio, TCP or WebSocket, inside one root task group."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from contextlib import asynccontextmanager

import anyio
from lsprotocol import types as lsp
from pygls.io_ import StdoutWriter, WebSocketWriter

from .server import ModusServer
from .transport import CHUNK, decode, dispatch, read_messages

log = logging.getLogger(__name__)


class ClientLogHandler(logging.Handler):
    """Log records of the server, also sent to the client as `window/logMessage`."""

    LEVELS = {
        logging.ERROR: lsp.MessageType.Error,
        logging.WARNING: lsp.MessageType.Warning,
        logging.INFO: lsp.MessageType.Info,
        logging.DEBUG: lsp.MessageType.Log,
    }

    def __init__(self, server: ModusServer):
        super().__init__(logging.INFO)
        self.server = server
        self._busy = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._busy or self.server.session is None:
            return  # never recurse; nothing before initialize
        self._busy = True
        try:
            kind = self.LEVELS.get(record.levelno - record.levelno % 10, lsp.MessageType.Log)
            self.server.window_log_message(lsp.LogMessageParams(type=kind, message=self.format(record)))
        except Exception:
            pass
        finally:
            self._busy = False


def configure_logging(server: ModusServer, level: str) -> None:
    """Warnings and errors go to stderr (the level given lowers it); the server's own records
    from INFO up also go to the client as window/logMessage."""
    root = logging.getLogger()
    root.setLevel(logging.WARNING)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(min(logging.WARNING, getattr(logging, level.upper(), logging.INFO)))
    stderr.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(stderr)
    ours = logging.getLogger("server")
    ours.setLevel(min(logging.INFO, getattr(logging, level.upper(), logging.INFO)))
    ours.addHandler(ClientLogHandler(server))


@asynccontextmanager
async def _root(server: ModusServer):
    async with anyio.create_task_group() as tg:
        server.task_group = tg
        try:
            yield
        finally:
            tg.cancel_scope.cancel()


async def _serve_stream(server: ModusServer, read) -> None:
    async with _root(server):
        async for message in read_messages(read):
            dispatch(server.protocol, message)


def _run(main) -> int:
    try:
        asyncio.run(main)
    except (SystemExit, BaseExceptionGroup) as exc:  # the `exit` notification, maybe inside a task group
        exit_ = exc
        while isinstance(exit_, BaseExceptionGroup):
            exit_ = next((e for e in exit_.exceptions if isinstance(e, (SystemExit, BaseExceptionGroup))), None)
        if not isinstance(exit_, SystemExit):
            raise
        return int(exit_.code or 0)
    except KeyboardInterrupt:
        return 130
    return 0


class _Stdin:
    """stdin read by a daemon thread, chunks handed to the loop: shutdown never waits on a read."""

    def __init__(self, fd: int):
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._pump, args=(fd, loop), name="modus-stdin", daemon=True).start()

    def _pump(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            try:
                chunk = os.read(fd, CHUNK)
            except OSError:
                chunk = b""
            try:
                loop.call_soon_threadsafe(self._chunks.put_nowait, chunk)
            except RuntimeError:  # the loop is closed
                return
            if not chunk:
                return

    async def read(self, n: int) -> bytes:
        return await self._chunks.get()


def serve_stdio(server: ModusServer) -> int:
    writer = StdoutWriter(sys.stdout.buffer)
    stdin = sys.stdin.buffer.fileno()
    sys.stdout = sys.stderr  # nothing else may write to the LSP channel
    server.protocol.set_writer(writer)

    async def main():
        await _serve_stream(server, _Stdin(stdin).read)

    return _run(main())


def serve_tcp(server: ModusServer, host: str, port: int) -> int:
    async def main():
        done = asyncio.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
            server.protocol.set_writer(writer)
            try:
                await _serve_stream(server, reader.read)
            finally:
                done.set()

        listener = await asyncio.start_server(connection, host, port)
        log.warning("Modus listening on tcp://%s:%d", host, port)
        async with listener:
            await done.wait()

    return _run(main())


def serve_ws(server: ModusServer, host: str, port: int) -> int:
    from websockets.asyncio.server import serve
    from websockets.exceptions import ConnectionClosed

    async def main():
        done = asyncio.Event()

        async def connection(websocket):
            server.protocol.set_writer(WebSocketWriter(websocket), include_headers=False)
            try:
                async with _root(server):
                    while True:
                        try:
                            data = await websocket.recv(decode=False)
                        except ConnectionClosed:
                            break
                        dispatch(server.protocol, decode(data))
            finally:
                done.set()

        async with serve(connection, host, port):
            log.warning("Modus listening on ws://%s:%d", host, port)
            await done.wait()

    return _run(main())
