"""The workspace's rules for the prompt: `AGENTS.md`, `.modus/rules/`, `.modus/rules-<slug>/`,
`.roo/rules-<slug>/` (SPEC §3).

They come from the repository, so they are read as untrusted input (server.untrusted): regular
files inside the workspace, each and all together bounded in size, a bounded number of files
and folder levels. `load_rules` reads every mode's rules at once, blocking (run it off the
loop); `Rules.changed()` tells with a few stat calls whether anything it read has changed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import NamedTuple
from pathlib import Path

from ..untrusted import Refused, check_inside, read_text, signature, walk

RULE_FILES = ("AGENTS.md",)
#: Folders that hold rule folders: `rules` for every mode, `rules-<slug>` for one.
RULE_HOMES = (".modus", ".roo")
MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 1024 * 1024
MAX_FILES = 64
MAX_DEPTH = 5


class RuleFile(NamedTuple):
    rel: str  # workspace-relative, POSIX
    text: str


def _folders(slug: str) -> tuple[str, ...]:
    """The rule folders of a mode, in prompt order."""
    return (".modus/rules", f".modus/rules-{slug}", f".roo/rules-{slug}")


@dataclass(frozen=True)
class Rules:
    #: (folder the file came from, "" for the top-level files; the file), in reading order.
    files: tuple[tuple[str, RuleFile], ...] = ()
    #: `<path>: <reason>` for each file or folder that was not read.
    skipped: tuple[str, ...] = ()
    #: What was looked at, with its signature then: any change means the rules must be read again.
    seen: tuple[tuple[Path, tuple | None], ...] = field(default=(), repr=False)

    def for_mode(self, slug: str) -> tuple[RuleFile, ...]:
        order = ("", *_folders(slug))
        return tuple(f for key in order for folder, f in self.files if folder == key)

    def changed(self) -> bool:
        return not self.seen or any(signature(path) != sig for path, sig in self.seen)




def load_rules(root: Path) -> Rules:
    """Every rule file of the workspace `root` (resolved), for every mode. Blocking."""
    files: list[tuple[str, RuleFile]] = []
    skipped: list[str] = []
    seen: list[Path] = [root / name for name in RULE_FILES] + [root / home for home in RULE_HOMES]
    budget = MAX_TOTAL_BYTES
    found_files = 0

    def rel(path: Path) -> str:
        return path.relative_to(root).as_posix()

    def take(folder: str, path: Path) -> None:
        nonlocal budget
        try:
            text = read_text(path, MAX_FILE_BYTES, inside=root)
        except Refused as exc:
            skipped.append(f"{rel(path)}: {exc}")
            return
        if text is None:
            return
        size = len(text.encode("utf-8"))
        if size > budget:
            skipped.append(f"{rel(path)}: the rules together would be larger than {MAX_TOTAL_BYTES // 1024} KiB")
            return
        budget -= size
        if text.strip():
            files.append((folder, RuleFile(rel(path), text.strip())))

    for name in RULE_FILES:
        take("", root / name)
    for home in RULE_HOMES:
        try:
            names = sorted(e.name for e in os.scandir(root / home) if e.name == "rules" or e.name.startswith("rules-"))
        except OSError:
            continue
        for name in names:
            folder = root / home / name
            try:
                check_inside(folder, root)
            except Refused as exc:
                skipped.append(f"{rel(folder)}: {exc}")
                continue
            if not folder.is_dir():
                continue
            found, folders, problems = walk(folder, inside=root, max_files=MAX_FILES - found_files, max_depth=MAX_DEPTH)
            found_files += len(found)
            skipped += [p.replace(f"{root}/", "", 1) for p in problems]
            seen += folders
            for path in found:
                seen.append(path)
                take(f"{home}/{name}", path)
    return Rules(tuple(files), tuple(skipped), tuple((p, signature(p)) for p in seen))
