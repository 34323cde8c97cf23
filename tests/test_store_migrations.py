"""The schema's versions: a new database, one of the releases before versions, one a migration
behind, a migration that fails, one newer than the code."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from helpers import make_session
from server.state import StateTooNew, Store
from server.state.migrations import MIGRATIONS, script
from server.state.store import DB_NAME

# The schema as the releases before schema versions wrote it (server/state/store.py's SCHEMA),
# copied here so that no later edit of the migrations changes what the test upgrades.
RELEASED_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS conversations (
    id         TEXT PRIMARY KEY,
    owner      TEXT,
    parent_id  TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    seq             INTEGER NOT NULL,
    role            TEXT NOT NULL,
    agent           TEXT,
    text            TEXT NOT NULL,
    metadata        TEXT NOT NULL DEFAULT '{}',
    created_at      REAL NOT NULL,
    UNIQUE (conversation_id, seq)
);
CREATE TABLE IF NOT EXISTS turns (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    agent           TEXT NOT NULL,
    started_at      REAL NOT NULL,
    outcome         TEXT
);
CREATE INDEX IF NOT EXISTS turns_open ON turns(outcome) WHERE outcome IS NULL;
CREATE TABLE IF NOT EXISTS tasks (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT,
    agent           TEXT NOT NULL,
    mode            TEXT NOT NULL,
    phase           TEXT NOT NULL,
    parent_id       TEXT,
    created_at      REAL NOT NULL,
    disposed_at     REAL
);
CREATE INDEX IF NOT EXISTS tasks_conversation ON tasks(conversation_id, created_at);
"""

RELEASED_ROWS = """
INSERT INTO meta VALUES ('mode', 'ask'), ('conversation', 'conv-1');
INSERT INTO conversations VALUES ('conv-1', 'modus', NULL, 1000.0);
INSERT INTO messages VALUES ('m1', 'conv-1', 1, 'user', NULL, 'hello', '{}', 1001.0);
INSERT INTO messages VALUES ('m2', 'conv-1', 2, 'assistant', 'modus', 'hi', '{"mode": "ask"}', 1002.0);
INSERT INTO turns VALUES ('turn-1', 'conv-1', 'modus', 1001.0, 'completed');
INSERT INTO tasks VALUES ('task-1', 'conv-1', 'modus', 'ask', 'act', NULL, 1001.0, NULL);
"""

#: The migrations this Modus knows.
N = len(MIGRATIONS)


def raw(directory: Path) -> closing[sqlite3.Connection]:
    """The database file as plain SQLite sees it."""
    return closing(sqlite3.connect(directory / DB_NAME, isolation_level=None))


def version(directory: Path) -> int:
    with raw(directory) as db:
        return db.execute("PRAGMA user_version").fetchone()[0]


def tables(directory: Path) -> set[str]:
    with raw(directory) as db:
        return {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_new_database_gets_every_migration(tmp_path):
    Store(tmp_path).close()
    assert version(tmp_path) == N == 5
    assert {"meta", "conversations", "messages", "turns", "tasks", "plans", "plan_state", "todos", "usage", "images"} <= tables(tmp_path)


def test_a_database_of_the_releases_before_versions_is_upgraded_in_place(tmp_path):
    with raw(tmp_path) as db:
        db.executescript(RELEASED_SCHEMA + RELEASED_ROWS)
    assert version(tmp_path) == 0
    store = Store(tmp_path)
    try:
        assert store.recovered is None  # upgraded, not moved aside
        assert store.get_meta("mode") == "ask"
        assert [(m.id, m.role, m.text) for m in store.messages("conv-1")] == [("m1", "user", "hello"), ("m2", "assistant", "hi")]
        assert [(c.id, c.messages, c.mode) for c in store.conversations()] == [("conv-1", 2, "ask")]
        assert store.turn_outcome("turn-1") == "completed"
        assert store.task("task-1")["mode"] == "ask"
        plan = store.plan_create("modus", "a goal")  # the new tables are in use
        store.replace_todos("modus", [{"id": "1", "content": "c", "status": "pending", "priority": "low"}])
        assert store.plan_get(plan["id"])["goal"] == "a goal" and len(store.todos("modus")) == 1
    finally:
        store.close()
    assert version(tmp_path) == len(MIGRATIONS)
    assert {"plans", "plan_state", "todos"} <= tables(tmp_path)
    assert [p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name] == []


def test_a_database_behind_gets_the_rest(tmp_path):
    store = Store(tmp_path, migrations=MIGRATIONS[:1])
    store.set_meta(phase="plan")
    store.close()
    assert version(tmp_path) == 1 and "plans" not in tables(tmp_path)
    store = Store(tmp_path)
    try:
        assert store.get_meta("phase") == "plan"
        assert store.current_plan("modus") == ("normal", None)
    finally:
        store.close()
    assert version(tmp_path) == len(MIGRATIONS) and {"plans", "usage"} <= tables(tmp_path)


def test_each_migration_runs_once(tmp_path):
    runs = []
    counted = MIGRATIONS + (lambda db: runs.append(db.execute("PRAGMA user_version").fetchone()[0]),)
    for _ in range(3):
        Store(tmp_path, migrations=counted).close()
    assert runs == [N]  # it ran at version N, and made it N + 1
    assert version(tmp_path) == N + 1


def failing(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE half_done (x)")
    db.execute("INSERT INTO meta(key, value) VALUES ('touched', 'yes')")
    db.execute("UPDATE meta SET value = 'changed' WHERE key = 'mode'")
    raise RuntimeError("the last migration failed")


def test_a_migration_that_fails_leaves_the_database_at_the_old_version(tmp_path):
    store = Store(tmp_path)
    store.set_meta(mode="ask")
    store.close()
    with pytest.raises(RuntimeError, match="the last migration failed"):
        Store(tmp_path, migrations=MIGRATIONS + (failing,))
    assert version(tmp_path) == N
    assert "half_done" not in tables(tmp_path)
    with raw(tmp_path) as db:
        assert db.execute("SELECT key, value FROM meta").fetchall() == [("mode", "ask")]
    assert [p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name] == []
    store = Store(tmp_path)  # the code that knows N migrations goes on using it
    try:
        assert store.get_meta("mode") == "ask"
    finally:
        store.close()


def test_the_migrations_before_a_failing_one_are_kept(tmp_path):
    Store(tmp_path, migrations=MIGRATIONS[:1]).close()
    with pytest.raises(RuntimeError, match="the last migration failed"):
        Store(tmp_path, migrations=MIGRATIONS + (failing,))
    assert version(tmp_path) == N and "plans" in tables(tmp_path)


def newer(directory: Path, user_version: int = N + 3) -> None:
    Store(directory).close()
    with raw(directory) as db:
        db.execute("INSERT INTO meta(key, value) VALUES ('written by', 'a newer Modus')")
        db.execute(f"PRAGMA user_version = {user_version}")


def test_a_newer_database_is_refused_and_left_as_it_is(tmp_path):
    newer(tmp_path)
    before = (tmp_path / DB_NAME).read_bytes()
    with pytest.raises(StateTooNew) as refused:
        Store(tmp_path)
    assert str(refused.value) == (
        f"the state database {tmp_path / DB_NAME} is version {N + 3}, newer than this Modus understands ({N}); "
        "upgrade Modus or set modus.stateDir elsewhere"
    )
    assert (tmp_path / DB_NAME).read_bytes() == before  # not written
    assert [p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name] == []  # nor moved aside
    with raw(tmp_path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'written by'").fetchone() == ("a newer Modus",)


def test_a_session_on_a_newer_database_does_not_start(tmp_path):
    newer(tmp_path / ".modus" / "state", user_version=N + 1)
    with pytest.raises(StateTooNew, match=rf"version {N + 1}, newer than this Modus understands \({N}\); upgrade Modus or set modus.stateDir"):
        make_session(tmp_path)


def test_a_migration_script_is_run_statement_by_statement_in_its_transaction(tmp_path):
    """`;` in a string or a trigger body does not end a statement; nothing is committed half-way."""
    sql = """
    CREATE TABLE notes (text TEXT);
    CREATE TRIGGER stamped AFTER INSERT ON notes BEGIN
        UPDATE notes SET text = text || '; seen' WHERE rowid = new.rowid;
    END;
    INSERT INTO notes VALUES ('one; two');
    """
    store = Store(tmp_path, migrations=MIGRATIONS + (script(sql),))
    try:
        assert store.db.execute("SELECT text FROM notes").fetchall() == [("one; two; seen",)]
    finally:
        store.close()
    broken = MIGRATIONS + (script(sql), script("CREATE TABLE more (x); INSERT INTO nowhere VALUES (1);"))
    with pytest.raises(sqlite3.OperationalError, match="no such table: nowhere"):
        Store(tmp_path, migrations=broken)
    assert version(tmp_path) == N + 1 and "more" not in tables(tmp_path)
