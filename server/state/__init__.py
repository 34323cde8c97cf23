"""Durable state in SQLite (WAL): workspace settings, conversations, messages, tasks."""

from .store import Store, StoredMessage

__all__ = ["Store", "StoredMessage"]
