"""The session: one workspace's agent, assembled from named parts.

    Configuration  the settings that apply, trust, modes, rules, the roster, MCP; refresh
    Conversations  the current one, history, restore's cut, recovery after a crash
    Switcher       each agent's task: mode and phase switches
    RuleBook       the rules a conversation's prompt tells (its touched files: Conversations)
    Runtimes       the turns under way: task groups, wakes, cancel, idle
    Intake         a user's message → a stored message with its environment → wakes
    MessageQueue   the messages sent while a turn of their agents runs, held until it has ended
    OwnCommands    `/plan`, `/act`, `/mode`, `/trust`, `/condense` in front of the Intake
    Resend         Retry (a failed or cancelled turn again) and Edit & resend (cut back, send anew)
    Planner, TodoList, UsageBook, Subtasks, Checkpoints, FileLocks
    Browsers       each conversation's browser (server/browser/), closed when its turn ends
    ports          what the tools see of all this (agent/ports.py)

The session builds them, runs the root task group, and keeps the requests LSP and ACP make.
"""

from __future__ import annotations

import os
from contextlib import asynccontextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, AsyncIterator

import anyio

import protocol  # the messages (protocol.messages) load with the first one used
from protocol import Settings, State

from ..browser.registry import Browsers
from ..errors import BadRequest
from ..host import Host
from ..state import Store, StoredMessage
from ..state.routed import Routed
from ..workspace import Workspace
from .checkpoints import Checkpoints
from .configuration import TURN_MODULES, Configuration
from .conversations import Conversations
from .hookbook import HookBook
from .intake import Intake
from .locks import FileLocks
from .own_commands import OwnCommands
from .queue import MessageQueue
from .resend import Resend
from .rulebook import RuleBook
from .runtimes import Runtimes
from .fanout import Fanout
from .space import SpaceLink
from .subtasks import Subtasks
from .switcher import Switcher
from .todo_list import TodoList
from .usage import UsageBook
from . import views

if TYPE_CHECKING:
    from protocol import AgentsListResult, ChatHistoryResult, ChatListResult, ChatSendParams, ChatSendResult, ModesListResult, PromptGetParams, PromptGetResult, RulesListParams, RulesListResult

    from ..roster import WakePolicy
    from ..roster.summons import Summons
    from ..state import StateStore
    from ..tools.ports import Ports
    from .planner import Planner

__all__ = ["Session", "TURN_MODULES"]


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
        #: what the parts publish to: a space conversation's updates go through the space (fanout.py)
        self.host = host = Fanout(host, lambda cid: bool(self.routed.in_space(cid)))
        self.config = Configuration(
            workspace, host, settings, global_modes=global_modes, global_mcp=global_mcp,
            current=lambda: self.conversation_id,
            changed=lambda: host.publish(protocol.StateChanged(conversation_id=self.conversation_id, state=self.state())),
        )
        self.state_dir = self.config.state_dir
        workspace.own = (Path(os.path.realpath(self.state_dir)),)  # the edit tools never write it
        self.routed = Routed(Store(self.state_dir))
        self.store: StateStore = self.routed
        if self.store.recovered is not None:
            host.show_message("warning", self.store.recovered.message())
        self.conversations = Conversations(self.store, host)
        self.space = SpaceLink(  # first: it sets aside a space conversation the state cannot read yet
            self.routed, host, lambda: self.config.settings, lambda: self.conversation_id, self.conversations.make_current,
            changed=lambda: host.publish(protocol.StateChanged(conversation_id=self.conversation_id, state=self.state())),
        )
        self.histories = self.conversations.histories
        self.rulebook = RuleBook(self.config, self.conversations.touched, self.store, lambda: self.conversation_id, self.responder, self.mode_of)
        self.hookbook = HookBook(self.config, host)
        self.switcher = Switcher(self.config, self.store, host, lambda: self.conversation_id, self.responder, self.rulebook.applying, self.hookbook.soon)
        self.runtimes = Runtimes(self.run_turn, lambda cid: self.queue.release(cid))
        self.todo_list = TodoList(self.store, host)
        self.queue = MessageQueue(host, self.store, self.runtimes.in_turn, self.runtimes.wake, lambda messages: self.intake.deliver(messages))
        self.intake = Intake(self.config, self.conversations, self.switcher, self.runtimes, lambda: self.planner, self.todo_list, self.hookbook, self.queue, self.space)
        self.own_commands = OwnCommands(self.config, self.intake, self.condense)
        self.usage_book = UsageBook(self.store, host)
        self.subtasks = Subtasks(self)
        self.file_locks = FileLocks()
        self.browsers = Browsers()
        self.checkpoints = Checkpoints(workspace, host, self.store, self.config, self.conversations, self.cut_conversation)
        self.resend = Resend(self.config, self.conversations, self.runtimes, self.intake, self.own_commands.send, self.checkpoints, self.cut_conversation)
        #: conversations being condensed on demand (modus/chat/condense): one at a time each
        self.condensing: set[str] = set()
        if close_interrupted:
            self.conversations.close_interrupted_turns()

    @cached_property
    def planner(self) -> Planner:
        """The agents' plans (loaded with the first plan tool or plan request, not at start-up)."""
        from .planner import Planner

        return Planner(self.store, self.host, self.workspace, self.config, self.conversations, self.switcher, self.intake.tell, self.hookbook.soon)

    @cached_property
    def wake_policy(self) -> WakePolicy:
        """The wake guards; one per session: the rate limit spans chains and conversations."""
        from ..roster import WakePolicy

        return WakePolicy()

    @cached_property
    def ports(self) -> Ports:
        """What the tools see of the session (made with the first tool call)."""
        from .ports import ports

        return ports(self)

    # what the parts hold, read by the turns and the requests

    conversation_id = property(lambda self: self.conversations.current, doc="Where requests without an id go.")
    settings = property(lambda self: self.config.settings, doc="The settings that apply now.")
    modes = property(lambda self: self.config.modes)
    layers = property(lambda self: self.config.layers)
    agents = property(lambda self: self.config.agents)
    mcp = property(lambda self: self.config.mcp)
    phase = property(lambda self: self.switcher.phase)
    tasks = property(lambda self: self.switcher.tasks)

    async def run_turn(self, cid: str, agent: str, summons: Summons) -> None:
        from .loop import run_turn

        await run_turn(self, cid, agent, summons)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Session]:
        """Run the session: turns live in this task group and stop when it closes."""
        await self.refresh()
        async with anyio.create_task_group() as tg:
            self.config.attach(tg)
            self.runtimes.serve(tg)
            self.space.serve(tg)
            self.hookbook.attach(tg, self.task_for(self.responder(self.conversation_id)))
            try:
                yield self
            finally:
                tg.cancel_scope.cancel()
                await self.browsers.close_all()  # what a turn being cancelled left open
        self.config.attach(None)
        self.runtimes.serve(None)
        self.space.serve(None)
        self.hookbook.attach(None)

    def close(self) -> None:
        self.space.close()
        self.store.close()

    def stale(self) -> bool:
        return self.config.stale()

    async def refresh(self) -> None:
        await self.config.refresh()
        self.space.apply()

    def update_settings(self, client: Settings | None = None) -> None:
        self.config.update_settings(client)
        self.space.apply()

    def trust_workspace_settings(self) -> State:
        self.config.trust_workspace_settings()
        self.space.apply()
        return self.state()

    def add_message(self, message: StoredMessage) -> StoredMessage:
        return self.conversations.add_message(message)

    def responder(self, cid: str) -> str:
        return self.conversations.responder(cid, self.config.agents)

    # ------------------------------------------------------------ modes, phases, tasks

    def mode_of(self, agent: str):
        return self.switcher.mode_of(agent)

    def task_for(self, agent: str, conversation_id: str | None = None):
        return self.switcher.task_for(agent, conversation_id)

    def switch_mode(self, slug: str, *, by: str, reason: str | None = None, agent: str | None = None, conversation_id: str | None = None):
        return self.switcher.switch_mode(slug, by=by, reason=reason, agent=agent, conversation_id=conversation_id)

    def set_phase(self, phase: str, *, by: str, agent: str | None = None, conversation_id: str | None = None):
        return self.switcher.set_phase(phase, by=by, agent=agent, conversation_id=conversation_id)

    async def mcp_ready(self, agent: str) -> None:
        await self.config.mcp_ready(self.mode_of(agent))

    async def user_set_phase(self, phase: str) -> State:
        await self.intake.user_set_phase(phase)
        return self.state()

    # ------------------------------------------------------------ requests

    def state(self) -> State:
        return views.state(self)

    def prompt(self, params: PromptGetParams) -> PromptGetResult:
        return self.switcher.prompt(params, self.intake.environment)

    async def rules_list(self, params: RulesListParams) -> RulesListResult:
        return await self.rulebook.listed(params)

    async def commands_list(self) -> protocol.CommandsListResult:
        await self.refresh()
        return views.commands(self.config.commands.found)

    async def skills_list(self) -> protocol.SkillsListResult:
        await self.refresh()
        return views.skills(self.config.skills.found)

    def list_agents(self) -> AgentsListResult:
        return views.agents(self.config, self.mode_of, self.space.humans(self.config.settings.members))

    def list_modes(self) -> ModesListResult:
        return views.modes(self.modes.modes, self.mode_of(self.responder(self.conversation_id)).slug)

    def mcp_list(self) -> protocol.McpListResult:
        return self.config.mcp_list()

    async def mcp_restart(self, name: str | None) -> protocol.McpListResult:
        return await self.config.mcp_restart(name)

    async def send(self, params: ChatSendParams) -> ChatSendResult:
        return await self.own_commands.send(params)

    async def plan_decision(self, decision: str, feedback: str | None) -> State:
        """`modus/plan/approve|reject`: the user's decision on the current agent's plan."""
        await self.planner.user_decision(self.responder(self.conversation_id), decision, feedback)
        return self.state()

    async def plan_selection(self, quoted, goal: str | None) -> State:
        await self.intake.plan_selection(quoted, goal)
        return self.state()

    async def start_in_mode(self, mode: str, text: str, files: tuple[str, ...] = ()) -> State:
        await self.intake.start_in_mode(mode, text, files)
        return self.state()

    def cancel(self, conversation_id: str) -> bool:
        return self.runtimes.cancel(conversation_id)

    async def idle(self, conversation_id: str) -> None:
        await self.runtimes.idle(conversation_id)

    def open(self, conversation_id: str | None) -> State:
        """Make a conversation the current one (a new one with that id if unknown; without an
        id, a new one with an id of the server's). Turns running in others are not touched."""
        from ..state.records import new_id

        self.conversations.make_current(self.conversations.chosen(conversation_id) if conversation_id is not None else new_id("conv-"))
        return self.state()

    def list_conversations(self) -> ChatListResult:
        return self.conversations.listed()

    def history(self, conversation_id: str, before: int | None = None, limit: int | None = None) -> ChatHistoryResult:
        """Its stored messages (a page of them: `before`, `limit`), and those queued behind a running turn."""
        queued = self.queue.listed(conversation_id)
        return self.conversations.history(conversation_id, before, limit).model_copy(update={"queued": queued or None})

    async def restore_checkpoint(self, checkpoint_id: str, what: str) -> protocol.CheckpointsRestoreResult:
        self.runtimes.refuse_if_busy(self.conversation_id, "restore")
        return await self.checkpoints.restore(checkpoint_id, what)

    def cut_conversation(self, conversation_id: str, seq: int) -> None:
        """The conversation as it was at message `seq`, and a new task for each agent that had one."""
        self.runtimes.refuse_if_busy(conversation_id, "restore")
        self.conversations.cut(conversation_id, seq)
        self.switcher.rebuild(conversation_id)

    async def condense(self, conversation_id: str | None) -> protocol.CondenseResult:
        """The conversation (by default the current one) as its responder's model sees it,
        condensed now (agent/context.py)."""
        from . import context

        return await context.condense_now(self, conversation_id or self.conversation_id)

    def usage(self, conversation_id: str | None) -> protocol.UsageGetResult:
        return self.usage_book.of(conversation_id or self.conversation_id)

    def todos(self, agent: str) -> list[protocol.Todo]:
        return self.todo_list.todos(agent)

    def todos_result(self, agent: str | None) -> protocol.TodosGetResult:
        """The agent's list (by default the responder's in the current conversation), rendered."""
        agent = agent or self.responder(self.conversation_id)
        if self.config.agent(agent) is None:
            raise BadRequest(f"agent: unknown agent: {agent}")
        return self.todo_list.result(agent)
