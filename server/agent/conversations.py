"""Conversations as a client names and lists them: the ids it may choose, and the list's rows."""

from __future__ import annotations

import re
from typing import Iterable

import protocol

from ..errors import BadRequest
from ..state.store import ConversationRow, iso_utc
from ..workspace import clip

#: What a client may choose as a conversation id (a UUID, a `conv-…` id of the server's, ...).
CONVERSATION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
TITLE_LENGTH = 80


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
