"""The workspace folder, and where a path given by the model really points."""

from __future__ import annotations

import os
from typing import NamedTuple
from pathlib import Path, PurePosixPath

from .errors import InvalidParams, OutsideWorkspace, ProtectedPath


class WorkspacePath(NamedTuple):
    """A path resolved inside the workspace: `..` folded, symlinks followed."""

    path: Path  # absolute, real
    rel: str  # workspace-relative, POSIX; "." for the root itself

    def __str__(self) -> str:
        return self.rel


def clip(text: str, limit: int = 100) -> str:
    """`text` cut to `limit` characters for a message (a path the model gave can be absurdly long)."""
    return text if len(text) <= limit else text[:limit] + "…"


def _limit(root: Path, name: str, default: int) -> int:
    try:
        return os.pathconf(root, name)
    except (AttributeError, OSError, ValueError):  # no pathconf (Windows) or no such limit
        return default


def relative_inside(real: Path, root: Path) -> str | None:
    """`real`'s POSIX form relative to `root` ("." for the root itself), None when it is
    outside. Both are resolved paths (realpath)."""
    try:
        rel = real.relative_to(root)
    except ValueError:
        return None
    return PurePosixPath(rel).as_posix() if rel.parts else "."


class Workspace:
    def __init__(self, root: str | os.PathLike):
        self.root = Path(os.path.realpath(root))
        self.name_max = _limit(self.root, "PC_NAME_MAX", 255)  # bytes in a file name
        self.path_max = _limit(self.root, "PC_PATH_MAX", 4096)  # bytes in a path, with its NUL
        #: Folders of the workspace the edit tools never write (Modus's own state; see `editable`).
        self.own: tuple[Path, ...] = ()

    def editable(self, target: WorkspacePath) -> None:
        """Refuses an edit of what would decide what runs without the user: Modus's own state (the
        state folder: its database holds the conversations and what was approved) and the inside of
        a git repository (`.git/config` and hooks run commands at the user's next `git`, or the
        editor's). The user changes those themselves."""
        if any(part.lower() == ".git" for part in PurePosixPath(target.rel).parts):  # .GIT is .git on macOS and Windows
            raise ProtectedPath(
                f"Access to '{target.rel}' is denied: the inside of a git repository (its config, its hooks) "
                "decides what git runs; the tools do not edit it. Ask the user to make this change."
            )
        for folder in self.own:
            if target.path == folder or folder in target.path.parents:
                raise ProtectedPath(
                    f"Access to '{target.rel}' is denied: it is Modus's own state ({relative_inside(folder, self.root)}/); "
                    "the tools do not edit it."
                )

    def resolve(self, raw: str) -> WorkspacePath:
        """Where `raw` (relative to the root, or absolute) really points; refuses outside paths."""
        if not isinstance(raw, str) or not raw.strip():
            raise InvalidParams("The path must be a non-empty string.")
        if "\0" in raw:
            raise InvalidParams(f"The path contains a NUL character: {clip(raw)!r}")
        real = Path(os.path.realpath(self.root / raw.strip()))
        if len(os.fsencode(real)) >= self.path_max or any(len(os.fsencode(p)) > self.name_max for p in real.parts):
            raise InvalidParams(
                f"The path '{clip(raw)}' is too long ({len(raw)} characters): file names have at most "
                f"{self.name_max} bytes and paths at most {self.path_max - 1}."
            )
        rel = relative_inside(real, self.root)
        if rel is None:
            raise OutsideWorkspace(
                f"Access to '{clip(raw)}' is denied: it resolves to '{real}', outside the workspace '{self.root}'."
            )
        return WorkspacePath(real, rel)

    def entry(self, path: Path) -> WorkspacePath | None:
        """An entry met while walking a folder, checked like a single path: where it really
        points, or None when that is outside the workspace."""
        real = Path(os.path.realpath(path))
        rel = relative_inside(real, self.root)
        return None if rel is None else WorkspacePath(real, rel)

    def relative(self, path: Path) -> str:
        return PurePosixPath(path.relative_to(self.root)).as_posix()


MAX_SKIPPED_NAMES = 10


class Walk:
    """One walk through a folder. Every entry it opens goes through `enter` (Workspace.entry);
    those that lead outside the workspace are skipped, and `note` names them."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self.outside: list[str] = []

    def enter(self, path: Path) -> WorkspacePath | None:
        found = self.workspace.entry(path)
        if found is None:
            self.outside.append(self.workspace.relative(path))
        return found

    def note(self) -> str:
        """A last paragraph for the tool's result: empty, or the skipped entries by name."""
        if not self.outside:
            return ""
        names = sorted(self.outside)
        shown = ", ".join(names[:MAX_SKIPPED_NAMES])
        if len(names) > MAX_SKIPPED_NAMES:
            shown += f" and {len(names) - MAX_SKIPPED_NAMES} more"
        what = "entry that leads" if len(names) == 1 else "entries that lead"
        return f"\n\n[skipped {len(names)} {what} outside the workspace: {shown}]"
