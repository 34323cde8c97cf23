"""SQLite store. Writes commit before the update that announces them goes out: each method
that writes has committed when it returns (`transaction()` groups several into one).

A file that is not a database (or is corrupt) is moved aside, never deleted, and a fresh one
is started: `Store.recovered` says where both are, so the user can be told. An older database
is upgraded in place (see migrations.py); a newer one is refused with StateTooNew, untouched.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import stat
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Mapping, NamedTuple, Sequence

from ..inbound import without_lone_surrogates
from .migrations import MIGRATIONS, Migration, check_version, migrate

log = logging.getLogger(__name__)

#: At most this many conversations are listed (the most recently updated).
LISTED_CONVERSATIONS = 200

# One statement: counts and last message numbers come from the (conversation_id, seq) index
# alone; only the conversations kept after the sort are looked into (first user message,
# latest task, latest reply).
_CONVERSATIONS = """
WITH counted AS (
    SELECT conversation_id AS id, COUNT(*) AS messages, MAX(seq) AS last_seq
    FROM messages GROUP BY conversation_id
), recent AS (
    SELECT c.id, c.created_at, last.created_at AS updated_at, counted.messages
    FROM counted
    JOIN conversations c ON c.id = counted.id AND c.parent_id IS NULL
    JOIN messages last ON last.conversation_id = counted.id AND last.seq = counted.last_seq
    ORDER BY updated_at DESC, c.id LIMIT ?
)
SELECT id, created_at, updated_at, messages,
    (SELECT substr(ltrim(text, char(32, 9, 10, 13)), 1, 1000) FROM messages
     WHERE conversation_id = recent.id AND role = 'user' ORDER BY seq LIMIT 1),
    COALESCE(
        (SELECT mode FROM tasks WHERE conversation_id = recent.id ORDER BY created_at DESC, rowid DESC LIMIT 1),
        (SELECT json_extract(metadata, '$.mode') FROM messages
         WHERE conversation_id = recent.id AND role = 'assistant' ORDER BY seq DESC LIMIT 1)
    )
FROM recent ORDER BY updated_at DESC, id
"""


@dataclass(frozen=True)
class StoredMessage:
    id: str
    conversation_id: str
    role: str  # user | assistant | tool | system
    text: str
    agent: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


#: A plan as plan_get returns it: a dict of these keys. `scope` is a list of paths or None
#: (the whole workspace), `plan` the plan object (None until plan_exit), `completed` maps a
#: step id to its verification output; the times are seconds since the epoch.
PLAN_FIELDS = ("id", "agent", "conversation_id", "goal", "scope", "plan", "state", "completed", "current_step", "feedback", "created_at", "updated_at")
PLAN_UPDATABLE = ("conversation_id", "goal", "scope", "plan", "state", "completed", "current_step", "feedback")
_JSON_FIELDS = ("scope", "plan", "completed")
#: The agent's plan state (protocol PlanState).
AGENT_PLAN_STATES = ("normal", "planning", "awaiting_approval", "executing")
#: A todo item as todos() returns it; the first four are required by replace_todos.
TODO_FIELDS = ("id", "content", "status", "priority", "created_at", "updated_at")
#: A usage row: one model request.
USAGE_FIELDS = (
    "conversation_id", "task_id", "agent", "mode", "phase", "model",
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost",
)

DB_NAME = "modus.sqlite3"
_CORRUPT = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def new_id(prefix: str = "") -> str:
    return prefix + uuid.uuid4().hex[:16]


def image_id_of(data: bytes) -> str:
    """An image's id: the hash of its bytes (the same image, the same id, stored once)."""
    return "img-" + hashlib.sha256(data).hexdigest()[:32]


def iso_utc(seconds: float) -> str:
    """ISO 8601 in UTC, to the millisecond: `2026-12-01T11:28:57.123Z`."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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


class Store:
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

    # -- turns: a turn without an outcome was running when the server stopped

    def start_turn(self, turn_id: str, conversation_id: str, agent: str) -> None:
        self.db.execute(
            "INSERT INTO turns(id, conversation_id, agent, started_at) VALUES (?, ?, ?, ?)",
            (turn_id, conversation_id, agent, time.time()),
        )

    def end_turn(self, turn_id: str, outcome: str) -> None:
        self.db.execute("UPDATE turns SET outcome = ? WHERE id = ?", (outcome, turn_id))

    def reopen_turn(self, turn_id: str) -> None:
        self.db.execute("UPDATE turns SET outcome = NULL WHERE id = ?", (turn_id,))

    def open_turns(self) -> list[tuple[str, str, str]]:
        """(turn id, conversation id, agent) of turns that never ended."""
        return self.db.execute("SELECT id, conversation_id, agent FROM turns WHERE outcome IS NULL ORDER BY started_at").fetchall()

    def turn_outcome(self, turn_id: str) -> str | None:
        row = self.db.execute("SELECT outcome FROM turns WHERE id = ?", (turn_id,)).fetchone()
        return row[0] if row else None

    def unanswered_calls(self, conversation_id: str) -> list[dict[str, Any]]:
        """Tool calls of the conversation's last assistant message that have no result.

        Results are written right after their reply, so only the last reply can have open calls."""
        row = self.db.execute(
            "SELECT seq, metadata FROM messages WHERE conversation_id = ? AND role = 'assistant' AND cut_at IS NULL "
            "ORDER BY seq DESC LIMIT 1",
            (conversation_id,),
        ).fetchone()
        if row is None:
            return []
        calls = json.loads(row[1]).get("toolCalls", [])
        answered = {
            json.loads(m).get("toolCallId")
            for (m,) in self.db.execute(
                "SELECT metadata FROM messages WHERE conversation_id = ? AND role = 'tool' AND seq > ? AND cut_at IS NULL", (conversation_id, row[0])
            )
        }
        return [c for c in calls if c.get("id") not in answered]

    def subconversations(self, conversation_id: str) -> list[str]:
        """The conversation and its subtasks' conversations, all levels down."""
        rows = self.db.execute(
            "WITH RECURSIVE tree(id) AS (SELECT ? UNION SELECT c.id FROM conversations c JOIN tree ON c.parent_id = tree.id) "
            "SELECT id FROM tree",
            (conversation_id,),
        )
        return [r[0] for r in rows]

    # -- meta: small key/value facts about the workspace (current mode, phase, conversation)

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, **values: str) -> None:
        with self.transaction():
            self.db.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                list(values.items()),
            )

    # -- conversations and messages

    def ensure_conversation(self, conversation_id: str, owner: str | None = None, parent_id: str | None = None) -> bool:
        """Create the conversation if new; True when it was created."""
        cur = self.db.execute(
            "INSERT OR IGNORE INTO conversations(id, owner, parent_id, created_at) VALUES (?, ?, ?, ?)",
            (conversation_id, owner, parent_id, time.time()),
        )
        return cur.rowcount == 1

    def conversation_exists(self, conversation_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)).fetchone() is not None

    def conversation_parent(self, conversation_id: str) -> str | None:
        """The conversation a subtask's conversation belongs to; None for a top-level (or unknown) one."""
        row = self.db.execute("SELECT parent_id FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
        return row[0] if row else None

    def conversation_owner(self, conversation_id: str) -> str | None:
        row = self.db.execute("SELECT owner FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
        return row[0] if row else None

    def conversations(self, limit: int = LISTED_CONVERSATIONS) -> list[ConversationRow]:
        """Top-level conversations (not subtasks') with at least one message, the most recently
        updated (the time of their last message) first; at most `limit` of them, so that the
        answer stays small and quick with thousands of conversations in the store."""
        return [ConversationRow(*row) for row in self.db.execute(_CONVERSATIONS, (limit,))]

    def add_message(self, message: StoredMessage) -> StoredMessage:
        self.db.execute(
            "INSERT INTO messages(id, conversation_id, seq, role, agent, text, metadata, created_at) "
            "VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?), ?, ?, ?, ?, ?)",
            (
                message.id,
                message.conversation_id,
                message.conversation_id,
                message.role,
                message.agent,
                message.text,
                json.dumps(message.metadata),
                time.time(),
            ),
        )
        return message

    def last_speaker(self, conversation_id: str, agents: list[str]) -> str | None:
        """The agent among `agents` that spoke last in the conversation."""
        if not agents:
            return None
        marks = ",".join("?" * len(agents))
        row = self.db.execute(
            f"SELECT agent FROM messages WHERE conversation_id = ? AND role = 'assistant' AND agent IN ({marks}) AND cut_at IS NULL "
            "ORDER BY seq DESC LIMIT 1",
            (conversation_id, *agents),
        ).fetchone()
        return row[0] if row else None

    def messages(self, conversation_id: str) -> list[StoredMessage]:
        return list(self._messages(conversation_id))

    def _messages(self, conversation_id: str) -> Iterator[StoredMessage]:
        rows = self.db.execute(
            "SELECT id, role, text, agent, metadata FROM messages WHERE conversation_id = ? AND cut_at IS NULL ORDER BY seq",
            (conversation_id,),
        )
        for mid, role, text, agent, metadata in rows:
            yield StoredMessage(mid, conversation_id, role, text, agent, json.loads(metadata))

    def history(self, conversation_id: str, before: int | None = None, limit: int = 50) -> list[tuple[int, StoredMessage]]:
        """(number, message) of the `limit` messages just before number `before` (the newest
        without it), oldest first; cut messages apart. One backward read of (conversation_id, seq)."""
        rows = self.db.execute(
            "SELECT seq, id, role, text, agent, metadata FROM messages WHERE conversation_id = ? AND seq < ? AND cut_at IS NULL "
            "ORDER BY seq DESC LIMIT ?",
            (conversation_id, before if before is not None else 2**62, limit),
        ).fetchall()
        return [(seq, StoredMessage(mid, conversation_id, role, text, agent, json.loads(metadata))) for seq, mid, role, text, agent, metadata in reversed(rows)]

    def locate_message(self, conversation_id: str, message_id: str) -> tuple[StoredMessage, int, bool] | None:
        """The message of the conversation with that id: (it, its number, whether it was cut)."""
        row = self.db.execute(
            "SELECT role, text, agent, metadata, seq, cut_at FROM messages WHERE conversation_id = ? AND id = ?",
            (conversation_id, message_id),
        ).fetchone()
        if row is None:
            return None
        role, text, agent, metadata, seq, cut_at = row
        return StoredMessage(message_id, conversation_id, role, text, agent, json.loads(metadata)), seq, cut_at is not None

    def last_with(self, conversation_id: str, key: str) -> StoredMessage | None:
        """The conversation's last message (cut ones apart) whose metadata has `key`."""
        path = f"$.{json.dumps(key)}"
        row = self.db.execute(
            "SELECT id, role, text, agent, metadata FROM messages WHERE conversation_id = ? AND cut_at IS NULL "
            "AND json_extract(metadata, ?) IS NOT NULL ORDER BY seq DESC LIMIT 1",
            (conversation_id, path),
        ).fetchone()
        if row is None:
            return None
        mid, role, text, agent, metadata = row
        return StoredMessage(mid, conversation_id, role, text, agent, json.loads(metadata))

    def first_after(self, conversation_id: str, seq: int) -> str | None:
        """The id of the conversation's first message after `seq` (cut ones apart)."""
        row = self.db.execute(
            "SELECT id FROM messages WHERE conversation_id = ? AND seq > ? AND cut_at IS NULL ORDER BY seq LIMIT 1",
            (conversation_id, seq),
        ).fetchone()
        return row[0] if row else None

    def metadata_values(self, conversation_ids: Sequence[str], key: str) -> list[Any]:
        marks = ",".join("?" * len(conversation_ids))
        path = f"$.{json.dumps(key)}"
        rows = self.db.execute(
            f"SELECT json_quote(json_extract(metadata, ?)) FROM messages WHERE conversation_id IN ({marks}) AND cut_at IS NULL "
            "AND json_extract(metadata, ?) IS NOT NULL ORDER BY conversation_id, seq",
            (path, *conversation_ids, path),
        )
        return [json.loads(value) for (value,) in rows]

    def last_seq(self, conversation_id: str) -> int:
        """The number of the conversation's last message (0: none yet)."""
        row = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM messages WHERE conversation_id = ?", (conversation_id,)).fetchone()
        return row[0]

    def cut_after(self, conversation_id: str, seq: int) -> int:
        """Mark the messages after `seq` as cut (kept, no longer part of the conversation);
        returns how many were."""
        with self.transaction():
            cursor = self.db.execute(
                "UPDATE messages SET cut_at = ? WHERE conversation_id = ? AND seq > ? AND cut_at IS NULL",
                (time.time(), conversation_id, seq),
            )
        return cursor.rowcount

    # -- usage: one row per model request

    def add_usage(self, row: Mapping[str, Any]) -> None:
        """A model request's tokens (and cost, None when unknown): the USAGE_FIELDS of `row`."""
        with self.transaction():
            self.db.execute(
                f"INSERT INTO usage({', '.join(USAGE_FIELDS)}, created_at) VALUES ({', '.join('?' * len(USAGE_FIELDS))}, ?)",
                (*(row[f] for f in USAGE_FIELDS), time.time()),
            )

    def usage(self, conversation_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The rows of these conversations (None: all), oldest first."""
        where, args = "", ()
        if conversation_ids is not None:
            where, args = f"WHERE conversation_id IN ({', '.join('?' * len(conversation_ids))})", tuple(conversation_ids)
        rows = self.db.execute(f"SELECT {', '.join(USAGE_FIELDS)} FROM usage {where} ORDER BY id", args).fetchall()
        return [dict(zip(USAGE_FIELDS, r)) for r in rows]

    def usage_total(self, conversation_id: str) -> dict[str, Any]:
        """The conversation's rows summed; its cost None when one of theirs is."""
        row = self.db.execute(
            "SELECT TOTAL(input_tokens), TOTAL(output_tokens), TOTAL(cache_read_tokens), TOTAL(cache_write_tokens), "
            "TOTAL(cost), COUNT(*) - COUNT(cost) FROM usage WHERE conversation_id = ?",
            (conversation_id,),
        ).fetchone()
        return {
            "input_tokens": int(row[0]), "output_tokens": int(row[1]),
            "cache_read_tokens": int(row[2]), "cache_write_tokens": int(row[3]),
            "cost": None if row[5] else round(row[4], 10),
        }

    # -- images: stored once each, by the hash of their bytes

    def put_image(self, conversation_id: str | None, mime_type: str, data: bytes) -> str:
        """The image stored (once: the same bytes are the same row, whoever stores them again);
        its id, `img-` and the first 32 hex digits of the SHA-256 of its bytes."""
        image_id = image_id_of(data)
        with self.transaction():
            self.db.execute(
                "INSERT OR IGNORE INTO images(id, mime_type, data, conversation_id, created_at) VALUES (?, ?, ?, ?, ?)",
                (image_id, mime_type, data, conversation_id, time.time()),
            )
        return image_id

    def image(self, image_id: str) -> tuple[str, bytes] | None:
        """(its MIME type, its bytes); None for an unknown id."""
        row = self.db.execute("SELECT mime_type, data FROM images WHERE id = ?", (image_id,)).fetchone()
        return (row[0], bytes(row[1])) if row else None

    # -- tasks: which mode and phase each task ran in

    def add_task(self, task_id: str, agent: str, mode: str, phase: str, conversation_id: str | None, parent_id: str | None, replaces: str | None) -> None:
        now = time.time()
        with self.transaction():
            if replaces:
                self.db.execute("UPDATE tasks SET disposed_at = ? WHERE id = ? AND disposed_at IS NULL", (now, replaces))
            self.db.execute(
                "INSERT INTO tasks(id, conversation_id, agent, mode, phase, parent_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (task_id, conversation_id, agent, mode, phase, parent_id, now),
            )

    def task(self, task_id: str) -> dict[str, Any] | None:
        row = self.db.execute(
            "SELECT id, conversation_id, agent, mode, phase, parent_id, disposed_at FROM tasks WHERE id = ?", (task_id,)
        ).fetchone()
        if row is None:
            return None
        keys = ("id", "conversation_id", "agent", "mode", "phase", "parent_id", "disposed_at")
        return dict(zip(keys, row, strict=True))

    # -- plans (SPEC §4): one row a plan, from plan_enter to its end; the agent's current one

    def plan_create(self, agent: str, goal: str, scope: list[str] | None = None, conversation_id: str | None = None) -> dict[str, Any]:
        """A new plan of the agent, in state `planning`; the agent's own state is set_plan_state's."""
        plan_id, now = new_id("plan-"), time.time()
        self.db.execute(
            "INSERT INTO plans(id, agent, conversation_id, goal, scope, state, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, 'planning', ?, ?)",
            (plan_id, agent, conversation_id, goal, _json(scope), now, now),
        )
        return self._plan(plan_id)

    def plan_get(self, plan_id: str) -> dict[str, Any] | None:
        """The plan (see PLAN_FIELDS), None if there is none of that id."""
        row = self.db.execute(f"SELECT {', '.join(PLAN_FIELDS)} FROM plans WHERE id = ?", (plan_id,)).fetchone()
        return _plan_row(row) if row else None

    def plan_update(self, plan_id: str, **fields: Any) -> dict[str, Any]:
        """Change fields of the plan (any of PLAN_FIELDS but id, agent and the times); the plan
        as it is now. `scope`, `plan` and `completed` are given as they are (lists, dicts)."""
        unknown = sorted(set(fields) - set(PLAN_UPDATABLE))
        if unknown or not fields:
            raise ValueError(f"plan_update: fields must be some of {', '.join(PLAN_UPDATABLE)}; got {', '.join(unknown) or 'none'}")
        values = [_json(v) if k in _JSON_FIELDS else v for k, v in fields.items()]
        assignments = ", ".join(f"{k} = ?" for k in fields)
        cur = self.db.execute(f"UPDATE plans SET {assignments}, updated_at = ? WHERE id = ?", (*values, time.time(), plan_id))
        if cur.rowcount == 0:
            raise ValueError(f"plan_update: no plan {plan_id}")
        return self._plan(plan_id)

    def current_plan(self, agent: str) -> tuple[str, dict[str, Any] | None]:
        """The agent's plan state (normal | planning | awaiting_approval | executing) and its
        current plan, None in state normal: one read by the agent's key."""
        columns = ", ".join(f"p.{f}" for f in PLAN_FIELDS)
        row = self.db.execute(
            f"SELECT s.state, {columns} FROM plan_state s LEFT JOIN plans p ON p.id = s.plan_id WHERE s.agent = ?", (agent,)
        ).fetchone()
        if row is None:
            return "normal", None
        return row[0], (_plan_row(row[1:]) if row[1] is not None else None)

    def set_plan_state(self, agent: str, state: str, plan_id: str | None = None) -> None:
        """The agent's plan state and current plan: one of the agent's plans in every state but
        `normal`, none in `normal`. The plan's own state follows, in the same transaction. To end
        a plan, set its final state (completed, rejected) with plan_update, then the agent's to
        `normal`: in one transaction() if both must hold together."""
        if state not in AGENT_PLAN_STATES:
            raise ValueError(f"set_plan_state: state must be one of {', '.join(AGENT_PLAN_STATES)}; got {state!r}")
        if (state == "normal") != (plan_id is None):
            need = f"no plan, got plan_id {plan_id!r}" if plan_id is not None else "a plan_id"
            raise ValueError(f"set_plan_state: the state {state} takes {need}")
        with self.transaction():
            if plan_id is not None:
                cur = self.db.execute(
                    "UPDATE plans SET state = ?, updated_at = ? WHERE id = ? AND agent = ?", (state, time.time(), plan_id, agent)
                )
                if cur.rowcount == 0:
                    raise ValueError(f"set_plan_state: {agent} has no plan {plan_id}")
            self.db.execute(
                "INSERT INTO plan_state(agent, state, plan_id) VALUES (?, ?, ?) "
                "ON CONFLICT(agent) DO UPDATE SET state = excluded.state, plan_id = excluded.plan_id",
                (agent, state, plan_id),
            )

    def _plan(self, plan_id: str) -> dict[str, Any]:
        plan = self.plan_get(plan_id)
        assert plan is not None
        return plan

    # -- todos (SPEC §4): the agent's list, across conversations, in its order

    def todos(self, agent: str) -> list[dict[str, Any]]:
        """The agent's todo items (see TODO_FIELDS; the times None when not given), in order."""
        rows = self.db.execute(f"SELECT {', '.join(TODO_FIELDS)} FROM todos WHERE agent = ? ORDER BY position", (agent,))
        return [dict(zip(TODO_FIELDS, row, strict=True)) for row in rows]

    def replace_todos(self, agent: str, items: Sequence[Mapping[str, Any]]) -> None:
        """The agent's list becomes `items` (dicts with TODO_FIELDS; the times may be left out),
        in one transaction. The items are stored as they are: checking them is the caller's."""
        rows, seen = [], set()
        for n, item in enumerate(items):
            missing = [k for k in TODO_FIELDS[:4] if item.get(k) is None]
            if missing:
                raise ValueError(f"replace_todos: item {n} has no {', '.join(missing)}")
            if item["id"] in seen:
                raise ValueError(f"replace_todos: the id {item['id']!r} is used twice")
            seen.add(item["id"])
            rows.append((agent, n, *(item.get(k) for k in TODO_FIELDS)))
        with self.transaction():
            self.db.execute("DELETE FROM todos WHERE agent = ?", (agent,))
            self.db.executemany(f"INSERT INTO todos(agent, position, {', '.join(TODO_FIELDS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _plan_row(row: Sequence[Any]) -> dict[str, Any]:
    plan = dict(zip(PLAN_FIELDS, row, strict=True))
    for key in _JSON_FIELDS:
        plan[key] = None if plan[key] is None else json.loads(plan[key])
    return plan


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
