"""The MCP servers of a session: what the files configure, each server's life, and the calls.

A server's life runs in the session's task group, so it stops with the session:

    idle ──(first use, or at launch)──▶ [asked: a workspace file's server] ──▶ starting ──▶ connected
                                              │ denied                        │ fails       │ dies
                                              ▼                               ▼             ▼
                                          disabled                         failed      starting (once)

"First use" is the first turn of a mode that may use the server (its tools go into that turn's
prompt), or a call to it. A server a workspace file configures is a repository's: it starts
only once the user approved it, and the approval (kept in the user's state folder: approvals.py)
is for its exact command line, environment, folder, or address, and for its `alwaysAllow`: a
changed entry asks again, and its `alwaysAllow` lets tools run without asking only as approved.
Yolo does not skip this question: it approves the agent's calls, not what a cloned repository
runs. A server that
dies is started again once; if it dies again before a call has gone through, it stays failed.
Each change of state is published (`mcp_changed`) and makes the tasks rebuild their prompt.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, NamedTuple

import anyio
from anyio.abc import TaskGroup

from ..errors import ToolError
from ..untrusted import Refused, off_loop
from .approvals import ServerApprovals
from .config import ConfigFile, Loaded, ServerConfig, config_files, file_signatures, load_file, merge, parse_file
from .results import resource_text, result_text

if TYPE_CHECKING:
    from protocol import McpServerInfo

    from ..host import Host
    from .connection import Connection

log = logging.getLogger(__name__)

State = Literal["idle", "starting", "connected", "failed", "disabled"]

#: Provider limits on a tool's name: OpenAI's 64 characters of [A-Za-z0-9_-] (Anthropic allows 128).
NATIVE_NAME_MAX = 64
#: What the prompt shows of a tool: its description, its input schema (longer ones are left out).
DESCRIPTION_CHARS = 1000
SCHEMA_CHARS = 20_000
#: Why a server is not running before its first use (the wire has no state for it).
NOT_STARTED = "Not started yet: it starts with the first turn of a mode that may use it, or with modus.mcp.restart."


class McpToolView(NamedTuple):
    name: str
    description: str
    schema: dict[str, Any]
    #: its name for native tool calling (mcp__<server>__<tool>)
    native: str


class McpServerView(NamedTuple):
    """A server as a task's prompt shows it (a snapshot: tasks are immutable)."""

    name: str
    state: State
    note: str | None
    tools: tuple[McpToolView, ...]
    resources: tuple[tuple[str, str | None], ...]


class Server:
    """One configured server and where its life is."""

    def __init__(self, config: ServerConfig):
        self.config = config
        self.state: State = "idle"
        self.error: str | None = None
        self.connection: Connection | None = None
        self.tools: dict[str, Any] = {}  # name → mcp_types.Tool
        self.resources: list[Any] = []
        #: The current start is over (connected, failed or refused).
        self.ready = anyio.Event()
        #: Its life task has ended (set while there is none).
        self.done = anyio.Event()
        self.done.set()
        self.scope: anyio.CancelScope | None = None
        self.restarts = 1
        self.denied = False
        if config.problem:
            self.state, self.error = "failed", config.problem
        elif config.disabled:
            self.state, self.error = "disabled", f"Disabled in {config.file.path}."
        else:
            self.error = NOT_STARTED
        if self.state != "idle":
            self.ready.set()


def _clean(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", part)


class McpHub:
    def __init__(
        self, workspace: Path, global_path: Path, host: "Host", on_change: Callable[[], None],
        approvals: ServerApprovals | None = None,
    ):
        self.workspace = workspace
        self.files: tuple[ConfigFile, ...] = config_files(workspace, global_path)
        self.host = host
        self.approvals = approvals or ServerApprovals(workspace)
        self.on_change = on_change
        self.servers: dict[str, Server] = {}
        self.native: dict[str, tuple[str, str]] = {}
        self._signatures: tuple | None = None
        self._shown: set[str] = set()
        self._tg: TaskGroup | None = None
        self._sdk_loaded = False
        #: servers the editor gave (ACP's session/new), under those of the files
        self._client = Loaded((), ())

    # ------------------------------------------------------------ configuration

    def stale(self) -> bool:
        """Whether a file changed since it was read (four stat calls)."""
        return file_signatures(self.files) != self._signatures

    async def refresh(self) -> None:
        """Read the files again if one changed (off the loop, each bounded) and apply them."""
        if not self.stale():
            return
        signatures = file_signatures(self.files)
        loaded: list[Loaded] = []
        for f, sig in zip(self.files, signatures):
            if sig is None:
                loaded.append(Loaded((), ()))
                continue
            try:
                loaded.append(await off_loop(load_file, f, self.workspace))
            except Refused as exc:
                loaded.append(Loaded((), (f"{f.path}: not read: {exc}",)))
        self._signatures = signatures
        self.apply([*loaded, self._client])

    def add_client_servers(self, servers: dict[str, Any]) -> None:
        """Servers the editor gives (`{name: entry}` in the shape of `mcpServers`), added to
        those the files configure, which win by name; applied at the next refresh."""
        import json

        self._client = parse_file(json.dumps({"mcpServers": servers}), ConfigFile(Path("<the editor>"), "client"))
        self._signatures = None

    def apply(self, loaded: list[Loaded]) -> None:
        problems = [p for result in loaded for p in result.problems]
        for problem in problems:
            log.warning("MCP settings: %s", problem)
        news = [p for p in problems if p not in self._shown]
        if news:
            self._shown.update(news)
            self.host.show_message("warning", "MCP settings: " + "; ".join(news))
        before = self.servers
        after: dict[str, Server] = {}
        again: list[Server] = []
        for config in merge(loaded):
            old = before.pop(config.name, None)
            if old is not None and self._keeps(old.config, config):
                old.config = config  # alwaysAllow and timeout apply from the next call
                after[config.name] = old
                continue
            server = after[config.name] = Server(config)
            if old is not None:
                if old.state in ("starting", "connected"):
                    again.append(server)  # it was running: the new entry runs in its place
                self._stop(old)
        for gone in before.values():
            self._stop(gone)
        changed = list(after) != list(self.servers) or any(after[n] is not self.servers[n] for n in after)
        self.servers = after
        for server in again:
            self._start(server)
        if changed:
            self._changed()

    @property
    def configured(self) -> bool:
        return bool(self.servers)

    def names(self, allowed: tuple[str, ...] | None = None) -> list[str]:
        return [n for n in self.servers if allowed is None or n in allowed]

    def config_file(self, name: str) -> Path | None:
        """The file that configures the server (where "always allow" for its tools belongs)."""
        server = self.servers.get(name)
        return server.config.file.path if server else None

    # ------------------------------------------------------------ lives

    def attach(self, tg: TaskGroup | None) -> None:
        """Lives run in this task group (the session's): they end with it."""
        self._tg = tg

    def start_all(self) -> None:
        for server in self.servers.values():
            if server.state == "idle":
                self._start(server)

    async def ensure(self, allowed: tuple[str, ...] | None = None) -> None:
        """Start the servers (those `allowed`; None: all) that have not started, and wait until
        each is connected or could not be."""
        waiting = []
        for name in self.names(allowed):
            server = self.servers[name]
            if server.state == "idle":
                self._start(server)
            if server.state == "starting":
                waiting.append(server)
        for server in waiting:
            await server.ready.wait()

    async def restart(self, name: str | None = None) -> None:
        """Stop the server (every server: None) and start it anew, asking again if it was refused."""
        for server in [self.servers[name]] if name is not None else list(self.servers.values()):
            if server.config.problem or server.config.disabled:
                continue
            self._stop(server)
            await server.done.wait()
            server.restarts, server.denied = 1, False
            self._start(server)

    def _stop(self, server: Server) -> None:
        if server.scope is not None:
            server.scope.cancel()

    def _start(self, server: Server) -> None:
        if self._tg is None or not server.done.is_set():
            return
        server.done = anyio.Event()
        server.scope = anyio.CancelScope()  # made here, so that a stop before the life runs counts
        if server.ready.is_set():
            server.ready = anyio.Event()
        self._set(server, "starting", None)
        self._tg.start_soon(self._life, server, server.scope)

    async def _life(self, server: Server, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                try:
                    if await self._allowed(server):
                        await self._load_sdk()
                        await self._connect(server)
                except Exception as exc:  # a bug, or the editor failing us: this server fails, the rest goes on
                    log.exception("MCP server %s", server.config.name)
                    self._set(server, "failed", f"It could not start: {type(exc).__name__}: {exc}.")
        finally:
            server.scope = None
            server.connection = None
            if server.state in ("starting", "connected"):  # stopped by us (restart, a new configuration, the end)
                server.state, server.error = "idle", NOT_STARTED
                server.tools, server.resources = {}, []
            server.ready.set()
            server.done.set()

    async def _load_sdk(self) -> None:
        """The SDK loads in a worker thread the first time a server starts (it takes a while)."""
        if not self._sdk_loaded:
            from .connection import import_sdk

            await anyio.to_thread.run_sync(import_sdk)
            self._sdk_loaded = True

    async def _connect(self, server: Server) -> None:
        from .connection import Connection, StartFailed, describe, sentence

        while True:
            connection = server.connection = Connection(server.config, self.workspace)
            if server.state != "starting":
                self._starting(server)
            was_ready = False

            def on_ready(c: Connection = connection) -> None:
                nonlocal was_ready
                was_ready = True
                self._connected(server, c)

            try:
                await connection.run(on_ready)
                reason = "it stopped (its process exited or its connection closed)"
            except StartFailed as exc:
                reason = str(exc)  # a sentence, then what the server wrote on stderr
            except Exception as exc:
                reason = sentence(describe(exc))
            if not was_ready:
                self._set(server, "failed", f"It could not start: {reason}")
                return
            reason = await connection.failure(reason)
            if server.restarts > 0:
                server.restarts -= 1
                log.warning("MCP server %s: %s Starting it again.", server.config.name, reason)
                continue
            self._set(server, "failed", f"It stopped again after being restarted once: {reason}")
            return

    def _starting(self, server: Server) -> None:
        if server.ready.is_set():
            server.ready = anyio.Event()
        self._set(server, "starting", None)

    def _lost(self, server: Server, connection: "Connection") -> None:
        """A call found the connection closed: the server is no longer connected (its life starts
        it again, or gives up on it), whether or not its life has noticed yet."""
        if server.connection is connection and server.state == "connected":
            self._starting(server)

    def _connected(self, server: Server, connection: "Connection") -> None:
        server.tools = {t.name: t for t in connection.tools}
        server.resources = list(connection.resources)
        self._set(server, "connected", None)

    def _set(self, server: Server, state: State, error: str | None) -> None:
        server.state, server.error = state, error
        if state != "connected":
            server.tools, server.resources = {}, []
        if state != "starting":
            server.ready.set()
        if self.servers.get(server.config.name) is server:
            self._changed()

    def _changed(self) -> None:
        self._name_tools()
        self.on_change()

    # ------------------------------------------------------------ the user's consent

    def _keeps(self, old: ServerConfig, new: ServerConfig) -> bool:
        """Whether a server, its entry read again, goes on as it is: what runs is unchanged, and
        so is its standing, and what the entry lets run without asking is as the user approved
        it (a changed `alwaysAllow` of a workspace's server that is not approved: asked again)."""
        return _same(old, new) and (old.always_allow == new.always_allow or self.approvals.approved(new))

    def always_allowed(self, server: Server, tool: str) -> bool:
        """Whether a tool of the server runs without asking: its entry's `alwaysAllow` names it,
        and the user approved the entry with that list (a repository's) or wrote it (their own)."""
        return tool in server.config.always_allow and self.approvals.approved(server.config)

    def rule_written(self, name: str, file: Path, old_text: str | None, new_text: str) -> None:
        """The user's "always allow" added a tool to the `alwaysAllow` of a server in a workspace
        file: when the entry as it was is approved, so is it with the rule (else nothing is)."""
        before = _entry(old_text or "", file, name)
        after = _entry(new_text, file, name)
        if before is not None and after is not None and self.approvals.approved(before):
            self.approvals.approve(after)

    async def _allowed(self, server: Server) -> bool:
        """A workspace file's server starts once the user approved this very entry."""
        c = server.config
        if self.approvals.approved(c):
            return True
        if not server.denied:
            from protocol import ApprovalRequest

            answer = await self.host.request_approval(ApprovalRequest(kind="mcp_server", **self._question(c)))
            if answer.decision == "approve":
                self.approvals.approve(c)
                return True
            server.denied = True
        self._set(server, "disabled", f"Not started: the user did not allow it ({c.file.path}). Run modus.mcp.restart to be asked again.")
        return False

    def _question(self, c: ServerConfig) -> dict[str, Any]:
        try:
            shown = str(c.file.path.relative_to(self.workspace))
        except ValueError:
            shown = str(c.file.path)
        if c.transport == "stdio":
            title = f"Start the MCP server '{c.name}' that {shown} configures: `{c.command_line()}`?"
            lines = [
                f"This repository's {shown} asks Modus to run a program as you, in {c.where(self.workspace)}:",
                f"  {c.command_line()}",
            ]
            if c.env:
                lines.append(f"Environment variables it sets: {', '.join(k for k, _ in c.env)} (values not shown).")
            params: dict[str, Any] = {"server": c.name, "file": shown, "command": c.command, "args": list(c.args), "cwd": str(c.where(self.workspace))}
        else:
            title = f"Connect to the MCP server '{c.name}' that {shown} configures: {c.url}?"
            lines = [f"This repository's {shown} asks Modus to send the agent's MCP calls to {c.url} ({c.transport})."]
            if c.headers:
                lines.append(f"Headers it sends: {', '.join(k for k, _ in c.headers)} (values not shown).")
            params = {"server": c.name, "file": shown, "url": c.url}
        if c.always_allow:
            lines.append(f"The file lets these tools run without asking: {', '.join(c.always_allow)}.")
        lines.append("Modus asks again if this entry changes.")
        return {"title": title, "detail": "\n".join(lines), "params": params}

    # ------------------------------------------------------------ calls

    def server(self, name: str, allowed: tuple[str, ...] | None = None) -> Server:
        """The server of that name, or a ToolError naming the configured ones (those `allowed`)."""
        server = self.servers.get(name)
        if server is None:
            names = self.names(allowed)
            listed = ", ".join(names) if names else "none"
            raise ToolError(f"No MCP server named '{name}' is configured. Configured servers: {listed}.")
        return server

    async def connected(self, server: Server) -> "Connection":
        """The server's live connection, started if it has not been; a ToolError saying why not."""
        if self._tg is None:
            raise ToolError("MCP servers are not available: the session is not running.")
        if server.state == "idle":
            self._start(server)
        if server.connection is not None and server.connection.ended.is_set():
            self._lost(server, server.connection)
        await server.ready.wait()
        if server.state != "connected" or server.connection is None or server.connection.session is None:
            raise ToolError(f"The MCP server '{server.config.name}' is {_state_words(server.state)}. {server.error or ''}".rstrip())
        return server.connection

    async def call_tool(self, server: Server, tool: str, arguments: dict[str, Any]) -> str:
        connection = await self.connected(server)
        assert connection.session is not None
        result = await self._request(server, connection, f"the call to '{tool}'", connection.session.call_tool, tool, arguments)
        if result.is_error:
            raise ToolError(f"The tool '{tool}' of the MCP server '{server.config.name}' reported an error:\n{result_text(result)}")
        return result_text(result)

    async def read_resource(self, server: Server, uri: str) -> str:
        connection = await self.connected(server)
        assert connection.session is not None
        result = await self._request(server, connection, f"reading {uri}", connection.session.read_resource, uri)
        return resource_text(result)

    async def _request(self, server: Server, connection: "Connection", what: str, fn, *args: Any) -> Any:
        """One request within the server's time limit; its failures as ToolErrors."""
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        from .connection import describe

        name, timeout = server.config.name, server.config.timeout
        try:
            with anyio.fail_after(timeout):
                result = await fn(*args)
        except TimeoutError:
            raise ToolError(f"The MCP server '{name}' did not answer {what} within {timeout:g} s (its timeout); the call was cancelled.") from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED or connection.ended.is_set():
                self._lost(server, connection)
                reason = await connection.failure(f"The MCP server '{name}' stopped during {what}")
                again = " It is being started again." if server.restarts > 0 else ""
                raise ToolError(reason + again) from None
            raise ToolError(f"The MCP server '{name}' refused {what}: {exc.message}") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._lost(server, connection)
            raise ToolError(await connection.failure(f"The MCP server '{name}' stopped during {what}")) from None
        except Exception as exc:
            raise ToolError(f"{what[0].upper()}{what[1:]} on the MCP server '{name}' failed: {describe(exc)}") from None
        server.restarts = 1  # it works again: a later death gets its restart
        return result

    # ------------------------------------------------------------ what the wire and the prompt show

    def info(self) -> list["McpServerInfo"]:
        from protocol import McpResource, McpServerInfo, McpTool

        return [
            McpServerInfo(
                name=s.config.name,
                state="disabled" if s.state == "idle" else s.state,
                error=s.error,
                source=str(s.config.file.path),
                tools=[McpTool(name=t.name, description=_clip(t.description)) for t in s.tools.values()],
                resources=[McpResource(uri=str(r.uri), name=r.name) for r in s.resources],
            )
            for s in self.servers.values()
        ]

    def views(self, allowed: tuple[str, ...] | None) -> tuple[McpServerView, ...]:
        natives = {pair: native for native, pair in self.native.items()}
        views = []
        for name in self.names(allowed):
            s = self.servers[name]
            tools = tuple(
                McpToolView(t.name, _clip(t.description) or "", _schema(t.input_schema), natives[(name, t.name)])
                for t in s.tools.values()
                if (name, t.name) in natives
            )
            resources = tuple((str(r.uri), r.name) for r in s.resources)
            views.append(McpServerView(name, s.state, s.error, tools, resources))
        return tuple(views)

    def route(self, native: str) -> tuple[str, str] | None:
        """(server, tool) of a native tool name (mcp__<server>__<tool>), None if it is none."""
        return self.native.get(native)

    def _name_tools(self) -> None:
        """Native names, `mcp__<server>__<tool>` as Claude Code writes them, in the characters and
        length every provider takes; one too long or taken gets a short hash of its own."""
        import hashlib

        native: dict[str, tuple[str, str]] = {}
        for s in self.servers.values():
            for tool in s.tools:
                name = f"mcp__{_clean(s.config.name)}__{_clean(tool)}"
                if len(name) > NATIVE_NAME_MAX or name in native:
                    digest = hashlib.sha256(f"{s.config.name}\0{tool}".encode()).hexdigest()[:8]
                    name = f"{name[: NATIVE_NAME_MAX - 9]}_{digest}"
                native[name] = (s.config.name, tool)
        self.native = native


def _entry(text: str, file: Path, name: str) -> ServerConfig | None:
    """The entry of that name in a workspace file's text, when it is a good one."""
    found = next((s for s in parse_file(text, ConfigFile(file, "workspace")).servers if s.name == name), None)
    return found if found is not None and found.problem is None else None


def _same(a: ServerConfig, b: ServerConfig) -> bool:
    """The same server: what runs (or where it connects) is unchanged, and so is its standing."""
    return a.fingerprint() == b.fingerprint() and a.file == b.file and a.problem == b.problem and a.disabled == b.disabled


def _state_words(state: State) -> str:
    return {"idle": "not started", "starting": "starting", "connected": "connected", "failed": "not available", "disabled": "disabled"}[state]


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= DESCRIPTION_CHARS:
        return text
    return text[: DESCRIPTION_CHARS - 1] + "…"


def _schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema as providers take it (an object schema), within SCHEMA_CHARS."""
    import json

    if not isinstance(schema, dict) or len(json.dumps(schema)) > SCHEMA_CHARS:
        return {"type": "object", "additionalProperties": True}
    return schema if schema.get("type") == "object" else {"type": "object", **schema}
