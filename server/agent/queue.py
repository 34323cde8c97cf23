"""Messages queued behind a running turn.

A message sent while a turn of an agent it goes to is under way waits here, outside the
conversation: no model sees it, the running turn's next request included. The clients see it as
a user `message` with `queued: true`. When that turn has ended (completed, failed or cancelled:
a cancel keeps the queue, as Roo Code does), the queued messages go into the conversation in the
order they were sent, each as the user message it would have been (the same `messageId`, its
`message` update again without `queued`), and one turn of each agent they go to answers them
together: what the user wrote while waiting is read as one reply, the later words correcting the
earlier, rather than answered one turn at a time. Until then a queued message can be taken back
(`modus/chat/unqueue`).

Messages enter in order: while one waits, those sent after it wait too, whoever they go to. The
queue is held in memory: a server that stops forgets what was queued (the turn it waited for ends
then too).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Awaitable, Callable, Iterable, Sequence

import protocol

from ..errors import BadRequest
from ..host import Host
from .conversations import checked_id

if TYPE_CHECKING:
    from ..roster.summons import Summons
    from ..state import StateStore
    from .intake import Prepared

#: Puts messages into the conversation (Intake.deliver): the agents to wake, and why.
Deliver = Callable[["Sequence[Prepared]"], "list[tuple[str, Summons]]"]
#: Whether a turn of one of the agents is under way in the conversation (Runtimes.in_turn).
InTurn = Callable[[str, Iterable[str]], bool]
#: Starts an agent's turn in the conversation (Runtimes.wake).
Wake = Callable[[str, str, "Summons"], Awaitable[None]]


class MessageQueue:
    def __init__(self, host: Host, store: StateStore, in_turn: InTurn, wake: Wake, deliver: Deliver):
        self.host = host
        self.store = store
        self.in_turn = in_turn
        self.wake = wake
        self.deliver = deliver
        self.held: dict[str, list[Prepared]] = {}

    def must_wait(self, message: Prepared) -> bool:
        """Whether the message waits: a turn of an agent it goes to is under way, or an earlier
        message waits."""
        cid = message.conversation_id
        return bool(self.held.get(cid)) or self.in_turn(cid, message.targets)

    def hold(self, message: Prepared) -> None:
        self.held.setdefault(message.conversation_id, []).append(message)
        self.host.publish(
            protocol.MessageUpdate(
                conversation_id=message.conversation_id, role="user", text=message.typed, message_id=message.id, queued=True,
                images=message.image_refs or None,
            )
        )

    def release(self, cid: str) -> list[tuple[str, Summons]]:
        """After a turn of the conversation ended: the messages at the head of its queue whose
        agents are in no turn now go in, together; the agents to wake for them."""
        waiting = self.held.get(cid)
        going: list[Prepared] = []
        while waiting and not self.in_turn(cid, waiting[0].targets):
            going.append(waiting.pop(0))
        if not waiting:
            self.held.pop(cid, None)
        return self.deliver(going) if going else []

    async def unqueue(self, cid: str, message_id: str) -> protocol.ChatUnqueueResult:
        """`modus/chat/unqueue`: the message taken back; those it held up (sent after it, to
        agents in no turn) go in now."""
        taken = self.take_back(checked_id(cid), message_id)
        for agent, summons in self.release(cid):
            await self.wake(cid, agent, summons)
        images = [protocol.ChatImageResult(mime_type=i.mime_type, data=base64.b64encode(i.data).decode()) for i in taken.images]
        return protocol.ChatUnqueueResult(conversation_id=cid, message_id=taken.id, text=taken.typed, images=images or None)

    def take_back(self, cid: str, message_id: str) -> Prepared:
        """`modus/chat/unqueue`: the queued message, removed (an `unqueued` update says so)."""
        waiting = self.held.get(cid, [])
        found = next((m for m in waiting if m.id == message_id), None)
        if found is None:
            if self.store.locate_message(cid, message_id) is not None:
                raise BadRequest(f"messageId: {message_id} is not queued: it is in the conversation already (its turn has started)")
            raise BadRequest(f"messageId: unknown queued message: {message_id} (conversation {cid})")
        waiting.remove(found)
        if not waiting:
            self.held.pop(cid, None)
        self.host.publish(protocol.Unqueued(conversation_id=cid, message_id=found.id, text=found.typed))
        return found

    def listed(self, cid: str) -> list[protocol.QueuedMessage]:
        return [protocol.QueuedMessage(message_id=m.id, text=m.typed, dispatched=list(m.targets)) for m in self.held.get(cid, ())]
