"""What the stores hand back: plain records, their field lists, and the ids they make. Both
engines (SQLite's store.py, PostgreSQL's pg/store.py) and the core share these."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

#: At most this many conversations are listed (the most recently updated).
LISTED_CONVERSATIONS = 200

#: A plan as plan_get returns it: a dict of these keys. `scope` is a list of paths or None
#: (the whole workspace), `plan` the plan object (None until plan_exit), `completed` maps a
#: step id to its verification output; the times are seconds since the epoch.
PLAN_FIELDS = ("id", "agent", "conversation_id", "goal", "scope", "plan", "state", "completed", "current_step", "feedback", "created_at", "updated_at")
PLAN_UPDATABLE = ("conversation_id", "goal", "scope", "plan", "state", "completed", "current_step", "feedback")
#: The agent's plan state (protocol PlanState).
AGENT_PLAN_STATES = ("normal", "planning", "awaiting_approval", "executing")
#: A todo item as todos() returns it; the first four are required by replace_todos.
TODO_FIELDS = ("id", "content", "status", "priority", "created_at", "updated_at")
#: A usage row: one model request.
USAGE_FIELDS = (
    "conversation_id", "task_id", "agent", "mode", "phase", "model",
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost",
)


@dataclass(frozen=True)
class StoredMessage:
    id: str
    conversation_id: str
    role: str  # user | assistant | tool | system
    text: str
    agent: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class ConversationRow(NamedTuple):
    """A conversation as the list shows it; times are seconds since the epoch."""

    id: str
    created_at: float
    updated_at: float
    messages: int
    #: the start of its first user message (blanks before it left out), None without one
    first_user_text: str | None
    #: the mode of its latest task, else of its latest reply
    mode: str | None


class Recovered(NamedTuple):
    """A corrupt database file that was moved aside, and the fresh one started in its place."""

    reason: str
    moved_to: Path
    fresh: Path

    def message(self) -> str:
        return (
            f"The Modus state database {self.fresh} could not be used ({self.reason}). "
            f"It was moved to {self.moved_to} (kept, not deleted) and a fresh database was started at {self.fresh}."
        )


def new_id(prefix: str = "") -> str:
    return prefix + uuid.uuid4().hex[:16]


def image_id_of(data: bytes) -> str:
    """An image's id: the hash of its bytes (the same image, the same id, stored once)."""
    return "img-" + hashlib.sha256(data).hexdigest()[:32]


def iso_utc(seconds: float) -> str:
    """ISO 8601 in UTC, to the millisecond: `2026-12-01T11:28:57.123Z`."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
