"""A team space's state on PostgreSQL (PROTOCOL.md, "Team spaces on PostgreSQL").

`SpaceStore` (store.py) is the StateStore interface on a space's database; `migrations` its
numbered schema; `url` shows a URL without its password. psycopg is imported by store.py and
migrations.py only: importing this package (or the errors below) loads nothing of it, so a
server without a space never does.
"""

from __future__ import annotations

from typing import Any

from .url import redacted, where


class SpaceUnreachable(Exception):
    """PostgreSQL could not be reached, or refused the connection (a wrong password, no such
    database), or refused the schema's migration (no right to create tables). The message names
    the host, port and database of the URL and PostgreSQL's reason, never the password."""

    def __init__(self, url: str, reason: str, password: str | None = None, doing: str = "cannot connect to"):
        self.where = where(url)
        self.reason = redacted(reason.strip(), url, password)
        super().__init__(f"{doing} the space's PostgreSQL at {self.where}: {self.reason}")


def __getattr__(name: str) -> Any:
    if name == "SpaceStore":
        from .store import SpaceStore

        return SpaceStore
    if name == "SpaceTooNew":
        from .migrations import SpaceTooNew

        return SpaceTooNew
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SpaceStore", "SpaceTooNew", "SpaceUnreachable", "redacted", "where"]
