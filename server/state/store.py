"""SQLite store. Writes commit before the update that announces them goes out: each method
that writes has committed when it returns (`transaction()` groups several into one).

A file that is not a database (or is corrupt) is moved aside, never deleted, and a fresh one
is started: `Store.recovered` says where both are, so the user can be told. An older database
is upgraded in place (see migrations.py); a newer one is refused with StateTooNew, untouched.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..inbound import without_lone_surrogates
from .migrations import MIGRATIONS, Migration, check_version, migrate
from .records import Recovered, StoredMessage
from .sql import SqlStore

log = logging.getLogger(__name__)

DB_NAME = "modus.sqlite3"
_CORRUPT = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


class Store(SqlStore):
    """The StateStore interface on one SQLite connection (its SQL is sql.py's)."""

    def __init__(self, directory: Path | None, migrations: Sequence[Migration] = MIGRATIONS):
        """A store in `directory` (created), or in memory when None, brought up to date by
        `migrations`. StateTooNew when the database there is newer than they know."""
        self.recovered: Recovered | None = None
        if directory is None:
            self.db = _open(":memory:", migrations)
            return
        directory.mkdir(parents=True, exist_ok=True)
        _ignored_by_git(directory)
        path = directory / DB_NAME
        if (reason := _not_a_plain_file(path)) is not None:  # a symlink would send SQLite's writes elsewhere
            self.recovered = Recovered(reason, _move_aside(path), path)
        try:
            self.db = _open(str(path), migrations)
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorcode", None) not in _CORRUPT:
                raise
            self.recovered = Recovered(str(exc), _move_aside(path), path)
            self.db = _open(str(path), migrations)
        if self.recovered is not None:
            log.warning("%s", self.recovered.message())

    def close(self) -> None:
        self.db.close()

    def _run(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self.db.execute(sql, params)

    def _many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self.transaction():
            self.db.executemany(sql, rows)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The writes in the block commit together at its end, or not at all (an exception in it
        rolls them back and is raised on). Nested, the outermost block commits. For synchronous code only:
        an `await` inside would let other coroutines' writes join the transaction."""
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def add_message(self, message: StoredMessage) -> StoredMessage:
        self.db.execute(
            "INSERT INTO messages(id, conversation_id, seq, role, agent, text, metadata, created_at) "
            "VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?), ?, ?, ?, ?, ?)",
            (
                message.id, message.conversation_id, message.conversation_id, message.role, message.agent, message.text,
                self._dumped(message.metadata), time.time(),
            ),
        )
        return message

    def last_seq(self, conversation_id: str) -> int:
        row = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM messages WHERE conversation_id = ?", (conversation_id,)).fetchone()
        return row[0]


class _Connection(sqlite3.Connection):
    """A connection that stores a lone surrogate as U+FFFD. No UTF-8 holds one (sqlite3 raises
    UnicodeEncodeError binding it), and text from a model, a tool or an MCP server may: a
    client's requests cannot (server/inbound.py refuses them). Binding fails before anything is
    written, so `execute` tries again with the text repaired, at no cost to the usual case."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except UnicodeEncodeError:
            return super().execute(sql, _storable(parameters))

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        # the rows before a failing one would be written already: every row is repaired first
        return super().executemany(sql, [_storable(row) for row in parameters])


def _storable(parameters: Any) -> Any:
    if isinstance(parameters, Mapping):
        return {k: without_lone_surrogates(v) for k, v in parameters.items()}
    return tuple(without_lone_surrogates(v) for v in parameters)


def _open(target: str, migrations: Sequence[Migration] = MIGRATIONS) -> sqlite3.Connection:
    db = sqlite3.connect(target, isolation_level=None, check_same_thread=False, factory=_Connection)
    try:
        # the first read: a file that is not a database fails here, and a newer one is refused
        # before anything is written to it
        new = check_version(db, target, migrations) == 0 and db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
        # Making a new file WAL and writing its schema needs no disk flush: until it holds
        # something there is nothing to lose (a torn new file is moved aside on the next start).
        # A database with something in it is upgraded with the flushes.
        db.execute(f"PRAGMA synchronous={'OFF' if new else 'NORMAL'}")
        db.execute("PRAGMA journal_mode=WAL")
        migrate(db, target, migrations)
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA cache_size=-256")  # KiB: appends and the newest rows are what it serves
    except BaseException:
        db.close()
        raise
    return db


def _files(path: Path) -> list[Path]:
    """The database and its WAL and shared-memory files."""
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def _not_a_plain_file(path: Path) -> str | None:
    """Why SQLite must not open the database or its side files as they are, if it must not."""
    for f in _files(path):
        try:
            mode = os.lstat(f).st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(mode):
            return f"{f.name} is a symbolic link"
        if not stat.S_ISREG(mode):
            return f"{f.name} is not a regular file"
    return None


def _ignored_by_git(directory: Path) -> None:
    """A `.gitignore` that keeps the state out of the repository; never written through a link."""
    try:
        fd = os.open(directory / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:  # there already, or a link: left as it is
        return
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("*\n")


def _move_aside(path: Path) -> Path:
    """Rename the database and its side files (links as links) to a free `.corrupt-<time>` name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while any(os.path.lexists(f) for f in _files(target)):
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    for old, new in zip(_files(path), _files(target)):
        if os.path.lexists(old):
            os.replace(old, new)
    return target
