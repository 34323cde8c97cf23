"""Conversations: send, cancel, history, the list, open, retry, edit & resend, unqueue; the state, the system prompt, the team space's members."""

from __future__ import annotations

from protocol import names
from protocol.names import Command

from .requests import Routes


def register(routes: Routes) -> None:
    routes.request(names.STATE, lambda s, p: s.state())
    routes.request(names.CHAT_SEND, lambda s, p: s.send(p))
    routes.request(names.CHAT_CANCEL, _cancel)
    routes.request(names.CHAT_HISTORY, lambda s, p: s.history(p.conversation_id, p.before, p.limit))
    routes.request(names.CHAT_LIST, lambda s, p: s.list_conversations())
    routes.request(names.CHAT_OPEN, lambda s, p: s.open(p.conversation_id))
    routes.request(names.PROMPT_GET, lambda s, p: s.prompt(p))
    routes.request(names.AGENTS_LIST, lambda s, p: s.list_agents())
    routes.request(names.USAGE_GET, lambda s, p: s.usage(p.conversation_id))
    routes.request(names.CHAT_CONDENSE, lambda s, p: s.condense(p.conversation_id))
    routes.request(names.CHAT_RETRY, lambda s, p: s.resend.retry(p.conversation_id))
    routes.request(names.CHAT_EDIT, lambda s, p: s.resend.edit(p))
    routes.request(names.CHAT_IMAGE, lambda s, p: s.conversations.image(p.id))
    routes.request(names.SPACE_MEMBERS, lambda s, p: s.space.members())
    routes.request(names.CHAT_UNQUEUE, lambda s, p: s.queue.unqueue(p.conversation_id or s.conversation_id, p.message_id))

    routes.command(Command.SHOW_PROMPT, _show_prompt)
    routes.command(Command.TRUST_WORKSPACE_SETTINGS, lambda s, args: s.trust_workspace_settings())


def _cancel(session, params):
    from protocol import ChatCancelResult

    return ChatCancelResult(cancelled=session.cancel(params.conversation_id))


def _show_prompt(session, args):
    from protocol import PromptGetParams

    return session.prompt(PromptGetParams()).text
