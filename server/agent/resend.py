"""A turn run again, and a message sent again in place of an earlier one (the chat's Retry and
Edit & resend).

    retry  `modus/chat/retry`: the agent whose turn failed or was cancelled runs again, on the
           conversation as it stands: the user's message stays, and what the failed turn stored
           is well formed (every call it made has a result), so the model gets it as it is.
    edit   `modus/chat/edit`: the conversation cut back to just before a message of the user's
           (as a checkpoint's restore of the conversation cuts it: the later messages kept in the
           store, marked; a new task), the files too when asked (to the checkpoint taken after
           that message, before anything changed them), then the new text sent as
           `modus/chat/send` sends it: slash commands, hooks and mentions apply.

Both are refused while a turn runs in the conversation. A failed or cancelled turn's last message
says why it ended (history.turn_ended): that is what retry looks for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable

import protocol

from ..errors import BadRequest
from ..roster.summons import Summons
from .checkpoints import Checkpoints
from .configuration import Configuration
from .conversations import Conversations
from .history import IMAGES, RETRYABLE
from .intake import Intake
from .own_commands import check as check_command, parse as own_command
from .runtimes import Runtimes

if TYPE_CHECKING:
    from protocol import ChatEditParams, ChatSendParams, ChatSendResult

#: `modus/chat/send` (through Modus's own commands: `/plan …` runs the command first).
Send = Callable[["ChatSendParams"], Awaitable["ChatSendResult"]]


class Resend:
    def __init__(
        self,
        config: Configuration,
        conversations: Conversations,
        runtimes: Runtimes,
        intake: Intake,
        send: Send,
        checkpoints: Checkpoints,
        cut: Callable[[str, int], None],
    ):
        """`cut`: the conversation back to a message and a new task (Session.cut_conversation)."""
        self.config = config
        self.conversations = conversations
        self.store = conversations.store
        self.runtimes = runtimes
        self.intake = intake
        self.send = send
        self.checkpoints = checkpoints
        self.cut = cut

    def conversation(self, conversation_id: str | None) -> str:
        """The conversation a request names (by default the current one), idle, or BadRequest."""
        if conversation_id is None:
            cid = self.conversations.current
        else:
            cid = self.conversations.chosen(conversation_id)
            if not self.store.conversation_exists(cid):
                raise BadRequest(f"conversationId: unknown conversation: {cid}")
        self.runtimes.refuse_if_busy(cid, "conversationId")
        return cid

    async def retry(self, conversation_id: str | None) -> protocol.ChatRetryResult:
        """The conversation's last turn, failed or cancelled (or interrupted by a stop of
        Modus), run again by its agent."""
        cid = self.conversation(conversation_id)
        last = self.store.last_with(cid, "turnId")  # a turn's last message, which says how it ended
        if last is None or last.metadata.get("outcome") not in RETRYABLE:
            why = "it has no turn" if last is None else "its last turn did not fail and was not cancelled"
            raise BadRequest(f"conversationId: nothing to retry in conversation {cid}: {why}")
        agent = last.agent or ""
        if self.config.agent(agent) is None:
            raise BadRequest(f"conversationId: the agent of the last turn of conversation {cid}, {agent}, is not configured any more")
        self.conversations.make_current(cid)
        await self.runtimes.wake(cid, agent, Summons())
        return protocol.ChatRetryResult(conversation_id=cid, agent=agent, retried=last.metadata["turnId"])

    async def edit(self, params: ChatEditParams) -> protocol.ChatEditResult:
        """Edit & resend: nothing changes until the new text has been checked (and its
        UserPromptSubmit hooks have let it through); then the files (when asked), the cut, the
        message."""
        cid = self.conversation(params.conversation_id)
        found = self.store.locate_message(cid, params.message_id)
        if found is None:
            raise BadRequest(f"messageId: unknown message: {params.message_id} (conversation {cid})")
        message, seq, cut = found
        if cut:
            raise BadRequest(f"messageId: {message.id} is no longer part of conversation {cid}: a restore or an edit cut it")
        if message.role != "user" or message.metadata.get("source"):
            raise BadRequest(f"messageId: {message.id} is not a message the user wrote (only those can be edited)")
        send = protocol.ChatSendParams(text=params.text, conversation_id=cid, images=self.images_of(message) or None)
        own = own_command(params.text) is not None  # a command of Modus's own runs once the cut is made
        if own:
            check_command(params.text, self.config.modes)  # what can fail before it runs fails before the cut
        prepared = None if own else await self.intake.prepare(send)
        self.runtimes.refuse_if_busy(cid, "conversationId")  # a turn may have started while the hooks ran
        files = await self.files(cid, seq) if params.files else {}
        self.cut(cid, seq - 1)
        sent = await self.send(send) if own or prepared is None else await self.intake.deliver_now(prepared)
        return protocol.ChatEditResult(**sent.model_dump(), **files)

    def images_of(self, message: StoredMessage) -> list[protocol.ImageData]:
        """The images the edited message carried: they go with its new text."""
        import base64

        found = []
        for ref in message.metadata.get(IMAGES) or ():
            stored = self.store.image(ref.get("id", "")) if isinstance(ref, dict) else None
            if stored is not None:
                found.append(protocol.ImageData(mime_type=stored[0], data=base64.b64encode(stored[1]).decode("ascii")))
        return found

    async def files(self, cid: str, seq: int) -> dict:
        """The workspace's files back to the checkpoint taken after message `seq` (see
        Checkpoints.taken_since); what became of them, as ChatEditResult's fields."""
        checkpoint, why = await self.checkpoints.taken_since(cid, seq)
        if checkpoint is None:
            return {"files_not_restored": why}
        restored = await self.checkpoints.restore(checkpoint, "files")
        return {"restored": restored.restored, "checkpoint": restored.checkpoint}
