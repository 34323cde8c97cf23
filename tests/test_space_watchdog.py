"""The watchdog that bounds a space store's calls (server/state/pg/watchdog.py), alone, on the
run's real PostgreSQL: a statement past the limit is cut and fails as Overdue, in about the limit;
one within it is left alone, its connection still usable; a failure of the call's own is not
told as Overdue; each call has its own deadline. The store's and the server's use of it are
tested end to end in tests/e2e/test_space_faults.py (a PostgreSQL that answers nothing)."""

from __future__ import annotations

import threading
import time

import pytest

from server.state.pg import watchdog

#: the limit the tests give a call (the store's is 10 s)
LIMIT = 1.0


@pytest.fixture
def db(pg_url):
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        yield conn


@pytest.fixture
def dog(monkeypatch):
    monkeypatch.setattr(watchdog, "CALL_LIMIT", LIMIT)
    monkeypatch.setattr(watchdog, "TICK", 0.05)
    return watchdog.Watchdog()


def test_a_call_past_the_limit_is_cut_and_fails_as_overdue(db, dog):
    started = time.monotonic()
    with pytest.raises(watchdog.Overdue) as failed, dog.watch(db):
        db.execute("SELECT pg_sleep(30)")
    took = time.monotonic() - started
    assert str(failed.value) == watchdog.NO_ANSWER
    assert LIMIT <= took < LIMIT + 3, took
    assert db.closed or db.broken


def test_a_call_within_the_limit_is_left_alone_and_its_connection_goes_on(db, dog):
    for _ in range(3):
        with dog.watch(db):
            assert db.execute("SELECT pg_sleep(0.2), 1").fetchone() == ("", 1)
    time.sleep(LIMIT + 0.2)  # past the calls' deadlines: a call that ended is never cut
    assert db.execute("SELECT 2").fetchone() == (2,)


def test_a_failure_of_the_call_s_own_is_not_told_as_overdue(db, dog):
    import psycopg

    with pytest.raises(psycopg.errors.QueryCanceled) as failed, dog.watch(db):
        db.execute("SET statement_timeout = 100")
        db.execute("SELECT pg_sleep(5)")
    assert not isinstance(failed.value, watchdog.Overdue)
    assert db.execute("SELECT 3").fetchone() == (3,)


def test_each_call_has_its_own_deadline(pg_url, dog):
    import psycopg

    outcome: dict[str, object] = {}

    def call(name: str, seconds: float) -> None:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            try:
                with dog.watch(conn):
                    conn.execute("SELECT pg_sleep(%s)", (seconds,))
                outcome[name] = "answered"
            except watchdog.Overdue:
                outcome[name] = "cut"

    slow = threading.Thread(target=call, args=("slow", 30))
    slow.start()
    time.sleep(LIMIT * 0.7)
    quick = threading.Thread(target=call, args=("quick", LIMIT * 0.5))  # it ends after the slow one's deadline
    quick.start()
    slow.join(10)
    quick.join(10)
    assert outcome == {"slow": "cut", "quick": "answered"}
