"""Modes and phases: each agent's current task, and the switches that replace it.

A task is built for exactly one (mode, phase) by the one factory (task.py). A switch disposes the
agent's task and builds one for the new mode or phase; the conversation carries over. A task is
also rebuilt when something its prompt depends on changed (`Configuration.generation`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import anyio

import protocol

from ..errors import BadRequest
from ..host import Host
from ..modes import DEFAULT_MODE, Mode
from ..prompt import PromptContext, RuleFile, build_prompt
from ..providers import ModelLimits, ScriptCursor
from ..state import StateStore
from .configuration import Configuration
from .task import Task, ToolDocs, build_task, enabled_tools

if TYPE_CHECKING:
    from protocol import PromptGetParams, PromptGetResult

#: The agent who answers in a conversation (Conversations.responder over the roster).
Responder = Callable[[str], str]
#: The rules of a mode's prompt in a conversation (RuleBook.applying).
RulesOf = Callable[[str, str], tuple[RuleFile, ...]]


class Switcher:
    def __init__(self, config: Configuration, store: StateStore, host: Host, current: Callable[[], str], responder: Responder, rules: RulesOf,
                 told: Callable[..., None] = lambda event, **fields: None):
        self.config = config
        self.rules = rules
        #: a switch made: the ModeChange and PhaseChange hooks are told (HookBook.soon)
        self.told = told
        self.store = store
        self.host = host
        self.current = current
        self.responder = responder
        self.tasks: dict[str, Task] = {}
        self.cursors: dict[str, ScriptCursor] = {}
        # back where the workspace was: each agent's mode (read when first used), the phase
        self.agent_modes: dict[str, str] = {}
        self.phase = store.get_meta("phase", "act") or "act"
        #: a mode switch by the model holds the next tool call until then (modeSwitchDelayMs)
        self.settle_until = 0.0

    def mode(self, slug: str) -> Mode | None:
        return self.config.modes.get(slug)

    def mode_of(self, agent: str) -> Mode:
        """The agent's mode: the one it last switched to (kept in the store), else the mode its
        configuration names, else the workspace's mode from before there were several agents,
        else the default. A mode gone from the modes files falls back to the default."""
        slug = self.agent_modes.get(agent)
        if slug is None:
            config = self.config.agent(agent)
            slug = (
                self.store.get_meta(f"mode:{agent}")
                or (config.mode if config else None)
                or self.store.get_meta("mode")
                or DEFAULT_MODE
            )
            self.agent_modes[agent] = slug
        return self.config.modes.get_or_default(slug)

    def task_for(self, agent: str, conversation_id: str | None = None) -> Task:
        """The agent's current task; rebuilt when the mode, phase, mode file or settings changed,
        or the rules that apply in the conversation (a file touched, another conversation).
        `conversation_id`: where it is used (a turn's; by default the current one)."""
        mode = self.mode_of(agent)
        task = self.tasks.get(agent)
        cid = conversation_id or self.current()
        if (
            task
            and task.mode is mode
            and task.phase == self.phase
            and task.generation == self.config.generation
            and task.context.rules == self.rules(mode.slug, cid)
        ):
            return task
        return self.build(agent, mode, task, cid)

    def prompt_context(self, mode: Mode, phase: str, agent: str, conversation_id: str | None = None) -> PromptContext:
        config, settings = self.config.agent(agent), self.config.settings
        skills = self.config.skills.for_mode(mode.skills)
        tools = enabled_tools(mode, phase, settings.yolo, handoffs=len(self.config.agents) > 1, skills=bool(skills))
        return PromptContext(
            mode=mode,
            phase=phase,
            tools=tools,
            docs=ToolDocs(tools),
            skills=tuple((s.name, s.description) for s in skills),
            mcp=self.config.mcp_views(mode, tools),
            modes=self.config.modes.modes,
            workspace=self.config.workspace.root,
            yolo=settings.yolo,
            agent=agent,
            agent_instructions=config.instructions if config else None,
            roster=self.config.roster(),
            rules=self.rules(mode.slug, conversation_id or self.current()),
        )

    def build(self, agent: str, mode: Mode, replaces: Task | None, conversation_id: str) -> Task:
        config = self.config.agent(agent)
        task = build_task(
            context=self.prompt_context(mode, self.phase, agent, conversation_id),
            agent_model=config.model if config else None,
            models=self.config.settings.models,
            cursor=self.cursors.setdefault(agent, ScriptCursor()),
            generation=self.config.generation,
            limits=ModelLimits.of(self.config.settings),
        )
        self.store.add_task(task.id, agent, mode.slug, self.phase, conversation_id, None, replaces.id if replaces else None)
        self.tasks[agent] = task
        return task

    def rebuild(self, conversation_id: str) -> None:
        """A new task for each agent that has one (its conversation was cut)."""
        for agent, task in list(self.tasks.items()):
            self.build(agent, task.mode, task, conversation_id)

    def switch_mode(
        self, slug: str, *, by: str, reason: str | None = None, agent: str | None = None, conversation_id: str | None = None
    ) -> Task:
        """Dispose the agent's task and build one for the new mode; the conversation carries over.
        `conversation_id`: where the switch happens (a turn's; by default the current one)."""
        mode = self.config.modes.get(slug)
        if mode is None:
            raise BadRequest(f"Invalid mode: {slug}")
        cid = conversation_id or self.current()
        agent = agent or self.responder(cid)
        current = self.task_for(agent, cid)
        if mode is current.mode:
            return current
        previous = current.mode.slug
        self.agent_modes[agent] = mode.slug
        self.store.set_meta(**{f"mode:{agent}": mode.slug})
        task = self.build(agent, mode, current, cid)
        self.host.publish(
            protocol.ModeChanged(conversation_id=cid, agent=agent, task_id=task.id, from_=previous, to=mode.slug, reason=reason, by=by)
        )
        self.told("ModeChange", conversation_id=cid, agent=agent, mode=mode.slug, phase=self.phase, from_mode=previous, by=by, reason=reason)
        if by == "model":
            self.settle_until = anyio.current_time() + self.config.settings.mode_switch_delay_ms / 1000
        return task

    def set_phase(self, phase: str, *, by: str, agent: str | None = None, conversation_id: str | None = None) -> Task:
        """Dispose the agent's task and build one for the new phase (PLAN ⇄ ACT), as a mode switch
        does; the conversation carries over. The current phase changes nothing."""
        if phase not in ("plan", "act"):
            raise BadRequest(f"phase: must be 'plan' or 'act', got {phase!r}")
        cid = conversation_id or self.current()
        agent = agent or self.responder(cid)
        current = self.task_for(agent, cid)
        if phase == self.phase:
            return current
        previous, self.phase = self.phase, phase
        self.store.set_meta(phase=phase)
        task = self.build(agent, current.mode, current, cid)
        self.host.publish(protocol.PhaseChanged(conversation_id=cid, agent=agent, task_id=task.id, from_=previous, to=phase, by=by))
        self.told("PhaseChange", conversation_id=cid, agent=agent, mode=current.mode.slug, phase=phase, from_phase=previous, by=by)
        return task

    async def wait_settled(self) -> None:
        remaining = self.settle_until - anyio.current_time()
        if remaining > 0:
            await anyio.sleep(remaining)

    def prompt(self, params: PromptGetParams, environment: Callable[[Mode, str, str], str]) -> PromptGetResult:
        """The system prompt a task with that mode/phase/agent would get in the current
        conversation (its touched files wake its conditional rules), without building one."""
        agent = params.agent or self.responder(self.current())
        if self.config.agent(agent) is None:
            raise BadRequest(f"agent: unknown agent: {agent}")
        mode = self.config.modes.get(params.mode) if params.mode else self.mode_of(agent)
        if mode is None:
            raise BadRequest(f"Invalid mode: {params.mode}")
        context = self.prompt_context(mode, params.phase or self.phase, agent, self.current())
        prompt = build_prompt(context)
        return protocol.PromptGetResult(
            text=prompt.text,
            sections=[protocol.PromptSection(id=s.id, text=s.text) for s in prompt.sections],
            tools=[t.name for t in context.docs],
            environment_details=environment(mode, context.phase, agent),
        )

