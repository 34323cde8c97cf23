"""Running the real `git` binary on a shadow repository, with nothing of the user's git setup
in the way: no system or global config, no hooks, no templates, no signing, no attributes or
ignore files from the home folder, no GIT_* variables inherited from the server's environment.

No config file is trusted to keep git safe, not even the shadow repository's own: every setting
that would make git run a program, open a file of its choosing or reach a remote is given on the
command line of every command (`git -c key=value`, which outranks every config file and every
file they include; see SAFETY). The config files hold only what makes checkpoints fast.

A command that waits to open a FIFO (a `.gitignore` that a repository made a named pipe: git's
open() blocks until a writer comes) is noticed while it waits and stopped: `GitStuck`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Sequence

#: Oldest git known to do what the engine asks (`status --no-renames`, `--porcelain=v1 -z`).
MIN_VERSION = (2, 20)

#: The identity of every checkpoint commit.
IDENTITY = ("Modus", "checkpoints@modus.invalid")


class CheckpointError(Exception):
    """A checkpoint operation failed; the message says why, for the user."""


class CheckpointsUnavailable(CheckpointError):
    """Checkpoints cannot run here (no git, git too old, state folder not writable)."""


def find_git() -> tuple[str | None, str | None]:
    """(the git binary on PATH, None), or (None, why checkpoints are off)."""
    path = shutil.which("git")
    if path is None:
        return None, "Checkpoints are off: the git program was not found on PATH (install git to enable them)."
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, env=clean_environment(), timeout=10, check=True
        ).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"Checkpoints are off: {path} --version failed ({exc})."
    found = re.search(r"(\d+)\.(\d+)", out)
    if found is None:
        return None, f"Checkpoints are off: {path} --version answered {out.strip()!r}, not a git version."
    version = (int(found[1]), int(found[2]))
    if version < MIN_VERSION:
        return None, (
            f"Checkpoints are off: git {version[0]}.{version[1]} is too old "
            f"(git {MIN_VERSION[0]}.{MIN_VERSION[1]} or newer is needed)."
        )
    return path, None


#: What every git command is given on its command line, after `--no-pager`. Each key is one that
#: git reads a program to run (or a file to open) from, for a command the engine runs or one
#: that such a command starts on its own; `-c` outranks every config file, so the shadow
#: repository's own config (or a file it includes) cannot set them. Measured with git 2.39: with
#: the config file alone, core.fsmonitor, core.hooksPath (post-index-change,
#: reference-transaction), include.path / includeIf and a promisor remote (fetched from when an
#: object is missing: core.sshCommand, ext::, remote.<name>.uploadpack) ran programs.
SAFETY: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),  # a program that status, update-index, diff… ask for changed files
    ("core.hooksPath", os.devnull),  # hooks: post-index-change, reference-transaction, pre-auto-gc…
    ("core.attributesFile", os.devnull),  # no diff or filter driver named by a file of config's choosing
    ("core.excludesFile", os.devnull),  # the workspace's .git/info/exclude is copied by the caller, read as untrusted
    ("core.untrackedCache", "true"),  # speed, whatever a config says
    ("diff.external", ""),  # plus --no-ext-diff --no-textconv on the commands that diff
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),  # gpg.program, gpg.ssh.program never asked to verify
    ("log.mailmap", "false"),  # no .mailmap of the workspace opened
    ("core.pager", "cat"),  # besides --no-pager
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    # No transport at all: a lazy fetch from a promisor remote (remote.<name>.promisor, or
    # extensions.partialClone, which -c cannot unset) finds every protocol refused, so no ssh
    # command, remote helper (ext::) or upload-pack program of a config's choosing runs.
    ("protocol.allow", "never"),
    *((f"protocol.{name}.allow", "never")
      for name in ("file", "git", "ssh", "http", "https", "ftp", "ftps", "ext", "fd")),
)

#: How often a running command is looked at, in seconds, and for how long in a row it must be
#: seen waiting on a FIFO to be stopped.
LOOK_EVERY = 0.2
LOOKS_WAITING = 2


class GitStuck(CheckpointError):
    """A git command was stopped: it waited to open a FIFO (`on_fifo`), or ran past its time."""

    def __init__(self, message: str, on_fifo: bool):
        super().__init__(message)
        self.on_fifo = on_fifo


def waiting_on_fifo(pid: int) -> bool | None:
    """Whether a thread of the process waits in open() for the other end of a FIFO (Linux: its
    wchan is the kernel's `wait_for_partner`); None where the system cannot tell (no /proc, or
    wchan hidden: it reads "0" for every thread)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    told = False
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/wchan", "rb") as file:
                where = file.read(64).strip()
        except OSError:
            continue
        if where == b"wait_for_partner":
            return True
        told = told or where not in (b"", b"0")  # "0": running, or a kernel that does not say
    return False if told else None


def clean_environment() -> dict[str, str]:
    """The server's environment without any GIT_* variable (GIT_DIR, GIT_INDEX_FILE,
    GIT_CONFIG_PARAMETERS, … would redirect or reconfigure every command) and in the C locale."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(LC_ALL="C", LANGUAGE="C")
    return env


def shadow_environment(git_dir: Path, work_tree: Path, home: Path) -> dict[str, str]:
    """What every command on the shadow repository runs with."""
    env = clean_environment()
    name, email = IDENTITY
    env.update(
        GIT_DIR=str(git_dir),
        GIT_WORK_TREE=str(work_tree),
        GIT_INDEX_FILE=str(git_dir / "index"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,  # git >= 2.32; older ones read $HOME, which is ours below
        GIT_ATTR_NOSYSTEM="1",
        HOME=str(home),  # an empty folder: no ~/.gitconfig, ~/.config/git/{config,ignore,attributes}
        XDG_CONFIG_HOME=str(home),
        GIT_TERMINAL_PROMPT="0",
        GIT_LITERAL_PATHSPECS="1",  # a path given is a path, never a glob or a :(magic)
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_NO_LAZY_FETCH="1",  # git >= 2.44: no fetch from a promisor remote (older ones: SAFETY)
        GIT_PROTOCOL_FROM_USER="0",
        GIT_AUTHOR_NAME=name,
        GIT_AUTHOR_EMAIL=email,
        GIT_COMMITTER_NAME=name,
        GIT_COMMITTER_EMAIL=email,
    )
    return env


def config_quote(value: str) -> str:
    """A value for a git config file, quoted."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def shadow_config() -> str:
    """The settings of the shadow repository (its config includes this file).

    Speed: the index is kept between checkpoints (only changed files are hashed again), in
    version 4 (prefix-compressed paths), with the untracked cache (folders whose mtime did not
    change are not read again) and without a trailing checksum (index.skipHash, git >= 2.40);
    no fsmonitor daemon, no rename detection. Fidelity: no automatic gc, no reflogs, CRLF and
    filters never applied (see ATTRIBUTES). Safety is not here: it is on every command line
    (SAFETY), whatever this file or the config says."""
    return f"""[core]
\tautocrlf = false
\tsafecrlf = false
\tquotePath = false
\tpreloadIndex = true
\tsplitIndex = false
\tsparseCheckout = false
\tlogAllRefUpdates = false
[index]
\tversion = 4
\tskipHash = true
[gc]
\tauto = 0
[maintenance]
\tauto = false
[status]
\trenames = false
\tshowUntrackedFiles = all
[diff]
\trenames = false
[submodule]
\trecurse = false
[advice]
\taddEmbeddedRepo = false
\tdetachedHead = false
[i18n]
\tcommitEncoding = UTF-8
\tlogOutputEncoding = UTF-8
[user]
\tname = {config_quote(IDENTITY[0])}
\temail = {config_quote(IDENTITY[1])}
"""


#: $GIT_DIR/info/attributes, which outranks every .gitattributes of the workspace: files are
#: stored byte for byte (no CRLF conversion, no clean/smudge filter such as LFS, no $Id$, no
#: re-encoding), and diffs decide text or binary by content, never by a driver of the user's.
ATTRIBUTES = "* -text -filter -ident -working-tree-encoding !eol !diff\n"


class Git:
    """Runs git on one shadow repository: `env` names it (GIT_DIR) and the work tree
    (GIT_WORK_TREE, which is also `cwd`). A command that needs the work tree (`worktree=True`:
    status, update-index, and those that write the index) runs in it; any other runs bare, in
    `outside` (a folder of ours), so that it reads no file of the workspace: git opens a
    folder's `.gitattributes` by a path relative to where it runs, for `diff-tree -p` (a diff
    driver) or the packing of `gc` (the delta attribute), whether it needs the work tree or not."""

    def __init__(self, binary: str, env: dict[str, str], cwd: Path, timeout: float, outside: Path):
        self.binary = binary
        self.env = env
        self.cwd = cwd
        self.timeout = timeout
        self.outside = outside
        self._bare_env = {k: v for k, v in env.items() if k != "GIT_WORK_TREE"}
        self._safety = [arg for key, value in SAFETY for arg in ("-c", f"{key}={value}")]

    def run(
        self, *args: str | bytes, input: bytes | None = None, ok: Sequence[int] = (0,), timeout: float | None = None,
        env: dict[str, str] | None = None, worktree: bool = False,
    ) -> bytes:
        """stdout of `git args…` (with SAFETY before them); CheckpointError naming the command and
        git's own words when its exit status is not in `ok`, GitStuck when it waits to open a
        FIFO or runs past the timeout (it is stopped). Its stdin is `input`, or nothing: never
        the server's own. (`input` is handed over as a temporary file: the watch below waits in
        slices, and Popen.communicate cannot go on writing an input after a slice ran out.)"""
        limit = timeout or self.timeout
        if worktree:
            base, cwd, bare = self.env, self.cwd, []
        else:
            base, cwd, bare = self._bare_env, self.outside, ["-c", "core.bare=true"]
        command = [self.binary, "--no-pager", *self._safety, *bare, *args]
        stdin = tempfile.TemporaryFile() if input is not None else subprocess.DEVNULL
        try:
            if input is not None:
                stdin.write(input)
                stdin.seek(0)
            process = subprocess.Popen(
                command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env={**base, **env} if env else base, cwd=cwd,
            )
        except OSError as exc:
            raise CheckpointError(f"git {_name(args)} could not start: {exc}") from None
        finally:
            if input is not None:
                stdin.close()  # git has its own descriptor of it
        with process:
            try:
                stdout, stderr = _watch(process, limit, _name(args))
            except BaseException:  # never left running (leaving the `with` waits for it)
                _stop(process)
                raise
        if process.returncode not in ok:
            said = stderr.decode("utf-8", "replace").strip() or stdout.decode("utf-8", "replace").strip()
            status = process.returncode
            raise GitFailed(f"git {_name(args)} failed (exit {status}): {said[:2000]}", status, said)
        return stdout


def _watch(process: subprocess.Popen, limit: float, name: str) -> tuple[bytes, bytes]:
    """The output of `process` once it ends. While it runs it is looked at every LOOK_EVERY
    seconds (a command that ends sooner, almost all of them, is never looked at): stopped when
    it waits to open a FIFO (seen so LOOKS_WAITING times in a row), or at `limit` seconds."""
    deadline = time.monotonic() + limit
    waiting = 0
    while True:
        try:
            return process.communicate(timeout=max(0.0, min(LOOK_EVERY, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() >= deadline:
            _stop(process)
            raise GitStuck(f"git {name} took longer than {limit:g} s and was stopped", on_fifo=False)
        waiting = waiting + 1 if waiting_on_fifo(process.pid) else 0
        if waiting >= LOOKS_WAITING:
            _stop(process)
            raise GitStuck(f"git {name} was stopped: it was waiting to open a FIFO (a named pipe)", on_fifo=True)


def _stop(process: subprocess.Popen) -> None:
    if process.returncode is None:
        process.kill()
        process.communicate()


class GitFailed(CheckpointError):
    def __init__(self, message: str, returncode: int, stderr: str):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


def _name(args: Sequence[str | bytes]) -> str:
    """The git command of `args` (past `-c key=value` options), for messages."""
    rest = list(args)
    while rest and rest[0] == "-c":
        rest = rest[2:]
    return str(rest[0]) if rest else ""
