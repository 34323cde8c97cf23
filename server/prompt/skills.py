"""Skills (the Agent Skills format): a folder with a `SKILL.md` whose front matter gives its `name`
and `description`. The prompt lists each skill a mode may use by name and description; the body
and the paths of the folder's other files come only through the `use_skill` tool, which opens
those files to `read_file` (a global skill's are outside the workspace).

The first of a name wins: `.modus/skills/*/`, `.claude/skills/*/` (the workspace's: untrusted
input, bounded, really inside it), then the user's `$XDG_CONFIG_HOME/modus/skills/*/` and
`~/.claude/skills/*/`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..untrusted import Budget, Read, Refused, check_inside, looked_at, walk
from .rules import FrontMatter

MAX_SKILL_BYTES = 64 * 1024
MAX_SKILLS = 100
#: what every SKILL.md together may hold
MAX_TOTAL_BYTES = 1024 * 1024
#: the files of a skill's folder its SKILL.md may point to, and how deep they are looked for
MAX_FILES = 50
MAX_DEPTH = 3
MAX_DESCRIPTION = 1024
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    #: its SKILL.md: workspace-relative, or absolute for the user's own
    path: str
    source: str  # "workspace" | "global"
    #: the folder's other files, absolute (what `read_file` may read once the skill is used)
    files: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Skills(Read):
    found: tuple[Skill, ...] = ()

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.found if s.name == name), None)

    def for_mode(self, allowed: tuple[str, ...] | None) -> tuple[Skill, ...]:
        """The skills a mode may use: those it names (`skills: [name]`), all when it names none."""
        return self.found if allowed is None else tuple(s for s in self.found if s.name in allowed)

    def owner(self, path: Path) -> Skill | None:
        """The skill whose folder holds the file at `path` (really there), if one does."""
        real = Path(os.path.realpath(path))
        return next((s for s in self.found if real in s.files), None)



def load_skills(root: Path, global_dirs: tuple[Path, ...] = ()) -> Skills:
    """The skills of the workspace `root` (resolved), then of the user's folders. Blocking."""
    found: dict[str, Skill] = {}
    skipped: list[str] = []
    seen: list[Path] = []
    budget = Budget(MAX_TOTAL_BYTES, "skills")
    places = [(root / ".modus" / "skills", root, "workspace"), (root / ".claude" / "skills", root, "workspace")]
    places += [(folder, Path(os.path.realpath(folder)), "global") for folder in global_dirs]
    for folder, inside, source in places:
        seen.append(folder)
        try:
            real = check_inside(folder, inside) if source == "workspace" else inside
            entries = sorted(e.name for e in os.scandir(real) if e.is_dir(follow_symlinks=False))
        except Refused as exc:
            skipped.append(f"{folder.relative_to(root)}: {exc}")
            continue
        except OSError:
            continue
        for entry in entries:
            if len(found) == MAX_SKILLS:
                skipped.append(f"{folder}: more than {MAX_SKILLS} skills; the rest were left out")
                break
            skill = _skill(real / entry, root, inside, source, skipped, seen, budget)
            if skill is not None and skill.name not in found:
                found[skill.name] = skill
    return Skills(found=tuple(found.values()), skipped=tuple(skipped), seen=looked_at(seen))


def _skill(folder: Path, root: Path, inside: Path, source: str, skipped: list[str], seen: list[Path], budget: Budget) -> Skill | None:
    path = folder / "SKILL.md"
    shown = path.relative_to(root).as_posix() if source == "workspace" else str(path)
    seen.append(folder)
    text = budget.read(path, MAX_SKILL_BYTES, inside=inside, shown=shown, skipped=skipped)
    if text is None:
        return None
    front = FrontMatter(text)
    name = str(front.data.get("name") or folder.name).strip()
    description = " ".join(str(front.data.get("description") or "").split())
    problem = front.problem
    if not NAME.fullmatch(name) or len(name) > 64:
        problem = f"name: '{name}' must be 1 to 64 lowercase letters, digits and hyphens"
    elif not description:
        problem = "description: a skill needs one (the prompt lists it by its description)"
    elif len(description) > MAX_DESCRIPTION:
        problem = f"description: longer than {MAX_DESCRIPTION} characters"
    if problem:
        skipped.append(f"{shown}: {problem}; the skill was left out")
        return None
    files, folders, problems = walk(folder, inside=inside, max_files=MAX_FILES, max_depth=MAX_DEPTH)
    seen += folders
    skipped += [p.replace(f"{root}/", "", 1) for p in problems]
    others = tuple(Path(os.path.realpath(f)) for f in files if f != path)
    return Skill(name, description, front.body.strip(), shown, source, others)
