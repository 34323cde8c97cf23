"""The StateStore interface on a team space's PostgreSQL database.

Synchronous, like the SQLite store, through a small psycopg 3 pool: the core calls the store
without `await` (a write has committed when the method returns, and `transaction()` groups
writes with no `await` inside), so the space's store keeps that shape rather than making every
caller async. Each call is one or two round trips on loopback or a LAN, the cost of SQLite's
commit flush; the live fan-out (LISTEN/NOTIFY) is the async part, on a connection of its own.

Every method borrows a pool connection (autocommit: each statement commits) for its duration;
inside `transaction()` the thread's one connection serves every call, and the block commits at
its end. Text is stored as SQLite's store does (lone surrogates as U+FFFD), and NUL, which
PostgreSQL's text cannot hold, as U+FFFD too.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator, Sequence

import psycopg
from psycopg.types.json import Json
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import RequestFailed, TurnBusy
from ...inbound import without_lone_surrogates
from ..records import Recovered, StoredMessage
from ..sql import SqlStore
from . import SpaceUnreachable
from .migrations import MIGRATIONS, migrate
from .url import redacted, where
from .watchdog import WATCHDOG

log = logging.getLogger(__name__)


def _storable_text(value: Any) -> Any:
    if isinstance(value, str):
        return without_lone_surrogates(value).replace("\x00", "\ufffd")
    return value


def _storable(params: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(_storable_text(v) for v in params)


def _storable_json(value: Any) -> Any:
    """A message's metadata as PostgreSQL's json can hold it: its strings (keys too) repaired as
    text is (SQLite keeps a lone surrogate escaped; PostgreSQL refuses the escape, and \\u0000)."""
    if isinstance(value, str):
        return _storable_text(value)
    if isinstance(value, dict):
        return {_storable_text(k): _storable_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_storable_json(v) for v in value]
    return value


#: PostgreSQL's clock, in seconds: leases and presence are timed by it, not by each machine's
NOW = "extract(epoch from clock_timestamp())"
#: How long a running turn's lease lasts without renewal (renewed every 10 s): a dead server's
#: turns are closed within LEASE_SECONDS + 10 s.
LEASE_SECONDS = 20

#: A call of the core blocks its event loop: a dead peer must fail it in seconds, not hang it.
#: tcp_user_timeout bounds a write that the network stopped acknowledging, the keepalives a read
#: from a server that went away (and the watchdog, watchdog.py, one from a server that is there
#: and does not answer).
LIVELY = {"tcp_user_timeout": 10_000, "keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3}


def connection_options(password: str | None, connect_timeout: int = 10) -> dict[str, Any]:
    """psycopg's options for a space's connection (the password apart from the URL)."""
    options: dict[str, Any] = {"autocommit": True, "connect_timeout": connect_timeout}
    if password is not None:
        options["password"] = password
    return options


@lru_cache(maxsize=256)
def _paramstyle(sql: str) -> str:
    """sql.py's `?` as psycopg's `%s` (and a literal `%` as `%%`)."""
    return sql.replace("%", "%%").replace("?", "%s")


class SpaceStore(SqlStore):
    """A space's state on PostgreSQL, by the StateStore interface. Opening it connects, applies
    the migrations the database lacks and starts the pool; SpaceUnreachable when PostgreSQL
    cannot be reached or refuses, SpaceTooNew when its schema is newer than this Modus."""

    def __init__(
        self, url: str, *, password: str | None = None, min_size: int = 1, max_size: int = 4, connect_timeout: int = 10,
        name: str | None = None, lost: Callable[[str], None] = lambda why: None, origin: str = "",
    ):
        """`name`: the space's, for the errors; `lost(why)`: told when a call finds PostgreSQL
        gone (restarted, the network cut), before the call fails with RequestFailed."""
        self.recovered: Recovered | None = None  # nothing is ever moved aside on a server
        self.url_where = where(url)
        self.name = name
        self.lost = lost
        #: the server this store is of: the turns it starts are leased to it
        self.origin = origin
        self._secrets = (url, password)
        kwargs = connection_options(password, connect_timeout)
        try:
            with psycopg.connect(url, **kwargs) as db:
                self.migrated = migrate(db, self.url_where, MIGRATIONS)
        except psycopg.OperationalError as exc:
            raise SpaceUnreachable(url, str(exc), password) from None
        except psycopg.Error as exc:  # connected, but the schema could not be made (a right missing)
            raise SpaceUnreachable(url, str(exc), password, doing="cannot create or migrate the schema at") from None
        # a borrowed connection is waited for 5 s at most
        self._pool = ConnectionPool(
            url, min_size=min_size, max_size=max_size, kwargs={**kwargs, **LIVELY}, timeout=5, name="modus-space", open=True
        )
        self._local = threading.local()

    def close(self) -> None:
        self._pool.close()

    # -- connections

    @contextmanager
    def _db(self) -> Iterator[psycopg.Connection]:
        held = getattr(self._local, "db", None)
        if held is not None:
            yield held
            return
        with self._reached(), self._pool.connection() as db, WATCHDOG.watch(db):
            yield db

    @contextmanager
    def _reached(self) -> Iterator[None]:
        """A connection lost (or none to be had in 5 s, or no answer in watchdog.CALL_LIMIT) fails
        the call with RequestFailed naming the space, and `lost` hears of it. Nothing is tried again: a write whose commit was not
        acknowledged might have landed, and a second one would double it."""
        try:
            yield
        except (psycopg.OperationalError, PoolTimeout) as exc:
            why = redacted(_first_line(exc), *self._secrets)
            self.lost(why)
            space = f"the space '{self.name}'" if self.name else f"the space at {self.url_where}"
            raise RequestFailed(f"{space} cannot be reached: {why}") from None

    def _run(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor:
        """(The cursor holds its whole result: it is read after the connection went back.)"""
        with self._db() as db:
            return db.execute(_paramstyle(sql), _storable(params))

    def _many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self.transaction(), self._db() as db, db.cursor() as cur:
            cur.executemany(_paramstyle(sql), [_storable(row) for row in rows])

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The writes in the block commit together at its end, or not at all (an exception in it
        rolls them back and is raised on). Nested, the outermost block commits. For synchronous
        code only, as SQLite's."""
        if getattr(self._local, "db", None) is not None:
            yield
            return
        with self._reached(), self._pool.connection() as db, WATCHDOG.watch(db):
            with db.transaction():
                self._local.db = db
                try:
                    yield
                finally:
                    self._local.db = None

    # -- what differs from SQLite: the messages' numbers, and their metadata as json

    TASK_ORDER = "n"
    # A JSON null counts as absent, as SQLite's json_extract has it.
    HAS_KEY = "COALESCE(json_typeof(metadata -> ?), 'null') <> 'null'"
    KEY_VALUE = "metadata -> ?"
    MODE = "metadata ->> 'mode'"

    def _dumped(self, metadata: dict[str, Any]) -> Any:
        return Json(_storable_json(metadata))

    def _loaded(self, value: Any) -> Any:
        return value  # psycopg decodes json

    def _key(self, key: str) -> str:
        return key

    def start_turn(self, turn_id: str, conversation_id: str, agent: str) -> None:
        """The turn, leased to this server for LEASE_SECONDS (renewed while it runs); TurnBusy
        when the agent runs one in the conversation already (on another server)."""
        try:
            self._run(
                f"INSERT INTO turns(id, conversation_id, agent, started_at, server, lease_until) VALUES (?, ?, ?, ?, ?, {NOW} + ?)",
                (turn_id, conversation_id, agent, time.time(), self.origin, LEASE_SECONDS),
            )
        except psycopg.errors.UniqueViolation:
            raise TurnBusy(f"{agent} runs a turn in {conversation_id} on another server of the space") from None

    def busy(self, conversation_id: str, agent: str) -> bool:
        """The agent runs a turn in the conversation on another server (its lease alive)."""
        return self._one(
            f"SELECT 1 FROM turns WHERE conversation_id = ? AND agent = ? AND outcome IS NULL AND server <> ? AND lease_until > {NOW}",
            (conversation_id, agent, self.origin),
        ) is not None

    def claim_turn(self, turn_id: str) -> bool:
        """Close another server's turn whose lease ran out: True for the one server that does."""
        cur = self._run(f"UPDATE turns SET outcome = 'interrupted' WHERE id = ? AND outcome IS NULL AND lease_until < {NOW}", (turn_id,))
        return cur.rowcount == 1

    def claim_own_turn(self, turn_id: str) -> bool:
        """Close a turn of this server that ended while the space was out of reach."""
        return self._run("UPDATE turns SET outcome = 'interrupted' WHERE id = ? AND outcome IS NULL", (turn_id,)).rowcount == 1

    def add_message(self, message: StoredMessage) -> StoredMessage:
        """The message stored with the conversation's next number: taking it locks the
        conversation's row, so concurrent writers (other servers) get consecutive numbers."""
        self.add_message_seq(message)
        return message

    def add_message_seq(self, message: StoredMessage) -> int:
        """add_message, returning the message's number in its conversation."""
        row = self._one(
            "WITH next AS (UPDATE conversations SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq) "
            "INSERT INTO messages(conversation_id, seq, id, role, agent, text, metadata, created_at) "
            "SELECT ?, next.last_seq, ?, ?, ?, ?, ?, ? FROM next RETURNING seq",
            (
                message.conversation_id, message.conversation_id, message.id, message.role, message.agent, message.text,
                self._dumped(message.metadata), time.time(),
            ),
        )
        if row is None:
            raise ValueError(f"add_message: no conversation {message.conversation_id}")
        return row[0]

    def last_seq(self, conversation_id: str) -> int:
        row = self._one("SELECT last_seq FROM conversations WHERE id = ?", (conversation_id,))
        return row[0] if row else 0


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
