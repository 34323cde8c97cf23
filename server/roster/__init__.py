"""The roster: a workspace's agents and the rules between them (SPEC §5), the pure parts: the
agents file, the composer's parser for the user's messages, the default responder, the parser
for an agent's prose, the wake guards and the summons. Nothing here knows the session, the store
or the wire; see mentions.py and wakes.py for the rules."""

from importlib import import_module
from typing import Any

#: Where each name lives; a submodule is loaded when one of its names is first used (the server
#: answers its first request before it reads any mention).
_NAMES = {
    **dict.fromkeys(
        ("AgentRef", "Composed", "MemberRef", "Mention", "ProseMentions", "Refusal", "parse_agent_prose", "parse_user_message"),
        ".mentions",
    ),
    "default_responder": ".responder",
    **dict.fromkeys(("Chain", "TurnWakes", "Wake", "WakePolicy", "refusal_message", "wakes_after"), ".wakes"),
}


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)


__all__ = sorted(_NAMES)
