"""Running a server: over stdio (what editors use), and what every transport shares:
logging to the client, the root task group, handing messages over. The network listeners
(TCP, WebSocket) are in listen.py, loaded only for them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Any, AsyncIterator, Iterator

import anyio
from lsprotocol import types as lsp
from pygls.io_ import StdoutWriter

from .server import ModusServer
from .transport import CHUNK, dispatch, read_messages

log = logging.getLogger(__name__)

_attended: ContextVar[ModusServer | None] = ContextVar("modus_attended", default=None)


class ClientLogHandler(logging.Handler):
    """Log records of the server, also sent to the client as `window/logMessage`: only those
    of its own connection (tasks inherit the context), never another connection's."""

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
        if self._busy or self.server.session is None or _attended.get() is not self.server:
            return  # never recurse; nothing before initialize; nothing of other connections
        self._busy = True
        try:
            kind = self.LEVELS.get(record.levelno - record.levelno % 10, lsp.MessageType.Log)
            self.server.window_log_message(lsp.LogMessageParams(type=kind, message=self.format(record)))
        except Exception:
            pass
        finally:
            self._busy = False


def configure_logging(level: str) -> None:
    """Warnings and errors go to stderr (the level given lowers it); the server's own records
    from INFO up also go to the attached client as window/logMessage (see `attend`)."""
    root = logging.getLogger()
    root.setLevel(logging.WARNING)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(min(logging.WARNING, getattr(logging, level.upper(), logging.INFO)))
    stderr.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(stderr)
    logging.getLogger("server").setLevel(min(logging.INFO, getattr(logging, level.upper(), logging.INFO)))


@contextmanager
def _client_logs(server: ModusServer) -> Iterator[None]:
    ours = logging.getLogger("server")
    handler = ClientLogHandler(server)
    ours.addHandler(handler)
    try:
        yield
    finally:
        ours.removeHandler(handler)


@asynccontextmanager
async def _root(server: ModusServer):
    async with anyio.create_task_group() as tg:
        server.task_group = tg
        try:
            yield
        finally:
            tg.cancel_scope.cancel()


async def attend(server: ModusServer, messages: AsyncIterator[Any]) -> int | None:
    """Hand every message to the server until the stream ends (None) or `exit` arrives (its exit
    code). Then the server is done for: its session closed, its pending requests cancelled."""
    _attended.set(server)
    try:
        with _client_logs(server):
            async with _root(server):
                try:
                    async for message in messages:
                        dispatch(server.protocol, message)
                except SystemExit as exc:  # pygls's answer to `exit`
                    return int(exc.code or 0)
        return None
    finally:
        server.protocol.cancel_pending()
        server.shutdown()


def run_main(main) -> int:
    """Run a server's main coroutine to its end: its exit code (130 when interrupted)."""
    try:
        return asyncio.run(main) or 0
    except KeyboardInterrupt:
        return 130


# ---------------------------------------------------------------- stdio


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


class _Outlet:
    """The client's end of stdout. Once a write fails (the editor has gone: its pipe is closed),
    nothing more is written and the failure is logged once; the work under way goes on until the
    input ends. (pygls would raise into whatever was publishing, failing a turn, and try to tell
    the client it cannot reach that it cannot reach it.)"""

    def __init__(self, writer: StdoutWriter):
        self.writer = writer
        self.gone = False

    def write(self, data: bytes) -> None:
        if self.gone:
            return
        try:
            self.writer.write(data)
        except (OSError, ValueError) as exc:  # a broken pipe; a closed file
            self.gone = True
            log.warning("the client has gone (%s): nothing more is sent to it", exc)

    def close(self) -> None:
        self.writer.close()


def serve_stdio() -> int:
    server = ModusServer()
    server.protocol.set_writer(_Outlet(StdoutWriter(sys.stdout.buffer)))
    stdin = sys.stdin.buffer.fileno()
    sys.stdout = sys.stderr  # nothing else may write to the LSP channel

    async def main():
        return await attend(server, read_messages(_Stdin(stdin).read))

    return run_main(main())
