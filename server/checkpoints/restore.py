"""Restoring a checkpoint: the changes it takes (`plan`), and making them on disk (`apply`).

A change the editor can make (`via_editor`) is a text file created, changed or deleted with
its kind kept: the caller can send it as one `workspace/applyEdit`, so open buffers and undo
stay right. The rest (binary files, symlinks, an executable bit to set or clear, a file the
snapshot left out) is made on disk only.

On disk, nothing is written through a symlink: every folder on the way must be a real folder
(a missing one is made); a file is written to a temporary file in its folder and renamed over
the old one, so a reader sees the old file or the new one, never half of it.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Mapping, Sequence

#: Flags of os.open where the system has them.
_NOFOLLOW, _NONBLOCK, _CLOEXEC = (getattr(os, f"O_{n}", 0) for n in ("NOFOLLOW", "NONBLOCK", "CLOEXEC"))

Kind = Literal["file", "executable", "symlink"]
KINDS: dict[str, Kind] = {"100644": "file", "100755": "executable", "120000": "symlink"}
SNIFF = 8000


@dataclass(frozen=True)
class FileChange:
    """What restoring does to one file.

    - `action`: "create" (not there now), "modify" (content, kind or executable bit), "delete"
      (created since the checkpoint);
    - `old_kind` / `new_kind`: "file", "executable" or "symlink"; None when absent;
    - `old_text` / `new_text`: the text now and at the checkpoint (None when absent, binary,
      not UTF-8, a symlink, or left out of the snapshot now);
    - `binary`: a side is a binary file;
    - `via_editor`: the editor can make it (a text edit, a create or a delete of a text file,
      its kind unchanged); otherwise on disk only;
    - `error`: after `restore_on_disk`, why it could not be made (None: it was).
    """

    path: str
    action: Literal["create", "modify", "delete"]
    old_kind: Kind | None
    new_kind: Kind | None
    old_text: str | None = field(repr=False)
    new_text: str | None = field(repr=False)
    binary: bool
    via_editor: bool
    error: str | None = None
    data: bytes | None = field(default=None, repr=False)  # the checkpoint's bytes (a link: its target)
    same_content: bool = field(default=False, repr=False)


def text_of(data: bytes) -> str | None:
    if b"\0" in data[:SNIFF]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _disk_kind(st: os.stat_result) -> Kind | None:
    if stat.S_ISLNK(st.st_mode):
        return "symlink"
    if stat.S_ISREG(st.st_mode):
        return "executable" if st.st_mode & stat.S_IXUSR else "file"
    return None


def _read(path: Path, limit: int) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def plan(
    root: Path,
    raw: Sequence[tuple[str, str, str, str, str, str]],
    blobs: Mapping[str, bytes],
    skipped_now: Mapping[str, str],
    read_limit: int = 5 * 1024 * 1024,
) -> list[FileChange]:
    """The changes from the workspace's snapshot now to the checkpoint. `raw`: `diff-tree
    --raw` entries (now → checkpoint); `skipped_now`: files on disk the snapshot left out."""
    changes = []
    for old_mode, new_mode, old_sha, new_sha, status, path in raw:
        new_kind = KINDS.get(new_mode) if status != "D" else None
        new_data = blobs.get(new_sha) if new_kind else None
        new_text = text_of(new_data) if new_data is not None and new_kind != "symlink" else None
        if status == "A":  # not in the snapshot now: absent, or on disk but left out or ignored now
            try:
                st = os.lstat(root / path)
            except OSError:
                st = None
            old_kind = _disk_kind(st) if st else None
            old_text = None
            if old_kind in ("file", "executable") and path not in skipped_now:
                data = _read(root / path, read_limit)
                old_text = text_of(data) if data is not None else None
            action = "create" if old_kind is None else "modify"  # (an emptied folder in the way: removed)
            same = False
            old_binary = path in skipped_now and skipped_now[path].startswith("binary")
        else:
            old_kind = KINDS.get(old_mode)
            old_data = blobs.get(old_sha, b"")
            old_text = text_of(old_data) if old_kind != "symlink" else None
            old_binary = old_kind != "symlink" and old_text is None
            action = "delete" if status == "D" else "modify"
            same = old_sha == new_sha
        binary = old_binary or (new_kind in ("file", "executable") and new_text is None)
        if action == "delete":
            via_editor = old_kind in ("file", "executable")
        elif action == "create":
            via_editor = new_kind == "file" and new_text is not None and not os.path.lexists(root / path)
        else:
            via_editor = (
                old_kind == new_kind and new_kind in ("file", "executable")
                and old_text is not None and new_text is not None and path not in skipped_now
            )
        changes.append(FileChange(
            path=path, action=action, old_kind=old_kind, new_kind=new_kind, old_text=old_text,  # type: ignore[arg-type]
            new_text=new_text, binary=binary, via_editor=via_editor, data=new_data, same_content=same,
        ))
    return changes


class Refused(Exception):
    pass


def _folder(root: Path, rel_parts: Sequence[str], create: bool) -> Path | None:
    """The real folder at root/rel_parts, every step a folder and none a symlink; made when
    missing and `create`, else None."""
    here = root
    for i, part in enumerate(rel_parts):
        here = here / part
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            if not create:
                return None
            os.mkdir(here)
            continue
        shown = "/".join(rel_parts[: i + 1])
        if stat.S_ISLNK(st.st_mode):
            raise Refused(f"the folder '{shown}' is a symbolic link now; nothing is written through it")
        if not stat.S_ISDIR(st.st_mode):
            raise Refused(f"'{shown}' is not a folder now")
    return here


def _delete(root: Path, change: FileChange) -> None:
    *parents, name = change.path.split("/")
    folder = _folder(root, parents, create=False)
    if folder is None:
        return
    target = folder / name
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise Refused(f"'{change.path}' is a folder now")
    os.unlink(target)


def _write(root: Path, change: FileChange) -> None:
    *parents, name = change.path.split("/")
    folder = _folder(root, parents, create=True)
    assert folder is not None
    target = folder / name
    try:
        st: os.stat_result | None = os.lstat(target)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        try:
            os.rmdir(target)  # an emptied folder where the checkpoint has a file
        except OSError:
            raise Refused(f"'{change.path}' is a folder holding files the checkpoint does not know") from None
        st = None
    data = change.data or b""
    executable = change.new_kind == "executable"
    if change.new_kind != "symlink" and change.same_content and st is not None and stat.S_ISREG(st.st_mode):
        os.chmod(target, _mode(st.st_mode, executable))  # only the executable bit differs
        return
    tmp = folder / f".modus-restore-{secrets.token_hex(6)}"
    try:
        if change.new_kind == "symlink":
            os.symlink(os.fsdecode(data), tmp)
        else:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                base = st.st_mode if st is not None and stat.S_ISREG(st.st_mode) else os.fstat(fd).st_mode  # umask applied
                os.fchmod(fd, _mode(base, executable))
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _mode(mode: int, executable: bool) -> int:
    """The permission bits of `mode` with x set where r is (executable) or cleared."""
    bits = stat.S_IMODE(mode)
    return bits | ((bits & 0o444) >> 2) if executable else bits & ~0o111


def apply(root: Path, changes: Sequence[FileChange]) -> list[FileChange]:
    """Makes the changes on disk: deletions first (deepest first), then the folders they
    emptied removed, then writes. Each change comes back with `error` when it failed."""
    done: dict[str, FileChange] = {}
    deletions = sorted((c for c in changes if c.action == "delete"), key=lambda c: -c.path.count("/"))
    for change in deletions:
        done[change.path] = _attempt(_delete, root, change)
    for change in deletions:
        _prune(root, change.path)
    for change in sorted((c for c in changes if c.action != "delete"), key=lambda c: c.path):
        done[change.path] = _attempt(_write, root, change)
    return [done[c.path] for c in changes]


def _attempt(step, root: Path, change: FileChange) -> FileChange:
    try:
        step(root, change)
    except Refused as exc:
        return replace(change, error=str(exc))
    except OSError as exc:
        return replace(change, error=f"'{change.path}': {exc.strerror or exc}")
    return change


def _prune(root: Path, rel: str) -> None:
    """Removes the folders of `rel` that are empty now, deepest first, up to the workspace."""
    parts = rel.split("/")[:-1]
    while parts:
        try:
            folder = root.joinpath(*parts)
            if stat.S_ISLNK(os.lstat(folder).st_mode):
                return
            os.rmdir(folder)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT,):
                return
        parts.pop()
