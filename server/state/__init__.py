"""Durable state in SQLite (WAL): workspace settings, conversations, messages, tasks, plans, todos."""

from .migrations import StateTooNew
from .store import Store, StoredMessage

__all__ = ["StateTooNew", "Store", "StoredMessage"]
