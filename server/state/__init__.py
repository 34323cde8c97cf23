"""Durable state in SQLite (WAL): workspace settings, conversations, messages, tasks, plans, todos;
a team space's share of them on PostgreSQL in `pg` (loaded only when a space is used)."""

from typing import Any

from .migrations import StateTooNew
from .records import StoredMessage
from .store import Store


def __getattr__(name: str) -> Any:
    if name == "StateStore":  # the interface, for annotations: not loaded at start-up
        from .interface import StateStore

        return StateStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["StateStore", "StateTooNew", "Store", "StoredMessage"]
