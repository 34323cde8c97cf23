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

import json
import logging
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Sequence

import psycopg
from psycopg_pool import ConnectionPool

from ...inbound import without_lone_surrogates
from ..store import (
    AGENT_PLAN_STATES,
    LISTED_CONVERSATIONS,
    PLAN_FIELDS,
    PLAN_UPDATABLE,
    TODO_FIELDS,
    USAGE_FIELDS,
    ConversationRow,
    Recovered,
    StoredMessage,
    image_id_of,
    new_id,
)
from . import SpaceUnreachable
from .migrations import MIGRATIONS, migrate
from .url import where

log = logging.getLogger(__name__)

_JSON_FIELDS = ("scope", "plan", "completed")

_CONVERSATIONS = """
WITH counted AS (
    SELECT conversation_id AS id, COUNT(*) AS messages, MAX(seq) AS last_seq
    FROM messages GROUP BY conversation_id
), recent AS (
    SELECT c.id, c.created_at, last.created_at AS updated_at, counted.messages
    FROM counted
    JOIN conversations c ON c.id = counted.id AND c.parent_id IS NULL
    JOIN messages last ON last.conversation_id = counted.id AND last.seq = counted.last_seq
    ORDER BY updated_at DESC, c.id LIMIT %s
)
SELECT id, created_at, updated_at, messages,
    (SELECT substr(ltrim(text, E' \\t\\n\\r'), 1, 1000) FROM messages
     WHERE conversation_id = recent.id AND role = 'user' ORDER BY seq LIMIT 1),
    COALESCE(
        (SELECT mode FROM tasks WHERE conversation_id = recent.id ORDER BY created_at DESC, n DESC LIMIT 1),
        (SELECT metadata ->> 'mode' FROM messages
         WHERE conversation_id = recent.id AND role = 'assistant' ORDER BY seq DESC LIMIT 1)
    )
FROM recent ORDER BY updated_at DESC, id
"""

# A JSON null counts as absent, as SQLite's json_extract has it.
_HAS_KEY = "COALESCE(json_typeof(metadata -> %s), 'null') <> 'null'"


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


class SpaceStore:
    """A space's state on PostgreSQL, by the StateStore interface. Opening it connects, applies
    the migrations the database lacks and starts the pool; SpaceUnreachable when PostgreSQL
    cannot be reached or refuses, SpaceTooNew when its schema is newer than this Modus."""

    def __init__(self, url: str, *, password: str | None = None, min_size: int = 1, max_size: int = 4, connect_timeout: int = 10):
        self.recovered: Recovered | None = None  # nothing is ever moved aside on a server
        self.url_where = where(url)
        kwargs: dict[str, Any] = {"autocommit": True, "connect_timeout": connect_timeout}
        if password is not None:
            kwargs["password"] = password
        try:
            with psycopg.connect(url, **kwargs) as db:
                self.migrated = migrate(db, self.url_where, MIGRATIONS)
        except psycopg.OperationalError as exc:
            raise SpaceUnreachable(url, str(exc), password) from None
        except psycopg.Error as exc:  # connected, but the schema could not be made (a right missing)
            raise SpaceUnreachable(url, str(exc), password, doing="cannot create or migrate the schema at") from None
        # A call of the core blocks its event loop: a dead peer must fail it in seconds, not hang it.
        # tcp_user_timeout bounds a write that the network stopped acknowledging, the keepalives a
        # read from a server that went away; a borrowed connection is waited for 5 s at most.
        lively = {"tcp_user_timeout": 10_000, "keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3}
        self._pool = ConnectionPool(
            url, min_size=min_size, max_size=max_size, kwargs={**kwargs, **lively}, timeout=5, name="modus-space", open=True
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
        with self._pool.connection() as db:
            yield db

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor:
        with self._db() as db:
            return db.execute(sql, _storable(params))

    def _one(self, sql: str, params: Sequence[Any] = ()) -> tuple | None:
        with self._db() as db:
            return db.execute(sql, _storable(params)).fetchone()

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._db() as db:
            return db.execute(sql, _storable(params)).fetchall()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The writes in the block commit together at its end, or not at all (an exception in it
        rolls them back and is raised on). Nested, the outermost block commits. For synchronous
        code only, as SQLite's."""
        if getattr(self._local, "db", None) is not None:
            yield
            return
        with self._pool.connection() as db:
            with db.transaction():
                self._local.db = db
                try:
                    yield
                finally:
                    self._local.db = None

    # -- turns

    def start_turn(self, turn_id: str, conversation_id: str, agent: str) -> None:
        self._execute(
            "INSERT INTO turns(id, conversation_id, agent, started_at) VALUES (%s, %s, %s, %s)", (turn_id, conversation_id, agent, time.time())
        )

    def end_turn(self, turn_id: str, outcome: str) -> None:
        self._execute("UPDATE turns SET outcome = %s WHERE id = %s", (outcome, turn_id))

    def reopen_turn(self, turn_id: str) -> None:
        self._execute("UPDATE turns SET outcome = NULL WHERE id = %s", (turn_id,))

    def open_turns(self) -> list[tuple[str, str, str]]:
        return [tuple(r) for r in self._all("SELECT id, conversation_id, agent FROM turns WHERE outcome IS NULL ORDER BY started_at")]

    def turn_outcome(self, turn_id: str) -> str | None:
        row = self._one("SELECT outcome FROM turns WHERE id = %s", (turn_id,))
        return row[0] if row else None

    def unanswered_calls(self, conversation_id: str) -> list[dict[str, Any]]:
        row = self._one(
            "SELECT seq, metadata FROM messages WHERE conversation_id = %s AND role = 'assistant' AND cut_at IS NULL ORDER BY seq DESC LIMIT 1",
            (conversation_id,),
        )
        if row is None:
            return []
        calls = row[1].get("toolCalls", [])
        answered = {
            m.get("toolCallId")
            for (m,) in self._all(
                "SELECT metadata FROM messages WHERE conversation_id = %s AND role = 'tool' AND seq > %s AND cut_at IS NULL", (conversation_id, row[0])
            )
        }
        return [c for c in calls if c.get("id") not in answered]

    def subconversations(self, conversation_id: str) -> list[str]:
        rows = self._all(
            "WITH RECURSIVE tree(id) AS (SELECT %s::text UNION SELECT c.id FROM conversations c JOIN tree ON c.parent_id = tree.id) "
            "SELECT id FROM tree",
            (conversation_id,),
        )
        return [r[0] for r in rows]

    # -- meta

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self._one("SELECT value FROM meta WHERE key = %s", (key,))
        return row[0] if row else default

    def set_meta(self, **values: str) -> None:
        with self.transaction(), self._db() as db:
            for key, value in values.items():
                db.execute(
                    "INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT(key) DO UPDATE SET value = excluded.value", _storable((key, value))
                )

    # -- conversations and messages

    def ensure_conversation(self, conversation_id: str, owner: str | None = None, parent_id: str | None = None) -> bool:
        cur = self._execute(
            "INSERT INTO conversations(id, owner, parent_id, created_at) VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
            (conversation_id, owner, parent_id, time.time()),
        )
        return cur.rowcount == 1

    def conversation_exists(self, conversation_id: str) -> bool:
        return self._one("SELECT 1 FROM conversations WHERE id = %s", (conversation_id,)) is not None

    def conversation_parent(self, conversation_id: str) -> str | None:
        row = self._one("SELECT parent_id FROM conversations WHERE id = %s", (conversation_id,))
        return row[0] if row else None

    def conversation_owner(self, conversation_id: str) -> str | None:
        row = self._one("SELECT owner FROM conversations WHERE id = %s", (conversation_id,))
        return row[0] if row else None

    def conversations(self, limit: int = LISTED_CONVERSATIONS) -> list[ConversationRow]:
        return [ConversationRow(*row) for row in self._all(_CONVERSATIONS, (limit,))]

    def add_message(self, message: StoredMessage) -> StoredMessage:
        """The message stored with the conversation's next number: taking it locks the
        conversation's row, so concurrent writers (other servers) get consecutive numbers."""
        self.add_message_seq(message)
        return message

    def add_message_seq(self, message: StoredMessage) -> int:
        """add_message, returning the message's number in its conversation."""
        row = self._one(
            "WITH next AS (UPDATE conversations SET last_seq = last_seq + 1 WHERE id = %s RETURNING last_seq) "
            "INSERT INTO messages(conversation_id, seq, id, role, agent, text, metadata, created_at) "
            "SELECT %s, next.last_seq, %s, %s, %s, %s, %s::json, %s FROM next RETURNING seq",
            (
                message.conversation_id, message.conversation_id, message.id, message.role, message.agent, message.text,
                json.dumps(_storable_json(message.metadata)), time.time(),
            ),
        )
        if row is None:
            raise ValueError(f"add_message: no conversation {message.conversation_id}")
        return row[0]

    def last_speaker(self, conversation_id: str, agents: list[str]) -> str | None:
        if not agents:
            return None
        row = self._one(
            "SELECT agent FROM messages WHERE conversation_id = %s AND role = 'assistant' AND agent = ANY(%s) AND cut_at IS NULL "
            "ORDER BY seq DESC LIMIT 1",
            (conversation_id, list(agents)),
        )
        return row[0] if row else None

    def messages(self, conversation_id: str) -> list[StoredMessage]:
        rows = self._all(
            "SELECT id, role, text, agent, metadata FROM messages WHERE conversation_id = %s AND cut_at IS NULL ORDER BY seq", (conversation_id,)
        )
        return [StoredMessage(mid, conversation_id, role, text, agent, metadata) for mid, role, text, agent, metadata in rows]

    def history(self, conversation_id: str, before: int | None = None, limit: int = 50) -> list[tuple[int, StoredMessage]]:
        """(number, message) of the `limit` messages just before number `before` (the newest
        without it), oldest first; cut messages apart. One backward read of the primary key."""
        rows = self._all(
            "SELECT seq, id, role, text, agent, metadata FROM messages WHERE conversation_id = %s AND seq < %s AND cut_at IS NULL "
            "ORDER BY seq DESC LIMIT %s",
            (conversation_id, before if before is not None else 2**62, limit),
        )
        return [(seq, StoredMessage(mid, conversation_id, role, text, agent, metadata)) for seq, mid, role, text, agent, metadata in reversed(rows)]

    def locate_message(self, conversation_id: str, message_id: str) -> tuple[StoredMessage, int, bool] | None:
        row = self._one(
            "SELECT role, text, agent, metadata, seq, cut_at FROM messages WHERE conversation_id = %s AND id = %s", (conversation_id, message_id)
        )
        if row is None:
            return None
        role, text, agent, metadata, seq, cut_at = row
        return StoredMessage(message_id, conversation_id, role, text, agent, metadata), seq, cut_at is not None

    def last_with(self, conversation_id: str, key: str) -> StoredMessage | None:
        row = self._one(
            f"SELECT id, role, text, agent, metadata FROM messages WHERE conversation_id = %s AND cut_at IS NULL AND {_HAS_KEY} "
            "ORDER BY seq DESC LIMIT 1",
            (conversation_id, key),
        )
        if row is None:
            return None
        mid, role, text, agent, metadata = row
        return StoredMessage(mid, conversation_id, role, text, agent, metadata)

    def first_after(self, conversation_id: str, seq: int) -> str | None:
        row = self._one(
            "SELECT id FROM messages WHERE conversation_id = %s AND seq > %s AND cut_at IS NULL ORDER BY seq LIMIT 1", (conversation_id, seq)
        )
        return row[0] if row else None

    def metadata_values(self, conversation_ids: Sequence[str], key: str) -> list[Any]:
        rows = self._all(
            f"SELECT metadata -> %s FROM messages WHERE conversation_id = ANY(%s) AND cut_at IS NULL AND {_HAS_KEY} ORDER BY conversation_id, seq",
            (key, list(conversation_ids), key),
        )
        return [value for (value,) in rows]

    def last_seq(self, conversation_id: str) -> int:
        row = self._one("SELECT last_seq FROM conversations WHERE id = %s", (conversation_id,))
        return row[0] if row else 0

    def cut_after(self, conversation_id: str, seq: int) -> int:
        cur = self._execute(
            "UPDATE messages SET cut_at = %s WHERE conversation_id = %s AND seq > %s AND cut_at IS NULL", (time.time(), conversation_id, seq)
        )
        return cur.rowcount

    # -- usage

    def add_usage(self, row: Mapping[str, Any]) -> None:
        self._execute(
            f"INSERT INTO usage({', '.join(USAGE_FIELDS)}, created_at) VALUES ({', '.join(['%s'] * len(USAGE_FIELDS))}, %s)",
            (*(row[f] for f in USAGE_FIELDS), time.time()),
        )

    def usage(self, conversation_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        where_, args = "", ()
        if conversation_ids is not None:
            where_, args = "WHERE conversation_id = ANY(%s)", (list(conversation_ids),)
        rows = self._all(f"SELECT {', '.join(USAGE_FIELDS)} FROM usage {where_} ORDER BY id", args)
        return [dict(zip(USAGE_FIELDS, r)) for r in rows]

    def usage_total(self, conversation_id: str) -> dict[str, Any]:
        row = self._one(
            "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cache_read_tokens), 0), "
            "COALESCE(SUM(cache_write_tokens), 0), COALESCE(SUM(cost), 0), COUNT(*) - COUNT(cost) FROM usage WHERE conversation_id = %s",
            (conversation_id,),
        )
        assert row is not None
        return {
            "input_tokens": int(row[0]), "output_tokens": int(row[1]),
            "cache_read_tokens": int(row[2]), "cache_write_tokens": int(row[3]),
            "cost": None if row[5] else round(float(row[4]), 10),
        }

    # -- images

    def put_image(self, conversation_id: str | None, mime_type: str, data: bytes) -> str:
        image_id = image_id_of(data)
        self._execute(
            "INSERT INTO images(id, mime_type, data, conversation_id, created_at) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
            (image_id, mime_type, data, conversation_id, time.time()),
        )
        return image_id

    def image(self, image_id: str) -> tuple[str, bytes] | None:
        row = self._one("SELECT mime_type, data FROM images WHERE id = %s", (image_id,))
        return (row[0], bytes(row[1])) if row else None

    # -- tasks

    def add_task(self, task_id: str, agent: str, mode: str, phase: str, conversation_id: str | None, parent_id: str | None, replaces: str | None) -> None:
        now = time.time()
        with self.transaction():
            if replaces:
                self._execute("UPDATE tasks SET disposed_at = %s WHERE id = %s AND disposed_at IS NULL", (now, replaces))
            self._execute(
                "INSERT INTO tasks(id, conversation_id, agent, mode, phase, parent_id, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (task_id, conversation_id, agent, mode, phase, parent_id, now),
            )

    def task(self, task_id: str) -> dict[str, Any] | None:
        keys = ("id", "conversation_id", "agent", "mode", "phase", "parent_id", "disposed_at")
        row = self._one(f"SELECT {', '.join(keys)} FROM tasks WHERE id = %s", (task_id,))
        return dict(zip(keys, row, strict=True)) if row else None

    # -- plans

    def plan_create(self, agent: str, goal: str, scope: list[str] | None = None, conversation_id: str | None = None) -> dict[str, Any]:
        plan_id, now = new_id("plan-"), time.time()
        self._execute(
            "INSERT INTO plans(id, agent, conversation_id, goal, scope, state, created_at, updated_at) "
            "VALUES (%s, %s, %s, %s, %s, 'planning', %s, %s)",
            (plan_id, agent, conversation_id, goal, _json(scope), now, now),
        )
        return self._plan(plan_id)

    def plan_get(self, plan_id: str) -> dict[str, Any] | None:
        row = self._one(f"SELECT {', '.join(PLAN_FIELDS)} FROM plans WHERE id = %s", (plan_id,))
        return _plan_row(row) if row else None

    def plan_update(self, plan_id: str, **fields: Any) -> dict[str, Any]:
        unknown = sorted(set(fields) - set(PLAN_UPDATABLE))
        if unknown or not fields:
            raise ValueError(f"plan_update: fields must be some of {', '.join(PLAN_UPDATABLE)}; got {', '.join(unknown) or 'none'}")
        values = [_json(v) if k in _JSON_FIELDS else v for k, v in fields.items()]
        assignments = ", ".join(f"{k} = %s" for k in fields)
        cur = self._execute(f"UPDATE plans SET {assignments}, updated_at = %s WHERE id = %s", (*values, time.time(), plan_id))
        if cur.rowcount == 0:
            raise ValueError(f"plan_update: no plan {plan_id}")
        return self._plan(plan_id)

    def current_plan(self, agent: str) -> tuple[str, dict[str, Any] | None]:
        columns = ", ".join(f"p.{f}" for f in PLAN_FIELDS)
        row = self._one(f"SELECT s.state, {columns} FROM plan_state s LEFT JOIN plans p ON p.id = s.plan_id WHERE s.agent = %s", (agent,))
        if row is None:
            return "normal", None
        return row[0], (_plan_row(row[1:]) if row[1] is not None else None)

    def set_plan_state(self, agent: str, state: str, plan_id: str | None = None) -> None:
        if state not in AGENT_PLAN_STATES:
            raise ValueError(f"set_plan_state: state must be one of {', '.join(AGENT_PLAN_STATES)}; got {state!r}")
        if (state == "normal") != (plan_id is None):
            need = f"no plan, got plan_id {plan_id!r}" if plan_id is not None else "a plan_id"
            raise ValueError(f"set_plan_state: the state {state} takes {need}")
        with self.transaction():
            if plan_id is not None:
                cur = self._execute("UPDATE plans SET state = %s, updated_at = %s WHERE id = %s AND agent = %s", (state, time.time(), plan_id, agent))
                if cur.rowcount == 0:
                    raise ValueError(f"set_plan_state: {agent} has no plan {plan_id}")
            self._execute(
                "INSERT INTO plan_state(agent, state, plan_id) VALUES (%s, %s, %s) "
                "ON CONFLICT(agent) DO UPDATE SET state = excluded.state, plan_id = excluded.plan_id",
                (agent, state, plan_id),
            )

    def _plan(self, plan_id: str) -> dict[str, Any]:
        plan = self.plan_get(plan_id)
        assert plan is not None
        return plan

    # -- todos

    def todos(self, agent: str) -> list[dict[str, Any]]:
        rows = self._all(f"SELECT {', '.join(TODO_FIELDS)} FROM todos WHERE agent = %s ORDER BY position", (agent,))
        return [dict(zip(TODO_FIELDS, row, strict=True)) for row in rows]

    def replace_todos(self, agent: str, items: Sequence[Mapping[str, Any]]) -> None:
        rows, seen = [], set()
        for n, item in enumerate(items):
            missing = [k for k in TODO_FIELDS[:4] if item.get(k) is None]
            if missing:
                raise ValueError(f"replace_todos: item {n} has no {', '.join(missing)}")
            if item["id"] in seen:
                raise ValueError(f"replace_todos: the id {item['id']!r} is used twice")
            seen.add(item["id"])
            rows.append(_storable((agent, n, *(item.get(k) for k in TODO_FIELDS))))
        with self.transaction(), self._db() as db:
            db.execute("DELETE FROM todos WHERE agent = %s", (agent,))
            with db.cursor() as cur:
                cur.executemany(f"INSERT INTO todos(agent, position, {', '.join(TODO_FIELDS)}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", rows)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _plan_row(row: Sequence[Any]) -> dict[str, Any]:
    plan = dict(zip(PLAN_FIELDS, row, strict=True))
    for key in _JSON_FIELDS:
        plan[key] = None if plan[key] is None else json.loads(plan[key])
    return plan
