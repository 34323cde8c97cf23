"""One live connection to an MCP server, on the official SDK (`mcp`): a stdio child process,
or a streamable-HTTP or SSE endpoint.

`Connection.run` connects, shakes hands, lists the tools and resources, tells its owner it is
ready, then serves until the transport ends (the process exited, the stream closed) or its
owner cancels it. The SDK's stdio transport starts the process in its own process group and,
when the connection closes, closes its stdin, then terminates the whole group: nothing it
started outlives the connection.

A stdio server's stderr goes to a pipe of ours: the last STDERR_KEEP bytes are kept (a server
that floods it costs a bounded buffer) and are what a failure reports.
"""

from __future__ import annotations

import logging
import math
import os
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import anyio

from .config import ServerConfig

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import ClientSession

log = logging.getLogger(__name__)

#: Bytes of a stdio server's stderr kept: the tail, for error messages.
STDERR_KEEP = 16 * 1024
#: What an error message quotes of it.
STDERR_SHOWN_LINES = 20
STDERR_SHOWN_CHARS = 2000
STDERR_LINE_CHARS = 200
#: The longest a server may take to start: spawn or connect, handshake and listings.
START_SECONDS = 30.0
#: How long a failure waits for the last of a dead process's stderr.
STDERR_DRAIN_SECONDS = 1.0
#: The most tools and resources taken from one server (pages of its listings followed).
MAX_LISTED = 500


class StartFailed(Exception):
    """The server could not be started or reached; the message says why (with its stderr)."""


def import_sdk() -> None:
    """Load the SDK (half a second of imports): run it in a worker thread before the first use."""
    import httpx2  # noqa: F401
    import jsonschema  # noqa: F401
    import mcp  # noqa: F401
    import mcp.client.sse  # noqa: F401
    import mcp.client.stdio  # noqa: F401
    import mcp.client.streamable_http  # noqa: F401

    # a server that writes anything but JSON-RPC on stdout would have each line logged as an
    # error with its traceback: the call that fails says what happened, once
    logging.getLogger("mcp.client.stdio").setLevel(logging.CRITICAL)


class StderrTail:
    """What a child writes on stderr: its tail, bounded, and whether it has closed the pipe."""

    def __init__(self, keep: int = STDERR_KEEP):
        self.keep = keep
        self.total = 0
        self._tail = bytearray()
        self.closed = anyio.Event()

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self._tail += data
        if len(self._tail) > self.keep:
            del self._tail[: len(self._tail) - self.keep]

    def text(self) -> str:
        """The last lines, for a message ('' when it wrote nothing)."""
        text = self._tail.decode("utf-8", errors="replace")
        lines = [line if len(line) <= STDERR_LINE_CHARS else line[: STDERR_LINE_CHARS - 1] + "…" for line in text.rstrip().splitlines()]
        shown = "\n".join(lines[-STDERR_SHOWN_LINES:])[-STDERR_SHOWN_CHARS:]
        return shown

    async def pump(self, fd: int) -> None:
        """Read the pipe until the writers are gone (the process and what it started)."""
        os.set_blocking(fd, False)
        try:
            while True:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    await anyio.wait_readable(fd)
                    continue
                except OSError:
                    break
                if not data:
                    break
                self.feed(data)
                await anyio.lowlevel.checkpoint()  # a flood does not starve the loop
        finally:
            os.close(fd)
            self.closed.set()


class _Watched:
    """The transport's read stream, as the SDK's ReadStream protocol has it, that tells when it
    ends: the process exited, the connection closed."""

    def __init__(self, inner: Any, ended: anyio.Event):
        self._inner = inner
        self._ended = ended

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended.set()
            raise

    def __aiter__(self) -> "_Watched":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "_Watched":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class Connection:
    def __init__(self, config: ServerConfig, workspace: Path):
        self.config = config
        self.workspace = workspace
        self.session: ClientSession | None = None
        self.tools: list[types.Tool] = []
        self.resources: list[types.Resource] = []
        self.stderr = StderrTail() if config.transport == "stdio" else None
        #: The transport ended: the process exited, or the stream closed.
        self.ended = anyio.Event()
        #: The server said its tools or resources changed (listed again by `run`).
        self.lists_changed = anyio.Event()

    # ------------------------------------------------------------ running

    async def run(self, on_ready: Callable[[], None]) -> None:
        """Connect and serve: `on_ready()` once the tools are listed, then back when the
        transport ends. StartFailed when it could not start; cancelling it closes it."""
        from mcp import ClientSession

        ready = False
        failure: str | None = None
        # one scope around it all (the transport's task groups are entered inside), its deadline
        # lifted once the server is ready
        with anyio.CancelScope(deadline=anyio.current_time() + START_SECONDS) as starting:
            async with anyio.create_task_group() as pumps:  # a stdio server's stderr
                try:
                    async with AsyncExitStack() as stack:
                        try:
                            read, write = await self._open(stack, pumps)
                            session = await stack.enter_async_context(
                                ClientSession(_Watched(read, self.ended), write, message_handler=self._on_message)
                            )
                            await session.initialize()
                            self.session = session
                            await self._list()
                        except StartFailed as exc:
                            failure = self._with_stderr(str(exc))
                        except Exception as exc:
                            await self._stderr_drained()
                            failure = self._with_stderr(describe(exc))
                        if failure is None:
                            starting.deadline = math.inf
                            ready = True
                            on_ready()
                            await self._serve(on_ready)
                finally:
                    pumps.cancel_scope.cancel()  # the transport is closed: a grandchild may still hold the pipe
        self.session = None
        if failure is not None:  # raised here, out of the transport's task groups
            raise StartFailed(failure)
        if not ready and starting.cancelled_caught:
            raise StartFailed(self._with_stderr(f"it did not answer within {START_SECONDS:g} s of starting"))

    async def _serve(self, on_ready: Callable[[], None]) -> None:
        """Until the transport ends; the lists again whenever the server says they changed."""
        while not self.ended.is_set():
            async with anyio.create_task_group() as waiting:
                waiting.start_soon(_set_when, self.ended, waiting.cancel_scope)
                waiting.start_soon(_set_when, self.lists_changed, waiting.cancel_scope)
            if self.lists_changed.is_set() and not self.ended.is_set():
                self.lists_changed = anyio.Event()
                try:
                    with anyio.fail_after(START_SECONDS):
                        await self._list()
                except Exception as exc:
                    log.warning("MCP server %s: listing its tools again failed: %s", self.config.name, describe(exc))
                on_ready()

    async def _open(self, stack: AsyncExitStack, tg: anyio.abc.TaskGroup) -> tuple[Any, Any]:
        c = self.config
        if c.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            where = c.where(self.workspace)
            if not where.is_dir():
                raise StartFailed(f"its folder (cwd) {where} is not a directory")
            params = StdioServerParameters(command=c.command, args=list(c.args), env=dict(c.env) or None, cwd=where)
            reading, writing = os.pipe()
            try:
                with os.fdopen(writing, "wb", buffering=0, closefd=False) as errlog:
                    try:
                        streams = await stack.enter_async_context(stdio_client(params, errlog=errlog))  # type: ignore[arg-type]
                    except OSError as exc:
                        raise StartFailed(f"cannot run {c.command!r}: {exc.strerror or exc}") from None
            except BaseException:
                os.close(reading)
                raise
            finally:
                os.close(writing)  # the child has its own copy: the pipe ends when it exits
            assert self.stderr is not None
            tg.start_soon(self.stderr.pump, reading)
            return streams
        import httpx2

        headers = dict(c.headers)
        if c.transport == "sse":
            from mcp.client.sse import sse_client

            return await stack.enter_async_context(sse_client(c.url, headers=headers or None))
        from mcp.client.streamable_http import streamable_http_client

        client = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)))
        return await stack.enter_async_context(streamable_http_client(c.url, http_client=client))

    async def _list(self) -> None:
        """The server's tools and resources (what its capabilities offer), every page."""
        import mcp_types as types

        session = self.session
        assert session is not None
        caps = session.server_capabilities
        async def pages(list_page, items: str) -> list:
            """Every item of a paginated list, at most MAX_LISTED."""
            found: list = []
            cursor = None
            while len(found) < MAX_LISTED:
                page = await list_page(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
                found += getattr(page, items)
                cursor = page.next_cursor
                if not cursor:
                    break
            return found[:MAX_LISTED]

        self.tools = await pages(session.list_tools, "tools") if caps is None or caps.tools is not None else []
        self.resources = await pages(session.list_resources, "resources") if caps is not None and caps.resources is not None else []

    async def _on_message(self, message: Any) -> None:
        import mcp_types as types

        if isinstance(message, (types.ToolListChangedNotification, types.ResourceListChangedNotification)):
            self.lists_changed.set()  # listed again by run(): a request from here would block the reader

    # ------------------------------------------------------------ failures

    async def _stderr_drained(self) -> None:
        """The last of a dead process's stderr (bounded wait: a grandchild may hold the pipe)."""
        if self.stderr is not None:
            with anyio.move_on_after(STDERR_DRAIN_SECONDS):
                await self.stderr.closed.wait()

    def _with_stderr(self, reason: str) -> str:
        """The reason as a sentence, and the last lines the server wrote on stderr."""
        reason = sentence(reason)
        tail = self.stderr.text() if self.stderr is not None else ""
        return f"{reason} Its stderr ends with:\n{tail}" if tail else reason

    async def failure(self, reason: str) -> str:
        """`reason`, and what the server last wrote on stderr once it is all in."""
        await self._stderr_drained()
        return self._with_stderr(reason)


async def _set_when(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def sentence(text: str) -> str:
    """The text ending as a sentence does."""
    return text if text.endswith((".", "!", "?", ":")) or text.endswith("\n") else text + "."


def describe(exc: BaseException) -> str:
    """An exception of the SDK or the network as a short reason."""
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        if inner:
            return describe(inner[0])
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
    return text.splitlines()[0][:300]
