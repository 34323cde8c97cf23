"""Reading files that a cloned repository controls: mode files, rules, scripts.

A repository is untrusted input. A file read here must be a regular file (a FIFO, a device or a
socket, directly or behind a symlink, would block or never end), no larger than a cap, text
in UTF-8, and, for a project file, really inside the workspace. The file is opened without
blocking and checked again once open. `off_loop` runs such a read (and the parsing after it)
in a worker thread with a time limit, so nothing a repository holds can stall the server.
"""

from __future__ import annotations

import json
import os
import stat
from functools import partial
from pathlib import Path
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar

import anyio

from .workspace import relative_inside

if TYPE_CHECKING:
    import yaml

T = TypeVar("T")

#: How long reading and parsing one file (or one set of rules) may take.
LOAD_SECONDS = 5.0
#: The most nodes a YAML document's aliases may add to the nodes it holds (an alias bomb adds
#: billions); what the text itself holds is bounded by the file's size.
MAX_NODES = 100_000

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class Refused(Exception):
    """A file that was not read; the message is the reason, for the user."""


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _size(n: int) -> str:
    if n % (1 << 20) == 0 and n >= 1 << 20:
        return f"{n >> 20} MiB"
    return f"{n // 1024} KiB" if n % 1024 == 0 and n >= 1024 else f"{n} bytes"


Signature = tuple[int, int, int, int]


@dataclass(frozen=True)
class Read:
    """What a read of a repository's files (rules, commands, skills) left out and looked at: the
    base of what each such read returns."""

    #: `<path>: <reason>` for each file or folder that was not read (or read differently)
    skipped: tuple[str, ...] = ()
    #: what was looked at, with its signature then: any change means reading again
    seen: tuple[tuple[Path, Signature | None], ...] = field(default=(), repr=False)

    def changed(self) -> bool:
        return not self.seen or any(signature(path) != sig for path, sig in self.seen)


class Budget:
    """What a read of many small files (rules, commands, skills) may hold together: `what` names
    them in a refusal ("the rules together would be larger than 1 MiB")."""

    def __init__(self, total: int, what: str):
        self.total = total
        self.left = total
        self.what = what

    def take(self, text: str) -> bool:
        """Whether `text` fits in what is left (then it is taken from it)."""
        size = len(text.encode("utf-8"))
        if size > self.left:
            return False
        self.left -= size
        return True

    def read(self, path: Path, max_bytes: int, *, inside: Path, shown: str, skipped: list[str]) -> str | None:
        """One of the files: its text (read_text's bounds, then this budget's), None when there is
        no file or it was refused; a refusal goes to `skipped` as `<shown>: <why>`."""
        try:
            text = read_text(path, max_bytes, inside=inside)
        except Refused as exc:
            skipped.append(f"{shown}: {exc}")
            return None
        if text is not None and not self.take(text):
            skipped.append(f"{shown}: the {self.what} together would be larger than {_size(self.total)}; it was left out")
            return None
        return text


def looked_at(paths: Iterable[Path]) -> tuple[tuple[Path, Signature | None], ...]:
    """Each path once, in order, with its signature now (Read.seen)."""
    return tuple((path, signature(path)) for path in dict.fromkeys(paths))


def signature(path: Path) -> Signature | None:
    """What tells that a file changed (time, size, inode, kind), None when there is none: a stat
    call, cheap enough to run before every use of what was read from it."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_mode)


def check_inside(path: Path, root: Path) -> Path:
    """Where `path` really points, which must be inside `root` (itself resolved)."""
    real = Path(os.path.realpath(path))
    if relative_inside(real, root) is None:
        raise Refused(f"it leads outside the workspace (to {real})")
    return real


def read_text(path: Path, max_bytes: int, *, inside: Path | None = None) -> str | None:
    """The text of a regular file, None when there is none at `path`; Refused with the reason.

    `inside`: the (resolved) workspace the file must really be in, symlinks followed."""
    data = read_bytes(path, max_bytes, inside=inside)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("it is not UTF-8 text") from None


def read_bytes(path: Path, max_bytes: int, *, inside: Path | None = None) -> bytes | None:
    """The bytes of a regular file, None when there is none at `path`; Refused with the reason."""
    try:
        st = os.stat(path)  # follows symlinks: the kind of what it points to
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise Refused(exc.strerror or str(exc)) from None
    if inside is not None:
        check_inside(path, inside)
    if not stat.S_ISREG(st.st_mode):
        raise Refused(f"it is {_kind(st.st_mode)}, not a regular file")
    if st.st_size > max_bytes:
        raise Refused(f"it is larger than {_size(max_bytes)}")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise Refused(exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)  # what was opened, should it have been swapped since the stat
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"it is {_kind(st.st_mode)}, not a regular file")
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, max_bytes + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise Refused(f"it is larger than {_size(max_bytes)}")
    except OSError as exc:
        raise Refused(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def walk(folder: Path, *, inside: Path, max_files: int, max_depth: int) -> tuple[list[Path], list[Path], list[str]]:
    """The files under `folder` (sorted, depth-first), the folders looked into, and what was
    skipped and why. Symlinked folders are not followed; a symlinked file is taken when it
    stays inside."""
    files: list[Path] = []
    folders: list[Path] = []
    skipped: list[str] = []

    def visit(directory: Path, depth: int) -> None:
        folders.append(directory)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(f"{directory}: {exc.strerror or exc}")
            return
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth < max_depth:
                        visit(path, depth + 1)
                    else:
                        skipped.append(f"{path}: deeper than {max_depth} levels")
                    continue
                if entry.is_symlink():
                    check_inside(path, inside)
                    if entry.is_dir():
                        raise Refused("it is a symlinked folder, which is not followed")
            except Refused as exc:
                skipped.append(f"{path}: {exc}")
                continue
            except OSError as exc:
                skipped.append(f"{path}: {exc.strerror or exc}")
                continue
            if len(files) == max_files:
                skipped.append(f"{directory}: more than {max_files} files; the rest are not read")
                return
            files.append(path)

    visit(folder, 1)
    return files, folders, skipped


def yaml_too_big(root: "yaml.Node") -> str | None:
    """Why the document must not be built, if it must not: its aliases, followed, add more than
    MAX_NODES nodes to those it holds, or an alias is inside what it refers to. Each mapping's and
    sequence's size (its nodes, aliases followed) is counted once, and compared with the nodes
    seen so far (a scalar each time it is written or referred to): a document without aliases
    always passes, and counting stops at the first node past the limit, so this is linear."""
    sizes: dict[int, int] = {}  # the collections counted
    scalars = 0
    open_: set[int] = set()  # started, not finished: the ancestors of what is being looked at
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        children = _children(node)
        if finished:
            open_.discard(key)
            size = 1
            for c in children:
                below = sizes.get(id(c))
                if below is None:  # a scalar
                    scalars += 1
                    size += 1
                else:
                    size += below
            sizes[key] = size
            if size > len(sizes) + scalars + MAX_NODES:
                return f"its YAML aliases add more than {MAX_NODES:,} nodes"
        elif key in open_:
            return "a YAML alias refers to a node that contains it"
        elif key not in sizes:
            open_.add(key)
            stack.append((node, True))
            stack.extend((c, False) for c in children if isinstance(c.value, list) and id(c) not in sizes)
    return None


def _children(node: "yaml.Node") -> list:
    """A mapping's keys and values, a sequence's items; a scalar's value is its text."""
    if not isinstance(node.value, list):
        return []
    if node.value and isinstance(node.value[0], tuple):
        return [n for pair in node.value for n in pair]
    return node.value


def load_yaml(text: str) -> Any:
    """YAML or JSON data, built only if its aliases add at most MAX_NODES nodes.
    Raises ValueError with the reason (yaml.YAMLError is one)."""
    try:
        return json.loads(text)  # JSON is YAML, and much faster to read this way
    except ValueError:
        pass
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        if (problem := yaml_too_big(root)) is not None:
            raise ValueError(problem)
        return loader.construct_document(root)
    finally:
        loader.dispose()


async def off_loop(fn: Callable[..., T], *args, seconds: float = LOAD_SECONDS) -> T:
    """`fn(*args)` in a worker thread; Refused when it takes longer than `seconds`.

    A thread cannot be stopped: one that overruns is left to finish on its own, and its result
    is dropped. `fn` must therefore not change shared state: it returns what it found."""
    try:
        with anyio.fail_after(seconds):
            return await anyio.to_thread.run_sync(partial(fn, *args), abandon_on_cancel=True)
    except TimeoutError:
        raise Refused(f"reading it took longer than {seconds:g} s") from None
