"""Agent-to-agent wakes (SPEC §5, seed 002): which mentions of a finished turn start an agent,
and the one system message that names the ones refused. Pure but for the rate limit's memory;
the clock is injected.

A **chain** is what one user message started: the agents it started, then every agent woken
since, directly or not, by any of them. The guards, checked in this order for each target:

1. a wake never revisits an agent of its chain (no A → B → A): "already in this chain";
2. a chain holds at most 3 agent-to-agent wakes (A, started by the user, wakes B, B wakes C,
   C wakes D; D's mention of E is refused): "chain depth 3 reached";
3. each ordered pair (from, to) makes at most 5 wakes in any 300 seconds, across chains (a
   sliding window; a wake older than 300 s no longer counts): "rate limit: 5 wakes per 5
   minutes from X to Y".

Decisions where SPEC and seed are silent: the chain is the whole tree a user message started,
not one branch of it. Its 3 wakes are a budget shared by the branches (A waking B, C and D in
one turn spends it), and "already in this chain" covers every agent of the tree, the agents the
user started together included (with `@alice @bob`, alice's mention of bob is refused). Linear
chains, the only ones SPEC and seed describe, behave as they say. Only wakes that happen count
towards the limits; a refused one costs nothing.

A turn that did not complete (failed, cancelled, or waiting for the user's answer) wakes no one
and posts nothing: `wakes_after`.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from .mentions import AgentRef, Refusal, parse_agent_prose

#: The most agent-to-agent wakes one user message can lead to.
MAX_CHAIN_WAKES = 3
#: The most wakes from one agent to another in `RATE_WINDOW_SECONDS`.
RATE_LIMIT = 5
RATE_WINDOW_SECONDS = 300.0

ALREADY_IN_CHAIN = "already in this chain"
CHAIN_FULL = f"chain depth {MAX_CHAIN_WAKES} reached"


def rate_limited(by: str, to: str) -> str:
    return f"rate limit: {RATE_LIMIT} wakes per {RATE_WINDOW_SECONDS / 60:g} minutes from {by} to {to}"


@dataclass
class Chain:
    """What one user message started. Shared by every turn it leads to: `WakePolicy.decide`
    adds each agent it wakes."""

    #: The agents in it, in order: those the user message started, then those woken.
    agents: list[str]
    #: The agent-to-agent wakes it holds so far.
    wakes: int = 0

    @classmethod
    def start(cls, agents: Iterable[str]) -> Chain:
        return cls(list(dict.fromkeys(agents)))


@dataclass(frozen=True)
class Wake:
    """Start `to`'s turn in the same conversation and chain, prompted by `by`'s turn."""

    by: str
    to: str


class WakePolicy:
    """The wake guards. One per session: the rate limit spans chains and conversations."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._recent: dict[tuple[str, str], deque[float]] = {}

    def decide(self, chain: Chain, woken_by: str, targets: Sequence[str]) -> list[Wake | Refusal]:
        """A Wake or a Refusal for each target, in order; the wakes are recorded in the chain
        and the rate limit."""
        now = self._clock()
        decisions: list[Wake | Refusal] = []
        for to in targets:
            reason = self._refusal(chain, woken_by, to, now)
            if reason is not None:
                decisions.append(Refusal(f"@{to}", reason))
                continue
            chain.agents.append(to)
            chain.wakes += 1
            self._recent.setdefault((woken_by, to), deque()).append(now)
            decisions.append(Wake(woken_by, to))
        return decisions

    def _refusal(self, chain: Chain, by: str, to: str, now: float) -> str | None:
        if to in chain.agents:
            return ALREADY_IN_CHAIN
        if chain.wakes >= MAX_CHAIN_WAKES:
            return CHAIN_FULL
        recent = self._recent.get((by, to), deque())
        while recent and now - recent[0] >= RATE_WINDOW_SECONDS:
            recent.popleft()
        if len(recent) >= RATE_LIMIT:
            return rate_limited(by, to)
        return None


@dataclass(frozen=True)
class TurnWakes:
    """What an agent's turn leads to once it ended."""

    wakes: list[Wake]
    #: The parser's refusals first (ambiguous, more than three), then the guards', in order.
    refusals: list[Refusal] = field(default_factory=list)

    @property
    def message(self) -> str | None:
        """The system message to post, None when nothing was refused."""
        return refusal_message(self.refusals)


def wakes_after(
    outcome: str, text: str, *, agents: Sequence[AgentRef], self_name: str, chain: Chain, policy: WakePolicy
) -> TurnWakes:
    """The wakes and refusals of the turn of `self_name` that ended with `outcome` (the
    `turn_ended` outcome) after writing `text`: none at all unless it completed."""
    if outcome != "completed":
        return TurnWakes([])
    prose = parse_agent_prose(text, agents, self_name)
    decisions = policy.decide(chain, self_name, prose.targets)
    wakes = [d for d in decisions if isinstance(d, Wake)]
    refused = [d for d in decisions if isinstance(d, Refusal)]
    return TurnWakes(wakes, prose.refusals + refused)


def refusal_message(refusals: Sequence[Refusal]) -> str | None:
    """The refusals of one turn as one system message, each mention with its reason."""
    if not refusals:
        return None
    return "Mentions not delivered: " + "; ".join(f"{r.mention} ({r.reason})" for r in refusals) + "."
