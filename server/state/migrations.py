"""The schema as numbered migrations, and the code that brings a database up to date.

The version is SQLite's `user_version` (in the file header): migration n brings it from n - 1
to n. Each migration runs once, with the setting of the new version, in one transaction, so a
migration that fails leaves the database as it was, at the old version. A database newer than
the code is refused, never touched: it holds the state of a newer Modus.

To change the schema, append a migration; never edit one that has been released.
"""

from __future__ import annotations

import sqlite3
from typing import Callable, Sequence

#: A migration changes the schema (and data) through the connection; it must not commit.
Migration = Callable[[sqlite3.Connection], None]


class StateTooNew(Exception):
    """The database was written by a newer Modus: this one does not know its schema."""

    def __init__(self, where: str, version: int, known: int):
        super().__init__(
            f"the state database {where} is version {version}, newer than this Modus understands ({known}); "
            "upgrade Modus or set modus.stateDir elsewhere"
        )


def script(sql: str) -> Migration:
    """A migration that runs the statements of `sql` one by one (`executescript` would commit)."""

    def run(db: sqlite3.Connection) -> None:
        for statement in _statements(sql):
            db.execute(statement)

    return run


def _statements(sql: str) -> list[str]:
    statements, statement = [], ""
    for piece in sql.split(";"):
        statement += piece + ";"
        if sqlite3.complete_statement(statement):  # a ';' in a string or trigger body does not end it
            if statement.strip(" \t\n;"):
                statements.append(statement.strip())
            statement = ""
    if statement.strip(" \t\n;"):
        raise ValueError(f"an incomplete SQL statement at the end of a migration: {statement.strip()[:80]}")
    return statements


# 1: the schema of the releases before schema versions. Their databases have these tables (or
# the older ones among them) at version 0: `IF NOT EXISTS` makes the migration complete them
# and mark them version 1, their rows untouched.
SCHEMA_1 = """
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

# 2: plan mode and todos (SPEC §4). A plan row is one plan, from plan_enter to its end, with
# its own state (planning, awaiting_approval, executing, then completed or rejected); the
# agent's current plan and state are one row of plan_state, read by its key. Todos belong to
# the agent, across conversations; `position` keeps the order of the list.
PLANS_AND_TODOS = """
CREATE TABLE plans (
    id              TEXT PRIMARY KEY,
    agent           TEXT NOT NULL,
    conversation_id TEXT,
    goal            TEXT NOT NULL,
    scope           TEXT,
    plan            TEXT,
    state           TEXT NOT NULL,
    completed       TEXT NOT NULL DEFAULT '{}',
    current_step    TEXT,
    feedback        TEXT,
    created_at      REAL NOT NULL,
    updated_at      REAL NOT NULL
);
CREATE TABLE plan_state (
    agent   TEXT PRIMARY KEY,
    state   TEXT NOT NULL,
    plan_id TEXT REFERENCES plans(id)
);
CREATE TABLE todos (
    agent      TEXT NOT NULL,
    position   INTEGER NOT NULL,
    id         TEXT NOT NULL,
    content    TEXT NOT NULL,
    status     TEXT NOT NULL,
    priority   TEXT NOT NULL,
    created_at TEXT,
    updated_at TEXT,
    PRIMARY KEY (agent, id)
);
CREATE INDEX todos_listed ON todos(agent, position);
"""

# 3: what each model request cost, as the provider counted it: tokens, and USD when the model's
# price is known (NULL otherwise). Rows are the request's; sums are made when asked.
USAGE = """
CREATE TABLE usage (
    id                 INTEGER PRIMARY KEY,
    conversation_id    TEXT NOT NULL,
    task_id            TEXT NOT NULL,
    agent              TEXT NOT NULL,
    mode               TEXT NOT NULL,
    phase              TEXT NOT NULL,
    model              TEXT,
    input_tokens       INTEGER NOT NULL,
    output_tokens      INTEGER NOT NULL,
    cache_read_tokens  INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    cost               REAL,
    created_at         REAL NOT NULL
);
CREATE INDEX usage_by_conversation ON usage(conversation_id);
"""

# 4: a conversation cut back to a checkpoint keeps its later messages, marked with the time of
# the cut: the model and the history no longer see them; nothing is deleted.
CUT_MESSAGES = """
ALTER TABLE messages ADD COLUMN cut_at REAL;
"""

# 5: images (a user's pasted screenshot, a tool's result): each stored once, by the hash of its
# bytes, however many messages and requests refer to it; messages hold only `{id, mimeType}`.
# `conversation_id` is the conversation that stored it first.
IMAGES = """
CREATE TABLE images (
    id              TEXT PRIMARY KEY,
    mime_type       TEXT NOT NULL,
    data            BLOB NOT NULL,
    conversation_id TEXT,
    created_at      REAL NOT NULL
);
"""

MIGRATIONS: tuple[Migration, ...] = (
    script(SCHEMA_1),
    script(PLANS_AND_TODOS),
    script(USAGE),
    script(CUT_MESSAGES),
    script(IMAGES),
)


def version(db: sqlite3.Connection) -> int:
    return db.execute("PRAGMA user_version").fetchone()[0]


def check_version(db: sqlite3.Connection, where: str, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """The database's version; StateTooNew when it is newer than `migrations` know."""
    found = version(db)
    if found > len(migrations):
        raise StateTooNew(where, found, len(migrations))
    return found


def migrate(db: sqlite3.Connection, where: str, migrations: Sequence[Migration] = MIGRATIONS) -> None:
    """Apply the migrations the database lacks, each in its own transaction. The version is
    read again under the write lock, so a second server on the same database finds the work
    done rather than doing it twice."""
    while check_version(db, where, migrations) < len(migrations):
        db.execute("BEGIN IMMEDIATE")
        try:
            found = check_version(db, where, migrations)
            if found < len(migrations):
                migrations[found](db)
                db.execute(f"PRAGMA user_version = {found + 1}")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
