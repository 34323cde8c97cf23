"""Durable state in SQLite (WAL): workspace settings, conversations, messages, tasks, plans, todos."""

from .interface import StateStore
from .migrations import StateTooNew
from .store import Store, StoredMessage

__all__ = ["StateStore", "StateTooNew", "Store", "StoredMessage"]
