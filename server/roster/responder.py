"""The agents of a workspace as the mention rules see them, and who answers when no one is named."""

from __future__ import annotations

from typing import Protocol, Sequence


class AgentRef(Protocol):
    """An agent of the workspace, in configuration order (`protocol.AgentConfig` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def top_level(self) -> bool: ...


def default_responder(last_speaker: str | None, owner: str | None, agents: Sequence[AgentRef]) -> str | None:
    """Who answers a message that mentions no agent: the last agent that spoke in the
    conversation, else its owner, else the first top-level agent, else the first agent (each
    only while it is still configured). None only when no agent is configured."""
    names = [a.name for a in agents]
    for name in (last_speaker, owner):
        if name is not None and name in names:
            return name
    top = [a.name for a in agents if a.top_level]
    if top:
        return top[0]
    return names[0] if names else None
