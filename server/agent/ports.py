"""The tools' ports (tools/ports.py), served by the session's parts: most are the parts
themselves; the conversation's hand-offs and the gate's guards gather a few of them. Made with
the first tool call (the planner loads then)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from ..tools.ports import Ports

if TYPE_CHECKING:
    from ..roster import Chain, Refusal
    from ..roster.summons import Summons
    from ..state import StoredMessage
    from .session import Session


class Handoffs:
    """The Chat port: the roster, the conversation's messages, wakes, and who waits for whom."""

    def __init__(self, session: Session):
        self.session = session
        #: ask_agent calls under way: (conversation, asker) → the agent asked
        self.asked: dict[tuple[str, str], str] = {}

    def agent_names(self) -> list[str]:
        return [a.name for a in self.session.config.agents]

    def add_message(self, message: StoredMessage) -> StoredMessage:
        return self.session.conversations.add_message(message)

    async def wake(self, conversation_id: str, agent: str, summons: Summons | None = None) -> None:
        await self.session.runtimes.wake(conversation_id, agent, summons)

    def admit(self, chain: Chain, agent: str, to: str) -> Refusal | None:
        from ..roster import Refusal

        [decision] = self.session.wake_policy.decide(chain, agent, [to])
        return decision if isinstance(decision, Refusal) else None

    def waiting_for(self, conversation_id: str, agent: str) -> str | None:
        return self.asked.get((conversation_id, agent))

    @contextmanager
    def asking(self, conversation_id: str, asker: str, to: str) -> Iterator[None]:
        key = (conversation_id, asker)
        self.asked[key] = to
        try:
            yield
        finally:
            self.asked.pop(key, None)


class Guards:
    """The Guards port: what the gate holds a call to."""

    def __init__(self, session: Session):
        self.session = session

    async def settled(self) -> None:
        await self.session.switcher.wait_settled()

    def plan_state(self, agent: str):
        return self.session.planner.current(agent)

    def hold(self, path: Path):
        return self.session.file_locks.hold(path)

    async def checkpoint(self, label: str, conversation_id: str, tool_call_id: str | None) -> str | None:
        return await self.session.checkpoints.take(label, conversation_id, tool_call_id)


class Images:
    """The Images port: the state store's images, each stored once by the hash of its bytes."""

    def __init__(self, session: Session):
        self.session = session

    def put(self, conversation_id: str, mime_type: str, data: bytes) -> str:
        return self.session.store.put_image(conversation_id, mime_type, data)

    def get(self, image_id: str) -> tuple[str, bytes] | None:
        return self.session.store.image(image_id)


def ports(session: Session) -> Ports:
    return Ports(
        host=session.host,
        workspace=session.workspace,
        config=session.config,
        chat=Handoffs(session),
        switches=session.switcher,
        plans=session.planner,
        todos=session.todo_list,
        subtasks=session.subtasks,
        guards=Guards(session),
        hooks=session.hookbook,
        images=Images(session),
        browsers=session.browsers,
    )
