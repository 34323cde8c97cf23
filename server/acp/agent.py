"""The ACP agent: `initialize`, `session/new|load|prompt|cancel|set_mode|set_config_option`,
each a few lines over the core (server.agent.Session), which it reaches only through the Host
(host.py) and the Session's own methods.

An ACP session is a Modus conversation (the session id is its id) in a Modus Session whose
workspace is the session's `cwd`, with the settings of the settings files only (ACP has no
initialization options). A loaded session replays the conversation from the state database.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
from acp import RequestError
from acp import schema as acp

import protocol

from ..errors import BadRequest
from ..providers import ModelError
from ..agent import views
from . import translate as tr
from .hello import initialize_result
from .host import AcpHost, Outbox, PromptState

if TYPE_CHECKING:
    from acp.agent.connection import AgentSideConnection
    from anyio.abc import TaskGroup

    from ..agent.session import Session

log = logging.getLogger(__name__)

#: How long a session of a team space waits for the attach before its conversation is opened:
#: PostgreSQL on the team's network answers in well under this; offline, the session starts local.
SPACE_WAIT_S = 5.0


def invalid(message: str) -> RequestError:
    """-32602 with a message that names the bad field or value."""
    return RequestError(-32602, message)


@dataclass
class AcpSession:
    id: str
    session: "Session"
    host: AcpHost
    #: the MCP servers the client gave, in the shape of `.modus/mcp.json`'s `mcpServers`
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    closed: anyio.Event = field(default_factory=anyio.Event)
    prompting: bool = False
    #: the slash commands last listed to the client (available_commands_update)
    commands: tuple = ()


class ModusAgent:
    """The agent side of one ACP connection (one client)."""

    def __init__(self, task_group: "TaskGroup", global_modes: Path | None = None):
        self.tg = task_group
        self.global_modes = global_modes
        self.conn: AgentSideConnection | None = None
        self.outbox: Outbox | None = None
        self.client = acp.ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: "AgentSideConnection") -> None:
        self.conn = conn
        self.outbox = Outbox(conn)
        self.tg.start_soon(self.outbox.pump)

    # ---------------------------------------------------------- initialize

    async def initialize(self, protocol_version: int, client_capabilities: acp.ClientCapabilities | None = None,
                         client_info: acp.Implementation | None = None, **kwargs: Any) -> acp.InitializeResponse:
        self.client = _readable(client_capabilities or acp.ClientCapabilities())
        fs = self.client.fs or acp.FileSystemCapabilities()
        log.info(
            "client %s: reads files %s, writes files %s, terminal %s",
            client_info.name if client_info else "(unnamed)", bool(fs.read_text_file), bool(fs.write_text_file), bool(self.client.terminal),
        )
        return acp.InitializeResponse.model_validate(initialize_result(protocol_version))

    async def initialized_early(self, params: dict[str, Any]) -> None:
        """`initialize`, answered before this agent was loaded (run.py): what it told of the client
        is taken as the package would take it. Capabilities it cannot read count as none."""
        try:
            request = acp.InitializeRequest.model_validate(params)
        except ValueError as exc:
            log.warning("initialize: the client's capabilities could not be read (%s); taken as none", exc)
            request = acp.InitializeRequest(protocol_version=params["protocolVersion"])
        await self.initialize(request.protocol_version, request.client_capabilities, request.client_info)

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise invalid(f"methodId: Modus has no authentication methods (got {method_id!r})")

    # ---------------------------------------------------------- sessions

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> acp.NewSessionResponse:
        from ..state.records import new_id

        sid = new_id("conv-")
        opened = await self._open(cwd, sid, mcp_servers or [])
        self._after_response(opened)
        return acp.NewSessionResponse(session_id=sid, modes=opened.host.modes(), config_options=opened.host.config_options())

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> acp.LoadSessionResponse:
        opened = self.sessions.get(session_id)
        if opened is None:
            opened = await self._open(cwd, session_id, mcp_servers or [], load=True)
        elif Path(os.path.realpath(cwd)) != opened.session.workspace.root:
            raise invalid(f"cwd: session {session_id} belongs to {opened.session.workspace.root}, not {cwd}")
        from .replay import replay

        replay(opened.host, opened.session.history(session_id).messages, opened.session.conversations.image)
        opened.host.show_plan([a.name for a in opened.session.agents])
        await opened.host.outbox.flush()  # every update of the replay before the answer
        self._after_response(opened)
        return acp.LoadSessionResponse(modes=opened.host.modes(), config_options=opened.host.config_options())

    async def _open(self, cwd: str, sid: str, mcp_servers: list[Any], load: bool = False) -> AcpSession:
        """The Modus Session for `cwd` with this conversation, running in the agent's task group."""
        from protocol import Settings

        from ..agent import Session
        from ..workspace import Workspace

        root = Path(cwd)
        if not root.is_absolute() or not root.is_dir():
            raise invalid(f"cwd: must be the absolute path of a folder, got {cwd!r}")
        assert self.conn is not None and self.outbox is not None
        host = AcpHost(self.conn, self.outbox, sid, self.client)
        workspace = Workspace(root)
        shared = any(o.session.workspace.root == workspace.root for o in self.sessions.values())
        try:  # the turns the store has as running are those of a session open here, if there is one
            session = Session(workspace=workspace, host=host, settings=Settings(), global_modes=self.global_modes, close_interrupted=not shared)
        except Exception as exc:  # an unwritable state folder, a newer database: the client is told why
            log.exception("the session could not start in %s", cwd)
            raise RequestError(-32603, f"The Modus session could not start in {cwd}: {type(exc).__name__}: {exc}") from None
        host.session = session
        session.modes.on_change = host.modes_changed  # the first read is on its way
        # in a team space the session's conversation is the space's: opened once attached (or offline)
        spaced = session.settings.space is not None

        def open_conversation() -> None:
            if load and (not session.store.conversation_exists(sid) or session.store.conversation_parent(sid) is not None):
                raise invalid(f"sessionId: no session {sid} in {root}")  # a top-level conversation here, or nothing
            session.open(sid)  # the conversation requests without an id go to (made when new)

        if not spaced:
            try:
                open_conversation()
            except RequestError:
                session.close()
                raise
        opened = AcpSession(sid, session, host, tr.mcp_servers(mcp_servers))
        if opened.mcp_servers:  # added to the configured ones (the files win by name)
            session.mcp.add_client_servers(opened.mcp_servers)
        ready = anyio.Event()
        failed: list[str] = []

        async def run() -> None:
            try:
                async with session.running():
                    ready.set()
                    await opened.closed.wait()
            except Exception as exc:  # a fault of this session ends it, not the agent's other sessions
                log.exception("session %s stopped", sid)
                failed.append(f"{type(exc).__name__}: {exc}")
            finally:
                self.sessions.pop(sid, None)
                session.close()
                ready.set()

        self.tg.start_soon(run)
        await ready.wait()  # the modes files and rules are read
        if failed:
            raise RequestError(-32603, f"The Modus session could not start in {cwd}: {failed[0]}")
        if spaced:
            await session.space.settled(SPACE_WAIT_S)
            try:
                open_conversation()
            except RequestError:
                opened.closed.set()  # the session ends
                raise
        self.sessions[sid] = opened
        return opened

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any) -> acp.ListSessionsResponse:
        """The conversations of a workspace (`cwd`; without it, of the workspaces open here), the
        latest first, at most 200 each (Session.list_conversations)."""
        from ..agent import Session
        from ..workspace import Workspace
        from protocol import Settings

        if cwd is not None and not (Path(cwd).is_absolute() and Path(cwd).is_dir()):
            raise invalid(f"cwd: must be the absolute path of a folder, got {cwd!r}")
        roots = [Path(os.path.realpath(cwd))] if cwd is not None else sorted({o.session.workspace.root for o in self.sessions.values()})
        found: list[acp.SessionInfo] = []
        for root in roots:
            session = next((o.session for o in self.sessions.values() if o.session.workspace.root == root), None)
            opened_here = session is None
            if session is None:  # read its store, and let it go
                assert self.conn is not None and self.outbox is not None
                try:
                    session = Session(
                        workspace=Workspace(root), host=AcpHost(self.conn, self.outbox, "", self.client), settings=Settings(),
                        global_modes=self.global_modes, close_interrupted=False,  # a list changes nothing
                    )
                except Exception as exc:
                    raise RequestError(-32603, f"The Modus session could not start in {root}: {type(exc).__name__}: {exc}") from None
            try:
                for c in session.list_conversations().conversations:
                    found.append(acp.SessionInfo(session_id=c.id, cwd=str(root), title=c.title, updated_at=c.updated_at))
            finally:
                if opened_here:
                    session.close()
        return acp.ListSessionsResponse(sessions=found)

    def _after_response(self, opened: AcpSession) -> None:
        """What the client gets once it knows the session: the slash commands. Queued last in
        the handler: the outbox sends it after the handler returned, when the answer was sent."""
        opened.host.live = True
        self._list_commands(opened)

    @staticmethod
    def _list_commands(opened: AcpSession) -> None:
        """Modus's own slash commands, then the workspace's and the user's prompt files; told
        again when those changed."""
        found = opened.session.config.commands.found
        opened.commands = found
        listed = views.commands(found).commands
        opened.host.send(acp.AvailableCommandsUpdate(session_update="available_commands_update", available_commands=tr.available_commands(listed)))

    def _session(self, session_id: str) -> AcpSession:
        opened = self.sessions.get(session_id)
        if opened is None:
            raise invalid(f"sessionId: unknown session: {session_id} (create it with session/new or session/load)")
        return opened

    # ---------------------------------------------------------- modes and the phase

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> acp.SetSessionModeResponse:
        opened = self._session(session_id)
        await opened.session.refresh()
        self._switch(opened, mode_id)
        await opened.host.outbox.flush()  # the mode's update before the answer
        return acp.SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool, **kwargs: Any) -> acp.SetSessionConfigOptionResponse:
        opened = self._session(session_id)
        await opened.session.refresh()
        if config_id == tr.MODE_OPTION:
            self._switch(opened, value)
        elif config_id == tr.PHASE_OPTION:
            if value not in ("plan", "act"):
                raise invalid(f"value: the phase is 'plan' or 'act', got {value!r}")
            opened.session.set_phase(str(value), by="user", conversation_id=session_id)
        else:
            raise invalid(f"configId: unknown option {config_id!r} (Modus has {tr.MODE_OPTION!r} and {tr.PHASE_OPTION!r})")
        await opened.host.outbox.flush()  # the option's update before the answer
        return acp.SetSessionConfigOptionResponse(config_options=opened.host.config_options())

    @staticmethod
    def _switch(opened: AcpSession, slug: Any) -> None:
        """The user's switch: a new task for the mode, no approval."""
        if not isinstance(slug, str):
            raise invalid(f"modeId: Invalid mode: {slug!r}")
        try:
            opened.session.switch_mode(slug, by="user", conversation_id=opened.id)
        except BadRequest as exc:
            raise invalid(f"modeId: {exc}") from None

    # ---------------------------------------------------------- prompts

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> acp.PromptResponse:
        opened = self._session(session_id)
        if opened.prompting:
            raise RequestError(-32600, f"A prompt is already running in session {session_id}: wait for its answer, or send session/cancel")
        typed, attached, images = read_prompt(prompt)
        host, session = opened.host, opened.session
        opened.prompting = True
        host.prompt = state = PromptState()
        try:
            await session.refresh()
            host.tell_notices()
            if session.config.commands.found != opened.commands:
                self._list_commands(opened)
            command = tr.parse_command(typed)
            text = message(typed, attached)
            if command is not None:
                text = await self._command(opened, *command, attached)  # the command, then what follows it
            if text or images or command is None:  # an empty message is refused by the core, naming it
                try:
                    await session.send(protocol.ChatSendParams(text=text, conversation_id=session_id, images=images or None))
                except BadRequest as exc:
                    raise invalid(f"prompt: {exc}") from None
            await session.idle(session_id)
            await host.outbox.flush()  # every update of the turn before the answer
            return acp.PromptResponse(stop_reason=state.stop_reason())
        finally:
            host.prompt = None
            opened.prompting = False

    async def _command(self, opened: AcpSession, name: str, typed: str, attached: list[Attachment]) -> str:
        """A slash command (agent/own_commands.py, and `/plan-change`); returns the message that
        follows it (may be empty). `typed`: what follows the command's name. What the command
        could not do is a note, and nothing follows it."""
        if name == "plan-change":
            return await self._plan_change(opened, typed, attached)
        try:
            rest = await opened.session.own_commands.run(name, typed, opened.id)
        except BadRequest as exc:
            opened.host.note(str(exc).removeprefix("text: "))
            return ""
        except ModelError as exc:
            opened.host.note(f"/{name}: {exc}")
            return ""
        return message(rest, attached)

    async def _plan_change(self, opened: AcpSession, goal: str, attached: list[Attachment]) -> str:
        """"Plan a change here" (the LSP side's code action): plan mode, scoped to the file of the
        attached code, which the first message quotes. Its message is sent by the core."""
        if not attached:
            opened.host.note("/plan-change plans a change in the code you attach: add a selection or a file to the prompt.")
            return ""
        try:
            await opened.session.plan_selection(quoted(opened.session, attached[0]), goal or None)
        except BadRequest as exc:
            opened.host.note(f"/plan-change: {exc}")
        return ""

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        opened = self.sessions.get(session_id)
        if opened is None:
            log.info("session/cancel for an unknown session %s", session_id)
            return
        if opened.host.prompt is not None:
            opened.host.prompt.cancelled = True
        opened.session.cancel(session_id)

    async def close_all(self) -> None:
        for opened in list(self.sessions.values()):
            opened.session.cancel(opened.id)
            opened.closed.set()


def _readable(capabilities: acp.ClientCapabilities) -> acp.ClientCapabilities:
    """The client's capabilities, but a part the schema could not read (it keeps its default as a
    plain dict then, where Modus reads attributes) counts as none."""
    unread = [name for name, kind in (("fs", acp.FileSystemCapabilities),) if not isinstance(getattr(capabilities, name), kind)]
    if not unread:
        return capabilities
    log.warning("initialize: the client's capabilities could not be read (%s); taken as none", ", ".join(unread))
    return capabilities.model_copy(update={"fs": acp.FileSystemCapabilities()})


@dataclass
class Attachment:
    """A file the prompt brings along: embedded (its text, often a selection) or linked."""

    uri: str
    text: str | None = None

    @property
    def path(self) -> str | None:
        from urllib.parse import unquote, urlparse

        parsed = urlparse(self.uri)
        return unquote(parsed.path) if parsed.scheme == "file" else None

    @property
    def first_line(self) -> int:
        """Where an embedded selection starts (Zed's `file:///…#L4:6`), else 1."""
        import re
        from urllib.parse import urlparse

        match = re.match(r"L?(\d+)", urlparse(self.uri).fragment)
        return int(match.group(1)) if match else 1

    def shown(self) -> str:
        where = f"@{self.path}" if self.path else self.uri
        return where if self.text is None else f"{where}:\n{tr.fenced(self.text)}"


def read_prompt(blocks: list[Any]) -> tuple[str, list[Attachment], list[protocol.ImageData]]:
    """What the user typed (its text blocks), the files the prompt brings, and its images (the
    message's: checked with it, by the core)."""
    typed: list[str] = []
    attached: list[Attachment] = []
    images: list[protocol.ImageData] = []
    for block in blocks:
        if isinstance(block, acp.TextContentBlock):
            typed.append(block.text)
        elif isinstance(block, acp.ImageContentBlock):
            if block.mime_type not in ("image/png", "image/jpeg", "image/webp", "image/gif"):
                raise invalid(f"prompt: images[{len(images)}].mimeType: must be image/png, image/jpeg, image/webp or image/gif, got {block.mime_type!r}")
            images.append(protocol.ImageData(mime_type=block.mime_type, data=block.data))
        elif isinstance(block, acp.EmbeddedResourceContentBlock):
            resource = block.resource
            attached.append(Attachment(resource.uri, resource.text if isinstance(resource, acp.TextResourceContents) else None))
        elif isinstance(block, acp.ResourceContentBlock):
            attached.append(Attachment(block.uri))
        else:
            raise invalid(f"prompt: {getattr(block, 'type', type(block).__name__)} content is not supported (text, images and resources are)")
    return " ".join(t.strip() for t in typed if t.strip()), attached, images


def message(typed: str, attached: list[Attachment]) -> str:
    """The user message the model gets: the typed text, then the attached files."""
    return "\n\n".join([typed, *(a.shown() for a in attached)]).strip()


class Quoted(NamedTuple):
    """The code a plan is about, as Session.plan_selection takes it."""

    rel: str
    text: str


def quoted(session: "Session", attachment: Attachment) -> Quoted:
    """`File: <path>, lines a-b:` and the attached lines, numbered (a linked file: its name)."""
    from ..errors import ToolFailure

    if attachment.path is None:
        raise BadRequest(f"{attachment.uri} is not a file")
    try:
        target = session.workspace.resolve(attachment.path)
    except ToolFailure as exc:
        raise BadRequest(exc.message) from None
    if attachment.text is None:
        return Quoted(target.rel, f"File: {target.rel}")
    lines = attachment.text.splitlines()
    first = attachment.first_line
    width = len(str(first + len(lines) - 1))
    numbered = "\n".join(f"{n:>{width}} | {line}" for n, line in enumerate(lines, first))
    return Quoted(target.rel, f"File: {target.rel}, lines {first}-{first + len(lines) - 1}:\n{numbered}")
