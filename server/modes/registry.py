"""All modes of a workspace: built-ins, then the global, `.roomodes` and `.modus/modes.yaml` files.

Precedence, highest first: `<workspace>/.modus/modes.yaml`, `<workspace>/.roomodes`, the global
`modes.yaml`, then the file the `globalModesFile` setting names (Roo Code's global
`custom_modes.yaml`, say), if any. A custom mode with a built-in slug replaces the built-in in place; new slugs are
appended. Files are re-read when their modification time, size or inode changes (finding out
is a few `stat` calls, cheap enough to run before every use). A file is read as untrusted
input (server.untrusted): off the event loop, bounded in size and time.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Callable, NamedTuple

from ..userdirs import config_dir
from ..untrusted import Refused, Signature, off_loop, read_text, signature
from .model import BUILTIN_MODES, DEFAULT_MODE, Diagnostic, LoadResult, Mode

#: A modes file larger than this is not read. Real `.roomodes` reach a few hundred KiB (a team's
#: modes, each with pages of instructions); the node and alias limits and the time limit of
#: server.untrusted keep a hostile one harmless, whatever its size.
MAX_FILE_BYTES = 2 * 1024 * 1024


def refused(reason: Exception) -> LoadResult:
    return LoadResult((), (Diagnostic(0, 0, 0, 1, f"Modes file not read: {reason}"),))

log = logging.getLogger(__name__)


def global_modes_path() -> Path:
    """`$XDG_CONFIG_HOME/modus/modes.yaml` (`~/.config/...`); elsewhere than Linux, the
    platform's configuration folder."""
    return config_dir() / "modes.yaml"


class ModeFile(NamedTuple):
    path: Path
    source: str  # "project" or "global"


def mode_files(workspace: Path, global_path: Path | None = None, more: Path | None = None) -> tuple[ModeFile, ...]:
    """The custom-mode files, highest precedence first; `more`: a global one read besides."""
    files = (
        ModeFile(workspace / ".modus" / "modes.yaml", "project"),
        ModeFile(workspace / ".roomodes", "project"),
        ModeFile(global_path or global_modes_path(), "global"),
    )
    if more is None or any(f.path == more for f in files):
        return files
    return files + (ModeFile(more, "global"),)


class ModeRegistry:
    """The modes of a workspace. Nothing is read at construction: `refresh()` (blocking) or
    `await refresh_off_loop()` reads the files whose signature changed since the last read."""

    def __init__(self, workspace: Path, global_path: Path | None = None, more: Path | None = None):
        self.workspace = Path(os.path.realpath(workspace))
        self._where = (workspace, global_path)
        self.files = mode_files(workspace, global_path, more)
        #: Called with the files that were re-read, to publish their diagnostics.
        self.on_change: Callable[[list[ModeFile]], None] | None = None
        self._signatures: dict[Path, Signature | None] = {}
        self._results: dict[Path, LoadResult] = {}
        self._modes: tuple[Mode, ...] = BUILTIN_MODES
        self._by_slug: dict[str, Mode] = {m.slug: m for m in BUILTIN_MODES}

    def read_also(self, path: Path | None) -> bool:
        """Read `path` too, as a global modes file below the others (the `globalModesFile`
        setting); None: no such file. Whether that changed anything. A file no longer read
        takes its modes and its diagnostics with it at once; a new one is read by the next
        refresh, like a file that changed."""
        files = mode_files(*self._where, path)
        if files == self.files:
            return False
        gone = [f for f in self.files if f not in files]
        self.files = files
        for f in gone:
            self._signatures.pop(f.path, None)
            self._results.pop(f.path, None)
        if gone:
            self._merge()
            if self.on_change is not None:
                self.on_change(gone)
        return True

    def stale(self) -> list[tuple[ModeFile, Signature | None]]:
        """The files that changed since they were read, with their new signature (a few stat calls)."""
        out = []
        for f in self.files:
            sig = signature(f.path)
            if f.path not in self._signatures or self._signatures[f.path] != sig:
                out.append((f, sig))
        return out

    def load(self, f: ModeFile) -> LoadResult:
        """Read and parse one file (blocking; changes nothing here); a missing file has no modes.
        A project file must really be in the workspace."""
        try:
            text = read_text(f.path, MAX_FILE_BYTES, inside=self.workspace if f.source == "project" else None)
        except Refused as exc:
            return refused(exc)
        if text is None:
            return LoadResult((), ())
        from .loader import parse_modes  # YAML and the mode checks load when there is a file to read

        return parse_modes(text, f.source, str(f.path))

    def refresh(self) -> list[ModeFile]:
        """Re-read the files that changed, here and now; returns them."""
        stale = self.stale()
        return self.apply([(f, sig, self.load(f)) for f, sig in stale])

    async def refresh_off_loop(self) -> list[ModeFile]:
        """Re-read the files that changed in a worker thread, each within the time limit."""
        loaded = []
        for f, sig in self.stale():
            try:
                result = await off_loop(self.load, f)
            except Refused as exc:
                result = refused(exc)
            loaded.append((f, sig, result))
        return self.apply(loaded)

    def apply(self, loaded: list[tuple[ModeFile, Signature | None, LoadResult]]) -> list[ModeFile]:
        for f, sig, result in loaded:
            self._signatures[f.path] = sig
            self._results[f.path] = result
            for d in result.diagnostics:
                log.warning("%s:%d: %s", f.path, d.line + 1, d.message)
        changed = [f for f, _, _ in loaded]
        if changed:
            self._merge()
            if self.on_change is not None:
                self.on_change(changed)
        return changed

    def diagnostics(self, path: Path) -> tuple[Diagnostic, ...]:
        result = self._results.get(path)
        return result.diagnostics if result else ()

    def _merge(self) -> None:
        modes = list(BUILTIN_MODES)
        index = {m.slug: i for i, m in enumerate(modes)}
        taken: set[str] = set()
        for f in self.files:  # highest precedence first: a slug goes to the first file that has it
            for mode in self._results[f.path].modes if f.path in self._results else ():
                if mode.slug in taken:
                    continue
                taken.add(mode.slug)
                if mode.slug in index:
                    modes[index[mode.slug]] = mode
                else:
                    index[mode.slug] = len(modes)
                    modes.append(mode)
        self._modes = tuple(modes)
        self._by_slug = {m.slug: m for m in modes}

    @property
    def modes(self) -> tuple[Mode, ...]:
        return self._modes

    def get(self, slug: str) -> Mode | None:
        return self._by_slug.get(slug)

    def get_or_default(self, slug: str) -> Mode:
        return self._by_slug.get(slug) or self._by_slug[DEFAULT_MODE]

    def is_mode_file(self, path: Path) -> bool:
        return any(f.path == path for f in self.files)
