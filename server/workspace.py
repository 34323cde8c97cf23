"""The workspace folder, and where a path given by the model really points."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .errors import InvalidParams, OutsideWorkspace


@dataclass(frozen=True)
class WorkspacePath:
    """A path resolved inside the workspace: `..` folded, symlinks followed."""

    path: Path  # absolute, real
    rel: str  # workspace-relative, POSIX; "." for the root itself

    def __str__(self) -> str:
        return self.rel


class Workspace:
    def __init__(self, root: str | os.PathLike):
        self.root = Path(os.path.realpath(root))

    def resolve(self, raw: str) -> WorkspacePath:
        """Where `raw` (relative to the root, or absolute) really points; refuses outside paths."""
        if not isinstance(raw, str) or not raw.strip():
            raise InvalidParams("The path must be a non-empty string.")
        if "\0" in raw:
            raise InvalidParams(f"The path contains a NUL character: {raw!r}")
        real = Path(os.path.realpath(self.root / raw.strip()))
        try:
            rel = real.relative_to(self.root)
        except ValueError:
            raise OutsideWorkspace(
                f"Access to '{raw}' is denied: it resolves to '{real}', outside the workspace '{self.root}'."
            ) from None
        return WorkspacePath(real, PurePosixPath(rel).as_posix() if rel.parts else ".")

    def relative(self, path: Path) -> str:
        return PurePosixPath(path.relative_to(self.root)).as_posix()
