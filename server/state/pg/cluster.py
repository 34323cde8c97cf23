"""A throwaway PostgreSQL cluster in a folder: initdb and pg_ctl on a free loopback port, as
`nobody` when run by root (initdb refuses root). For `modus demo --space` and the tests
(tests/pg_cluster.py shares one such cluster among a test run's workers); never a user's space.

The superuser has a password (scram-sha-256 on TCP).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import time
from pathlib import Path

USER = "modus"


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


def start(folder: Path, password: str) -> str:
    """initdb and pg_ctl start in `folder` (an empty folder the owner can reach); the URL of its
    superuser on database `postgres`. RuntimeError (with initdb's or pg_ctl's words) on failure."""
    bin_dir = binaries()
    if bin_dir is None:
        raise FileNotFoundError("PostgreSQL's initdb and pg_ctl: neither on PATH nor in /usr/lib/postgresql/*/bin (Debian and Ubuntu: apt install postgresql)")
    data = folder / "data"
    started = time.monotonic()
    os.chmod(folder, 0o755)  # the owner (nobody) reaches its data folder through it
    data.mkdir()
    pwfile = folder / "pw"
    pwfile.write_text(password + "\n")
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
    for _ in range(5):
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
    return f"postgresql://{USER}:{password}@127.0.0.1:{port}/postgres"


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
