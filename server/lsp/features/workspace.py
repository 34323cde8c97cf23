"""The LSP life cycle and the workspace: initialize/initialized (the session starts), settings
changes, and the files that make the session read the repository again."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Protocol

from lsprotocol import types as lsp

if TYPE_CHECKING:
    import anyio.abc

    from ...agent import Session
    from ...host import Host

log = logging.getLogger(__name__)

#: The workspace files the client is asked to watch: a change makes the session read them again.
MODE_FILE_GLOBS = ("**/.modus/modes.yaml", "**/.roomodes", "**/.modus/agents.yaml", "**/.modus/settings.json")


class Server(Protocol):
    """What the life cycle uses of the server (ModusServer): pygls's registration and its client's
    capabilities, the session it starts, and what start-up was told and found."""

    session: Session | None
    host: Host  # once start_session has run
    task_group: anyio.abc.TaskGroup | None
    initialize_params: lsp.InitializeParams | None
    settings_problems: list[str]
    start_error: str | None

    @property
    def client_capabilities(self) -> lsp.ClientCapabilities: ...
    def feature(self, name: str, options: Any = None) -> Callable[[Callable], Callable]: ...
    async def client_register_capability_async(self, params: lsp.RegistrationParams) -> None: ...
    def start_session(self, params: lsp.InitializeParams | None) -> bool: ...
    def publish_mode_diagnostics(self, files) -> None: ...


def register(server: Server) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(params: lsp.InitializeParams):
        server.initialize_params = params

    @server.feature(lsp.INITIALIZED)
    def initialized(params: lsp.InitializedParams):
        # synchronous: every message after `initialized` finds the session in place
        if server.session is not None:
            return
        if not server.start_session(server.initialize_params):
            server.host.show_message("error", f"could not start: {server.start_error}")
            return
        for problem in server.settings_problems:
            server.host.show_message("error", problem)
        server.session.modes.on_change = server.publish_mode_diagnostics  # the first read is on its way
        server.task_group.start_soon(_watch_mode_files, server)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(params: lsp.DidChangeConfigurationParams):
        settings = params.settings
        if not isinstance(settings, dict) or "modus" not in settings or server.session is None:
            return
        from ...settings import read_settings  # pydantic: loaded after start-up

        new, problems = read_settings(settings["modus"])
        for problem in problems:
            server.host.show_message("error", problem)
        server.session.update_settings(new)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(params: lsp.DidChangeWatchedFilesParams):
        if server.session is not None:
            await server.session.refresh()

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(params: lsp.DidSaveTextDocumentParams):
        if server.session is not None:
            await server.session.refresh()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: lsp.DidOpenTextDocumentParams):
        pass  # registered so that text sync is advertised; pygls keeps the buffer


async def _watch_mode_files(server: Server) -> None:
    """Ask the client to tell us when a mode file changes, if it can."""
    caps = server.client_capabilities.workspace
    watched = caps.did_change_watched_files if caps else None
    if not watched or not watched.dynamic_registration or server.session is None:
        return
    watchers = [lsp.FileSystemWatcher(glob_pattern=g) for g in MODE_FILE_GLOBS]
    if watched.relative_pattern_support:
        from pygls.uris import from_fs_path

        for f in server.session.modes.files:  # the global modes.yaml, and globalModesFile's
            if f.source == "global":
                watchers.append(
                    lsp.FileSystemWatcher(
                        glob_pattern=lsp.RelativePattern(base_uri=from_fs_path(str(f.path.parent)), pattern=f.path.name)
                    )
                )
    registration = lsp.Registration(
        id="modus-mode-files",
        method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
    )
    try:
        await server.client_register_capability_async(lsp.RegistrationParams(registrations=[registration]))
    except Exception as exc:
        log.info("the client did not register file watchers: %s", exc)
