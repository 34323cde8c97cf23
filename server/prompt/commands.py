"""Slash commands: prompt files a user sends by name (`/review src/app.py`), from every peer's
folder. The first of a name wins, in this order: `.modus/commands/`, `.roo/commands/`,
`.claude/commands/`, `.clinerules/workflows/`, then the user's `$XDG_CONFIG_HOME/modus/commands/`.
A file's name is the command's (`review.md` → `/review`), a subfolder comes first
(`git/commit.md` → `/git:commit`). Front matter (never sent): `description`, `argument-hint`,
`mode` and `phase` (switched to first, as the user's switch). The body gets `$ARGUMENTS` (all
that follows the name) and `$1`…`$9` (its words) replaced.

Repository files: regular, bounded, really inside the workspace, read off the loop (configuration.py).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..untrusted import Budget, Read, Refused, check_inside, looked_at, walk
from .rules import FrontMatter

MAX_FILE_BYTES = 64 * 1024
#: what every command file together may hold
MAX_TOTAL_BYTES = 1024 * 1024
MAX_FILES = 200
MAX_DEPTH = 3
#: A command's name: words of letters, digits, `_` and `-`, a subfolder's before a `:`.
NAME = re.compile(r"[\w-]+(?::[\w-]+)*")
#: `/<name>`, then what follows it (its arguments), at the start of a message.
TYPED = re.compile(r"/([\w-]+(?::[\w-]+)*)(?:[ \t]+|\n|$)")


@dataclass(frozen=True)
class PromptCommand:
    name: str
    body: str
    #: workspace-relative, or absolute for the user's own
    path: str
    source: str  # "workspace" | "global"
    description: str | None = None
    argument_hint: str | None = None
    mode: str | None = None
    phase: str | None = None

    def expand(self, arguments: str) -> str:
        """The body, `$ARGUMENTS` and `$1`…`$9` replaced (a missing word: nothing)."""
        words = arguments.split()

        def replace(match: re.Match[str]) -> str:
            if match[0] == "$ARGUMENTS":
                return arguments
            n = int(match[0][1:])
            return words[n - 1] if n <= len(words) else ""

        return re.sub(r"\$ARGUMENTS|\$[1-9]", replace, self.body)


@dataclass(frozen=True)
class Commands(Read):
    found: tuple[PromptCommand, ...] = ()

    def get(self, name: str) -> PromptCommand | None:
        return next((c for c in self.found if c.name == name), None)

    def typed(self, text: str) -> tuple[PromptCommand, str] | None:
        """(the command, its arguments) when the message starts with `/` and a command's name;
        any other text (`/usr/bin is empty`, an unknown `/word`) is a message as it is."""
        match = TYPED.match(text)
        command = self.get(match[1]) if match else None
        return (command, text[match.end() :].strip()) if command and match else None



#: Where commands are, in the order a name is looked for: (folder, whether subfolders count).
FOLDERS = ((".modus/commands", True), (".roo/commands", False), (".claude/commands", True), (".clinerules/workflows", False))


def load_commands(root: Path, global_dir: Path | None = None) -> Commands:
    """Every command of the workspace `root` (resolved) and the user's `global_dir`. Blocking."""
    found: dict[str, PromptCommand] = {}
    skipped: list[str] = []
    seen: list[Path] = []
    budget = Budget(MAX_TOTAL_BYTES, "command files")
    places = [(root / rel, nested, root, "workspace") for rel, nested in FOLDERS]
    if global_dir is not None:
        places.append((global_dir, True, Path(os.path.realpath(global_dir)), "global"))
    for folder, nested, inside, source in places:
        seen.append(folder)
        try:
            real = check_inside(folder, inside) if source == "workspace" else inside
        except Refused as exc:
            skipped.append(f"{folder.relative_to(root)}: {exc}")
            continue
        if not real.is_dir():
            continue
        files, folders, problems = walk(real, inside=inside, max_files=MAX_FILES, max_depth=MAX_DEPTH)
        seen += folders
        skipped += [p.replace(f"{root}/", "", 1) for p in problems]
        for path in files:
            rel = path.relative_to(real)
            if path.suffix != ".md" or (not nested and len(rel.parts) > 1):
                continue
            shown = path.relative_to(root).as_posix() if source == "workspace" else str(path)
            command = _command(path, ":".join((*rel.parts[:-1], path.stem)), shown, source, inside, skipped, budget)
            if command is not None and command.name not in found:
                found[command.name] = command
    return Commands(found=tuple(found.values()), skipped=tuple(skipped), seen=looked_at(seen))


def _command(path: Path, name: str, shown: str, source: str, inside: Path, skipped: list[str], budget: Budget) -> PromptCommand | None:
    if not NAME.fullmatch(name):
        skipped.append(f"{shown}: '{name}' is not a command name (letters, digits, '_' and '-')")
        return None
    text = budget.read(path, MAX_FILE_BYTES, inside=inside, shown=shown, skipped=skipped)
    if text is None:
        return None
    front = FrontMatter(text)
    if front.problem:
        skipped.append(f"{shown}: {front.problem}")
    data = front.data
    phase = _text(data.get("phase"))
    if phase is not None and phase not in ("plan", "act"):
        skipped.append(f"{shown}: phase: must be 'plan' or 'act', got {phase!r}; the command was left out")
        return None
    return PromptCommand(
        name=name,
        body=front.body.strip(),
        path=shown,
        source=source,
        description=_text(data.get("description")),
        argument_hint=_text(data.get("argument-hint")),
        mode=_text(data.get("mode")),
        phase=phase,
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value).strip() or None
