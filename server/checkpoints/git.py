"""Running the real `git` binary on a shadow repository, with nothing of the user's git setup
in the way: no system or global config, no hooks, no templates, no signing, no attributes or
ignore files from the home folder, no GIT_* variables inherited from the server's environment."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
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


def shadow_config(excludes_file: str) -> str:
    """The settings of the shadow repository (its config includes this file).

    Speed: the index is kept between checkpoints (only changed files are hashed again), in
    version 4 (prefix-compressed paths), with the untracked cache (folders whose mtime did not
    change are not read again) and without a trailing checksum (index.skipHash, git >= 2.40);
    no fsmonitor daemon, no rename detection. Safety: no hooks, no signing, no automatic gc,
    no reflogs, CRLF and filters never applied (see ATTRIBUTES)."""
    return f"""[core]
\tautocrlf = false
\tsafecrlf = false
\tquotePath = false
\tfsmonitor = false
\tuntrackedCache = true
\tpreloadIndex = true
\tsplitIndex = false
\tsparseCheckout = false
\tlogAllRefUpdates = false
\thooksPath = {config_quote(os.devnull)}
\tattributesFile = {config_quote(os.devnull)}
\texcludesFile = {config_quote(excludes_file)}
[index]
\tversion = 4
\tskipHash = true
[commit]
\tgpgSign = false
[tag]
\tgpgSign = false
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
    """Runs git on one shadow repository."""

    def __init__(self, binary: str, env: dict[str, str], cwd: Path, timeout: float):
        self.binary = binary
        self.env = env
        self.cwd = cwd
        self.timeout = timeout

    def run(
        self, *args: str | bytes, input: bytes | None = None, ok: Sequence[int] = (0,), timeout: float | None = None,
        env: dict[str, str] | None = None,
    ) -> bytes:
        """stdout of `git args…`; CheckpointError naming the command and git's own words when
        its exit status is not in `ok` or it runs past the timeout."""
        command = [self.binary, "--no-pager", *args]
        try:
            done = subprocess.run(
                command, input=input, capture_output=True, env={**self.env, **env} if env else self.env, cwd=self.cwd,
                timeout=timeout or self.timeout,
            )
        except subprocess.TimeoutExpired:
            raise CheckpointError(f"git {_name(args)} took longer than {timeout or self.timeout:g} s and was stopped") from None
        except OSError as exc:
            raise CheckpointError(f"git {_name(args)} could not start: {exc}") from None
        if done.returncode not in ok:
            said = done.stderr.decode("utf-8", "replace").strip() or done.stdout.decode("utf-8", "replace").strip()
            raise GitFailed(f"git {_name(args)} failed (exit {done.returncode}): {said[:2000]}", done.returncode, said)
        return done.stdout


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
