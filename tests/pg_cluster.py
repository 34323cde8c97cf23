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
import glob
import os
import pwd
import shutil
import socket
import subprocess
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ENV = "MODUS_TEST_PG_DIR"
USER = "modus"
PASSWORD = "s3cret-" + "pw-never-shown"  # two pieces: grep finds the test's literal, not the value


def binaries() -> Path | None:
    """The folder of initdb and pg_ctl: on PATH, else Debian's newest /usr/lib/postgresql/<v>/bin."""
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(os.path.realpath(initdb)).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    for pg_ctl in reversed(found):
        if os.access(Path(pg_ctl).with_name("initdb"), os.X_OK):
            return Path(pg_ctl).parent
    return None


def _as_owner(argv: list[str]) -> list[str]:
    """The command run by the cluster's owner: `nobody` when we are root, else ourselves."""
    if os.geteuid() != 0:
        return argv
    return ["setpriv", "--reuid=nobody", f"--regid={pwd.getpwnam('nobody').pw_gid}", "--clear-groups", "--", *argv]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    """initdb and pg_ctl start in `folder` (the caller holds its lock); the URL written and returned."""
    bin_dir = binaries()
    if bin_dir is None:
        raise FileNotFoundError("initdb and pg_ctl: neither on PATH nor in /usr/lib/postgresql/*/bin (scripts/postgresql.sh installs them)")
    data = folder / "data"
    started = time.monotonic()
    os.chmod(folder, 0o755)  # the owner (nobody) reaches its data folder through it
    data.mkdir()
    pwfile = folder / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        for p in (data, pwfile):
            os.chown(p, nobody.pw_uid, nobody.pw_gid)
    os.chmod(pwfile, 0o600)
    init = subprocess.run(
        _as_owner([str(bin_dir / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={pwfile}", "-A", "scram-sha-256",
                   "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"]),
        capture_output=True, cwd=folder, text=True,
    )
    pwfile.unlink()
    if init.returncode != 0:
        raise RuntimeError(f"initdb failed ({init.returncode}): {init.stderr.strip() or init.stdout.strip()}")
    (folder / "bin").write_text(str(bin_dir))  # from here on, stop() has a cluster to stop
    log = data / "server.log"  # the owner's folder: it writes there
    for attempt in range(5):
        port = free_port()
        options = (f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories='' -F -c full_page_writes=off "
                   "-c synchronous_commit=off -c shared_buffers=16MB -c max_connections=200")
        run = subprocess.run(
            _as_owner([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", "30", "start"]),
            capture_output=True, cwd=folder, text=True,
        )
        if run.returncode == 0:
            (folder / "options").write_text(options)
            break
    else:
        raise RuntimeError(f"pg_ctl start failed: {run.stdout}{run.stderr}{log.read_text() if log.exists() else ''}")
    (folder / "started-in").write_text(f"{time.monotonic() - started:.2f}")
    url = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{port}/postgres"
    url_file.write_text(url)
    return url


def stop(folder: Path) -> None:
    """Stop the cluster started in `folder` (if one was) and remove the folder."""
    bin_file = folder / "bin"
    if bin_file.exists():
        subprocess.run(_as_owner([str(Path(bin_file.read_text()) / "pg_ctl"), "-D", str(folder / "data"), "-m", "immediate", "-w", "stop"]),
                       capture_output=True, cwd=folder)
    shutil.rmtree(folder, ignore_errors=True)


def halt(folder: Path) -> None:
    """Stop the cluster in `folder` as an administrator would (its data kept): every connection
    to it is ended."""
    _pg_ctl(folder, "-m", "fast", "-w", "stop")


def resume(folder: Path) -> None:
    """Start the halted cluster in `folder` again, on its port."""
    data = folder / "data"
    _pg_ctl(folder, "-l", str(data / "server.log"), "-o", (folder / "options").read_text(), "-w", "-t", "30", "start")


def _pg_ctl(folder: Path, *args: str) -> None:
    run = subprocess.run(_as_owner([str(Path((folder / "bin").read_text()) / "pg_ctl"), "-D", str(folder / "data"), *args]),
                         capture_output=True, cwd=folder, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"pg_ctl {' '.join(args)} failed: {run.stdout}{run.stderr}")


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
