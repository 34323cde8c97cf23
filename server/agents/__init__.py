"""Agents and @-mentions (SPEC §5), the pure parts: the composer's parser for the user's
messages, the default responder, the parser for an agent's prose and the wake guards. Nothing
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
from .wakes import Chain, TurnWakes, Wake, WakePolicy, refusal_message, wakes_after

__all__ = [
    "AgentRef",
    "Chain",
    "Composed",
    "MemberRef",
    "Mention",
    "ProseMentions",
    "Refusal",
    "TurnWakes",
    "Wake",
    "WakePolicy",
    "default_responder",
    "parse_agent_prose",
    "parse_user_message",
    "refusal_message",
    "wakes_after",
]
