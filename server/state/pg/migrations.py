"""A space's schema on PostgreSQL as numbered migrations, and the code that brings a database up
to date.

The version is the highest row of `schema_migrations` (one row per migration applied, with its
time). Every attacher runs `migrate` on connecting: under a transaction-scoped advisory lock
(two servers attaching at once: the second waits, then finds the work done), it applies the
migrations the database lacks, in one transaction with their rows, so a failure leaves the
database as it was. A database newer than the code is refused, never touched.

The tables are the space's share of SQLite's (server/state/migrations.py), with the same columns
so that the store's SQL stays alike: conversations, messages, turns, tasks, plans, plan state,
todos, usage, images, meta. Checkpoints and trust stay local: they are not here.

To change the schema, append a migration; never edit one that has been released.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import psycopg

#: The key of the advisory lock held while migrating (any constant bigint: "modus" in ASCII).
LOCK_KEY = 0x6D6F647573

# 1: the space. `conversations.last_seq` hands out the messages' numbers: the UPDATE that takes
# the next one locks the conversation's row, so two servers writing to one conversation get
# consecutive numbers, without a gap (a rolled-back write gives its number back). History pages
# ("the newest `limit` before `before`") read the (conversation_id, seq) key backwards.
SPACE_1 = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE conversations (
    id         TEXT PRIMARY KEY,
    owner      TEXT,
    parent_id  TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    last_seq   BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX conversations_children ON conversations(parent_id) WHERE parent_id IS NOT NULL;
CREATE TABLE messages (
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    seq             BIGINT NOT NULL,
    id              TEXT NOT NULL UNIQUE,
    role            TEXT NOT NULL,
    agent           TEXT,
    text            TEXT NOT NULL,
    metadata        JSON NOT NULL DEFAULT '{}',
    created_at      DOUBLE PRECISION NOT NULL,
    cut_at          DOUBLE PRECISION,
    PRIMARY KEY (conversation_id, seq)
);
CREATE TABLE turns (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    agent           TEXT NOT NULL,
    started_at      DOUBLE PRECISION NOT NULL,
    outcome         TEXT
);
CREATE INDEX turns_open ON turns(started_at) WHERE outcome IS NULL;
CREATE TABLE tasks (
    n               BIGINT GENERATED ALWAYS AS IDENTITY,
    id              TEXT PRIMARY KEY,
    conversation_id TEXT,
    agent           TEXT NOT NULL,
    mode            TEXT NOT NULL,
    phase           TEXT NOT NULL,
    parent_id       TEXT,
    created_at      DOUBLE PRECISION NOT NULL,
    disposed_at     DOUBLE PRECISION
);
CREATE INDEX tasks_conversation ON tasks(conversation_id, created_at);
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
    created_at      DOUBLE PRECISION NOT NULL,
    updated_at      DOUBLE PRECISION NOT NULL
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
CREATE TABLE usage (
    id                 BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conversation_id    TEXT NOT NULL,
    task_id            TEXT NOT NULL,
    agent              TEXT NOT NULL,
    mode               TEXT NOT NULL,
    phase              TEXT NOT NULL,
    model              TEXT,
    input_tokens       BIGINT NOT NULL,
    output_tokens      BIGINT NOT NULL,
    cache_read_tokens  BIGINT NOT NULL,
    cache_write_tokens BIGINT NOT NULL,
    cost               DOUBLE PRECISION,
    created_at         DOUBLE PRECISION NOT NULL
);
CREATE INDEX usage_by_conversation ON usage(conversation_id);
CREATE TABLE images (
    id              TEXT PRIMARY KEY,
    mime_type       TEXT NOT NULL,
    data            BYTEA NOT NULL,
    conversation_id TEXT,
    created_at      DOUBLE PRECISION NOT NULL
);
"""

# 2: the live updates of a space's conversations (feed.py). Every update a server publishes on a
# space conversation is a row of `events`, numbered per conversation by `event_counters` (its row
# lock makes the numbers gapless and committed in their order); its NOTIFY tells every attached
# server to read it. `origin` is the server that published it. The counter is a table of its own,
# not a column of `conversations`: an append (async, on the feed's connection) must never hold a
# lock that the store's synchronous calls on the same server wait for (the messages' numbers).
EVENTS = """
CREATE TABLE event_counters (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations(id),
    last_event      BIGINT NOT NULL
);
CREATE TABLE events (
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    seq             BIGINT NOT NULL,
    origin          TEXT NOT NULL,
    body            TEXT NOT NULL,
    created_at      DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
"""

# 3: the space's members and who is online. A server says its member is here (`presence`, one
# row a server, its time renewed every 10 s by PostgreSQL's clock, removed when it detaches); a
# member is online while one of its servers said so within the last 30 s, so one whose last server
# died shows offline within 30 s. `members` remembers everyone who ever attached.
MEMBERS = """
CREATE TABLE members (
    handle       TEXT PRIMARY KEY,
    display_name TEXT
);
CREATE TABLE presence (
    server  TEXT PRIMARY KEY,
    handle  TEXT NOT NULL REFERENCES members(handle),
    seen_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX presence_by_member ON presence(handle, seen_at);
"""

MIGRATIONS: tuple[str, ...] = (SPACE_1, EVENTS, MEMBERS)


class SpaceTooNew(Exception):
    """The space's database was migrated by a newer Modus: this one does not know its schema."""

    def __init__(self, where: str, version: int, known: int):
        super().__init__(
            f"the space database {where} is at schema version {version}, newer than this Modus understands ({known}); upgrade Modus"
        )


def version(db: psycopg.Connection) -> int:
    """The database's schema version: 0 when no migration was ever applied."""
    if db.execute("SELECT to_regclass('schema_migrations')").fetchone()[0] is None:
        return 0
    return db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]


def migrate(db: psycopg.Connection, where: str, migrations: Sequence[str] = MIGRATIONS) -> tuple[int, int]:
    """Bring the database up to date: (the version found, the version now). `db` must not be in
    a transaction; it is left out of one. SpaceTooNew when the database is newer than the code."""
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        found = version(db)
        if found > len(migrations):
            raise SpaceTooNew(where, found, len(migrations))
        if found == 0:
            db.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
        for n in range(found, len(migrations)):
            db.execute(migrations[n].encode())  # no parameters: the script's statements run as one
            db.execute("INSERT INTO schema_migrations(version) VALUES (%s)", (n + 1,))
    return found, len(migrations)
