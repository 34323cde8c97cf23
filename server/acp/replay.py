"""A loaded session's conversation, told again as `session/update` notifications, from the
messages of the state database (what `modus/chat/history` returns on the LSP side)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from ..errors import BadRequest
from . import translate as tr

if TYPE_CHECKING:
    from protocol import ChatImageResult, HistoryMessage

    from .host import AcpHost


def replay(host: "AcpHost", messages: Sequence["HistoryMessage"], image: Callable[[str], "ChatImageResult"]) -> None:
    """The user's messages (their images as image blocks: `image` gives a stored one's bytes), the
    agent's words and tool calls with their results, Modus's notes."""
    names: dict[str, str] = {}  # call id → tool name
    for m in messages:
        meta = m.metadata or {}
        if m.role == "user" and host.colleague(meta.get("member"), host.session_id):
            host.note(meta.get("typed", m.text), meta["member"])
        elif m.role == "user" and meta.get("source") != "plan":
            host.user_said(meta.get("typed", m.text))
            for ref in m.images or ():
                try:
                    stored = image(ref.id)
                except BadRequest:  # gone from the store: the rest of the conversation is still told
                    host.note(f"An image of this message ({ref.id}) is no longer stored.")
                    continue
                host.user_image(stored.mime_type, stored.data)
        elif m.role in ("user", "system"):  # a decision told to the agent; a note of Modus
            host.note(m.text)
        elif m.role == "assistant":
            host.say(m.text)
            for call in meta.get("toolCalls", ()):
                call_id, name, args = call.get("id", ""), call.get("name", ""), call.get("arguments") or {}
                names[call_id] = name
                if name in tr.TALK:
                    host.say(tr.talk_text(name, args) or "")
                else:
                    host.start_card(call_id, name, args)
        elif m.role == "tool":
            call_id = meta.get("toolCallId") or ""
            name = meta.get("name") or names.get(call_id, "")
            if name in tr.TALK or not host.has_card(call_id):
                continue
            if meta.get("isError"):
                host.end_card(call_id, name, None, f"{meta.get('errorType', 'Error')}: {m.text}")
            else:
                host.end_card(call_id, name, m.text)
