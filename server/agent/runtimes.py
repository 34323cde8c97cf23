"""Where turns run: the session's task group, one runtime per conversation with turns under way.

Each conversation runs in its own task group, each agent turn in its own cancel scope, so nothing
outlives its owner and `modus/chat/cancel` reaches every turn of the conversation. A runtime
lives while turns run: when the last one ends its task group closes and it is let go (an idle
conversation costs nothing but its rows in the store).

Between two turns, and after a cancelled one, the runtime asks what comes next (`Between`: the
messages queued behind the turn, agent/queue.py) and starts the turns that answer it.
"""

from __future__ import annotations

import logging
from typing import Awaitable, Callable, Iterable

import anyio
from anyio.abc import TaskGroup

from ..roster.summons import Summons
from ..errors import BadRequest

log = logging.getLogger(__name__)

#: Runs one turn of an agent in a conversation (agent/loop.py's run_turn, bound to the session).
RunTurn = Callable[[str, str, Summons], Awaitable[object]]
#: A turn of the conversation has ended: the agents to wake now, and why (the queue's messages
#: that may go in now, agent/queue.py). Called with no turn under way for the agent that ended.
Between = Callable[[str], "list[tuple[str, Summons]]"]


def nothing_between(cid: str) -> list[tuple[str, Summons]]:
    return []


class ConversationRuntime:
    """The running side of one conversation: its task group and the agents' turns in it."""

    def __init__(
        self, conversation_id: str, run_turn: RunTurn, released: Callable[["ConversationRuntime"], None], between: Between = nothing_between
    ):
        self.id = conversation_id
        self.run_turn = run_turn
        self.released = released
        self.between = between
        #: the agents with turns to run (a scope each), in a turn or between two
        self.running: dict[str, anyio.CancelScope] = {}
        #: the agents in a turn now (their run_turn under way)
        self.turning: set[str] = set()
        self.pending: set[str] = set()
        #: why each agent runs next (its chain, who woke it, the replies waiting for it)
        self.reasons: dict[str, Summons] = {}
        self.task_group: TaskGroup | None = None
        self.queued: list[str] = []
        #: set when the last turn has ended and the runtime is let go
        self.finished = anyio.Event()

    async def serve(self) -> None:
        try:
            async with anyio.create_task_group() as tg:
                self.task_group = tg
                for agent in self.queued:
                    self.wake(agent)
                self.queued.clear()
        finally:
            self.task_group = None
            self.released(self)
            self.finished.set()

    def wake(self, agent: str, summons: Summons | None = None) -> None:
        waiting = self.reasons.get(agent)
        if summons is not None:
            self.reasons[agent] = waiting.then(summons) if waiting else summons
        if agent in self.running:
            self.pending.add(agent)  # it runs again once its current turn ends
        elif self.task_group is None:
            self.queued.append(agent)  # serve() has not started yet
        else:
            scope = self.running[agent] = anyio.CancelScope()
            self.task_group.start_soon(self.turns, agent, scope)

    async def turns(self, agent: str, scope: anyio.CancelScope) -> None:
        """The agent's turns, one after another while messages for it arrive."""
        try:
            with scope:
                while True:
                    self.turning.add(agent)
                    try:
                        await self.run_turn(self.id, agent, self.reasons.pop(agent, None) or Summons())
                    finally:
                        self.turning.discard(agent)
                    self.next()  # what waited for this turn (it may wake this agent again)
                    if agent not in self.pending:
                        break
                    self.pending.discard(agent)
        finally:
            self.running.pop(agent, None)
            if agent not in self.pending and agent in self.reasons:  # cancelled before it ran
                self.reasons.pop(agent).answer("cancelled", "")
        if scope.cancel_called:  # what waited for the cancelled turn goes on (the queue is kept)
            self.next()
        if agent in self.pending:  # a message arrived after a cancel
            self.pending.discard(agent)
            self.wake(agent)

    def next(self) -> None:
        try:
            wakes = self.between(self.id)
        except Exception:  # a bug must not end the conversation's other turns, or the server
            log.exception("what waited for a turn of conversation %s could not go on", self.id)
            return
        for agent, summons in wakes:
            self.wake(agent, summons)

    def cancel(self) -> bool:
        self.pending.clear()
        self.queued.clear()
        for summons in self.reasons.values():
            summons.answer("cancelled", "")
        self.reasons.clear()
        for scope in self.running.values():
            scope.cancel()
        return bool(self.running)


class Runtimes:
    """The conversations with turns under way, in the session's task group."""

    def __init__(self, run_turn: RunTurn, between: Between = nothing_between):
        self.run_turn = run_turn
        self.between = between
        self.task_group: TaskGroup | None = None
        self.started: anyio.Event | None = None
        self.live: dict[str, ConversationRuntime] = {}

    def serve(self, task_group: TaskGroup | None) -> None:
        """Turns start in `task_group` from now on (None: the session stopped)."""
        self.task_group = task_group
        if task_group is None:
            self.live.clear()
        elif self.started is not None:
            self.started.set()

    async def wake(self, cid: str, agent: str, summons: Summons | None = None) -> None:
        """Start (or queue) the agent's turn in the conversation's runtime, made when needed."""
        runtime = self.live.get(cid)
        if runtime is None:
            if self.task_group is None:  # the session's task group is about to start
                self.started = self.started or anyio.Event()
                with anyio.fail_after(10):
                    await self.started.wait()
            assert self.task_group is not None
            runtime = self.live[cid] = ConversationRuntime(cid, self.run_turn, self.released, self.between)
            self.task_group.start_soon(runtime.serve)
        runtime.wake(agent, summons)

    def released(self, runtime: ConversationRuntime) -> None:
        if self.live.get(runtime.id) is runtime:
            del self.live[runtime.id]

    def busy(self, cid: str) -> bool:
        """Whether a turn runs in the conversation."""
        runtime = self.live.get(cid)
        return runtime is not None and bool(runtime.running)

    def in_turn(self, cid: str, agents: Iterable[str] | None = None) -> bool:
        """Whether a turn is under way in the conversation now (of one of `agents`, when given):
        between two turns of an agent, none is."""
        runtime = self.live.get(cid)
        if runtime is None:
            return False
        return bool(runtime.turning) if agents is None else any(a in runtime.turning for a in agents)

    def refuse_if_busy(self, cid: str, what: str) -> None:
        if self.busy(cid):
            raise BadRequest(f"{what}: a turn is running in conversation {cid}; cancel it first")

    def cancel(self, cid: str) -> bool:
        runtime = self.live.get(cid)
        return runtime.cancel() if runtime else False

    async def idle(self, cid: str) -> None:
        """Until no turn runs in the conversation: the turns a message started and those they
        woke (ACP's session/prompt answers then)."""
        while (runtime := self.live.get(cid)) is not None:
            await runtime.finished.wait()
