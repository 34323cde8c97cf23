"""The workspace's configuration: the settings that apply (the client's over the files', and what
waits for trust), the modes, the rules, the agents file and the roster, the MCP servers, and the
refresh that reads the repository again when it changed.

`generation` counts the changes a task's prompt depends on (rules, roster, MCP tools, settings):
a task built before the last change is rebuilt when next used.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import anyio
from anyio.abc import TaskGroup

import protocol
from protocol import AgentConfig, Settings

from ..errors import BadRequest
from ..hooks import HookMatcher, parse_hooks
from ..host import Host
from ..modes import Mode, ModeRegistry, global_modes_path
from ..prompt import Participant, Rules, load_rules
from ..prompt.commands import Commands, load_commands
from ..prompt.skills import Skills, load_skills
from ..providers import preload
from ..settings import LayeredSettings
from ..untrusted import Read, Refused, check_inside, off_loop
from ..userdirs import claude_dir
from ..workspace import Workspace

if TYPE_CHECKING:
    from ..mcp import McpHub

log = logging.getLogger(__name__)

ReadT = TypeVar("ReadT", bound=Read)

#: What the first turn runs, imported on first use: loaded ahead in the background (providers.preload).
TURN_MODULES = (
    "server.agent.loop", "server.agent.context", "server.roster.mentions", "server.roster.wakes",
    "server.checkpoints", "server.agent.planner", "server.tools:warm", "protocol.messages:warm",
)


class Configuration:
    def __init__(
        self,
        workspace: Workspace,
        host: Host,
        settings: Settings,
        *,
        global_modes: Path | None,
        global_mcp: Path | None,
        current: Callable[[], str],
        changed: Callable[[], None],
    ):
        """`current`: the conversation updates of a change go to; `changed`: a settings file
        changed after the first refresh (the client learns the new state)."""
        self.workspace = workspace
        self.host = host
        self.current = current
        self.changed = changed
        self.generation = 0
        #: the client's settings; `settings` is what applies: these over the settings files
        self.client_settings = settings
        config_dir = (global_modes or global_modes_path()).parent
        self.layers = LayeredSettings(workspace.root, config_dir)
        #: the user's own rules and slash commands, for every workspace
        self.global_rules = config_dir / "rules"
        self.global_commands = config_dir / "commands"
        self.global_skills = (config_dir / "skills", claude_dir() / "skills")
        self.told: set[str] = set()
        self.layers.load()  # a few small files, read before the store opens: stateDir may come from them
        self.settings = self.effective_settings()
        self.hooks = self.read_hooks()
        preload(self.settings, then=TURN_MODULES)  # in the background: the first message need not wait for them
        self.modes = ModeRegistry(workspace.root, global_modes, self.global_modes_file(self.settings))
        self.state_dir = self.state_folder(self.settings)
        # what the repository holds (modes files, rules) is read by refresh(), off the loop
        self.rules = Rules()
        self.commands = Commands()
        self.skills = Skills()
        self.refreshed = False
        self.refresh_lock = anyio.Lock()
        from ..roster.config import WorkspaceAgents

        self.agents_file = WorkspaceAgents(workspace.root)
        self.agents: list[AgentConfig] = list(self.settings.agents)
        self.from_workspace: set[str] = set()
        self.agents_diagnosed = False
        from ..mcp import config_paths, global_mcp_path

        # the MCP settings files, looked for by refresh(); the servers' hub is made once one exists
        self.mcp_paths = config_paths(workspace.root, global_mcp or global_mcp_path(global_modes))
        self.hub: McpHub | None = None
        self.task_group: TaskGroup | None = None

    def state_folder(self, settings: Settings) -> Path:
        """The user's stateDir, else `.modus/state`: a folder of the repository, which must not
        lead outside the workspace (a link there would have the state written anywhere)."""
        if settings.state_dir:
            return self.workspace.root / Path(settings.state_dir).expanduser()
        folder = self.workspace.root / ".modus" / "state"
        try:
            check_inside(folder, self.workspace.root)
        except Refused as exc:
            raise Refused(f"the state folder {folder}: {exc}; remove the link, or set modus.stateDir") from None
        return folder

    # ------------------------------------------------------------ reading the repository again

    def stale(self) -> bool:
        """Whether refresh() has anything to read again (a few stat calls)."""
        return (
            not self.refreshed
            or self.refresh_lock.locked()  # a read under way: what it reads is not applied yet
            or self.rules.changed()
            or self.commands.changed()
            or self.skills.changed()
            or bool(self.modes.stale())
            or self.agents_file.stale()
            or self.layers.stale()
            or self.mcp_stale()
        )

    async def refresh(self) -> None:
        """Read again what the repository holds and has changed since (mode files, rules): off
        the event loop, bounded in size and time. Finding out costs a few stat calls; run it
        before anything that uses modes or rules."""
        async with self.refresh_lock:
            await self.modes.refresh_off_loop()
            if self.layers.stale():
                try:
                    await off_loop(self.layers.load)
                except Refused as exc:
                    log.warning("settings files: %s", exc)
                self.update_settings()
                if self.refreshed:  # a file changed since: the client learns what of the state it changed
                    self.changed()
            if self.agents_file.stale():
                await self.read_agents_file()
            if self.rules.changed():
                rules = await self.read("Rule files", self.rules, load_rules, self.global_rules)
                if rules.files != self.rules.files:
                    self.generation += 1  # tasks get the new rules in their prompt
                self.rules = rules
            if self.commands.changed():
                self.commands = await self.read("Command files", self.commands, load_commands, self.global_commands)
            if self.skills.changed():
                skills = await self.read("Skills", self.skills, load_skills, self.global_skills)
                if skills.found != self.skills.found:
                    self.generation += 1  # tasks list the skills in their prompt
                self.skills = skills
            if self.mcp_stale():
                await self.mcp.refresh()
            self.refreshed = True

    async def read(self, what: str, before: ReadT, load: Callable[..., ReadT], global_dir: Any) -> ReadT:
        """A read of the workspace's project files of one kind (and the user's), off the loop;
        what it newly left out is told once, in the log and to the user."""
        try:
            now = await off_loop(load, self.workspace.root, global_dir)
        except Refused as exc:
            now = type(before)(skipped=(f"{what}: {exc}",))
        news = sorted(set(now.skipped) - set(before.skipped))
        if news:
            log.warning("%s not read: %s", what, "; ".join(news))
            self.host.show_message("warning", f"{what} not read: " + "; ".join(news))
        return now

    # ------------------------------------------------------------ settings

    def update_settings(self, client: Settings | None = None) -> None:
        """New settings from the client (None: a settings file changed)."""
        if client is not None:
            self.client_settings = client
        settings = self.effective_settings()
        if settings.state_dir != self.settings.state_dir:
            log.warning("stateDir changes take effect when the server restarts")
        self.settings = settings
        self.hooks = self.read_hooks()
        self.modes.read_also(self.global_modes_file(settings))  # a new file is read by the next refresh
        preload(settings)
        self.update_roster()  # and tasks are rebuilt with the new settings when next used

    def effective_settings(self) -> Settings:
        """The client's settings over the files'; their problems told once each, and what of the
        workspace's file waits for the user's trust."""
        settings = self.layers.effective(self.client_settings)
        news = [p for p in self.layers.problems if p not in self.told]
        waiting = self.layers.untrusted
        if waiting:
            note = (
                f"{self.layers.workspace_file.path} sets {', '.join(waiting)}: not applied until you trust this "
                "workspace's settings (command 'Modus: Trust Workspace Settings'; /trust in an ACP client)."
            )
            if note not in self.told:
                news.append(note)
        for problem in news:
            self.told.add(problem)
            log.warning("settings: %s", problem)
            self.host.show_message("warning", problem)
        return settings

    def global_modes_file(self, settings: Settings) -> Path | None:
        """The modes file `globalModesFile` names (Roo Code's global custom_modes.yaml, say), read
        besides the global modes.yaml; None when unset, or not an absolute path (told once)."""
        if not settings.global_modes_file:
            return None
        path = Path(settings.global_modes_file).expanduser()
        if path.is_absolute():
            return path
        problem = f"globalModesFile: {settings.global_modes_file!r} is not an absolute path (nor starts with ~): not read"
        if problem not in self.told:
            self.told.add(problem)
            log.warning("settings: %s", problem)
            self.host.show_message("warning", problem)
        return None

    def read_hooks(self) -> dict[str, tuple[HookMatcher, ...]]:
        """The hooks that apply: the settings' (the workspace file's once trusted), then Claude
        Code's files' (the workspace's once trusted); each event's in that order. Their problems
        are told once each."""
        hooks: dict[str, tuple[HookMatcher, ...]] = {}
        for origin, data in [("settings (hooks)", self.settings.hooks), *self.layers.hooks()]:
            found, problems = parse_hooks(data, origin)
            for event, matchers in found.items():
                hooks[event] = hooks.get(event, ()) + matchers
            for problem in problems:
                if problem not in self.told:
                    self.told.add(problem)
                    log.warning("hooks: %s", problem)
                    self.host.show_message("warning", problem)
        return hooks

    def trust_workspace_settings(self) -> list[str]:
        """`modus.trustWorkspaceSettings`: the workspace's settings files apply as they are now;
        returns what waited for it."""
        trusted = self.layers.trust_workspace()
        if not trusted:
            raise BadRequest(f"{self.layers.workspace_file.path}: nothing in it waits for trust")
        self.update_settings()
        return trusted

    # ------------------------------------------------------------ agents

    def update_roster(self) -> None:
        """The agents: those of the settings, then those of the workspace's agents file under
        names the settings don't use. Without `agents` in the settings the file's agents replace
        the default agent `modus`."""
        from_settings = list(self.settings.agents)
        if "agents" not in self.settings.model_fields_set and self.agents_file.result.agents:
            from_settings = []
        taken = {a.name.lower() for a in from_settings}
        extra = [a for a in self.agents_file.result.agents if a.name.lower() not in taken]
        self.agents = from_settings + extra
        self.from_workspace = {a.name for a in extra}
        self.generation += 1  # tasks get the new roster in their prompt

    async def read_agents_file(self) -> None:
        from ..roster.config import AgentsFile

        try:
            result = await off_loop(self.agents_file.load, frozenset(m.slug for m in self.modes.modes))
        except Refused as exc:
            from ..modes.model import Diagnostic

            result = AgentsFile((), (Diagnostic(0, 0, 0, 1, f"Agents file not read: {exc}"),))
        self.agents_file.result = result
        if result.diagnostics or self.agents_diagnosed:
            self.host.publish_diagnostics(self.agents_file.path, result.diagnostics)
        self.agents_diagnosed = bool(result.diagnostics)
        self.update_roster()

    def agent(self, name: str) -> AgentConfig | None:
        return next((a for a in self.agents if a.name == name), None)

    def agent_source(self, name: str) -> str:
        return "workspace" if name in self.from_workspace else "settings"

    def roster(self) -> tuple[Participant, ...]:
        """Who the prompt says is in the conversations: the agents, then the human members."""
        agents = tuple(Participant(a.name, "top-level" if a.top_level else "subordinate") for a in self.agents)
        return agents + tuple(Participant(m.handle, "human", m.name) for m in self.settings.members)

    # ------------------------------------------------------------ MCP servers

    @property
    def mcp(self) -> McpHub:
        """The MCP servers, made when first needed: a workspace without MCP settings never loads them."""
        if self.hub is None:
            from ..mcp.hub import McpHub

            self.hub = McpHub(self.workspace.root, self.mcp_paths[-1], self.host, self.mcp_changed)
            self.hub.attach(self.task_group)
        return self.hub

    def attach(self, task_group: TaskGroup | None) -> None:
        """The MCP servers' lives end with the session's task group: no process outlives it."""
        self.task_group = task_group
        if self.hub is not None:
            self.hub.attach(task_group)
            if task_group is not None and self.settings.mcp_start_at_launch:
                self.hub.start_all()

    def mcp_stale(self) -> bool:
        """Whether the MCP settings files are to be read (again): a few stat calls."""
        return self.hub.stale() if self.hub is not None else any(os.path.exists(p) for p in self.mcp_paths)

    def mcp_route(self, name: str) -> tuple[str, str] | None:
        """(server, tool) of a native MCP tool name, None if it is none."""
        return self.hub.route(name) if self.hub is not None else None

    def mcp_changed(self) -> None:
        """A server started, stopped or changed its tools: tasks rebuild their prompt, the client is told."""
        self.generation += 1
        self.host.publish(protocol.McpChanged(conversation_id=self.current(), servers=self.mcp.info()))

    def mcp_views(self, mode: Mode, tools: frozenset[str]) -> tuple:
        """The MCP servers the mode may use, as its prompt lists them."""
        group = mode.group("mcp")
        if self.hub is None or group is None or "use_mcp_tool" not in tools:
            return ()
        return self.hub.views(group.servers)

    async def mcp_ready(self, mode: Mode) -> None:
        """Before a model request: the servers the mode may use are started (the first time) and
        their tools known, so that the prompt lists them."""
        group = mode.group("mcp")
        if group is not None and self.hub is not None and self.hub.configured:
            await self.hub.ensure(group.servers)

    def mcp_list(self) -> protocol.McpListResult:
        return protocol.McpListResult(servers=self.mcp.info())

    async def mcp_restart(self, name: str | None) -> protocol.McpListResult:
        """`modus.mcp.restart [name]`: stop the server (all of them) and start it again."""
        if name is not None and name not in self.mcp.servers:
            configured = ", ".join(self.mcp.servers) or "none"
            raise BadRequest(f"name: no MCP server named '{name}' is configured. Configured servers: {configured}")
        await self.mcp.restart(name)
        return self.mcp_list()
