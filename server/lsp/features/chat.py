"""Conversations: send, cancel, history, the list, open; the state and the system prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol import names
from protocol.names import Command

from .requests import command, request

if TYPE_CHECKING:
    from ..server import ModusServer


def register(server: "ModusServer") -> None:
    request(server, names.STATE, lambda s, p: s.state())
    request(server, names.CHAT_SEND, lambda s, p: s.send(p))
    request(server, names.CHAT_CANCEL, _cancel)
    request(server, names.CHAT_HISTORY, lambda s, p: s.history(p.conversation_id))
    request(server, names.CHAT_LIST, lambda s, p: s.list_conversations())
    request(server, names.CHAT_OPEN, lambda s, p: s.open(p.conversation_id))
    request(server, names.PROMPT_GET, lambda s, p: s.prompt(p))
    request(server, names.AGENTS_LIST, lambda s, p: s.list_agents())
    request(server, names.USAGE_GET, lambda s, p: s.usage(p.conversation_id))
    request(server, names.CHAT_CONDENSE, lambda s, p: s.condense(p.conversation_id))

    command(server, Command.SHOW_PROMPT, _show_prompt)
    command(server, Command.TRUST_WORKSPACE_SETTINGS, lambda s, args: s.trust_workspace_settings())


def _cancel(session, params):
    from protocol import ChatCancelResult

    return ChatCancelResult(cancelled=session.cancel(params.conversation_id))


def _show_prompt(session, args):
    from protocol import PromptGetParams

    return session.prompt(PromptGetParams()).text
