"""The StateStore interface in SQL, written once for both engines: SQLite (store.py, a
workspace's file) and PostgreSQL (pg/store.py, a team space's database).

The statements use `?` for their parameters and the SQL both engines speak (`ON CONFLICT`,
`CAST`, `COALESCE(SUM(…))`, `IN (?, ?)`). An engine's store subclasses `SqlStore` and supplies
what differs, and only that:

- running a statement (`_run`, `_many`) and `transaction()`: SQLite's one connection, or a
  pool connection per call (PostgreSQL turns `?` into `%s`);
- numbering a conversation's messages (`add_message`, `last_seq`);
- a message's metadata: TEXT holding JSON in SQLite, `json` in PostgreSQL (`_dumped`, `_loaded`,
  and the fragments that test for a key and read its value);
- the oldest-first order of tasks in the conversation list (`TASK_ORDER`).
"""

from __future__ import annotations

import json
import time
from contextlib import AbstractContextManager
from typing import Any, Iterable, Mapping, Sequence, Sized

from .records import (
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

# One statement: counts and last message numbers come from the (conversation_id, seq) index
# alone; only the conversations kept after the sort are looked into (first user message,
# latest task, latest reply). Its parameters: the limit, the blanks to trim.
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
    (SELECT substr(ltrim(text, ?), 1, 1000) FROM messages
     WHERE conversation_id = recent.id AND role = 'user' ORDER BY seq LIMIT 1),
    COALESCE(
        (SELECT mode FROM tasks WHERE conversation_id = recent.id ORDER BY created_at DESC, {task_order} DESC LIMIT 1),
        (SELECT {mode} FROM messages
         WHERE conversation_id = recent.id AND role = 'assistant' ORDER BY seq DESC LIMIT 1)
    )
FROM recent ORDER BY updated_at DESC, id
"""

_MESSAGE = "id, role, text, agent, metadata"
_PLAN_JSON = ("scope", "plan", "completed")
_TASK_FIELDS = ("id", "conversation_id", "agent", "mode", "phase", "parent_id", "disposed_at")


class SqlStore:
    """Everything of the StateStore interface that is the same SQL on both engines."""

    recovered: Recovered | None = None
    #: a column that orders tasks created in the same instant
    TASK_ORDER = "rowid"
    #: SQL for "the metadata has this key" and "the key's value", each with one `?`: `_key(key)`
    HAS_KEY = "json_extract(metadata, ?) IS NOT NULL"
    KEY_VALUE = "json_quote(json_extract(metadata, ?))"
    #: SQL for the mode an assistant message's metadata names
    MODE = "json_extract(metadata, '$.mode')"

    # -- what an engine supplies

    def _run(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement; its cursor (rowcount, fetchone, fetchall)."""
        raise NotImplementedError

    def _many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement for each row, in one transaction."""
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def add_message(self, message: StoredMessage) -> StoredMessage:
        raise NotImplementedError

    def last_seq(self, conversation_id: str) -> int:
        """The number of the conversation's last message (0: none yet)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def _dumped(self, metadata: dict[str, Any]) -> Any:
        """A message's metadata as the engine stores it."""
        return json.dumps(metadata)

    def _loaded(self, value: Any) -> Any:
        """A stored JSON value (metadata, or what KEY_VALUE read) as Python's."""
        return json.loads(value)

    def _key(self, key: str) -> str:
        """The parameter of HAS_KEY and KEY_VALUE for a metadata key."""
        return f"$.{json.dumps(key)}"

    # -- shared helpers

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._run(sql, params).fetchone()

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self._run(sql, params).fetchall()

    def _message(self, conversation_id: str, row: Sequence[Any]) -> StoredMessage:
        mid, role, text, agent, metadata = row
        return StoredMessage(mid, conversation_id, role, text, agent, self._loaded(metadata))

    # -- turns: a turn without an outcome was running when the server stopped

    def start_turn(self, turn_id: str, conversation_id: str, agent: str) -> None:
        self._run("INSERT INTO turns(id, conversation_id, agent, started_at) VALUES (?, ?, ?, ?)", (turn_id, conversation_id, agent, time.time()))

    def end_turn(self, turn_id: str, outcome: str) -> None:
        self._run("UPDATE turns SET outcome = ? WHERE id = ?", (outcome, turn_id))

    def reopen_turn(self, turn_id: str) -> None:
        self._run("UPDATE turns SET outcome = NULL WHERE id = ?", (turn_id,))

    def open_turns(self) -> list[tuple[str, str, str]]:
        """(turn id, conversation id, agent) of turns that never ended."""
        return [tuple(r) for r in self._all("SELECT id, conversation_id, agent FROM turns WHERE outcome IS NULL ORDER BY started_at")]

    def turn_outcome(self, turn_id: str) -> str | None:
        row = self._one("SELECT outcome FROM turns WHERE id = ?", (turn_id,))
        return row[0] if row else None

    def unanswered_calls(self, conversation_id: str) -> list[dict[str, Any]]:
        """Tool calls of the conversation's last assistant message that have no result.

        Results are written right after their reply, so only the last reply can have open calls."""
        row = self._one(
            "SELECT seq, metadata FROM messages WHERE conversation_id = ? AND role = 'assistant' AND cut_at IS NULL ORDER BY seq DESC LIMIT 1",
            (conversation_id,),
        )
        if row is None:
            return []
        calls = self._loaded(row[1]).get("toolCalls", [])
        answered = {
            self._loaded(m).get("toolCallId")
            for (m,) in self._all(
                "SELECT metadata FROM messages WHERE conversation_id = ? AND role = 'tool' AND seq > ? AND cut_at IS NULL", (conversation_id, row[0])
            )
        }
        return [c for c in calls if c.get("id") not in answered]

    def subconversations(self, conversation_id: str) -> list[str]:
        """The conversation and its subtasks' conversations, all levels down."""
        rows = self._all(
            "WITH RECURSIVE tree(id) AS (SELECT CAST(? AS TEXT) UNION SELECT c.id FROM conversations c JOIN tree ON c.parent_id = tree.id) "
            "SELECT id FROM tree",
            (conversation_id,),
        )
        return [r[0] for r in rows]

    # -- meta: small key/value facts about the workspace (current mode, phase, conversation)

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self._one("SELECT value FROM meta WHERE key = ?", (key,))
        return row[0] if row else default

    def set_meta(self, **values: str) -> None:
        self._many("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", values.items())

    # -- conversations and messages

    def ensure_conversation(self, conversation_id: str, owner: str | None = None, parent_id: str | None = None) -> bool:
        """Create the conversation if new; True when it was created."""
        cur = self._run(
            "INSERT INTO conversations(id, owner, parent_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
            (conversation_id, owner, parent_id, time.time()),
        )
        return cur.rowcount == 1

    def conversation_exists(self, conversation_id: str) -> bool:
        return self._one("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)) is not None

    def conversation_parent(self, conversation_id: str) -> str | None:
        """The conversation a subtask's conversation belongs to; None for a top-level (or unknown) one."""
        row = self._one("SELECT parent_id FROM conversations WHERE id = ?", (conversation_id,))
        return row[0] if row else None

    def conversation_owner(self, conversation_id: str) -> str | None:
        row = self._one("SELECT owner FROM conversations WHERE id = ?", (conversation_id,))
        return row[0] if row else None

    def conversations(self, limit: int = LISTED_CONVERSATIONS) -> list[ConversationRow]:
        """Top-level conversations (not subtasks') with at least one message, the most recently
        updated (the time of their last message) first; at most `limit` of them, so that the
        answer stays small and quick with thousands of conversations in the store."""
        sql = _CONVERSATIONS.format(task_order=self.TASK_ORDER, mode=self.MODE)
        return [ConversationRow(*row) for row in self._all(sql, (limit, " \t\n\r"))]

    def last_speaker(self, conversation_id: str, agents: list[str]) -> str | None:
        """The agent among `agents` that spoke last in the conversation."""
        if not agents:
            return None
        row = self._one(
            f"SELECT agent FROM messages WHERE conversation_id = ? AND role = 'assistant' AND agent IN ({_marks(agents)}) AND cut_at IS NULL "
            "ORDER BY seq DESC LIMIT 1",
            (conversation_id, *agents),
        )
        return row[0] if row else None

    def messages(self, conversation_id: str) -> list[StoredMessage]:
        rows = self._all(f"SELECT {_MESSAGE} FROM messages WHERE conversation_id = ? AND cut_at IS NULL ORDER BY seq", (conversation_id,))
        return [self._message(conversation_id, row) for row in rows]

    def history(self, conversation_id: str, before: int | None = None, limit: int = 50) -> list[tuple[int, StoredMessage]]:
        """(number, message) of the `limit` messages just before number `before` (the newest
        without it), oldest first; cut messages apart. One backward read of (conversation_id, seq)."""
        rows = self._all(
            f"SELECT seq, {_MESSAGE} FROM messages WHERE conversation_id = ? AND seq < ? AND cut_at IS NULL ORDER BY seq DESC LIMIT ?",
            (conversation_id, before if before is not None else 2**62, limit),
        )
        return [(row[0], self._message(conversation_id, row[1:])) for row in reversed(rows)]

    def locate_message(self, conversation_id: str, message_id: str) -> tuple[StoredMessage, int, bool] | None:
        """The message of the conversation with that id: (it, its number, whether it was cut)."""
        row = self._one(f"SELECT {_MESSAGE}, seq, cut_at FROM messages WHERE conversation_id = ? AND id = ?", (conversation_id, message_id))
        if row is None:
            return None
        return self._message(conversation_id, row[:5]), row[5], row[6] is not None

    def last_with(self, conversation_id: str, key: str) -> StoredMessage | None:
        """The conversation's last message (cut ones apart) whose metadata has `key`."""
        row = self._one(
            f"SELECT {_MESSAGE} FROM messages WHERE conversation_id = ? AND cut_at IS NULL AND {self.HAS_KEY} ORDER BY seq DESC LIMIT 1",
            (conversation_id, self._key(key)),
        )
        return self._message(conversation_id, row) if row else None

    def first_after(self, conversation_id: str, seq: int) -> str | None:
        """The id of the conversation's first message after `seq` (cut ones apart)."""
        row = self._one("SELECT id FROM messages WHERE conversation_id = ? AND seq > ? AND cut_at IS NULL ORDER BY seq LIMIT 1", (conversation_id, seq))
        return row[0] if row else None

    def metadata_values(self, conversation_ids: Sequence[str], key: str) -> list[Any]:
        """The values of `key` in the metadata of these conversations' messages (cut ones apart), in order."""
        if not conversation_ids:
            return []
        rows = self._all(
            f"SELECT {self.KEY_VALUE} FROM messages WHERE conversation_id IN ({_marks(conversation_ids)}) AND cut_at IS NULL "
            f"AND {self.HAS_KEY} ORDER BY conversation_id, seq",
            (self._key(key), *conversation_ids, self._key(key)),
        )
        return [self._loaded(value) for (value,) in rows]

    def cut_after(self, conversation_id: str, seq: int) -> int:
        """Mark the messages after `seq` as cut (kept, no longer part of the conversation);
        returns how many were."""
        cur = self._run("UPDATE messages SET cut_at = ? WHERE conversation_id = ? AND seq > ? AND cut_at IS NULL", (time.time(), conversation_id, seq))
        return cur.rowcount

    # -- usage: one row per model request

    def add_usage(self, row: Mapping[str, Any]) -> None:
        """A model request's tokens (and cost, None when unknown): the USAGE_FIELDS of `row`."""
        self._run(
            f"INSERT INTO usage({', '.join(USAGE_FIELDS)}, created_at) VALUES ({_marks(USAGE_FIELDS)}, ?)",
            (*(row[f] for f in USAGE_FIELDS), time.time()),
        )

    def usage(self, conversation_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The rows of these conversations (None: all), oldest first."""
        where, args = "", ()
        if conversation_ids is not None:
            if not conversation_ids:
                return []
            where, args = f"WHERE conversation_id IN ({_marks(conversation_ids)})", tuple(conversation_ids)
        rows = self._all(f"SELECT {', '.join(USAGE_FIELDS)} FROM usage {where} ORDER BY id", args)
        return [dict(zip(USAGE_FIELDS, r)) for r in rows]

    def usage_total(self, conversation_id: str) -> dict[str, Any]:
        """The conversation's rows summed; its cost None when one of theirs is."""
        row = self._one(
            "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cache_read_tokens), 0), "
            "COALESCE(SUM(cache_write_tokens), 0), COALESCE(SUM(cost), 0), COUNT(*) - COUNT(cost) FROM usage WHERE conversation_id = ?",
            (conversation_id,),
        )
        return {
            "input_tokens": int(row[0]), "output_tokens": int(row[1]),
            "cache_read_tokens": int(row[2]), "cache_write_tokens": int(row[3]),
            "cost": None if row[5] else round(float(row[4]), 10),
        }

    # -- images: stored once each, by the hash of their bytes

    def put_image(self, conversation_id: str | None, mime_type: str, data: bytes) -> str:
        """The image stored (once: the same bytes are the same row, whoever stores them again);
        its id, `img-` and the first 32 hex digits of the SHA-256 of its bytes."""
        image_id = image_id_of(data)
        self._run(
            "INSERT INTO images(id, mime_type, data, conversation_id, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
            (image_id, mime_type, data, conversation_id, time.time()),
        )
        return image_id

    def image(self, image_id: str) -> tuple[str, bytes] | None:
        """(its MIME type, its bytes); None for an unknown id."""
        row = self._one("SELECT mime_type, data FROM images WHERE id = ?", (image_id,))
        return (row[0], bytes(row[1])) if row else None

    # -- tasks: which mode and phase each task ran in

    def add_task(self, task_id: str, agent: str, mode: str, phase: str, conversation_id: str | None, parent_id: str | None, replaces: str | None) -> None:
        now = time.time()
        with self.transaction():
            if replaces:
                self._run("UPDATE tasks SET disposed_at = ? WHERE id = ? AND disposed_at IS NULL", (now, replaces))
            self._run(
                "INSERT INTO tasks(id, conversation_id, agent, mode, phase, parent_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (task_id, conversation_id, agent, mode, phase, parent_id, now),
            )

    def task(self, task_id: str) -> dict[str, Any] | None:
        row = self._one(f"SELECT {', '.join(_TASK_FIELDS)} FROM tasks WHERE id = ?", (task_id,))
        return dict(zip(_TASK_FIELDS, row, strict=True)) if row else None

    # -- plans (SPEC §4): one row a plan, from plan_enter to its end; the agent's current one

    def plan_create(self, agent: str, goal: str, scope: list[str] | None = None, conversation_id: str | None = None) -> dict[str, Any]:
        """A new plan of the agent, in state `planning`; the agent's own state is set_plan_state's."""
        plan_id, now = new_id("plan-"), time.time()
        self._run(
            "INSERT INTO plans(id, agent, conversation_id, goal, scope, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'planning', ?, ?)",
            (plan_id, agent, conversation_id, goal, _json(scope), now, now),
        )
        return self._plan(plan_id)

    def plan_get(self, plan_id: str) -> dict[str, Any] | None:
        """The plan (see PLAN_FIELDS), None if there is none of that id."""
        row = self._one(f"SELECT {', '.join(PLAN_FIELDS)} FROM plans WHERE id = ?", (plan_id,))
        return _plan_row(row) if row else None

    def plan_update(self, plan_id: str, **fields: Any) -> dict[str, Any]:
        """Change fields of the plan (any of PLAN_FIELDS but id, agent and the times); the plan
        as it is now. `scope`, `plan` and `completed` are given as they are (lists, dicts)."""
        unknown = sorted(set(fields) - set(PLAN_UPDATABLE))
        if unknown or not fields:
            raise ValueError(f"plan_update: fields must be some of {', '.join(PLAN_UPDATABLE)}; got {', '.join(unknown) or 'none'}")
        values = [_json(v) if k in _PLAN_JSON else v for k, v in fields.items()]
        assignments = ", ".join(f"{k} = ?" for k in fields)
        cur = self._run(f"UPDATE plans SET {assignments}, updated_at = ? WHERE id = ?", (*values, time.time(), plan_id))
        if cur.rowcount == 0:
            raise ValueError(f"plan_update: no plan {plan_id}")
        return self._plan(plan_id)

    def current_plan(self, agent: str) -> tuple[str, dict[str, Any] | None]:
        """The agent's plan state (normal | planning | awaiting_approval | executing) and its
        current plan, None in state normal: one read by the agent's key."""
        columns = ", ".join(f"p.{f}" for f in PLAN_FIELDS)
        row = self._one(f"SELECT s.state, {columns} FROM plan_state s LEFT JOIN plans p ON p.id = s.plan_id WHERE s.agent = ?", (agent,))
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
                cur = self._run("UPDATE plans SET state = ?, updated_at = ? WHERE id = ? AND agent = ?", (state, time.time(), plan_id, agent))
                if cur.rowcount == 0:
                    raise ValueError(f"set_plan_state: {agent} has no plan {plan_id}")
            self._run(
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
        rows = self._all(f"SELECT {', '.join(TODO_FIELDS)} FROM todos WHERE agent = ? ORDER BY position", (agent,))
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
            self._run("DELETE FROM todos WHERE agent = ?", (agent,))
            self._many(f"INSERT INTO todos(agent, position, {', '.join(TODO_FIELDS)}) VALUES ({_marks(range(2 + len(TODO_FIELDS)))})", rows)


def _marks(values: Sized) -> str:
    return ", ".join("?" * len(values))


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _plan_row(row: Sequence[Any]) -> dict[str, Any]:
    plan = dict(zip(PLAN_FIELDS, row, strict=True))
    for key in _PLAN_JSON:
        plan[key] = None if plan[key] is None else json.loads(plan[key])
    return plan
