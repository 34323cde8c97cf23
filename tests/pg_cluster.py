"""One throwaway PostgreSQL cluster per test run, shared by the xdist workers.

The run's controller names a folder ($MODUS_TEST_PG_DIR, inherited by the workers). The first
process that needs PostgreSQL takes the folder's lock, runs initdb and pg_ctl there (as `nobody`
when the run is root's: initdb refuses root) on a free loopback port, and writes the cluster's
URL; the others find it under the same lock. Each test gets a database of its own, created on
the cluster and dropped after it. The controller stops the cluster at the end of the run
(pytest_unconfigure) and removes the folder.

The superuser has a password (scram-sha-256 on TCP): the tests that check that no password is
ever shown need one to hide.
"""

from __future__ import annotations

import fcntl
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from server.state.pg.cluster import USER, binaries, free_port, halt, resume, start, stop  # noqa: F401 - the tests' too

ENV = "MODUS_TEST_PG_DIR"
PASSWORD = "s3cret-" + "pw-never-shown"  # two pieces: grep finds the test's literal, not the value


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    with open(folder / "lock", "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cluster_url(folder: Path) -> str:
    """The URL of the run's cluster (superuser, database `postgres`), started if it is not."""
    with _locked(folder):
        url_file, failed = folder / "url", folder / "failed"
        if url_file.exists():
            return url_file.read_text()
        if failed.exists():  # an earlier worker tried: the same reason, at once
            raise RuntimeError(failed.read_text())
        try:
            return _start(folder, url_file)
        except Exception as exc:
            failed.write_text(f"the test run's PostgreSQL did not start: {exc}")
            raise


def _start(folder: Path, url_file: Path) -> str:
    """The cluster started in `folder` (the caller holds its lock); its URL written and returned."""
    url = start(folder, PASSWORD)
    url_file.write_text(url)
    return url


def with_database(url: str, name: str) -> str:
    return url.rsplit("/", 1)[0] + "/" + name


@contextmanager
def database(cluster: str) -> Iterator[str]:
    """A new, empty database on the cluster for the block; its URL. Dropped after it."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(cluster, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    try:
        yield with_database(cluster, name)
    finally:
        with psycopg.connect(cluster, autocommit=True) as db:
            db.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
