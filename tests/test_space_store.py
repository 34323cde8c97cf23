"""A team space's store on a real PostgreSQL (the test run's throwaway cluster, a database a
test): the schema's migrations from empty, again, and by servers attaching at once; message
numbers under concurrent writers; the history's index; `modus space init` as a user runs it;
and a password that no error or log ever shows. The operations shared with SQLite are tested
on both stores in test_store.py."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import pg_cluster
from server.state.records import StoredMessage

ROOT = Path(__file__).resolve().parent.parent


def connect(url: str):
    import psycopg

    return psycopg.connect(url, autocommit=True)


def space(url: str, **kwargs):
    from server.state.pg import SpaceStore

    return SpaceStore(url, **kwargs)


def tables(url: str) -> set[str]:
    with connect(url) as db:
        return {r[0] for r in db.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}


def versions(url: str) -> list[int]:
    with connect(url) as db:
        return [r[0] for r in db.execute("SELECT version FROM schema_migrations ORDER BY version")]


#: the schema version this Modus brings a space to
LATEST = 3
SPACE_TABLES = {"schema_migrations", "meta", "conversations", "messages", "turns", "tasks", "plans", "plan_state", "todos", "usage", "images", "events", "event_counters", "members", "presence"}


# ------------------------------------------------------------ migrations


def test_the_first_attach_creates_the_schema_and_the_next_finds_it_done(pg_url):
    from server.state.pg.migrations import MIGRATIONS

    assert tables(pg_url) == set()
    first = space(pg_url)
    assert first.migrated == (0, len(MIGRATIONS))
    assert tables(pg_url) == SPACE_TABLES
    assert versions(pg_url) == list(range(1, len(MIGRATIONS) + 1))
    first.ensure_conversation("conv-1")
    first.add_message(StoredMessage("m1", "conv-1", "user", "hello"))
    first.close()
    again = space(pg_url)  # idempotent: nothing applied twice, nothing lost
    try:
        assert again.migrated == (len(MIGRATIONS), len(MIGRATIONS))
        assert versions(pg_url) == list(range(1, len(MIGRATIONS) + 1))
        assert [m.text for m in again.messages("conv-1")] == ["hello"]
    finally:
        again.close()


def test_servers_attaching_at_once_migrate_once(pg_url):
    """Four attachers on an empty database at the same moment: one migrates (under the advisory
    lock), the others wait for it and find the work done; none fails."""
    start, results, errors = threading.Barrier(4), [], []

    def attach():
        try:
            start.wait()
            store = space(pg_url)
            results.append(store.migrated)
            store.close()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=attach) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert sorted(results) == [(0, LATEST)] + [(LATEST, LATEST)] * 3
    assert versions(pg_url) == list(range(1, LATEST + 1))


def test_a_schema_newer_than_this_modus_is_refused_untouched(pg_url):
    from server.state.pg.migrations import SpaceTooNew

    space(pg_url).close()
    with connect(pg_url) as db:
        db.execute("INSERT INTO schema_migrations(version) VALUES (99)")
    with pytest.raises(SpaceTooNew, match=rf"schema version 99, newer than this Modus understands \({LATEST}\)"):
        space(pg_url)
    assert versions(pg_url) == [*range(1, LATEST + 1), 99]


def test_a_migration_that_fails_leaves_the_database_as_it_was(pg_url):
    from server.state.pg.migrations import MIGRATIONS, migrate

    with connect(pg_url) as db:
        with pytest.raises(Exception, match="no_such_table"):
            migrate(db, "test", (*MIGRATIONS, "ALTER TABLE no_such_table ADD COLUMN x INTEGER"))
    assert tables(pg_url) == set()  # migration 1 rolled back with the failing 2


# ------------------------------------------------------------ message numbers


def test_two_servers_writing_to_one_conversation_get_consecutive_numbers(pg_url):
    """Each message takes the conversation's next number under its row lock: written from two
    stores (two servers) at once, the numbers are 1..n, each once, in each writer's order."""
    stores = [space(pg_url), space(pg_url)]
    stores[0].ensure_conversation("conv-1")
    start = threading.Barrier(2)

    def write(n: int):
        start.wait()
        for i in range(100):
            stores[n].add_message(StoredMessage(f"s{n}-{i}", "conv-1", "user", f"{n}:{i}"))

    threads = [threading.Thread(target=write, args=(n,)) for n in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        page = stores[1].history("conv-1", limit=1000)
        assert [seq for seq, _ in page] == list(range(1, 201))
        for n in (0, 1):
            assert [m.id for _, m in page if m.id.startswith(f"s{n}-")] == [f"s{n}-{i}" for i in range(100)]
        assert stores[0].last_seq("conv-1") == 200
    finally:
        for s in stores:
            s.close()


def test_a_message_written_in_a_transaction_that_fails_leaves_no_gap(pg_url):
    store = space(pg_url)
    try:
        store.ensure_conversation("conv-1")
        store.add_message(StoredMessage("m1", "conv-1", "user", "one"))
        with pytest.raises(RuntimeError):
            with store.transaction():
                store.add_message(StoredMessage("m2", "conv-1", "user", "lost"))
                raise RuntimeError("stop")
        assert store.add_message_seq(StoredMessage("m3", "conv-1", "user", "two")) == 2
        with pytest.raises(ValueError, match="add_message: no conversation conv-none"):
            store.add_message(StoredMessage("m4", "conv-none", "user", "nowhere"))
    finally:
        store.close()


def test_the_newest_page_of_a_long_conversation_is_read_from_the_index(pg_url):
    """`the newest limit before before` reads the (conversation_id, seq) key backwards, never
    the table: 200,000 messages here (bench/ measures 1,000,000)."""
    store = space(pg_url)
    try:
        store.ensure_conversation("conv-big")
        store.ensure_conversation("conv-small")
        with connect(pg_url) as db:
            db.execute(
                "INSERT INTO messages(conversation_id, seq, id, role, text, created_at) "
                "SELECT 'conv-big', n, 'm' || n, 'user', 'text ' || n, n FROM generate_series(1, 200000) n"
            )
            db.execute("UPDATE conversations SET last_seq = 200000 WHERE id = 'conv-big'")
            db.execute("ANALYZE messages")
            plan = "\n".join(
                r[0] for r in db.execute(
                    "EXPLAIN SELECT seq, id, role, text, agent, metadata FROM messages "
                    "WHERE conversation_id = 'conv-big' AND seq < 150000 AND cut_at IS NULL ORDER BY seq DESC LIMIT 50"
                )
            )
        assert "Index Scan Backward using messages_pkey" in plan, plan
        started = time.perf_counter()
        page = store.history("conv-big", before=150000)
        assert time.perf_counter() - started < 0.5  # generous: a loaded 2-core machine; bench/ holds the 50 ms target
        assert [seq for seq, _ in page] == list(range(149950, 150000))
    finally:
        store.close()


# ------------------------------------------------------------ passwords


def test_a_wrong_password_is_named_as_such_and_never_shown(pg_url, caplog):
    from server.state.pg import SpaceUnreachable

    caplog.set_level(logging.DEBUG)
    wrong = pg_url.replace(pg_cluster.PASSWORD, "not-the-" + "password-x")
    with pytest.raises(SpaceUnreachable) as refused:
        space(wrong)
    message = str(refused.value)
    assert message.startswith(f"cannot connect to the space's PostgreSQL at 127.0.0.1:{pg_url.split(':')[3].split('/')[0]}/")
    assert "password authentication failed" in message
    assert "not-the-password-x" not in message and pg_cluster.PASSWORD not in message
    assert "not-the-password-x" not in caplog.text and pg_cluster.PASSWORD not in caplog.text


def test_a_space_that_is_down_is_named_and_its_password_never_shown(caplog):
    from server.state.pg import SpaceUnreachable

    caplog.set_level(logging.DEBUG)
    port = pg_cluster.free_port()
    with pytest.raises(SpaceUnreachable) as refused:
        space(f"postgresql://alice:hunter2-secret@127.0.0.1:{port}/team", connect_timeout=3)
    assert f"127.0.0.1:{port}/team" in str(refused.value) and "refused" in str(refused.value).lower()
    assert "hunter2" not in str(refused.value) and "hunter2" not in caplog.text


def test_the_pool_logs_no_password_while_it_works(pg_url, caplog):
    caplog.set_level(logging.DEBUG)
    store = space(pg_url)
    try:
        store.ensure_conversation("c")
        store.add_message(StoredMessage("m", "c", "user", "hi"))
    finally:
        store.close()
    assert pg_cluster.PASSWORD not in caplog.text


# ------------------------------------------------------------ modus space init


def modus(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "server", *args], capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )


def test_space_init_creates_the_schema_then_finds_it_up_to_date(pg_url):
    place = pg_url.split("@")[1]
    first = modus("space", "init", pg_url)
    assert (first.returncode, first.stderr) == (0, "")
    assert first.stdout == f"Created the space's schema at {place}: migrations 1 to {LATEST} applied (schema version {LATEST}).\n"
    assert tables(pg_url) == SPACE_TABLES
    again = modus("space", "init", pg_url)
    assert (again.returncode, again.stdout) == (0, f"The space at {place} is up to date (schema version {LATEST}): nothing to do.\n")
    assert pg_cluster.PASSWORD not in first.stdout + again.stdout


def test_space_init_takes_the_password_from_a_variable(pg_url):
    bare = pg_url.replace(f":{pg_cluster.PASSWORD}@", "@")
    done = modus("space", "init", "--password-env", "TEAM_PW", bare, TEAM_PW=pg_cluster.PASSWORD)
    assert done.returncode == 0 and done.stdout.startswith("Created the space's schema at 127.0.0.1:"), done.stderr
    missing = modus("space", "init", "--password-env", "NO_SUCH_VAR", bare)
    assert (missing.returncode, missing.stderr) == (2, "modus space init: $NO_SUCH_VAR is not set (--password-env)\n")


def test_space_init_names_the_host_when_refused_or_unreachable_never_the_password(pg_url):
    wrong = modus("space", "init", pg_url.replace(pg_cluster.PASSWORD, "wrong-" + "pw-123"))
    port = pg_url.split(":")[3].split("/")[0]
    assert wrong.returncode == 1 and wrong.stdout == ""
    assert wrong.stderr.startswith(f"modus space init: cannot connect to the space's PostgreSQL at 127.0.0.1:{port}/")
    assert "password authentication failed" in wrong.stderr and "wrong-pw-123" not in wrong.stderr
    down = pg_cluster.free_port()
    gone = modus("space", "init", f"postgresql://bob:hunter2-secret@127.0.0.1:{down}/team")
    assert gone.returncode == 1 and f"at 127.0.0.1:{down}/team: " in gone.stderr and "hunter2" not in gone.stderr
    assert tables(pg_url) == set()


def test_space_init_has_help_and_refuses_what_is_not_a_url():
    shown = modus("space", "init", "--help")
    assert shown.returncode == 0 and "usage: modus space init [-h] [--password-env NAME] URL" in shown.stdout
    assert "never printed" in shown.stdout
    other = modus("space", "init", "mysql://u:pw-x@h/db")
    assert other.returncode == 2 and "expected a postgresql:// URL" in other.stderr and "pw-x" not in other.stderr


def test_the_server_starts_without_psycopg():
    """A server without a space never loads psycopg: only a space's store imports it."""
    code = "import sys, server.cli, server.state, server.state.pg; assert not [m for m in sys.modules if m.startswith('psycopg')]"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr


def test_two_spaces_share_a_database_in_two_schemas(pg_url):
    """One database can hold several spaces, a PostgreSQL schema each, named by the URL's
    search_path: each is migrated and read apart."""
    with connect(pg_url) as db:
        db.execute("CREATE SCHEMA team_a")
        db.execute("CREATE SCHEMA team_b")
    a, b = (space(f"{pg_url}?options=-csearch_path%3D{name}") for name in ("team_a", "team_b"))
    try:
        assert a.migrated == b.migrated == (0, LATEST)
        a.ensure_conversation("conv-1")
        a.add_message(StoredMessage("m1", "conv-1", "user", "in a"))
        assert not b.conversation_exists("conv-1") and b.history("conv-1") == []
        assert [m.text for _, m in a.history("conv-1")] == ["in a"]
        assert tables(pg_url) == set()  # nothing in public
    finally:
        a.close()
        b.close()
