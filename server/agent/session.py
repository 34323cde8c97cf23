"""The session: one workspace's modes, settings, tasks and conversations.

It owns the root task group. Each conversation runs in its own task group, each agent turn in
its own cancel scope, so nothing outlives its owner and `modus/chat/cancel` reaches every turn.
"""

from __future__ import annotations

import logging
import os
from contextlib import asynccontextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, AsyncIterator

import anyio
from anyio.abc import TaskGroup

import protocol  # the messages (protocol.messages) load with the first one used
from protocol import AgentConfig, ModeRef, Settings, State

from ..errors import BadRequest, ToolError
from ..host import Host
from ..modes import DEFAULT_MODE, Mode, ModeRegistry, global_modes_path
from ..settings import LayeredSettings
from ..prompt import Participant, PromptContext, Rules, build_prompt, environment_details, load_rules, ordered_tools
from ..providers import ModelLimits, ScriptCursor, preload
from ..state import Store, StoredMessage
from ..state.store import new_id
from ..untrusted import Refused, check_inside, off_loop
from ..workspace import Workspace
from . import conversations
from .checkpoints import Checkpoints
from .locks import FileLocks
from ..agents.summons import Summons, started_together
from ..plan.machine import PLAN_REPLY_FOLLOWS, PLAN_SWITCHED_TO_ACT
from .history import Histories, tool_result
from ..plan import machine as plan_machine
from .task import Task, build_task, enabled_tools

if TYPE_CHECKING:
    from ..agents import Chain, WakePolicy
    from ..providers.base import Usage as ModelUsage
    from ..mcp import McpHub
    from .planner import Planner
    from ..state import StateStore
    from protocol import AgentsListResult, ChatHistoryResult, ChatListResult, ChatSendParams, ChatSendResult, ModesListResult, PromptGetParams, PromptGetResult

    from ..tools import ToolContext

log = logging.getLogger(__name__)

#: What the first turn runs, imported on first use: loaded ahead in the background (providers.preload).
TURN_MODULES = (
    "server.agent.loop", "server.agent.context", "server.agents.mentions", "server.agents.wakes",
    "server.checkpoints", "server.agent.planner",
)

INTERRUPTED_CALL = "The turn was interrupted: Modus stopped before this tool call returned a result. Check the state before you retry."
INTERRUPTED_TURN = "The turn of {agent} was interrupted: Modus stopped before it ended."
NOT_RUN_RESTORED = "Not run: the conversation was restored to a checkpoint taken before this call."
INTERRUPTED_NOTICE = "It is not run again by itself: send a message in conversation {conversation} to go on."


class ConversationRuntime:
    """The running side of one conversation: its task group and the agents' turns in it.

    It lives while turns run: when the last one ends, its task group closes and the session
    lets it go (an idle conversation costs nothing but its rows in the store).
    """

    def __init__(self, session: "Session", conversation_id: str):
        self.session = session
        self.id = conversation_id
        self.running: dict[str, anyio.CancelScope] = {}
        self.pending: set[str] = set()
        #: why each agent runs next (its chain, who woke it, the replies waiting for it)
        self.reasons: dict[str, Summons] = {}
        self._tg: TaskGroup | None = None
        self._queued: list[str] = []
        #: set when the last turn has ended and the runtime is let go
        self.finished = anyio.Event()

    async def serve(self) -> None:
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                for agent in self._queued:
                    self.wake(agent)
                self._queued.clear()
        finally:
            self._tg = None
            self.session._released(self)
            self.finished.set()

    def wake(self, agent: str, summons: Summons | None = None) -> None:
        waiting = self.reasons.get(agent)
        if summons is not None:
            self.reasons[agent] = waiting.then(summons) if waiting else summons
        if agent in self.running:
            self.pending.add(agent)  # it runs again once its current turn ends
        elif self._tg is None:
            self._queued.append(agent)  # serve() has not started yet
        else:
            scope = self.running[agent] = anyio.CancelScope()
            self._tg.start_soon(self._agent, agent, scope)

    async def _agent(self, agent: str, scope: anyio.CancelScope) -> None:
        from .loop import run_turn

        try:
            with scope:
                while True:
                    await run_turn(self.session, self.id, agent, self.reasons.pop(agent, None) or Summons())
                    if agent not in self.pending:
                        break
                    self.pending.discard(agent)
        finally:
            self.running.pop(agent, None)
            if agent not in self.pending and agent in self.reasons:  # cancelled before it ran
                self.reasons.pop(agent).answer("cancelled", "")
        if agent in self.pending:  # a message arrived after a cancel
            self.pending.discard(agent)
            self.wake(agent)

    def cancel(self) -> bool:
        self.pending.clear()
        self._queued.clear()
        for summons in self.reasons.values():
            summons.answer("cancelled", "")
        self.reasons.clear()
        for scope in self.running.values():
            scope.cancel()
        return bool(self.running)


class Session:
    def __init__(
        self,
        *,
        workspace: Workspace,
        host: Host,
        settings: Settings,
        global_modes: Path | None = None,
        global_mcp: Path | None = None,
        close_interrupted: bool = True,
    ):
        """`close_interrupted`: close the turns the store has as running (Modus stopped during them);
        False when another Session of this process has the workspace open (they are its turns)."""
        self.workspace = workspace
        self.host = host
        self.generation = 0
        #: the client's settings; `settings` is what applies: these over the settings files
        self.client_settings = settings
        self.layers = LayeredSettings(workspace.root, (global_modes or global_modes_path()).parent)
        self._told: set[str] = set()
        self.layers.load()  # a few small files, read before the store opens: stateDir may come from them
        self.settings = self._effective_settings()
        preload(self.settings, then=TURN_MODULES)  # in the background: the first message need not wait for them
        self.modes = ModeRegistry(workspace.root, global_modes)
        self.state_dir = self._state_dir(self.settings)
        workspace.own = (Path(os.path.realpath(self.state_dir)),)  # the edit tools never write it
        self.store: StateStore = Store(self.state_dir)
        if self.store.recovered is not None:
            host.show_message("warning", self.store.recovered.message())
        self.histories = Histories(self.store)
        self.cursors: dict[str, ScriptCursor] = {}
        self.file_locks = FileLocks()
        self.checkpoints = Checkpoints(self)
        #: ask_agent calls under way: (conversation, asker) → the agent asked
        self.asking: dict[tuple[str, str], str] = {}
        self.tasks: dict[str, Task] = {}
        self._settle_until = 0.0
        self._tg: TaskGroup | None = None
        self._started: anyio.Event | None = None
        self._conversations: dict[str, ConversationRuntime] = {}
        #: conversations being condensed on demand (modus/chat/condense): one at a time each
        self.condensing: set[str] = set()
        # what the repository holds (modes files, rules) is read by refresh(), off the loop
        self.rules = Rules()
        self._refreshed = False
        self._refresh_lock = anyio.Lock()
        from ..agents.config import WorkspaceAgents

        self.agents_file = WorkspaceAgents(workspace.root)
        self.agents: list[AgentConfig] = list(self.settings.agents)
        self._from_workspace: set[str] = set()
        self._agents_diagnosed = False
        from ..mcp import config_paths, global_mcp_path

        # the MCP settings files, looked for by refresh(); the servers' hub is made once one exists
        self._mcp_paths = config_paths(workspace.root, global_mcp or global_mcp_path(global_modes))
        self._mcp: McpHub | None = None
        # back where the workspace was: each agent's mode (read when first used), the phase, the conversation
        self._agent_modes: dict[str, str] = {}
        self.phase = self.store.get_meta("phase", "act") or "act"
        self.conversation_id = self.store.get_meta("conversation") or ""
        if not self.conversation_id:
            self._make_current(new_id("conv-"))
        if close_interrupted:
            self._close_interrupted_turns()

    @cached_property
    def planner(self) -> "Planner":
        """The agents' plans (loaded with the first plan tool or plan request, not at start-up)."""
        from .planner import Planner

        return Planner(self)

    def _state_dir(self, settings: Settings) -> Path:
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

    def _make_current(self, cid: str, owner: str | None = None) -> None:
        """The conversation (made if new) becomes the one requests without an id go to, and is
        remembered so that a restarted server continues it. Turns running elsewhere go on."""
        self.store.ensure_conversation(cid, owner)
        if cid != self.conversation_id:
            self.conversation_id = cid
            self.store.set_meta(conversation=cid)

    def _client_conversation(self, cid: str) -> str:
        """A conversation id a client chose (to send to, or to open), or BadRequest."""
        parent = self.store.conversation_parent(conversations.checked_id(cid))
        if parent is not None:
            raise BadRequest(f"conversationId: {cid} is a subtask's conversation; open {parent}, the one it belongs to")
        return cid

    def _close_interrupted_turns(self) -> None:
        """Turns that were running when the server stopped (a crash, a kill): each tool call left
        without a result gets one, so the history stays well formed for the provider, and the
        turn is marked `interrupted`, in one transaction. Then the client is told, once: the
        next start finds the turn closed. Nothing of the turn runs again by itself."""
        for turn_id, cid, agent in self.store.open_turns():
            text = INTERRUPTED_TURN.format(agent=agent)
            with self.store.transaction():
                for history_id in self.store.subconversations(cid):
                    for call in self.store.unanswered_calls(history_id):
                        result = tool_result(call.get("id"), call.get("name"), "Interrupted")
                        self.add_message(StoredMessage(new_id("msg-"), history_id, "tool", INTERRUPTED_CALL, None, result))
                self.add_message(StoredMessage(new_id("msg-"), cid, "system", text, agent, {"turnId": turn_id}))
                self.store.end_turn(turn_id, "interrupted")
            log.warning("turn %s of %s was interrupted when Modus stopped; its open tool calls were closed", turn_id, agent)
            self.host.publish(protocol.MessageUpdate(conversation_id=cid, agent=agent, turn_id=turn_id, role="system", text=text))
            self.host.show_message("warning", f"{text} {INTERRUPTED_NOTICE.format(conversation=cid)}")

    def add_message(self, message: StoredMessage) -> StoredMessage:
        """Every message is written here: to the store, and to the history the model reads."""
        self.store.add_message(message)
        self.histories.written(message)
        return message

    def stale(self) -> bool:
        """Whether refresh() has anything to read again (a few stat calls)."""
        return (
            not self._refreshed
            or self._refresh_lock.locked()  # a read under way: what it reads is not applied yet
            or self.rules.changed()
            or bool(self.modes.stale())
            or self.agents_file.stale()
            or self.layers.stale()
            or self._mcp_stale()
        )

    async def refresh(self) -> None:
        """Read again what the repository holds and has changed since (mode files, rules): off
        the event loop, bounded in size and time. Finding out costs a few stat calls; run it
        before anything that uses modes or rules."""
        async with self._refresh_lock:
            await self.modes.refresh_off_loop()
            if self.layers.stale():
                try:
                    await off_loop(self.layers.load)
                except Refused as exc:
                    log.warning("settings files: %s", exc)
                self.update_settings()
                if self._refreshed:  # a file changed since: the client learns what of the state it changed
                    self.host.publish(protocol.StateChanged(conversation_id=self.conversation_id, state=self.state()))
            if self.agents_file.stale():
                await self._read_agents_file()
            if self.rules.changed():
                try:
                    rules = await off_loop(load_rules, self.workspace.root)
                except Refused as exc:
                    rules = Rules(skipped=(f"rules: {exc}",))
                news = set(rules.skipped) - set(self.rules.skipped)
                if news:
                    log.warning("rules skipped: %s", "; ".join(sorted(news)))
                    self.host.show_message("warning", "Rule files not read: " + "; ".join(sorted(news)))
                if rules.files != self.rules.files:
                    self.generation += 1  # tasks get the new rules in their prompt
                self.rules = rules
            if self._mcp_stale():
                await self.mcp.refresh()
            self._refreshed = True

    @asynccontextmanager
    async def running(self) -> AsyncIterator["Session"]:
        """Run the session: turns live in this task group and stop when it closes."""
        await self.refresh()
        async with anyio.create_task_group() as tg:
            self._tg = tg
            if self._mcp is not None:
                self._mcp.attach(tg)  # the MCP servers' lives end with the session: no process outlives it
                if self.settings.mcp_start_at_launch:
                    self._mcp.start_all()
            if self._started is not None:
                self._started.set()
            try:
                yield self
            finally:
                tg.cancel_scope.cancel()
        if self._mcp is not None:
            self._mcp.attach(None)
        self._tg = None
        self._conversations.clear()

    def close(self) -> None:
        self.store.close()

    # ------------------------------------------------------------ settings and agents

    def update_settings(self, client: Settings | None = None) -> None:
        """New settings from the client (None: a settings file changed)."""
        if client is not None:
            self.client_settings = client
        settings = self._effective_settings()
        if settings.state_dir != self.settings.state_dir:
            log.warning("stateDir changes take effect when the server restarts")
        self.settings = settings
        preload(settings)
        self.update_roster()  # and tasks are rebuilt with the new settings when next used

    def _effective_settings(self) -> Settings:
        """The client's settings over the files'; their problems told once each, and what of the
        workspace's file waits for the user's trust."""
        settings = self.layers.effective(self.client_settings)
        news = [p for p in self.layers.problems if p not in self._told]
        waiting = self.layers.untrusted
        if waiting:
            note = (
                f"{self.layers.workspace_file.path} sets {', '.join(waiting)}: not applied until you trust this "
                "workspace's settings (command 'Modus: Trust Workspace Settings'; /trust in an ACP client)."
            )
            if note not in self._told:
                news.append(note)
        for problem in news:
            self._told.add(problem)
            log.warning("settings: %s", problem)
            self.host.show_message("warning", problem)
        return settings

    def trust_workspace_settings(self) -> State:
        """`modus.trustWorkspaceSettings`: the workspace's settings file applies as it is now."""
        if not self.layers.trust_workspace():
            raise BadRequest(f"{self.layers.workspace_file.path}: nothing in it waits for trust")
        self.update_settings()
        return self.state()

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
        self._from_workspace = {a.name for a in extra}
        self.generation += 1  # tasks get the new roster in their prompt

    async def _read_agents_file(self) -> None:
        from ..agents.config import AgentsFile

        try:
            result = await off_loop(self.agents_file.load, frozenset(m.slug for m in self.modes.modes))
        except Refused as exc:
            from ..modes.model import Diagnostic

            result = AgentsFile((), (Diagnostic(0, 0, 0, 1, f"Agents file not read: {exc}"),))
        self.agents_file.result = result
        if result.diagnostics or self._agents_diagnosed:
            self.host.publish_diagnostics(self.agents_file.path, result.diagnostics)
        self._agents_diagnosed = bool(result.diagnostics)
        self.update_roster()

    def agent(self, name: str) -> AgentConfig | None:
        return next((a for a in self.agents if a.name == name), None)

    def agent_source(self, name: str) -> str:
        return "workspace" if name in self._from_workspace else "settings"

    def mode_of(self, agent: str) -> Mode:
        """The agent's mode: the one it last switched to (kept in the store), else the mode its
        configuration names, else the workspace's mode from before there were several agents,
        else the default. A mode gone from the modes files falls back to the default."""
        slug = self._agent_modes.get(agent)
        if slug is None:
            config = self.agent(agent)
            slug = (
                self.store.get_meta(f"mode:{agent}")
                or (config.mode if config else None)
                or self.store.get_meta("mode")
                or DEFAULT_MODE
            )
            self._agent_modes[agent] = slug
        return self.modes.get_or_default(slug)

    def responder(self, conversation_id: str) -> str:
        """Who answers a message that mentions nobody (SPEC §5): the last agent that spoke, the
        conversation's owner, the first top-level agent, the first agent."""
        from ..agents import default_responder

        agents = self.agents
        last = self.store.last_speaker(conversation_id, [a.name for a in agents])
        return default_responder(last, self.store.conversation_owner(conversation_id), agents) or agents[0].name

    # ------------------------------------------------------------ tasks

    def task_for(self, agent: str, conversation_id: str | None = None) -> Task:
        """The agent's current task; rebuilt when the mode, phase, mode file, rules or settings
        changed. `conversation_id`: where it is used (a turn's; by default the current one)."""
        mode = self.mode_of(agent)
        task = self.tasks.get(agent)
        if task and task.mode is mode and task.phase == self.phase and task.generation == self.generation:
            return task
        return self._build(agent, mode, task, conversation_id or self.conversation_id)

    def _prompt_context(self, mode: Mode, phase: str, agent: str) -> PromptContext:
        config = self.agent(agent)
        tools = enabled_tools(mode, phase, self.settings.yolo, handoffs=len(self.agents) > 1)
        mcp = mode.group("mcp")
        return PromptContext(
            mode=mode,
            phase=phase,
            tools=tools,
            mcp=self._mcp.views(mcp.servers) if self._mcp is not None and mcp is not None and "use_mcp_tool" in tools else (),
            modes=self.modes.modes,
            workspace=self.workspace.root,
            yolo=self.settings.yolo,
            agent=agent,
            agent_instructions=config.instructions if config else None,
            roster=self._roster(),
            rules=self.rules.for_mode(mode.slug),
        )

    def _roster(self) -> tuple[Participant, ...]:
        agents = tuple(Participant(a.name, "top-level" if a.top_level else "subordinate") for a in self.agents)
        return agents + tuple(Participant(m.handle, "human", m.name) for m in self.settings.members)

    def _build(self, agent: str, mode: Mode, replaces: Task | None, conversation_id: str) -> Task:
        config = self.agent(agent)
        task = build_task(
            context=self._prompt_context(mode, self.phase, agent),
            agent_model=config.model if config else None,
            models=self.settings.models,
            cursor=self.cursors.setdefault(agent, ScriptCursor()),
            generation=self.generation,
            limits=ModelLimits.of(self.settings),
        )
        self.store.add_task(task.id, agent, mode.slug, self.phase, conversation_id, None, replaces.id if replaces else None)
        self.tasks[agent] = task
        return task

    def switch_mode(
        self, slug: str, *, by: str, reason: str | None = None, agent: str | None = None, conversation_id: str | None = None
    ) -> Task:
        """Dispose the agent's task and build one for the new mode; the conversation carries over.
        `conversation_id`: where the switch happens (a turn's; by default the current one)."""
        mode = self.modes.get(slug)
        if mode is None:
            raise BadRequest(f"Invalid mode: {slug}")
        cid = conversation_id or self.conversation_id
        agent = agent or self.responder(cid)
        current = self.task_for(agent, cid)
        if mode is current.mode:
            return current
        previous = current.mode.slug
        self._agent_modes[agent] = mode.slug
        self.store.set_meta(**{f"mode:{agent}": mode.slug})
        task = self._build(agent, mode, current, cid)
        self.host.publish(
            protocol.ModeChanged(
                conversation_id=cid,
                agent=agent,
                task_id=task.id,
                from_=previous,
                to=mode.slug,
                reason=reason,
                by=by,
            )
        )
        if by == "model":
            self._settle_until = anyio.current_time() + self.settings.mode_switch_delay_ms / 1000
        return task

    def set_phase(self, phase: str, *, by: str, agent: str | None = None, conversation_id: str | None = None) -> Task:
        """Dispose the agent's task and build one for the new phase (PLAN ⇄ ACT), as a mode switch
        does; the conversation carries over. The current phase changes nothing."""
        if phase not in ("plan", "act"):
            raise BadRequest(f"phase: must be 'plan' or 'act', got {phase!r}")
        cid = conversation_id or self.conversation_id
        agent = agent or self.responder(cid)
        current = self.task_for(agent, cid)
        if phase == self.phase:
            return current
        previous, self.phase = self.phase, phase
        self.store.set_meta(phase=phase)
        task = self._build(agent, current.mode, current, cid)
        self.host.publish(
            protocol.PhaseChanged(conversation_id=cid, agent=agent, task_id=task.id, from_=previous, to=phase, by=by)
        )
        return task

    async def user_set_phase(self, phase: str) -> State:
        """The user's flip. To ACT while plan_mode_respond waits for an answer: the turn goes on in
        ACT, the model told that the user switched."""
        self.set_phase(phase, by="user")
        cid = self.conversation_id
        if phase == "act" and self.answer_waiting_call(cid, PLAN_SWITCHED_TO_ACT):
            await self._wake(cid, self.responder(cid))
        return self.state()

    def answer_waiting_call(self, cid: str, text: str) -> bool:
        """plan_mode_respond's result is written when the user answers (a message, or a switch
        to ACT), so that it can say which. Such a call is the only one an ended turn leaves
        without a result."""
        runtime = self._conversations.get(cid)
        if runtime is not None and runtime.running:
            return False
        waiting = self.store.unanswered_calls(cid)
        for call in waiting:
            self.add_message(StoredMessage(new_id("msg-"), cid, "tool", text, None, tool_result(call.get("id"), call.get("name"))))
        return bool(waiting)

    async def wait_settled(self) -> None:
        remaining = self._settle_until - anyio.current_time()
        if remaining > 0:
            await anyio.sleep(remaining)

    # ------------------------------------------------------------ MCP servers

    @property
    def mcp(self) -> McpHub:
        """The MCP servers, made when first needed: a workspace without MCP settings never loads them."""
        if self._mcp is None:
            from ..mcp.hub import McpHub

            self._mcp = McpHub(self.workspace.root, self._mcp_paths[-1], self.host, self._mcp_changed)
            self._mcp.attach(self._tg)
        return self._mcp

    def _mcp_stale(self) -> bool:
        """Whether the MCP settings files are to be read (again): a few stat calls."""
        return self._mcp.stale() if self._mcp is not None else any(os.path.exists(p) for p in self._mcp_paths)

    def mcp_route(self, name: str) -> tuple[str, str] | None:
        """(server, tool) of a native MCP tool name, None if it is none."""
        return self._mcp.route(name) if self._mcp is not None else None

    def _mcp_changed(self) -> None:
        """A server started, stopped or changed its tools: tasks rebuild their prompt, the client is told."""
        self.generation += 1
        self.host.publish(protocol.McpChanged(conversation_id=self.conversation_id, servers=self.mcp.info()))

    async def mcp_ready(self, agent: str) -> None:
        """Before a model request: the servers the agent's mode may use are started (the first
        time) and their tools known, so that the prompt lists them."""
        group = self.mode_of(agent).group("mcp")
        if group is not None and self._mcp is not None and self._mcp.configured:
            await self._mcp.ensure(group.servers)

    def mcp_list(self) -> protocol.McpListResult:
        return protocol.McpListResult(servers=self.mcp.info())

    async def mcp_restart(self, name: str | None) -> protocol.McpListResult:
        """`modus.mcp.restart [name]`: stop the server (all of them) and start it again."""
        if name is not None and name not in self.mcp.servers:
            configured = ", ".join(self.mcp.servers) or "none"
            raise BadRequest(f"name: no MCP server named '{name}' is configured. Configured servers: {configured}")
        await self.mcp.restart(name)
        return self.mcp_list()

    # ------------------------------------------------------------ requests

    def state(self) -> State:
        from ..providers.catalog import context_info

        agent = self.responder(self.conversation_id)
        task = self.task_for(agent)
        history = self.histories.get(self.conversation_id, agent)
        return State(
            mode=ModeRef(slug=task.mode.slug, name=task.mode.name),
            phase=task.phase,
            conversation_id=self.conversation_id,
            yolo=self.settings.yolo,
            task=task.info(),
            plan=plan_machine.plan_info(*self.store.current_plan(task.agent)),
            usage=protocol.Usage(**self.store.usage_total(self.conversation_id)),
            context=context_info(task.model_config, self.settings.condense_threshold, history.used),
        )

    def prompt(self, params: PromptGetParams) -> PromptGetResult:
        """The system prompt a task with that mode/phase/agent would get, without building one."""
        agent = params.agent or self.responder(self.conversation_id)
        if self.agent(agent) is None:
            raise BadRequest(f"agent: unknown agent: {agent}")
        mode = self.modes.get(params.mode) if params.mode else self.mode_of(agent)
        if mode is None:
            raise BadRequest(f"Invalid mode: {params.mode}")
        context = self._prompt_context(mode, params.phase or self.phase, agent)
        prompt = build_prompt(context)
        return protocol.PromptGetResult(
            text=prompt.text,
            sections=[protocol.PromptSection(id=s.id, text=s.text) for s in prompt.sections],
            tools=[t.name for t in ordered_tools(context.tools)],
            environment_details=self._environment(mode, context.phase, agent),
        )

    def list_agents(self) -> AgentsListResult:
        """The agents in configuration order (the order prefixes are matched in) and the members."""
        return protocol.AgentsListResult(
            agents=[
                protocol.AgentInfo(
                    name=a.name,
                    top_level=a.top_level,
                    mode=self.mode_of(a.name).slug,
                    source=self.agent_source(a.name),
                    model=(a.model.model or a.model.provider) if a.model else None,
                    instructions=a.instructions,
                )
                for a in self.agents
            ],
            members=[protocol.MemberInfo(handle=m.handle, name=m.name) for m in self.settings.members],
        )

    def list_modes(self) -> ModesListResult:
        return protocol.ModesListResult(
            current=self.mode_of(self.responder(self.conversation_id)).slug,
            modes=[
                protocol.ModeInfo(
                    slug=m.slug,
                    name=m.name,
                    description=m.description,
                    when_to_use=m.when_to_use,
                    source=m.source,
                    groups=[g.entry() for g in m.groups],
                )
                for m in self.modes.modes
            ],
        )

    async def send(self, params: ChatSendParams) -> ChatSendResult:
        text = params.text
        if not text.strip():
            raise BadRequest("text: must not be empty")
        if params.owner is not None and self.agent(params.owner) is None:
            raise BadRequest(f"owner: unknown agent: {params.owner}")
        if params.conversation_id is not None:
            self._make_current(self._client_conversation(params.conversation_id), params.owner)
        from ..agents import parse_user_message

        cid = self.conversation_id
        composed = parse_user_message(text, self.agents, self.settings.members)
        # the mentioned agents, in parallel, each with the whole message; none: the responder;
        # a message made only of mentions starts nothing
        targets = [] if composed.empty else (composed.agents or [self.responder(cid)])
        # a plan_mode_respond that waits for this answer (asked in PLAN: ACT now means the user switched)
        self.answer_waiting_call(cid, PLAN_REPLY_FOLLOWS if self.phase == "plan" else f"{PLAN_SWITCHED_TO_ACT} {PLAN_REPLY_FOLLOWS}")
        mentions = [protocol.Mention(raw=m.raw, kind=m.kind, name=m.name) for m in composed.mentions]
        extra = {"typed": text, "mentions": [m.wire() for m in mentions]} if mentions else {}
        lead = targets[0] if targets else self.responder(cid)
        message = self._add_user_message(cid, composed.text if targets else text, self.task_for(lead), **extra)
        self.host.publish(protocol.MessageUpdate(conversation_id=cid, role="user", text=text))
        from ..agents import Chain

        chain = Chain.start(targets)
        for agent in targets:
            others = [a for a in targets if a != agent]
            await self._wake(cid, agent, Summons(chain, note=started_together(agent, others) if others else None))
        return protocol.ChatSendResult(
            conversation_id=cid, message_id=message.id, text=message.text, dispatched=targets, mentions=mentions
        )

    async def tell(self, cid: str, agent: str, text: str) -> None:
        """Something the user did outside the chat (a plan decided from the palette), told to the
        agent as a user message of the conversation, and the agent's turn started."""
        self._add_user_message(cid, text, self.task_for(agent, cid), source="plan")
        self.host.publish(protocol.MessageUpdate(conversation_id=cid, agent=agent, role="system", text=text))
        await self._wake(cid, agent)

    async def plan_decision(self, decision: str, feedback: str | None) -> State:
        """`modus/plan/approve|reject`: the user's decision on the current agent's plan."""
        await self.planner.user_decision(self.responder(self.conversation_id), decision, feedback)
        return self.state()

    async def plan_selection(self, quoted, goal: str | None) -> State:
        """"Plan a change here": planning starts with the selection's file as scope, and the
        selection (numbered lines) is the first message of the plan."""
        from ..plan.machine import PlanStateError

        cid = self.conversation_id
        agent = self.responder(cid)
        goal = goal.strip() if goal and goal.strip() else f"A change in {quoted.rel}"
        try:
            self.planner.enter(agent, cid, goal, [quoted.rel], by="user")
        except PlanStateError as exc:
            raise BadRequest(str(exc)) from None
        text = (
            f"Plan a change here: {goal}\n\n{quoted.text}\n\nPlan mode is on, scoped to {quoted.rel}: explore it "
            "with read-only tools, then present the plan with plan_exit."
        )
        await self.send(protocol.ChatSendParams(text=text))
        return self.state()

    async def start_in_mode(self, mode: str, text: str) -> State:
        """A code action's turn: the user's switch to `mode`, then `text` in the current conversation."""
        if self.modes.get(mode) is None:
            raise BadRequest(f"mode: Invalid mode: {mode}")
        self.switch_mode(mode, by="user")
        await self.send(protocol.ChatSendParams(text=text))
        return self.state()

    def _environment(self, mode: Mode, phase: str, agent: str) -> str:
        """environment_details for the agent's next user message: its plan and its todos too."""
        from ..plan.todos import as_text

        return environment_details(mode, phase, self.workspace.root, plan=self.planner.brief(agent), todos=as_text(self.todos(agent)))

    def _add_user_message(self, cid: str, text: str, task: Task, **metadata) -> StoredMessage:
        """A user message, with the environment_details block the model gets with it."""
        env = self._environment(task.mode, task.phase, task.agent)
        return self.add_message(StoredMessage(new_id("msg-"), cid, "user", text, None, {"environmentDetails": env, **metadata}))

    async def _wake(self, cid: str, agent: str, summons: Summons | None = None) -> None:
        """Start (or queue) the agent's turn in the conversation's runtime, made when needed."""
        runtime = self._conversations.get(cid)
        if runtime is None:
            if self._tg is None:  # the session's task group is about to start
                self._started = self._started or anyio.Event()
                with anyio.fail_after(10):
                    await self._started.wait()
            assert self._tg is not None
            runtime = self._conversations[cid] = ConversationRuntime(self, cid)
            self._tg.start_soon(runtime.serve)
        runtime.wake(agent, summons)

    @cached_property
    def wake_policy(self) -> "WakePolicy":
        """The wake guards; one per session: the rate limit spans chains and conversations."""
        from ..agents import WakePolicy

        return WakePolicy()

    def _released(self, runtime: ConversationRuntime) -> None:
        if self._conversations.get(runtime.id) is runtime:
            del self._conversations[runtime.id]

    def cancel(self, conversation_id: str) -> bool:
        runtime = self._conversations.get(conversation_id)
        return runtime.cancel() if runtime else False

    async def idle(self, conversation_id: str) -> None:
        """Until no turn runs in the conversation: the turns a message started and those they
        woke (ACP's session/prompt answers then)."""
        while (runtime := self._conversations.get(conversation_id)) is not None:
            await runtime.finished.wait()

    def open(self, conversation_id: str | None) -> State:
        """Make a conversation the current one (a new one with that id if unknown; without an
        id, a new one with an id of the server's). Turns running in others are not touched."""
        self._make_current(self._client_conversation(conversation_id) if conversation_id is not None else new_id("conv-"))
        return self.state()

    def list_conversations(self) -> ChatListResult:
        """The conversations a user can go back to (see Store.conversations: at most 200)."""
        return conversations.listed(self.store.conversations())

    def history(self, conversation_id: str) -> ChatHistoryResult:
        if not self.store.conversation_exists(conversation_id):
            raise BadRequest(f"conversationId: unknown conversation: {conversation_id}")
        return protocol.ChatHistoryResult(
            messages=[
                protocol.HistoryMessage(id=m.id, role=m.role, agent=m.agent, text=m.text, metadata=m.metadata)
                for m in self.store.messages(conversation_id)
            ]
        )

    # ------------------------------------------------------------ subtasks (new_task)

    async def run_subtask(self, ctx: ToolContext, mode: str, message: str) -> str:
        """Run a subtask in `mode` to completion; its result is the parent's tool result."""
        from .loop import Turn, run_loop

        parent_mode = self.mode_of(ctx.agent).slug
        child = new_id("conv-")
        self.store.ensure_conversation(child, ctx.agent, parent_id=ctx.conversation_id)
        task = self.switch_mode(
            mode, by="model", reason=f"Subtask: {message.splitlines()[0][:80]}", agent=ctx.agent, conversation_id=ctx.conversation_id
        )
        self._add_user_message(child, message, task, parentConversation=ctx.conversation_id)
        try:
            outcome, result = await run_loop(Turn(self, ctx.conversation_id, child, ctx.agent, ctx.turn_id))
        finally:
            self.switch_mode(parent_mode, by="model", reason="Subtask finished", agent=ctx.agent, conversation_id=ctx.conversation_id)
        name = task.mode.name
        if outcome == "completed" and result is not None:
            return f"Subtask in {name} mode completed:\n{result}"
        raise ToolError(f"The subtask in {name} mode ended without attempt_completion (outcome: {outcome}).")

    async def run_delegated(self, ctx: ToolContext, to: str, title: str, description: str) -> tuple[str, str | None]:
        """delegate_task: `to` works on the task in a conversation of its own under the
        delegator's (tracked like new_task's subtasks); its turn reports in the delegator's."""
        from .loop import run_turn
        from ..agents.summons import delegated

        child = new_id("conv-")
        self.store.ensure_conversation(child, to, parent_id=ctx.conversation_id)
        self._add_user_message(child, f"{title}\n\n{description}", self.task_for(to, ctx.conversation_id), parentConversation=ctx.conversation_id, delegatedBy=ctx.agent)
        return await run_turn(self, ctx.conversation_id, to, Summons(ctx.chain, ctx.agent, delegated(ctx.agent)), history_id=child)

    # ------------------------------------------------------------ checkpoints

    def idle_or_refuse(self, conversation_id: str, what: str) -> None:
        runtime = self._conversations.get(conversation_id)
        if runtime is not None and runtime.running:
            raise BadRequest(f"{what}: a turn is running in conversation {conversation_id}; cancel it first")

    async def restore_checkpoint(self, checkpoint_id: str, what: str) -> protocol.CheckpointsRestoreResult:
        self.idle_or_refuse(self.conversation_id, "restore")
        return await self.checkpoints.restore(checkpoint_id, what)

    def cut_conversation(self, conversation_id: str, seq: int) -> None:
        """The conversation as it was at message `seq`: later messages marked cut (kept in the
        store), the histories read again, and a new task for each agent that had one."""
        self.idle_or_refuse(conversation_id, "restore")
        self.store.cut_after(conversation_id, seq)
        self.histories.forget(conversation_id)
        for call in self.store.unanswered_calls(conversation_id):  # the calls the cut came before
            result = tool_result(call.get("id"), call.get("name"), "Restored")
            self.add_message(StoredMessage(new_id("msg-"), conversation_id, "tool", NOT_RUN_RESTORED, None, result))
        for agent, task in list(self.tasks.items()):
            self._build(agent, task.mode, task, conversation_id)

    # ------------------------------------------------------------ usage and cost

    def record_usage(self, conversation_id: str, task: Task, usage: "ModelUsage") -> None:
        """One model request's tokens and cost (None when the model's price is unknown): stored,
        then announced."""
        from ..providers.catalog import cost, price_of

        row = {
            "conversation_id": conversation_id,
            "task_id": task.id,
            "agent": task.agent,
            "mode": task.mode.slug,
            "phase": task.phase,
            "model": task.model_config.model,
            **usage._asdict(),
            "cost": cost(usage, price_of(task.model_config)),
        }
        self.store.add_usage(row)
        fields = {k: v for k, v in row.items() if k not in ("conversation_id", "model")}
        self.host.publish(protocol.UsageUpdate(conversation_id=conversation_id, **fields))

    async def condense(self, conversation_id: str | None) -> protocol.CondenseResult:
        """The conversation (by default the current one) as its responder's model sees it,
        condensed now (agent/context.py)."""
        from . import context

        return await context.condense_now(self, conversation_id or self.conversation_id)

    def usage(self, conversation_id: str | None) -> protocol.UsageGetResult:
        """The conversation's usage (by default the current one's), summed in total, per task,
        per mode and phase, and per agent. A sum's cost is None when one of its requests' is."""
        cid = conversation_id or self.conversation_id
        if not self.store.conversation_exists(cid):
            raise BadRequest(f"conversationId: unknown conversation: {cid}")
        rows = self.store.usage([cid])
        by_mode: dict[str, dict[str, list]] = {}
        for r in rows:
            by_mode.setdefault(r["mode"], {}).setdefault(r["phase"], []).append(r)
        return protocol.UsageGetResult(
            total=_summed(rows),
            by_task={t: _summed([r for r in rows if r["task_id"] == t]) for t in dict.fromkeys(r["task_id"] for r in rows)},
            by_mode={m: protocol.UsageByPhase(**{p: _summed(rs) for p, rs in phases.items()}) for m, phases in by_mode.items()},
            by_agent={a: _summed([r for r in rows if r["agent"] == a]) for a in dict.fromkeys(r["agent"] for r in rows)},
        )

    # ------------------------------------------------------------ todos (SPEC §4): the agent's, across conversations

    def todos(self, agent: str) -> list[protocol.Todo]:
        return [protocol.Todo.model_validate(item) for item in self.store.todos(agent)]

    def write_todos(self, agent: str, todos: list[protocol.Todo], conversation_id: str) -> None:
        """The agent's list becomes `todos`: committed first, then announced in the conversation."""
        self.store.replace_todos(agent, [todo.model_dump() for todo in todos])
        self.host.publish(protocol.TodosUpdate(conversation_id=conversation_id, agent=agent, todos=todos))

    def todos_result(self, agent: str | None) -> protocol.TodosGetResult:
        """The agent's list (by default the responder's in the current conversation), rendered."""
        from ..plan.todos import ansi_box, html

        agent = agent or self.responder(self.conversation_id)
        if self.agent(agent) is None:
            raise BadRequest(f"agent: unknown agent: {agent}")
        todos = self.todos(agent)
        return protocol.TodosGetResult(agent=agent, todos=todos, ansi=ansi_box(todos), html=html(todos))


def _summed(rows: list[dict]) -> protocol.Usage:
    costs = [r["cost"] for r in rows]
    return protocol.Usage(
        input_tokens=sum(r["input_tokens"] for r in rows),
        output_tokens=sum(r["output_tokens"] for r in rows),
        cache_read_tokens=sum(r["cache_read_tokens"] for r in rows),
        cache_write_tokens=sum(r["cache_write_tokens"] for r in rows),
        cost=None if None in costs else round(sum(costs), 10),
    )
