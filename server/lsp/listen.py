"""The network listeners: TCP and WebSocket, on loopback unless told otherwise, for one client
at a time, which must present the server's token. Each attached client gets a new ModusServer,
and when it leaves the server waits for the next one.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import os
import secrets
import signal
from contextlib import contextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any, AsyncIterator, Iterator, Protocol

from pygls.io_ import WebSocketWriter

from ..userdirs import state_dir
from .run import attend, run_main
from .server import ModusServer
from .transport import MAX_BODY, Frames, decode, encode, error, read_messages, valid_id

log = logging.getLogger(__name__)

AUTH_DEADLINE = 10.0  # seconds a connection has to authenticate before it is closed
#: Until it authenticates, a connection may send no larger message (an `initialize` is a few
#: KiB), and no more than this many connections wait to authenticate: a local user without the
#: token can make the server hold little.
PRE_AUTH_BODY = 1024 * 1024
MAX_WAITING = 16
SUBPROTOCOL = "modus.token."
BUSY = "Modus already serves a client on this address"
REFUSED = -32000  # the error code of an unauthorized or second client


# ---------------------------------------------------------------- the token


@dataclass
class Token:
    """The secret a network client presents. `source` tells the user where it is (a file, an
    environment variable), never the token itself; None: generated, written to a token file."""

    value: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    source: str | None = None

    def matches(self, offered: Any) -> bool:
        return isinstance(offered, str) and hmac.compare_digest(
            offered.encode("utf-8", "surrogatepass"), self.value.encode("utf-8", "surrogatepass"))


def token_path(transport: str, port: int) -> Path:
    return state_dir() / f"{transport}-{port}.token"


@contextmanager
def _published(token: Token, transport: str, port: int) -> Iterator[str]:
    """Where the user finds the token; a generated one is written to a file only this user can
    read, removed when the server stops."""
    if token.source is not None:
        yield token.source
        return
    path = token_path(transport, port)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    path.unlink(missing_ok=True)  # left by a server that could not clean up
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as f:
        f.write(token.value)
    try:
        yield str(path)
    finally:
        path.unlink(missing_ok=True)


# ---------------------------------------------------------------- one client at a time


class Link(Protocol):
    """A network connection, seen by the Listener."""

    authenticated: bool  # by its handshake
    headers: bool  # messages are Content-Length framed
    writer: Any  # for pygls
    hint: str  # how a client passes the token on this transport

    def messages(self) -> AsyncIterator[Any]: ...
    def trust(self) -> None:
        """Authenticated: messages up to MAX_BODY from now on (PRE_AUTH_BODY before)."""
    async def send(self, data: bytes) -> None: ...
    async def close(self) -> None: ...
    def abort(self) -> None: ...


_END = object()
HOW = "pass the server's token as initializationOptions.token in 'initialize'"


def request_id(message: Any) -> Any:
    msg_id = message.get("id") if isinstance(message, dict) else None
    return msg_id if valid_id(msg_id) else None


class Listener:
    """Serves one authenticated client at a time, each with a new ModusServer. A connection
    authenticates at its handshake or with its first message; until then it holds no slot, and
    it has `deadline` seconds to do so."""

    def __init__(self, token: Token, deadline: float = AUTH_DEADLINE):
        self.token = token
        self.deadline = deadline
        self.busy = False
        self.exit_code: int | None = None
        self.stopped = asyncio.Event()
        self.waiting = 0  # connections that have not authenticated yet
        self._links: dict[asyncio.Task, Link] = {}

    def refusal(self, first: Any, hint: str) -> str | None:
        """Why a connection's first message does not authenticate it; None when it does (and the
        token is taken out of the message, so that it is never logged)."""
        params = first.get("params") if isinstance(first, dict) and first.get("method") == "initialize" else None
        options = params.get("initializationOptions") if isinstance(params, dict) else None
        if not isinstance(params, dict):
            reason = "the first message must be 'initialize'"
        elif not isinstance(options, dict) or "token" not in options:
            reason = "no token in 'initialize'"
        elif not self.token.matches(options.pop("token")):
            reason = "wrong token"
        else:
            return None
        return f"Unauthorized: {reason}; {hint}. The server names the file that holds it when it starts listening."

    async def serve_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self.serve(_TcpLink(reader, writer))

    async def serve_ws(self, connection) -> None:
        await self.serve(_WsLink(connection))

    async def serve(self, link: Link) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._links[task] = link
        try:
            await self._serve(link)
        finally:
            del self._links[task]
            await link.close()

    async def _serve(self, link: Link) -> None:
        messages = link.messages()
        first: list[Any] = []
        if not link.authenticated:
            if self.waiting >= MAX_WAITING:
                log.warning("closing a connection: %d others are waiting to authenticate", self.waiting)
                return
            self.waiting += 1
            try:
                async with asyncio.timeout(self.deadline):
                    message = await anext(messages, _END)
            except TimeoutError:
                log.info("closing a connection that did not authenticate within %g s", self.deadline)
                return
            finally:
                self.waiting -= 1
            if message is _END:
                return
            if problem := self.refusal(message, link.hint):
                log.warning("refused a connection: %s", problem.partition(";")[0])
                await link.send(encode(error(request_id(message), REFUSED, problem), link.headers))
                return
            first.append(message)
        link.trust()
        if self.busy:
            log.warning("refused a second client: %s", BUSY)
            await link.send(encode(error(None, REFUSED, BUSY), link.headers))
            return
        self.busy = True
        try:
            log.info("a client attached")
            server = ModusServer()
            server.protocol.set_writer(link.writer, include_headers=link.headers)
            code = await attend(server, _chain(first, messages))
        finally:
            self.busy = False
        if code is None:
            log.info("the client left; waiting for the next one")
        else:
            self.exit_code = code
            self.stopped.set()

    async def close_all(self) -> None:
        for link in self._links.values():
            link.abort()
        await asyncio.gather(*self._links, return_exceptions=True)


async def _chain(first: list[Any], rest: AsyncIterator[Any]) -> AsyncIterator[Any]:
    for message in first:
        yield message
    async for message in rest:
        yield message


def _warn_if_exposed(sockets) -> None:
    for sock in sockets:
        host = sock.getsockname()[0]
        if not ipaddress.ip_address(host.partition("%")[0]).is_loopback:
            log.warning("listening on %s, which is not a loopback address: other machines can connect "
                        "(they still need the token)", host)


async def _listen(listener: Listener, transport: str, server) -> int:
    """Announce the listener, serve until `exit` (or SIGTERM), then close every connection."""
    sockets = list(server.sockets)
    _warn_if_exposed(sockets)
    host, port = sockets[0].getsockname()[:2]
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, listener.stopped.set)
    with _published(listener.token, transport, port) as where:
        log.warning("Modus listening on %s://%s:%d (token: %s)", transport, host, port, where)
        try:
            await listener.stopped.wait()
        finally:
            await listener.close_all()
            server.close()
            await server.wait_closed()
    return listener.exit_code or 0


# ---------------------------------------------------------------- TCP


class _TcpLink:
    authenticated = False
    headers = True
    hint = HOW

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.frames = Frames(PRE_AUTH_BODY)

    def messages(self) -> AsyncIterator[Any]:
        return read_messages(self.reader.read, self.frames)

    def trust(self) -> None:
        self.frames.max_body = MAX_BODY

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass

    def abort(self) -> None:
        self.writer.transport.abort()


def serve_tcp(host: str, port: int, token: Token) -> int:
    async def main():
        listener = Listener(token)
        server = await asyncio.start_server(listener.serve_tcp, host, port)
        return await _listen(listener, "tcp", server)

    return run_main(main())


# ---------------------------------------------------------------- WebSocket


class _WsWriter(WebSocketWriter):
    def close(self) -> None:
        """Nothing to wait for: the connection closes when its handler returns. (An awaitable
        here would make pygls raise `exit`'s SystemExit outside the connection's handler.)"""


def _handshake_token(connection) -> str | None:
    """The token a WebSocket client gave at the handshake: `Authorization: Bearer <token>`, or
    the subprotocol `modus.token.<token>` (all a browser can set)."""
    scheme, _, value = connection.request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    subprotocol = connection.subprotocol or ""
    return subprotocol[len(SUBPROTOCOL):] if subprotocol.startswith(SUBPROTOCOL) else None


class _WsLink:
    headers = False
    hint = f"{HOW}, or at the handshake as 'Authorization: Bearer <token>' or subprotocol '{SUBPROTOCOL}<token>'"

    def __init__(self, connection):
        self.connection = connection
        self.writer = _WsWriter(connection)
        self.authenticated = _handshake_token(connection) is not None  # a wrong one got 401
        if not self.authenticated:  # websockets refuses a larger message (1009) and closes
            connection.protocol.max_message_size = PRE_AUTH_BODY

    async def messages(self) -> AsyncIterator[Any]:
        from websockets.exceptions import ConnectionClosed

        while True:
            try:
                data = await self.connection.recv(decode=False)
            except ConnectionClosed:
                return
            yield decode(data)

    def trust(self) -> None:
        self.connection.protocol.max_message_size = MAX_BODY

    async def send(self, data: bytes) -> None:
        await self.connection.send(data)

    async def close(self) -> None:
        await self.connection.close()

    def abort(self) -> None:
        self.connection.transport.abort()


def serve_ws(host: str, port: int, token: Token, origins: list[str] = ()) -> int:
    from websockets.asyncio.server import serve

    def select_subprotocol(connection, offered):
        return next((p for p in offered if p.startswith(SUBPROTOCOL)), None)

    def check_token(connection, request, response):
        """After the Origin check (403): a wrong token at the handshake is a 401."""
        offered = _handshake_token(connection) if response.status_code == HTTPStatus.SWITCHING_PROTOCOLS else None
        if offered is not None and not token.matches(offered):
            log.warning("refused a WebSocket handshake with a wrong token")
            return connection.respond(HTTPStatus.UNAUTHORIZED, "Unauthorized: wrong token\n")
        return None

    async def main():
        listener = Listener(token)
        server = await serve(
            listener.serve_ws, host, port,
            origins=[None, *origins],  # no Origin: not a browser
            select_subprotocol=select_subprotocol,
            process_response=check_token,
            max_size=MAX_BODY,
        )
        return await _listen(listener, "ws", server)

    return run_main(main())
