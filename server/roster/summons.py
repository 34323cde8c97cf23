"""Why an agent's turn runs (SPEC §5): the user message's chain it belongs to, who woke it and
how, and the `ask_agent` calls waiting for its answer.

Who summoned an agent is turn input, not system prompt: the task's prompt (with the roster and
the mention rules) stays the same turn after turn, and the turn's first model request carries a
line saying who started it and why, placed where the turn began in the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from ..roster import Chain


class Reply:
    """What an `ask_agent` call waits for: the outcome and the text of the asked agent's turn."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.outcome = "cancelled"
        self.text = ""

    def give(self, outcome: str, text: str) -> None:
        if not self.done.is_set():
            self.outcome, self.text = outcome, text
            self.done.set()


@dataclass
class Summons:
    #: What the user message behind the turn started (None: a chain of its own).
    chain: "Chain | None" = None
    #: The agent whose mention or hand-off started the turn (`turn_started.wokenBy`).
    woken_by: str | None = None
    #: The line the turn's input starts with; None: the user's message speaks for itself.
    note: str | None = None
    #: `ask_agent` calls waiting for this turn's answer.
    replies: list[Reply] = field(default_factory=list)

    def then(self, later: "Summons") -> "Summons":
        """One turn for two reasons (the agent was asked again before it started): the later
        reason, and every waiting reply."""
        return Summons(later.chain or self.chain, later.woken_by, later.note, self.replies + later.replies)

    def answer(self, outcome: str, text: str) -> None:
        for reply in self.replies:
            reply.give(outcome, text)


def started_together(agent: str, others: list[str]) -> str:
    return (
        f"[The user's message above started you together with {_names(others)}: each of you got the whole message "
        "and works on it at the same time.]"
    )


def mentioned(by: str) -> str:
    return f"[{by} mentioned you in its words quoted above; this turn is your answer.]"


def sent(by: str) -> str:
    return f"[{by} sent you the message quoted above with send_to_agent; it does not wait for an answer.]"


def asked(by: str) -> str:
    return (
        f"[{by} asked you the question quoted above with ask_agent and waits: what you write in this turn goes "
        f"back to {by} as the answer.]"
    )


def delegated(by: str) -> str:
    return (
        f"[{by} delegated the task above to you with delegate_task: finish it with attempt_completion; "
        f"its result goes back to {by}.]"
    )


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
