"""Agents and @-mentions (SPEC §5), the pure parts: the composer's parser for the user's
messages, the default responder, and the parser for an agent's prose. Nothing
here knows the session, the store or the wire; see mentions.py and wakes.py for the rules."""

from .mentions import (
    AgentRef,
    Composed,
    MemberRef,
    Mention,
    ProseMentions,
    Refusal,
    default_responder,
    parse_agent_prose,
    parse_user_message,
)

__all__ = [
    "AgentRef",
    "Composed",
    "MemberRef",
    "Mention",
    "ProseMentions",
    "Refusal",
    "default_responder",
    "parse_agent_prose",
    "parse_user_message",
]
