"""Checkpoints of a workspace in a shadow git repository: `take`, `list`, `diff`, `files_at`,
`restore` (what restoring would write) and `restore_on_disk`.

The shadow repository lives at `<state folder>/checkpoints/<hash of the workspace's real
path>/git`, the state folder being the user's own (`$XDG_STATE_HOME/modus`, which the caller
passes), never one in the workspace: a repository cannot ship a shadow repository, nor its
config, hooks or index, by knowing where it will be cloned. Shadow repositories that earlier
versions kept under the workspace's `.modus/state/checkpoints/` are not read any more (anyone
who could write the workspace could have planted them); their checkpoints are not listed. The
shadow repository is driven with GIT_DIR and GIT_WORK_TREE=<workspace>: nothing is written
inside the workspace, and the user's own `.git` is never read but for its `info/exclude`, read
as untrusted input (a regular file, bounded) and copied into the shadow's own exclude file.
Nothing in any config file is trusted to keep git from running a program: see git.py.

A checkpoint is a commit on `refs/heads/checkpoints`, one per `take`, even when nothing changed
(its `changed` is then False): each take has its own id, message and time. Its tree holds the
workspace's files as git would see them (`.gitignore` files, `.git/info/exclude`), minus
files over the size caps and Modus's state folder; the files of nested git repositories (their
`.git` left out) are held as plain files, never as a gitlink. The commit message carries, after
the caller's message, one line `Modus-Checkpoint: {json}`: the precise time, the caller's
`meta` and the files skipped.

Speed comes from the index, kept between checkpoints in the shadow repository: one `git status`
says which files changed since the last checkpoint (the untracked cache spares reading folders
that did not change), only those are hashed again (`git update-index`), then `write-tree`
(the cache-tree spares the unchanged folders), `commit-tree` and `update-ref`.

A file git opens while it walks the workspace can be a FIFO (a repository, or an archive, can
hold one): a `.gitignore` (read by `status` in each folder), a `.gitattributes` (read when a
file is hashed), a nested repository's `.git/HEAD` or `commondir` (read to tell a nested
repository); git's open() of a FIFO waits for a writer that never comes (measured with git
2.39, each stalls a checkpoint until git's timeout). Looking for them before each checkpoint
would cost a walk of the whole workspace, which git's untracked cache spares, so they are found
when they bite: git runs under a watchdog (git.py) that sees it wait on a FIFO (Linux: /proc;
elsewhere its timeout says so) and stops it; a walk of the workspace (bounded, made only then)
finds the non-regular files of those names, their folders are left out of the checkpoints
(added to the shadow's exclude file, which keeps git out of them where a `:(exclude)` pathspec
does not; their files dropped from its index; each named in the checkpoint's `skipped` as
"<folder>/" with the reason) and the checkpoint is taken again: about 0.4 s more, once. A
folder comes back once its file is a regular one again (one lstat before each checkpoint). The
workspace's own folder cannot be left out: with a `.gitignore` or `.gitattributes` there that is
not a regular file (one lstat each, before every use), checkpoints are off (`available()`
False, `reason` naming the file). Commands that need no work tree (diff-tree, log, cat-file…)
run where no file of the workspace can be reached (git.py), and the workspace's
`.git/info/exclude` is read by us, as untrusted input, not by git.

Every public method blocks (run it in a worker thread) and is serialised per workspace: a
thread lock per shadow repository and an flock on its lock file (several processes).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Literal, Mapping, Sequence

try:
    import fcntl
except ImportError:  # Windows: the thread lock alone
    fcntl = None  # type: ignore[assignment]

from .git import (
    ATTRIBUTES, CheckpointError, CheckpointsUnavailable, Git, GitFailed, GitStuck, find_git, shadow_config,
    shadow_environment,
)
from . import restore as _restore
from ..untrusted import Refused, read_text

#: Flags of os.open where the system has them.
_NOFOLLOW, _NONBLOCK, _CLOEXEC = (getattr(os, f"O_{n}", 0) for n in ("NOFOLLOW", "NONBLOCK", "CLOEXEC"))

log = logging.getLogger(__name__)

MiB = 1024 * 1024
#: The branch the checkpoints are on.
REF = "refs/heads/checkpoints"
#: Marks the line of the commit message that holds the checkpoint's data.
TRAILER = "Modus-Checkpoint: "
#: Put in the index under a nested repository's folder so that git walks into it as a folder
#: of the workspace instead of taking it for a gitlink; never on disk, gone after one pass.
PLACEHOLDER = b".modus-checkpoint-placeholder"
#: How many levels of repositories nested in nested repositories are followed.
MAX_NESTING = 8
#: Bytes read to tell a binary file (git's own rule: a NUL among the first 8,000).
SNIFF = 8000
#: Stale lock files of git commands that died (the flock says no other Modus is at work).
LOCK_FILES = ("index.lock", "HEAD.lock", "config.lock", "packed-refs.lock", f"{REF}.lock")
#: The files git opens in a folder of the workspace as it walks it (they must be regular files).
GIT_READS = (".gitignore", ".gitattributes")
#: The largest `.git/info/exclude` of the workspace that is read.
MAX_EXCLUDE_BYTES = 1 * MiB
#: How many times a checkpoint is tried again after git was stopped waiting on a FIFO, and the
#: most entries the walk that looks for such FIFOs reads.
MAX_STUCK_RETRIES = 3
MAX_WALK_ENTRIES = 2_000_000

Kind = Literal["file", "executable", "symlink"]


@dataclass(frozen=True)
class Skipped:
    """A file a checkpoint does not hold, and why; a folder left out whole ends in "/"."""

    path: str
    reason: str


@dataclass(frozen=True)
class Checkpoint:
    id: str  # the commit hash
    message: str
    time: float  # seconds since the epoch
    parent: str | None  # the checkpoint before it
    changed: bool  # whether its files differ from the parent's (always True for the first)
    skipped: tuple[Skipped, ...] = ()
    meta: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FileDiff:
    """One file changed since a checkpoint: `text` is git's unified diff of it (headers and
    hunks, `Binary files … differ` for a binary file), or a sentence when it was not compared."""

    path: str
    status: Literal["added", "deleted", "modified"]
    text: str
    binary: bool = False


@dataclass(frozen=True)
class FileVersion:
    """A file as a checkpoint holds it. `text` is None when it is binary (a NUL in its first
    8,000 bytes, or not UTF-8) or a symlink (`data` is then the link's target)."""

    path: str
    kind: Kind
    data: bytes = field(repr=False)
    text: str | None = field(repr=False)


FileChange = _restore.FileChange


def _hash(path: Path) -> str:
    return hashlib.sha256(os.fsencode(path)).hexdigest()[:16]


def _size(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" or n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def _ignore_literal(rel: str) -> str:
    """A path as a .gitignore pattern that matches it and nothing else."""
    out = "".join("\\" + c if c in "\\*?[" else c for c in rel)
    if out.startswith(("#", "!")):
        out = "\\" + out
    if out.endswith(" "):
        out = out[:-1] + "\\ "
    return out


def _inside(path: Path, root: Path) -> str | None:
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None
    return rel.as_posix() if rel.parts else None


_registry_guard = threading.Lock()
_thread_locks: dict[str, threading.Lock] = {}


def _thread_lock(key: Path) -> threading.Lock:
    with _registry_guard:
        return _thread_locks.setdefault(str(key), threading.Lock())


class ShadowRepo:
    """The checkpoints of one workspace. Cheap to make; nothing runs before the first call.

    - `max_file_bytes`: larger files are not held (reported as skipped);
    - `max_binary_bytes`: binary files larger than this are not held (smaller ones are, and are
      restored on disk only);
    - `max_files`: a checkpoint that would hash more files than this at once is refused (a
      workspace that is someone's home folder);
    - `exclude`: more .gitignore patterns, relative to the workspace;
    - `keep_out`: folders never held besides the state folder (the session's own state folder,
      when it lies in the workspace);
    - `timeout`: the longest one git command may run, in seconds.

    `state_dir` is where the shadow repository lives: the user's own state folder, outside any
    repository (see the module's docstring); a workspace's `.modus/state` is always left out.
    """

    def __init__(
        self,
        workspace: str | os.PathLike,
        state_dir: str | os.PathLike,
        *,
        max_file_bytes: int = 5 * MiB,
        max_binary_bytes: int = 1 * MiB,
        max_files: int = 200_000,
        exclude: Sequence[str] = (),
        keep_out: Sequence[str | os.PathLike] = (),
        timeout: float = 120.0,
    ):
        self.root = Path(os.path.realpath(workspace))
        self.state_dir = Path(os.path.abspath(state_dir))
        self.dir = Path(os.path.realpath(self.state_dir)) / "checkpoints" / _hash(self.root)
        self.git_dir = self.dir / "git"
        self.max_file_bytes = max_file_bytes
        self.max_binary_bytes = max_binary_bytes
        self.max_files = max_files
        self.exclude = tuple(exclude)
        self.keep_out = tuple(Path(os.path.abspath(folder)) for folder in keep_out)
        self.timeout = timeout
        #: Set when a damaged shadow repository was moved aside and a new one started: what to
        #: tell the user (once), naming both.
        self.recovered: str | None = None
        self._lock = _thread_lock(self.dir)
        self._checked = False
        self._check_lock = threading.Lock()
        self._reason: str | None = None
        self._git: Git | None = None
        self._head_tree: tuple[str, str] | None = None  # (commit, its tree) of the last head seen
        self._root_b = os.fsencode(self.root)
        #: Folders left out because git would wait on a FIFO in them: folder → (that file, why).
        self._left_out: dict[str, tuple[Path, str]] = {}
        self._root_problem: str | None = None
        self._exclude_told = False

    # ------------------------------------------------------------------ availability

    def available(self) -> bool:
        """Whether checkpoints can run: git on PATH (2.20 or newer), the workspace a folder, the
        shadow repository ready (made at the first call), and no `.gitignore` or `.gitattributes`
        at the workspace's root that git would wait on (looked at each call). `reason` says why not."""
        with self._check_lock:
            if not self._checked:
                self._check()
        if self._reason is not None:
            return False
        self._root_problem = self._root_blocker()
        return self._root_problem is None

    def _check(self) -> None:
        binary, reason = find_git()
        if binary is None:
            self._reason = reason
        elif not self.root.is_dir():
            self._reason = f"Checkpoints are off: the workspace {self.root} is not a folder."
        else:
            home = self.dir / "home"
            self._git = Git(binary, shadow_environment(self.git_dir, self.root, home), self.root, self.timeout, home)
            try:
                with self._locked():
                    self._prepare()
            except CheckpointError as exc:
                self._git = None
                self._reason = str(exc) if str(exc).startswith("Checkpoints are off") else f"Checkpoints are off: {exc}"
        self._checked = True

    @property
    def reason(self) -> str | None:
        """Why checkpoints are off (after `available()` answered False), for the user."""
        return self._reason or self._root_problem

    def _root_blocker(self) -> str | None:
        """Why checkpoints are off while a file git reads at the workspace's root is not a
        regular file (its folder, the workspace, cannot be left out), or None."""
        for name in GIT_READS:
            path = self.root / name
            if _would_block(path):
                return (
                    f"Checkpoints are off: {path} is {_kind_of(path)}, not a regular file, and git would wait "
                    "forever to read it. Remove it (or make it a regular file) to have checkpoints again."
                )
        return None

    def _require(self) -> Git:
        if not self.available():
            raise CheckpointsUnavailable(self.reason or "Checkpoints are off.")
        assert self._git is not None
        return self._git

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._lock:
            try:
                self.dir.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.dir / "lock", os.O_RDWR | os.O_CREAT | _CLOEXEC, 0o600)
            except OSError as exc:
                raise CheckpointsUnavailable(
                    f"Checkpoints are off: the folder {self.dir} cannot be written ({exc.strerror})."
                ) from None
            try:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)

    # ------------------------------------------------------------------ the shadow repository

    def _prepare(self) -> None:
        """The shadow repository exists, its config and exclude files are current, and no lock
        file of a git command that died is left (we hold the flock: no one else is at work)."""
        if not (self.git_dir / "HEAD").is_file():
            self._init()
        try:
            (self.dir / "home").mkdir(exist_ok=True)  # where git runs when it needs no work tree
            self._remove_stale_locks()
            for folder, (path, _why) in list(self._left_out.items()):
                if not _would_block(path):  # a regular file again (or gone): the folder is held again
                    del self._left_out[folder]
            self._write(self.git_dir / "modus.config", shadow_config())
            self._write(self.git_dir / "info" / "exclude", self._exclude_text())
            self._write(self.git_dir / "info" / "attributes", ATTRIBUTES)
        except OSError as exc:
            raise CheckpointsUnavailable(
                f"Checkpoints are off: the shadow repository {self.git_dir} cannot be written ({exc.strerror})."
            ) from None

    def _remove_stale_locks(self) -> None:
        for name in LOCK_FILES:
            stale = self.git_dir / name
            if stale.exists():
                log.warning("checkpoints: removing %s, left by a git command that did not finish", stale)
                stale.unlink(missing_ok=True)

    def _init(self) -> None:
        git = self._git
        assert git is not None
        try:
            (self.dir / "home").mkdir(parents=True, exist_ok=True)
            if self.git_dir.exists():  # half made: kept aside, never deleted
                self._move_aside("it was left half made")
            git.run("init", "--quiet", "--template=", worktree=True)
            git.run("symbolic-ref", "HEAD", REF)
            with open(self.git_dir / "config", "a", encoding="utf-8") as config:
                config.write("[include]\n\tpath = modus.config\n")
            (self.git_dir / "info").mkdir(exist_ok=True)
            (self.dir / "workspace").write_text(str(self.root) + "\n", encoding="utf-8", errors="surrogateescape")
        except OSError as exc:
            raise CheckpointsUnavailable(
                f"Checkpoints are off: the shadow repository {self.git_dir} cannot be made ({exc.strerror})."
            ) from None
        self._head_tree = None

    def _move_aside(self, why: str) -> Path:
        aside = self.dir / f"git.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        os.replace(self.git_dir, aside)
        self.recovered = (
            f"The checkpoint repository {self.git_dir} could not be used ({why}); it was moved to {aside} "
            "and a new one started: the checkpoints taken before are in the old one."
        )
        log.warning("checkpoints: %s", self.recovered)
        return aside

    @staticmethod
    def _write(path: Path, text: str) -> None:
        """Writes `text` to one of our files unless it holds it already."""
        try:
            if path.read_text(encoding="utf-8", errors="surrogateescape") == text:
                return
        except OSError:
            pass
        tmp = path.with_name(path.name + ".modus-tmp")
        tmp.write_text(text, encoding="utf-8", errors="surrogateescape")
        os.replace(tmp, path)

    def _workspace_exclude_file(self) -> Path | None:
        """Where the workspace's own `.git/info/exclude` is (a `.git` file of a worktree or
        submodule followed to its common folder), or None. The `.git` file and `commondir` are
        the repository's: read as untrusted (a few bytes, regular files), or not at all."""
        dotgit = self.root / ".git"
        try:
            if dotgit.is_dir():
                return dotgit / "info" / "exclude"
            first = (read_text(dotgit, 4096) or "").splitlines()[0]
            if first.startswith("gitdir:"):
                gitdir = (self.root / first[len("gitdir:"):].strip()).resolve()
                common = read_text(gitdir / "commondir", 4096)
                if common is not None and common.strip():
                    gitdir = (gitdir / common.strip()).resolve()
                return gitdir / "info" / "exclude"
        except (OSError, IndexError, Refused):
            pass
        return None

    def _workspace_excludes(self) -> list[str]:
        """The lines of the workspace's `.git/info/exclude`, read as untrusted input (a regular
        file, at most MAX_EXCLUDE_BYTES: git itself would wait forever on a FIFO), or none (the
        reason logged once)."""
        path = self._workspace_exclude_file()
        if path is None:
            return []
        try:
            text = read_text(path, MAX_EXCLUDE_BYTES)
        except Refused as exc:
            if not self._exclude_told:
                self._exclude_told = True
                log.warning("checkpoints: %s is not read (%s); its patterns do not apply to checkpoints", path, exc)
            return []
        return text.splitlines() if text else []

    def _exclude_text(self) -> str:
        """The shadow's `info/exclude`: the workspace's own `.git/info/exclude` first, then what
        checkpoints never hold (last: a pattern of the workspace's cannot take it back)."""
        ours = [
            "/.modus/state/",
            ".modus-restore-*",  # a restore's temporary file, left by a crash
        ]
        for folder in (self.state_dir, *self.keep_out):
            for path in (folder, Path(os.path.realpath(folder))):
                rel = _inside(path, self.root)
                if rel is not None:
                    ours.append("/" + _ignore_literal(rel) + "/")
        ours += ["/" + _ignore_literal(folder) + "/" for folder in self._left_out]
        ours += [p for p in self.exclude if p.strip()]
        return "\n".join([
            "# Written by Modus. The workspace's .git/info/exclude:",
            *self._workspace_excludes(),
            "# What checkpoints never hold:",
            *dict.fromkeys(ours),
        ]) + "\n"

    # ------------------------------------------------------------------ snapshots

    def _status(self, pathspecs: Sequence[bytes]) -> list[tuple[bytes, bytes]]:
        """(XY, path) of each path whose file differs from the index, or is untracked; a nested
        repository shows as its folder, with a trailing slash."""
        git = self._git
        assert git is not None
        args: list[str | bytes] = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]
        if pathspecs:
            args += ["--", *pathspecs]
        fields = git.run(*args, worktree=True).split(b"\0")
        entries, i = [], 0
        while i < len(fields):
            entry = fields[i]
            i += 1
            if len(entry) < 4:
                continue
            xy, path = entry[:2], entry[3:]
            if xy[0:1] in (b"R", b"C"):
                i += 1  # the path it came from (renames are off; just in case)
            entries.append((xy, path))
        return entries

    def _classify(self, rel: bytes) -> str | None:
        """Why the file at `rel` is not held, or None when git should take it (or find it gone)."""
        full = self._root_b + b"/" + rel
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            return f"cannot be read ({exc.strerror})"
        if stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode):
            return None
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        if st.st_size > self.max_file_bytes:
            return f"too large: {_size(st.st_size)} (files over {_size(self.max_file_bytes)} are not kept)"
        if not os.access(full, os.R_OK):
            return "cannot be read (permission denied)"
        if st.st_size > self.max_binary_bytes:
            try:
                fd = os.open(full, os.O_RDONLY | _NONBLOCK | _NOFOLLOW | _CLOEXEC)
                try:
                    head = os.read(fd, SNIFF)
                finally:
                    os.close(fd)
            except OSError as exc:
                return f"cannot be read ({exc.strerror})"
            if b"\0" in head:
                return (
                    f"binary, {_size(st.st_size)} (binary files over {_size(self.max_binary_bytes)} are not kept)"
                )
        return None

    def _snapshot(self) -> tuple[str, list[Skipped]]:
        """The workspace's files now, as a tree in the shadow repository, and the files left
        out. When git was stopped waiting on a FIFO (or ran past its time), the folders that
        hold such a file git reads are left out and the snapshot is taken again; none found:
        CheckpointError."""
        for attempt in range(MAX_STUCK_RETRIES + 1):
            try:
                tree, skipped = self._snapshot_recovering()
            except GitStuck as stuck:
                self._remove_stale_locks()  # the index.lock of the command stopped
                found = self._find_blockers()
                if "" in found:  # at the root, made since available() looked
                    self._root_problem = self._root_blocker()
                    raise CheckpointError(self._root_problem or str(stuck)) from None
                if not found:
                    if not stuck.on_fifo:
                        raise
                    raise CheckpointError(  # (or a .gitignore took a folder left out back in: `!folder/`)
                        f"{stuck}, and no .gitignore, .gitattributes or nested repository's HEAD of the workspace "
                        "that is one could be left out: the checkpoint was not taken"
                    ) from None
                if attempt == MAX_STUCK_RETRIES:
                    raise
                shown = ", ".join(f"{folder}/ ({path})" for folder, (path, _why) in found.items())
                log.warning("checkpoints: %s; left out: %s", stuck, shown)
                self._leave_out(found)
                continue
            left_out = [Skipped(folder + "/", why) for folder, (_path, why) in sorted(self._left_out.items())]
            return tree, left_out + skipped
        raise AssertionError("unreachable")

    def _find_blockers(self) -> dict[str, tuple[Path, str]]:
        """The folders of the workspace ("" for its root) that hold a file git would wait on (a
        `.gitignore` or `.gitattributes` that is not a regular file, a nested repository's HEAD
        or commondir that is a FIFO), not left out yet: folder → (that file, why the folder is
        left out). A walk of the workspace (symlinks not followed, `.git` folders not entered,
        at most MAX_WALK_ENTRIES entries), made only after git was stopped."""
        found: dict[str, tuple[Path, str]] = {}
        folders, seen = [self.root], 0
        while folders and seen < MAX_WALK_ENTRIES:
            folder = folders.pop()
            rel = _inside(folder, self.root) or ""
            if rel in self._left_out:
                continue
            try:
                with os.scandir(folder) as scan:
                    entries = list(scan)
            except OSError:
                continue
            seen += len(entries)
            for entry in entries:
                path = Path(entry.path)
                blocker = None
                if entry.name in GIT_READS and _would_block(path):
                    blocker = path
                elif entry.name == ".git" and rel:  # (the workspace's own .git is never read by the shadow's git)
                    blocker = _nested_repository_blocker(path)
                if blocker is not None:
                    shown = blocker.relative_to(self.root).as_posix() if _inside(blocker, self.root) else str(blocker)
                    found.setdefault(rel, (blocker, (
                        f"left out of checkpoints: {shown} is {_kind_of(blocker)}, not a regular file, and git would "
                        "wait forever to read it"
                    )))
                try:
                    if entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                        folders.append(path)
                except OSError:
                    pass
        return found

    def _leave_out(self, found: Mapping[str, tuple[Path, str]]) -> None:
        """Leaves these folders out of the checkpoints: in the shadow's exclude file (git does
        not walk into them), and their files out of its index (not hashed, not held)."""
        git = self._git
        assert git is not None
        self._left_out.update(found)
        try:
            self._write(self.git_dir / "info" / "exclude", self._exclude_text())
        except OSError as exc:
            raise CheckpointError(f"the shadow repository {self.git_dir} cannot be written ({exc.strerror})") from None
        held = [p for p in git.run("ls-files", "-z", "--", *found).split(b"\0") if p]
        if held:
            git.run("update-index", "--force-remove", "-z", "--stdin", input=b"\0".join(held) + b"\0", worktree=True)

    def _snapshot_recovering(self) -> tuple[str, list[Skipped]]:
        """`_snapshot_once`; a failing `git status` (a damaged index) is retried once on a fresh
        index, then on a fresh shadow repository (the old one kept aside)."""
        try:
            return self._snapshot_once()
        except GitFailed as first:
            log.warning("checkpoints: %s; starting the index afresh", first)
        self._reset_index()
        try:
            return self._snapshot_once()
        except GitFailed as second:
            if self._repository_sound():
                raise
            self._move_aside(str(second))
        self._init()
        self._prepare()
        return self._snapshot_once()

    def _reset_index(self) -> None:
        """A fresh index holding the latest checkpoint (its files are hashed again once, as
        the fresh index knows none of their stat data), or an empty one."""
        git = self._git
        assert git is not None
        index = self.git_dir / "index"
        index.unlink(missing_ok=True)
        try:
            head = self._head()
            if head is not None:
                git.run("read-tree", head[0], worktree=True)
        except CheckpointError:
            index.unlink(missing_ok=True)

    def _repository_sound(self) -> bool:
        git = self._git
        assert git is not None
        try:
            git.run("rev-parse", "--verify", "--quiet", "HEAD^{tree}", ok=(0, 1))  # 1: no checkpoint yet
            git.run("write-tree", worktree=True)
            return True
        except CheckpointError:
            return False

    def _snapshot_once(self) -> tuple[str, list[Skipped]]:
        git = self._git
        assert git is not None
        skipped: list[Skipped] = []
        pathspecs: list[bytes] = []
        for depth in range(MAX_NESTING + 1):
            add: list[bytes] = []
            drop: list[bytes] = []
            nested: list[bytes] = []
            for xy, path in self._status(pathspecs):
                if path.endswith(b"/"):
                    nested.append(path)
                elif xy[1:2] == b"D":  # gone (or now behind a symlink: git says so, lstat could not)
                    drop.append(path)
                elif xy == b"??" or xy[1:2] in (b"M", b"T"):
                    reason = self._classify(path)
                    if reason is None:
                        add.append(path)
                    else:
                        skipped.append(Skipped(os.fsdecode(path), reason))
                        if xy != b"??":
                            drop.append(path)
            if len(add) > self.max_files:
                raise CheckpointError(
                    f"A checkpoint would hash {len(add):,} files at once (more than {self.max_files:,}): "
                    f"is {self.root} the right workspace? Add big folders to .gitignore."
                )
            # removals first: a file that became a folder (or the reverse) must leave the index
            # before what replaces it comes in
            if drop:
                git.run(
                    "update-index", "--force-remove", "-z", "--stdin", input=b"\0".join(drop) + b"\0", worktree=True,
                )
            if add:
                git.run(
                    "update-index", "--add", "--remove", "--replace", "-z", "--stdin", input=b"\0".join(add) + b"\0",
                    worktree=True,
                )
            if not nested:
                break
            if depth == MAX_NESTING:
                skipped += [Skipped(os.fsdecode(p), "a git repository nested too deep") for p in nested]
                break
            # git takes a folder with its own .git for a gitlink unless the index already holds
            # a file under it: give it one (never on disk, so the next pass drops it again) and
            # look into those folders; their .git is never taken (git skips any entry so named)
            empty = self._empty_blob()
            info = b"".join(b"100644 %s\t%s%s\0" % (empty, p, PLACEHOLDER) for p in nested)
            git.run("update-index", "-z", "--index-info", input=info, worktree=True)
            pathspecs = nested
        tree = git.run("write-tree", worktree=True).strip().decode()
        return tree, skipped

    def _empty_blob(self) -> bytes:
        git = self._git
        assert git is not None
        return git.run("hash-object", "-w", "--stdin", input=b"").strip()

    def _head(self) -> tuple[str, str] | None:
        """(commit, tree) of the latest checkpoint, or None before the first."""
        git = self._git
        assert git is not None
        try:
            commit = (self.git_dir / REF).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            commit = git.run("rev-parse", "--verify", "--quiet", REF, ok=(0, 1)).strip().decode()
        if not commit:
            return None
        if self._head_tree is None or self._head_tree[0] != commit:
            tree = git.run("rev-parse", "--verify", "--quiet", commit + "^{tree}").strip().decode()
            self._head_tree = (commit, tree)
        return self._head_tree

    # ------------------------------------------------------------------ public

    def take(self, message: str = "", meta: Mapping[str, str] | None = None) -> Checkpoint:
        """A checkpoint of the workspace as it is now: a new commit every time (`changed` says
        whether the files differ from the checkpoint before). `skipped` names the files left out
        (too large, binary over the cap, unreadable). `meta` (strings) is kept with it and can
        be filtered on in `list`."""
        git = self._require()
        message = _clean_message(message)
        meta = {str(k): str(v) for k, v in (meta or {}).items()}
        with self._locked():
            self._prepare()
            tree, skipped = self._snapshot()
            head = self._head()
            now = time.time()
            data = {"time": now, "meta": meta, "skipped": [[s.path, s.reason] for s in skipped]}
            body = f"{message}\n\n{TRAILER}{json.dumps(data, ensure_ascii=False)}\n"
            args = ["commit-tree", "--no-gpg-sign", tree] + (["-p", head[0]] if head else [])
            date = f"@{int(now)} +0000"
            commit = git.run(
                *args, input=body.encode("utf-8", "surrogateescape"),
                env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date},
            ).strip().decode()
            git.run("update-ref", REF, commit, head[0] if head else "")
            self._head_tree = (commit, tree)
        return Checkpoint(
            id=commit, message=message, time=now, parent=head[0] if head else None,
            changed=head is None or head[1] != tree, skipped=tuple(skipped), meta=meta,
        )

    def list(self, limit: int | None = None, meta: Mapping[str, str] | None = None) -> list[Checkpoint]:
        """The checkpoints, newest first; only those whose meta holds every item of `meta`."""
        git = self._require()
        with self._locked():
            self._prepare()
            if self._head() is None:
                return []
            args = ["log", "--format=%H%x1f%P%x1f%T%x1f%B%x1e", REF]
            if limit is not None and not meta:
                args.insert(1, f"--max-count={max(limit, 0) + 1}")  # one more: the parent's tree
            records = _parse_log(git.run(*args))
        out = []
        for i, (commit, parent, tree, body) in enumerate(records):
            parent_tree = records[i + 1][2] if i + 1 < len(records) else None
            checkpoint = _checkpoint(commit, parent, tree, body, parent_tree)
            if meta and any(checkpoint.meta.get(k) != v for k, v in meta.items()):
                continue
            out.append(checkpoint)
        return out if limit is None else out[: max(limit, 0)]

    def get(self, checkpoint_id: str) -> Checkpoint:
        """One checkpoint; CheckpointError when there is no such checkpoint."""
        self._require()
        with self._locked():
            self._prepare()
            return self._get(self._resolve(checkpoint_id))

    def diff(self, checkpoint_id: str, paths: Sequence[str] | None = None) -> list[FileDiff]:
        """The files that changed since the checkpoint (the workspace now against it), sorted
        by path, as unified diffs; added and deleted files included. Files left out of the
        workspace's snapshot now (too large, binary) are listed with a sentence instead."""
        git = self._require()
        with self._locked():
            self._prepare()
            target = self._resolve(checkpoint_id)
            then = self._get(target)
            tree, skipped_now = self._snapshot()
            spec = _pathspec(paths)
            raw = _parse_raw(git.run("diff-tree", "-r", "-z", "--no-renames", "--raw", target, tree, *spec))
            patch_args = ["diff-tree", "-r", "-p", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv",
                          "--src-prefix=a/", "--dst-prefix=b/", target, tree]
            sections = _split_patch(git.run(*patch_args, *spec))
            # one section a file, two for a type change (shown as a deletion and an addition)
            counts = [2 if r[4] == "T" else 1 for r in raw]
            if sum(counts) == len(sections):
                patches = {}
                for count, r in zip(counts, raw):
                    patches[r[5]] = b"".join(sections[:count])
                    del sections[:count]
            else:  # not seen to happen: each file's patch on its own then
                patches = {r[5]: git.run(*patch_args, "--", r[5]) for r in raw}
            held_then = self._paths_in(target, [s.path for s in skipped_now if not s.path.endswith("/")])
        skipped_map = {s.path: s.reason for s in skipped_now}
        skipped_then = {s.path for s in then.skipped}
        diffs: dict[str, FileDiff] = {}
        for _old_mode, _new_mode, _old, _new, status, path in raw:
            text = patches[path].decode("utf-8", "replace")
            binary = "\nBinary files " in "\n" + text or text.startswith("Binary files ")
            left_out = _skipped_as(path, skipped_map) if status == "D" else None
            if left_out is not None:
                entry, reason = left_out
                what = "the file" if entry == path else f"its folder {entry}"
                diffs[path] = FileDiff(path, "modified", f"{path}: not compared, {what} is now {reason}\n", True)
            else:
                kind = {"A": "added", "D": "deleted"}.get(status, "modified")
                diffs[path] = FileDiff(path, kind, text, binary)  # type: ignore[arg-type]
        for path, reason in skipped_map.items():
            if path.endswith("/"):  # a folder left out: its files are not listed one by one
                continue
            if path not in diffs and path not in held_then and path not in skipped_then and _matches(path, paths):
                diffs[path] = FileDiff(path, "added", f"{path}: not compared, the file is {reason}\n", True)
        return [diffs[p] for p in sorted(diffs)]

    def files_at(self, checkpoint_id: str, paths: Sequence[str] | None = None) -> dict[str, FileVersion | None]:
        """The files as the checkpoint holds them: all of them, or those under `paths` (a path
        the checkpoint does not hold maps to None)."""
        self._require()
        with self._locked():
            self._prepare()
            target = self._resolve(checkpoint_id)
            entries = self._ls_tree(target, paths)
            blobs = self._blobs([sha for _mode, sha, _path in entries])
        out: dict[str, FileVersion | None] = {}
        for mode, sha, path in entries:
            kind = _kind(mode)
            if kind is None:
                continue
            data = blobs[sha]
            out[path] = FileVersion(path, kind, data, None if kind == "symlink" else _restore.text_of(data))
        for path in paths or ():  # a path that names no file and no folder of the checkpoint
            if not any(_matches(held, [path]) for held in out):
                out[path.strip("/")] = None
        return out

    def restore(self, checkpoint_id: str, paths: Sequence[str] | None = None) -> list[FileChange]:
        """What restoring the checkpoint would do, file by file, writing nothing: the current
        and the checkpoint's text of each file, or a deletion (files created since). A change
        with `via_editor` False (binary, symlink, executable bit, not UTF-8) can only be made
        on disk: `restore_on_disk(id, paths=[those paths])`."""
        self._require()
        with self._locked():
            self._prepare()
            return self._plan(checkpoint_id, paths)

    def restore_on_disk(self, checkpoint_id: str, paths: Sequence[str] | None = None) -> list[FileChange]:
        """Restores the checkpoint's files (all, or those under `paths`) on disk: each file
        written atomically (a temporary file renamed over it), executable bits and symlinks as
        they were, files created since deleted (emptied folders too). Nothing is written through
        a symlinked folder. Returns the changes, each with `error` set when it failed."""
        self._require()
        with self._locked():
            self._prepare()
            changes = self._plan(checkpoint_id, paths)
            return _restore.apply(self.root, changes)

    def compact(self) -> None:
        """Packs the shadow repository's loose objects when there are many (`git gc --auto`),
        e.g. when the server is idle or stops; checkpoints are never dropped."""
        git = self._require()
        with self._locked():
            self._prepare()
            git.run("-c", "gc.auto=6700", "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet")

    # ------------------------------------------------------------------ helpers

    def _plan(self, checkpoint_id: str, paths: Sequence[str] | None) -> list[FileChange]:
        git = self._git
        assert git is not None
        target = self._resolve(checkpoint_id)
        then = self._get(target)
        tree, skipped_now = self._snapshot()
        raw = _parse_raw(git.run("diff-tree", "-r", "-z", "--no-renames", "--raw", tree, target, *_pathspec(paths)))
        skipped_then = {s.path: s.reason for s in then.skipped}
        skipped_map = {s.path: s.reason for s in skipped_now}
        raw = [r for r in raw if not (r[4] == "D" and _skipped_as(r[5], skipped_then))]  # unknown then: left alone
        blobs = self._blobs([sha for r in raw for sha in (r[2], r[3]) if set(sha) != {"0"}])
        return _restore.plan(self.root, raw, blobs, skipped_map)

    def _resolve(self, checkpoint_id: str) -> str:
        git = self._git
        assert git is not None
        cid = str(checkpoint_id).strip().lower()
        if not 4 <= len(cid) <= 64 or any(c not in "0123456789abcdef" for c in cid):
            raise CheckpointError(f"'{checkpoint_id}' is not a checkpoint id (a commit hash).")
        out = git.run("rev-parse", "--verify", "--quiet", f"{cid}^{{commit}}", ok=(0, 1, 128)).strip().decode()
        if not out:
            raise CheckpointError(f"No checkpoint {checkpoint_id} in {self.git_dir}.")
        return out

    def _get(self, commit: str) -> Checkpoint:
        git = self._git
        assert git is not None
        records = _parse_log(git.run("log", "--max-count=2", "--format=%H%x1f%P%x1f%T%x1f%B%x1e", commit))
        commit_, parent, tree, body = records[0]
        return _checkpoint(commit_, parent, tree, body, records[1][2] if len(records) > 1 else None)

    def _ls_tree(self, treeish: str, paths: Sequence[str] | None) -> list[tuple[str, str, str]]:
        git = self._git
        assert git is not None
        out = git.run("ls-tree", "-r", "-z", "--full-tree", treeish, *_pathspec(paths))
        entries = []
        for item in out.split(b"\0"):
            if not item:
                continue
            head, _, path = item.partition(b"\t")
            mode, _type, sha = head.decode().split(" ")
            entries.append((mode, sha, os.fsdecode(path)))
        return entries

    def _paths_in(self, treeish: str, paths: Sequence[str]) -> set[str]:
        if not paths:
            return set()
        return {path for _mode, _sha, path in self._ls_tree(treeish, paths)}

    def _blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        git = self._git
        assert git is not None
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        out = git.run("cat-file", "--batch", input="".join(s + "\n" for s in wanted).encode())
        blobs, pos = {}, 0
        for sha in wanted:
            end = out.index(b"\n", pos)
            header = out[pos:end].split(b" ")
            if len(header) != 3:
                raise CheckpointError(f"The checkpoint repository has lost the object {sha}: {out[pos:end]!r}")
            size = int(header[2])
            blobs[sha] = out[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1
        return blobs


# ---------------------------------------------------------------------- parsing


def _clean_message(message: str) -> str:
    text = "".join(c for c in str(message) if c in "\n\t" or ord(c) >= 32).strip()
    return text or "checkpoint"


def _pathspec(paths: Sequence[str] | None) -> list[str]:
    if not paths:
        return []
    return ["--", *(p.strip("/") or "." for p in paths)]


def _skipped_as(path: str, skipped: Mapping[str, str]) -> tuple[str, str] | None:
    """(the entry, its reason) that leaves `path` out: its own, or that of a folder it is in
    (an entry ending in "/"); None when it is not left out."""
    if path in skipped:
        return path, skipped[path]
    parts = path.split("/")
    for end in range(len(parts) - 1, 0, -1):
        folder = "/".join(parts[:end]) + "/"
        if folder in skipped:
            return folder, skipped[folder]
    return None


def _would_block(path: Path, follow: bool = True) -> bool:
    """Whether git's open() of `path` could wait forever: it is there and not a regular file,
    a folder or (`follow` False) a symlink: a FIFO, a socket, a device. Symlinks are followed
    by default (git < 2.32 follows a symlinked .gitignore)."""
    try:
        mode = (os.stat if follow else os.lstat)(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


def _kind_of(path: Path) -> str:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "not readable"
    if stat.S_ISFIFO(mode):
        return "a FIFO (a named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _nested_repository_blocker(dotgit: Path) -> Path | None:
    """The file git would wait on when it looks whether the folder of `dotgit` is a nested
    repository: its git folder's HEAD (opened unless a symlink) or commondir (followed) that is
    a FIFO. A `.git` file is followed as git does (its `gitdir:`), read as untrusted input."""
    try:
        mode = os.lstat(dotgit).st_mode
    except OSError:
        return None
    gitdir = dotgit
    if stat.S_ISREG(mode):
        try:
            first = (read_text(dotgit, 4096) or "").splitlines()[0]
        except (Refused, IndexError):
            return None
        if not first.startswith("gitdir:"):
            return None
        gitdir = dotgit.parent / first[len("gitdir:"):].strip()
    elif not stat.S_ISDIR(mode):
        return None  # git stat()s it first: no repository
    for name, follow in (("HEAD", False), ("commondir", True)):
        if _would_block(gitdir / name, follow):
            return gitdir / name
    return None


def _matches(path: str, paths: Sequence[str] | None) -> bool:
    if not paths:
        return True
    return any(path == p.strip("/") or path.startswith(p.strip("/") + "/") or p.strip("/") in ("", ".") for p in paths)


def _kind(mode: str) -> Kind | None:
    return {"100644": "file", "100755": "executable", "120000": "symlink"}.get(mode)  # type: ignore[return-value]


def _parse_log(out: bytes) -> list[tuple[str, str | None, str, str]]:
    records = []
    for record in out.split(b"\x1e"):
        record = record.lstrip(b"\n")
        if not record:
            continue
        commit, parents, tree, body = record.split(b"\x1f", 3)
        parent = parents.decode().split(" ")[0] or None
        records.append((commit.decode(), parent, tree.decode(), body.decode("utf-8", "surrogateescape")))
    return records


def _checkpoint(commit: str, parent: str | None, tree: str, body: str, parent_tree: str | None) -> Checkpoint:
    message, data = body.rstrip("\n"), {}
    at = message.rfind("\n\n" + TRAILER)
    if at >= 0:
        message, line = message[:at], message[at + 2 + len(TRAILER):]
        try:
            data = json.loads(line)
        except ValueError:
            data = {}
    skipped = tuple(Skipped(p, r) for p, r in data.get("skipped", []))
    return Checkpoint(
        id=commit, message=message, time=float(data.get("time", 0.0)), parent=parent,
        changed=parent_tree is None or parent_tree != tree, skipped=skipped, meta=dict(data.get("meta", {})),
    )


def _parse_raw(out: bytes) -> list[tuple[str, str, str, str, str, str]]:
    """`diff-tree --raw -z`: (old mode, new mode, old sha, new sha, status letter, path)."""
    fields = out.split(b"\0")
    entries, i = [], 0
    while i < len(fields):
        head = fields[i]
        i += 1
        if not head.startswith(b":"):
            continue
        old_mode, new_mode, old_sha, new_sha, status = head[1:].decode().split(" ")
        path = os.fsdecode(fields[i])
        i += 1
        entries.append((old_mode, new_mode, old_sha, new_sha, status[0], path))
    return entries


def _split_patch(patch: bytes) -> list[bytes]:
    """A patch cut into its files' sections (each starts with `diff --git `; no line of a hunk
    can, as each starts with ' ', '+', '-' or '\\')."""
    if not patch:
        return []
    starts = [0] if patch.startswith(b"diff --git ") else []
    pos = 0
    while (pos := patch.find(b"\ndiff --git ", pos)) >= 0:
        pos += 1
        starts.append(pos)
    return [patch[a:b] for a, b in zip(starts, starts[1:] + [len(patch)])]
