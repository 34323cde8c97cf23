"""Conversations: the current one, the ids a client may choose, the list's rows, their history
and the files they touched, a restore's cut, who answers a message, and the turns a crash left
open."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import protocol

from ..errors import BadRequest
from ..host import Host
from ..state import StoredMessage
from ..state.records import ConversationRow, iso_utc, new_id
from ..workspace import clip
from .history import IMAGES, Histories, tool_result, turn_ended
from .touched import TouchedFiles

if TYPE_CHECKING:
    from protocol import AgentConfig

    from ..state import StateStore

log = logging.getLogger(__name__)

#: What a client may choose as a conversation id (a UUID, a `conv-…` id of the server's, ...).
CONVERSATION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
TITLE_LENGTH = 80

INTERRUPTED_CALL = "The turn was interrupted: Modus stopped before this tool call returned a result. Check the state before you retry."
INTERRUPTED_TURN = "The turn of {agent} was interrupted: Modus stopped before it ended."
NOT_RUN_RESTORED = "Not run: the conversation was restored to a checkpoint taken before this call."
INTERRUPTED_NOTICE = "It is not run again by itself: send a message in conversation {conversation} to go on."


def checked_id(conversation_id: str) -> str:
    """A conversation id from a client, or BadRequest naming the field."""
    if not CONVERSATION_ID.fullmatch(conversation_id):
        raise BadRequest(
            "conversationId: must be 1 to 128 letters, digits or '.', '_', ':', '-', "
            f"starting with a letter or digit; got {clip(repr(conversation_id), 60)}"
        )
    return conversation_id


def title(first_user_text: str | None) -> str:
    """The first non-empty line of the first user message, blanks collapsed, at most 80
    characters (a longer one is cut with "…"); empty when there is no user message."""
    lines = (" ".join(line.split()) for line in (first_user_text or "").splitlines())
    line = next((line for line in lines if line), "")
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1].rstrip() + "…"


def listed(rows: Iterable[ConversationRow]) -> protocol.ChatListResult:
    return protocol.ChatListResult(
        conversations=[
            protocol.ConversationSummary(
                id=row.id,
                title=title(row.first_user_text),
                created_at=iso_utc(row.created_at),
                updated_at=iso_utc(row.updated_at),
                mode=row.mode,
                messages=row.messages,
            )
            for row in rows
        ]
    )


#: `modus/chat/history` without `before` or `limit`: every message (what clients rely on); a page
#: with `before` and no `limit`: this many.
ALL_MESSAGES = 1_000_000_000
HISTORY_PAGE = 50


class Conversations:
    """The conversations of the workspace's store, and which one is current: requests without an
    id go to it, and a restarted server continues it."""

    def __init__(self, store: StateStore, host: Host):
        self.store = store
        self.host = host
        self.histories = Histories(store)
        self.touched = TouchedFiles(store)
        self.current = store.get_meta("conversation") or ""
        if not self.current:
            self.make_current(new_id("conv-"))

    def make_current(self, cid: str, owner: str | None = None) -> None:
        """The conversation (made if new) becomes the current one. Turns running elsewhere go on."""
        self.store.ensure_conversation(cid, owner)
        if cid != self.current:
            self.current = cid
            self.store.set_meta(conversation=cid)

    def chosen(self, cid: str) -> str:
        """A conversation id a client chose (to send to, or to open), or BadRequest."""
        parent = self.store.conversation_parent(checked_id(cid))
        if parent is not None:
            raise BadRequest(f"conversationId: {cid} is a subtask's conversation; open {parent}, the one it belongs to")
        return cid

    def add_message(self, message: StoredMessage) -> StoredMessage:
        """Every message is written here: to the store, and to the history the model reads."""
        self.store.add_message(message)
        self.histories.written(message)
        self.touched.written(message)
        return message

    def responder(self, cid: str, agents: list[AgentConfig]) -> str:
        """Who answers a message that mentions nobody (SPEC §5): the last agent that spoke, the
        conversation's owner, the first top-level agent, the first agent."""
        from ..roster import default_responder

        last = self.store.last_speaker(cid, [a.name for a in agents])
        return default_responder(last, self.store.conversation_owner(cid), agents) or agents[0].name

    def answer_waiting_calls(self, cid: str, text: str) -> bool:
        """plan_mode_respond's result is written when the user answers (a message, or a switch
        to ACT), so that it can say which; call this only while no turn runs in `cid`."""
        waiting = self.store.unanswered_calls(cid)
        for call in waiting:
            self.add_message(StoredMessage(new_id("msg-"), cid, "tool", text, None, tool_result(call.get("id"), call.get("name"))))
        return bool(waiting)

    def close_interrupted_turns(self) -> None:
        """Turns that were running when the server stopped (a crash, a kill): each tool call left
        without a result gets one, so the history stays well formed for the provider, and the
        turn is marked `interrupted`, in one transaction. Then the client is told, once: the
        next start finds the turn closed. Nothing of the turn runs again by itself."""
        for turn_id, cid, agent in self.store.open_turns():
            if self._interrupt(turn_id, cid, agent, lambda: self.store.end_turn(turn_id, "interrupted") or True):  # noqa: B023
                log.warning("turn %s of %s was interrupted when Modus stopped; its open tool calls were closed", turn_id, agent)
                self.host.show_message("warning", f"{INTERRUPTED_TURN.format(agent=agent)} {INTERRUPTED_NOTICE.format(conversation=cid)}")

    def close_abandoned_turns(self, turns: Sequence[tuple[str, str, str]], claim: Callable[[str], bool]) -> None:
        """A team space's turns whose server died (their lease ran out), as close_interrupted_turns
        closes this server's own; `claim(turn id)` marks one `interrupted` for the one server
        that gets there first. Every attached server's clients see it end (`turn_ended`)."""
        for turn_id, cid, agent in turns:
            if self._interrupt(turn_id, cid, agent, lambda: claim(turn_id)):  # noqa: B023
                log.warning("turn %s of %s ended interrupted: its server left the space", turn_id, agent)
                text = INTERRUPTED_TURN.format(agent=agent)
                self.host.publish(
                    protocol.TurnEnded(conversation_id=cid, agent=agent, turn_id=turn_id, outcome="interrupted",
                                       error=protocol.TurnError(type="Interrupted", message=text))
                )

    def _interrupt(self, turn_id: str, cid: str, agent: str, close: Callable[[], bool]) -> bool:
        """Every call of the turn given a result and its end said, with `close()` (False: it was
        closed already), in one transaction; the clients told."""
        text = INTERRUPTED_TURN.format(agent=agent)
        with self.store.transaction():
            if not close():
                return False
            for history_id in self.store.subconversations(cid):
                for call in self.store.unanswered_calls(history_id):
                    result = tool_result(call.get("id"), call.get("name"), "Interrupted")
                    self.add_message(StoredMessage(new_id("msg-"), history_id, "tool", INTERRUPTED_CALL, None, result))
            ended = {"turnId": turn_id, **turn_ended("interrupted", "Interrupted", text)}
            self.add_message(StoredMessage(new_id("msg-"), cid, "system", text, agent, ended))
        self.host.publish(protocol.MessageUpdate(conversation_id=cid, agent=agent, turn_id=turn_id, role="system", text=text))
        return True

    def cut(self, cid: str, seq: int) -> None:
        """The conversation as it was at message `seq`: later messages marked cut (kept in the
        store), the histories read again, the calls the cut came before given a result. The
        clients are told (`conversation_cut`), before the result: it follows the cut."""
        first = self.store.first_after(cid, seq)
        count = self.store.cut_after(cid, seq)
        self.histories.forget(cid)
        self.touched.forget(cid)
        for call in self.store.unanswered_calls(cid):
            result = tool_result(call.get("id"), call.get("name"), "Restored")
            self.add_message(StoredMessage(new_id("msg-"), cid, "tool", NOT_RUN_RESTORED, None, result))
        self.host.publish(protocol.ConversationCut(conversation_id=cid, message_id=first, messages=count))

    def listed(self) -> protocol.ChatListResult:
        """The conversations a user can go back to (see Store.conversations: at most 200)."""
        return listed(self.store.conversations())

    def image(self, image_id: str) -> protocol.ChatImageResult:
        """`modus/chat/image`: a stored image (a user's, a tool's), its bytes in base64."""
        import base64

        found = self.store.image(image_id)
        if found is None:
            raise BadRequest(f"id: unknown image: {image_id}")
        return protocol.ChatImageResult(mime_type=found[0], data=base64.b64encode(found[1]).decode("ascii"))

    def history(self, cid: str, before: int | None = None, limit: int | None = None) -> protocol.ChatHistoryResult:
        """The `limit` messages just before number `before` (the newest without it), oldest first;
        neither given: all of them. Each with its number (`seq`)."""
        if not self.store.conversation_exists(cid):
            raise BadRequest(f"conversationId: unknown conversation: {cid}")
        if limit is None:
            limit = ALL_MESSAGES if before is None else HISTORY_PAGE
        return protocol.ChatHistoryResult(
            messages=[
                protocol.HistoryMessage(
                    id=m.id, role=m.role, agent=m.agent, text=m.text, metadata=m.metadata, images=m.metadata.get(IMAGES) or None, seq=seq
                )
                for seq, m in self.store.history(cid, before, limit)
            ]
        )
