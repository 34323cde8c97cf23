"""The pygls language server: decodes requests, validates them against `protocol`, calls the core.

This is the only package that imports pygls. The handlers are in `features/`, by feature area,
each a few lines; what they do lives in the core (`server.agent`).

Start-up is kept short: `initialize` is answered from names alone, and the core (pydantic
models, the session, SQLite) is loaded when the client sends `initialized`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Union

import anyio
from lsprotocol import types as lsp
from pygls.exceptions import FeatureNotificationError, JsonRpcException, JsonRpcInternalError, JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage, RPCRequest
from pygls.uris import to_fs_path

from protocol import names

from .. import __version__
from ..startup import started

if TYPE_CHECKING:
    from ..agent import Session

log = logging.getLogger(__name__)

def converter():
    """pygls's converter, except that params and results of custom methods stay plain dicts, and
    that a code action is read as one (lsprotocol reads `Command | CodeAction` as a Command
    whose command is the code action's command object turned into a string)."""
    conv = default_converter()
    for cls, key in ((JsonRPCRequestMessage, "params"), (JsonRPCNotification, "params"), (JsonRPCResponseMessage, "result")):
        conv.register_structure_hook(cls, lambda obj, cls, key=key: cls(**{key: None, **obj}))

    def command_or_action(obj, _):
        is_command = isinstance(obj.get("command"), str)
        return conv.structure(obj, lsp.Command if is_command else lsp.CodeAction)

    conv.register_structure_hook(Union[lsp.Command, lsp.CodeAction], command_or_action)
    return conv


class ModusProtocol(LanguageServerProtocol):
    initialize_received = False

    def handle_message(self, message):
        """Before `initialize` LSP admits only `initialize` and `exit`: any other request is
        answered -32002 (ServerNotInitialized), any other notification is dropped."""
        method = getattr(message, "method", None)  # None: a response of the client
        if self.initialize_received or method in (None, lsp.INITIALIZE, lsp.EXIT):
            return super().handle_message(message)
        if isinstance(message, RPCRequest):
            refusal = JsonRpcServerNotInitialized(f"The server is not initialized: send 'initialize' before {method}")
            self._send_response(message.id, error=refusal.to_response_error())
        else:
            log.info("dropping %s: it came before 'initialize'", method)

    def _handle_response(self, msg_id, result=None, error=None):
        """The client's answer to a request of ours. A request the server gave up on (the turn
        that asked was cancelled; the client was sent `$/cancelRequest`) has a cancelled future:
        its answer, which the client still owes (LSP), is dropped here, where pygls would raise
        InvalidStateError setting its result."""
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            del self._request_futures[msg_id]
            self._result_types.pop(msg_id, None)
            log.debug("dropping the answer to request %s: the server no longer waits for it", msg_id)
            return
        super()._handle_response(msg_id, result, error)

    def _send_handler_result(self, future, *, msg_id):
        """A request the server answers with an error it meant (a refusal naming the field, a
        model request that failed): the error goes back, and the log says so in one line; pygls
        would log it with a traceback, as if the server had failed."""
        error = future.exception() if future.done() and not future.cancelled() else None
        if isinstance(error, JsonRpcException):
            self._request_futures.pop(msg_id, None)
            log.info("request %s answered with error %s: %s", msg_id, error.code, error.message)
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _send_response(self, msg_id, result=None, error=None):
        """No traceback ever reaches the client: pygls makes an exception of a handler into an
        internal error (-32603) whose data is the traceback (JsonRpcInternalError.of). It has
        logged the traceback already; the client gets the one-line message alone."""
        if error is not None and error.code == JsonRpcInternalError.CODE and error.data is not None:
            first_line = next(iter(error.message.strip().splitlines()), "Internal error")
            error = lsp.ResponseError(code=error.code, message=first_line)
        super()._send_response(msg_id, result, error)

    def _run_generator(self, future, *, gen, result_future):
        """pygls runs what a generator handler yields under a made-up id in `_request_futures`
        and never takes it out: every yield to a coroutine would leak its future and result.
        Once it is done, it goes (the few pending entries are searched by identity)."""
        if future is not None:
            key = next((k for k, f in self._request_futures.items() if f is future), None)
            if key is not None:
                del self._request_futures[key]
        super()._run_generator(future, gen=gen, result_future=result_future)

    def send_payload(self, data: dict) -> None:
        """A message the transport made itself (the error answer to a frame that never became a
        message), sent as pygls sends its own: through its writer and framing, a failed write
        handled as it handles one. pygls has no public method for it: this wraps its private one."""
        self._send_data(data)

    def cancel_pending(self) -> None:
        """Every request still pending, the client's and the server's, cancelled: the connection
        is done for. pygls keeps them in a private table and cancels them only on `shutdown`."""
        for future in list(self._request_futures.values()):
            future.cancel()

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams):
        self.initialize_received = True
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"modus": {"protocolVersion": names.PROTOCOL_VERSION}}
        return result


class ModusServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("modus", __version__, protocol_cls=ModusProtocol, converter_factory=converter)
        self.session: Session | None = None
        self.task_group: anyio.abc.TaskGroup | None = None
        self.global_modes: Path | None = None  # tests may point it elsewhere
        # What start-up was told and found (the workspace feature reads them at `initialized`):
        self.initialize_params: lsp.InitializeParams | None = None  # as `initialize` gave them
        self.settings_problems: list[str] = []  # bad keys of initializationOptions.modus, each left at its default
        self.start_error: str | None = None  # why the session could not start
        self._diagnosed: set[Path] = set()  # mode files whose diagnostics the client shows
        self._reporting = False  # an error is being told to the client (see report_server_error)
        _register(self)

    def report_server_error(self, error: Exception, source) -> None:
        """A failure no answer reports. The user sees one line (pygls's `Error in server: …`); a
        notification handler's traceback, which pygls keeps in the error's data and does not log,
        goes to the log."""
        data = getattr(error, "data", None)
        trace = data.get("traceback") if isinstance(data, dict) else None
        if source is FeatureNotificationError and isinstance(trace, list):
            log.error("%s\n%s", error, "".join(trace).rstrip())
        if self._reporting:  # telling the client failed too (it has gone): once in the log is enough
            return
        self._reporting = True
        try:
            super().report_server_error(error, source)
        finally:
            self._reporting = False

    def require_session(self) -> Session:
        if self.session is None:
            if self.start_error:
                raise JsonRpcInternalError(f"The Modus session could not start: {self.start_error}")
            raise JsonRpcServerNotInitialized("The server is not initialized yet: send 'initialized' first")
        return self.session

    def workspace_root(self, params: lsp.InitializeParams | None) -> Path:
        if params is None:
            return Path(os.getcwd())
        if params.workspace_folders:
            path = to_fs_path(params.workspace_folders[0].uri)
            if path:
                return Path(path)
        if params.root_uri and (path := to_fs_path(params.root_uri)):
            return Path(path)
        if params.root_path:
            return Path(params.root_path)
        return Path(os.getcwd())

    def start_session(self, params: lsp.InitializeParams | None) -> bool:
        """Load the core and open the workspace's session; its task group starts right after.
        False (and every request says why) when it cannot start, e.g. an unwritable stateDir."""
        from ..agent import Session
        from ..workspace import Workspace
        from .host import LspHost

        options = params.initialization_options if params else None
        modus = options.get("modus") if isinstance(options, dict) else None
        from ..settings import read_settings

        settings, self.settings_problems = read_settings(modus)
        self.host = LspHost(self)
        try:
            session = Session(
                workspace=Workspace(self.workspace_root(params)),
                host=self.host,
                settings=settings,
                global_modes=self.global_modes,
            )
        except Exception as exc:  # the process stays up and answers with the reason
            log.exception("the session could not start")
            self.start_error = f"{type(exc).__name__}: {exc}"
            started()
            return False
        assert self.task_group is not None, "start the server with server.lsp.run"

        async def run():
            try:
                async with session.running():
                    started()
                    await anyio.sleep_forever()
            finally:
                session.close()

        self.task_group.start_soon(run)
        self.session = session
        log.info("workspace %s", session.workspace.root)
        return True

    def publish_mode_diagnostics(self, files) -> None:
        """Diagnostics of the mode files that were read again: their problems, or an empty
        list where there were problems before."""
        session = self.session
        if session is None:
            return
        for f in files:
            problems = session.modes.diagnostics(f.path)
            if problems or f.path in self._diagnosed:
                self.host.publish_diagnostics(f.path, problems)
            (self._diagnosed.add if problems else self._diagnosed.discard)(f.path)


def _register(server: ModusServer) -> None:
    """Every handler of the server, by feature area (server/lsp/features)."""
    from .features import ROUTED, Routes, workspace

    workspace.register(server)
    routes = Routes(server, server.require_session)
    for feature in ROUTED:
        feature.register(routes)
