"""Registering `modus/*` requests and `workspace/executeCommand` commands on the server."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ...errors import BadRequest, RequestFailed

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pygls.lsp.server import LanguageServer

    from ...agent import Session

Handler = Callable[["Session", Any], "Awaitable[BaseModel] | BaseModel"]


def validate(model: type["BaseModel"], data: Any, what: str) -> "BaseModel":
    """Params as a protocol model, or -32602 naming the bad field."""
    from pydantic import ValidationError

    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise JsonRpcInvalidParams(f"Invalid params for {what}: expected an object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{_where(e['loc'])}: {e['msg']}" for e in exc.errors())
        raise JsonRpcInvalidParams(f"Invalid params for {what}: {problems}") from None


def _where(loc: tuple) -> str:
    """A field's path as the client wrote it: `images[3].mimeType`."""
    where = ""
    for part in loc:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    return where or "params"


@dataclass(frozen=True)
class Routes:
    """What a feature registers its requests and commands with: the pygls server, and the
    session they are called with (`session()`: the session of the moment, or the error that
    tells the client why there is none)."""

    server: LanguageServer
    session: Callable[[], "Session"]

    def request(self, method: str, handler: Handler) -> None:
        """A `modus/*` request: params validated against the contract, what the repository holds
        read again if it changed, a protocol model back.

        The pygls handler is a generator, pygls's way to wait inside a plain handler: it answers at
        once when nothing is to be read again and `handler` returns the result itself (the common
        case, and the fast one), and yields to what must be awaited otherwise."""

        @self.server.feature(method)
        def handle(params: Any):
            session = self.session()
            from protocol import REQUESTS

            parsed = validate(REQUESTS[method].params, params, method)
            if session.stale():
                yield session.refresh, (), {}
            try:
                result = handler(session, parsed)
            except BadRequest as exc:
                raise JsonRpcInvalidParams(str(exc)) from None
            except RequestFailed as exc:
                raise JsonRpcException(str(exc), code=lsp.LSPErrorCodes.RequestFailed) from None
            if inspect.isawaitable(result):
                result = yield _answer, (result,), {}
            return result.wire()

    def command(self, name: str, handler: Callable[["Session", tuple], Any]) -> None:
        """A `workspace/executeCommand` command: the session read up to date, then `handler(session,
        arguments)` (awaited when it returns an awaitable); a BadRequest is -32602."""

        @self.server.command(name)
        async def run(*args: Any):
            session = self.session()
            await session.refresh()
            try:
                result = handler(session, args)
                return await result if inspect.isawaitable(result) else result
            except BadRequest as exc:
                raise JsonRpcInvalidParams(str(exc)) from None
            except RequestFailed as exc:
                raise JsonRpcException(str(exc), code=lsp.LSPErrorCodes.RequestFailed) from None


async def _answer(pending: Awaitable[Any]) -> Any:
    from ...providers import ModelError

    try:
        return await pending
    except BadRequest as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    except (ModelError, RequestFailed) as exc:
        # LSP's RequestFailed: the request was right, but what it asked for failed
        raise JsonRpcException(str(exc), code=lsp.LSPErrorCodes.RequestFailed) from None
