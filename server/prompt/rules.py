"""The rules for the prompt, in every peer's format (PROTOCOL.md, "Project files of every peer").

    agents   AGENTS.md (the root's always; a nested <dir>/AGENTS.md applies to <dir>/**)
    claude   CLAUDE.md, .claude/CLAUDE.md
    cline    .clinerules (a file, or a folder of .md/.txt files; not its workflows/)
    roo      .roorules, .roorules-<slug>, .roo/rules/, .roo/rules-<slug>/
    cursor   .cursorrules, .cursor/rules/**/*.mdc
    copilot  .github/copilot-instructions.md, .github/instructions/*.instructions.md
    modus    .modus/rules/, .modus/rules-<slug>/, and the user's $XDG_CONFIG_HOME/modus/rules/

They come from the repository, so they are read as untrusted input (server.untrusted): regular
files inside the workspace (the global ones inside their folder), each and all together bounded
in size, a bounded number of files and folder levels. YAML front matter is parsed (bounded, safe)
and never reaches the prompt; its conditions make a rule conditional: `paths` (cline, modus),
`globs` + `alwaysApply` (cursor), `applyTo` (copilot). A conditional rule applies once the
conversation touched a matching file (`Rules.applying`).

`load_rules` reads every rule at once, blocking (run it off the loop); `Rules.changed()` tells
with stat calls whether anything it read, or any folder it looked into, has changed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Collection, Iterable, Literal

from ..untrusted import Budget, Read, Refused, check_inside, load_yaml, looked_at, walk

MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 1024 * 1024
#: The most files read from the rule folders together (nested AGENTS.md files apart).
MAX_FILES = 64
MAX_DEPTH = 5
#: Front matter longer than this is not front matter: the file is read as text.
MAX_FRONT_MATTER = 16 * 1024
#: Where nested AGENTS.md files are looked for: at most this many folders, this deep, skipping
#: hidden folders and these (dependencies, builds, environments).
MAX_NESTED_FOLDERS = 2000
MAX_NESTED_DEPTH = 12
MAX_NESTED = 64
NESTED_SKIP = frozenset({"node_modules", "__pycache__", "venv", "env", "target", "dist", "build", "vendor", "bower_components"})

Format = Literal["agents", "claude", "cline", "roo", "cursor", "copilot", "modus"]
Scope = Literal["always", "mode", "paths"]
#: The formats in the order their rules are told within a scope.
FORMATS: tuple[Format, ...] = ("agents", "claude", "cline", "roo", "cursor", "copilot", "modus")
#: Folders of `.clinerules/` that hold other things than rules (commands, hooks, skills).
CLINE_NOT_RULES = ("workflows", "hooks", "skills")


@dataclass(frozen=True)
class RuleFile:
    """One rule file as read: its text without front matter, and when it applies."""

    rel: str  # workspace-relative, POSIX; absolute for a global file
    text: str
    format: Format = "modus"
    #: always: every request; mode: the modes named; paths: once a matching file was touched
    #: (in the modes named, if any). A conditional rule without globs never applies (a .mdc with
    #: neither globs nor alwaysApply: true, an .instructions.md without applyTo): it is listed.
    scope: Scope = "always"
    modes: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    #: a global rule ($XDG_CONFIG_HOME/modus/rules/): told first
    is_global: bool = False
    #: what the text really is: (device, inode) of the file read (an @-import: of its target).
    #: Two names of one file (a symlink, another case) are one rule.
    identity: tuple[int, int] = (0, 0)

    @property
    def tier(self) -> int:
        """Where it is told: global, then always, the mode's, the conditional ones."""
        return 0 if self.is_global else {"always": 1, "mode": 2, "paths": 3}[self.scope]

    def for_mode(self, slug: str) -> bool:
        return not self.modes or slug in self.modes

    def applies(self, slug: str, touched: Collection[str]) -> bool:
        """Whether the rule applies in mode `slug` once the conversation touched `touched`."""
        if not self.for_mode(slug):
            return False
        if self.scope != "paths":
            return True
        matcher = globs(self.paths)
        return matcher is not None and any(matcher.fullmatch(t) for t in touched)


@dataclass(frozen=True)
class Rules(Read):
    #: Every rule file, in the order they are told (global, always, the modes', conditional).
    files: tuple[RuleFile, ...] = ()

    def listed(self, slug: str, touched: Collection[str] = (), disabled: Iterable[str] = ()) -> list[tuple[RuleFile, bool]]:
        """Every rule, and whether it is in the prompt of mode `slug` for a conversation that
        touched `touched`. A rule the settings disable (`rulesDisabled` globs over the paths) is
        not, nor one whose text is already there (the same file by another name, an @-import
        of it, or the same words)."""
        off = globs(tuple(_setting_glob(g) for g in disabled), anchored=False)
        identities: set[tuple[int, int]] = set()
        texts: set[str] = set()
        out = []
        for rule in self.files:
            active = rule.applies(slug, touched) and not (off is not None and off.fullmatch(rule.rel))
            if active and (rule.identity in identities or rule.text in texts):
                active = False
            if active:
                identities.add(rule.identity)
                texts.add(rule.text)
            out.append((rule, active))
        return out

    def applying(self, slug: str, touched: Collection[str] = (), disabled: Iterable[str] = ()) -> tuple[RuleFile, ...]:
        """The rules in the prompt of mode `slug`, in order, each text once."""
        return tuple(rule for rule, active in self.listed(slug, touched, disabled) if active)

    def for_mode(self, slug: str) -> tuple[RuleFile, ...]:
        """The rules of mode `slug` before any file is touched."""
        return self.applying(slug)


# ------------------------------------------------------------------ globs


@lru_cache(maxsize=1024)
def globs(patterns: tuple[str, ...], anchored: bool = True) -> re.Pattern[str] | None:
    """One regular expression for workspace-relative globs (`fullmatch` a POSIX path): `**`
    spans folders (`src/**/*.py` matches `src/a.py` and `src/pkg/a.py`), `*` and `?` stay
    within one, `[...]` and `{a,b}` as in shells; `dir/**`, `dir/` and a plain `dir` also match
    `dir` itself and all below it. None when there are none. `anchored=False`: a leading `/` is
    kept (an absolute path)."""
    parts = [_glob(p, anchored) for p in patterns if p.strip()]
    return re.compile("|".join(f"(?:{p})" for p in parts)) if parts else None


def _setting_glob(pattern: str) -> str:
    return os.path.expanduser(pattern) if pattern.startswith("~") else pattern


def _glob(pattern: str, anchored: bool) -> str:
    p = pattern.strip()
    while p.startswith("./"):
        p = p[2:]
    if anchored:
        p = p.lstrip("/")
    below = ""
    if p.endswith("/**"):
        p, below = p[:-3], "(?:/.*)?"
    elif p.endswith("/"):
        p, below = p.rstrip("/"), "(?:/.*)?"
    elif not any(c in p for c in "*?[{"):
        below = "(?:/.*)?"
    if not p:
        return ".*"
    return _translate(p) + below


def _translate(p: str) -> str:
    out: list[str] = []
    i, n = 0, len(p)
    while i < n:
        c = p[i]
        if c == "*":
            if p.startswith("**", i):
                start = i == 0 or p[i - 1] == "/"
                i += 2
                if start and i < n and p[i] == "/":
                    out.append("(?:[^/]*/)*")  # `**/`: no folder, or any number of them
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := p.find("]", i + 2)) != -1:
            inner = p[i + 1 : end]
            negated = inner[:1] in ("!", "^")
            inner = inner[1:] if negated else inner
            out.append(f"[{'^' if negated else ''}{inner.replace(chr(92), chr(92) * 2)}]")
            i = end
        elif c == "{" and (end := _closing_brace(p, i)) != -1:
            out.append("(?:" + "|".join(_translate(alt) for alt in _split_top(p[i + 1 : end])) + ")")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _closing_brace(p: str, i: int) -> int:
    depth = 0
    for j in range(i, len(p)):
        depth += {"{": 1, "}": -1}.get(p[j], 0)
        if depth == 0:
            return j
    return -1


def _split_top(inner: str) -> list[str]:
    """`a,{b,c},d` → a, {b,c}, d."""
    parts, depth, last = [], 0, 0
    for j, c in enumerate(inner):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(inner[last:j])
            last = j + 1
    return parts + [inner[last:]]


# ------------------------------------------------------------------ front matter


class FrontMatter:
    """A file's YAML front matter (`---` on the first line to the next `---` line), parsed
    safely and bounded; `body` is the text after it."""

    def __init__(self, text: str):
        self.data: dict[str, Any] = {}
        self.body = text = text.lstrip("\ufeff")
        self.problem: str | None = None
        lines = text.split("\n")
        if not lines or lines[0].strip() != "---":
            return
        for n, line in enumerate(lines[1:], 1):
            if line.strip() in ("---", "..."):
                break
        else:
            return  # no end: not front matter, a rule that starts with a ruler
        block = "\n".join(lines[1:n])
        if len(block) > MAX_FRONT_MATTER:
            self.problem = f"its front matter is larger than {MAX_FRONT_MATTER // 1024} KiB; it was left out"
        else:
            try:
                data = load_yaml(block) if block.strip() else {}
            except Exception:  # YAML's errors, the node limit; Cursor's unquoted `globs: *.ts, *.tsx` is not YAML
                data = _loose(block)
            if isinstance(data, dict):
                self.data = {str(k): v for k, v in data.items()}
            else:
                self.problem = "its front matter is not a mapping of keys; it was left out"
        self.body = "\n".join(lines[n + 1 :])


def _loose(block: str) -> dict[str, Any] | None:
    """`key: value` lines and `- item` lists under a key, read as written: what Cursor writes
    that YAML does not read (`globs: *.ts`). None when the block is something else."""
    data: dict[str, Any] = {}
    key = None
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = re.match(r"\s+-\s*(.*)$", line)
        if item and key is not None:
            data[key] = [*(data[key] if isinstance(data[key], list) else []), _unquote(item[1])]
            continue
        pair = re.match(r"([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
        if pair is None:
            return None
        key, value = pair[1], pair[2].strip()
        data[key] = {"true": True, "false": False}.get(value.lower(), _unquote(value)) if value else None
    return data


def _unquote(value: str) -> str:
    value = value.strip()
    return value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"" else value


def _glob_list(value: Any) -> tuple[str, ...] | None:
    """Globs as a list, or one string of comma-separated globs (Cursor, Copilot); None: not globs."""
    if isinstance(value, str):
        return tuple(g.strip() for g in _split_top(value) if g.strip())
    if isinstance(value, list) and all(isinstance(g, str) for g in value):
        return tuple(g.strip() for g in value if g.strip())
    return None


def conditions(fmt: Format, name: str, data: dict[str, Any]) -> tuple[Scope | None, tuple[str, ...], str | None]:
    """What the front matter of a file of `fmt` says of when it applies: (scope, or None for
    the file's own; globs; a problem to tell)."""
    if fmt in ("cline", "modus"):
        if data.get("paths") is None:
            return None, (), None
        found = _glob_list(data["paths"])
        if found is None:
            return None, (), "its front matter's `paths` is not a list of globs; the rule applies without it"
        return ("paths", found, None) if found else (None, (), None)
    if fmt == "cursor" and name.endswith(".mdc"):
        if data.get("alwaysApply") is True:
            return "always", (), None
        found = _glob_list(data.get("globs")) if data.get("globs") is not None else ()
        if found is None:
            return "paths", (), "its front matter's `globs` is not a list of globs; the rule is not applied"
        return "paths", found, None
    if fmt == "copilot" and name.endswith(".instructions.md"):
        found = _glob_list(data.get("applyTo")) if data.get("applyTo") is not None else ()
        if found is None:
            return "paths", (), "its front matter's `applyTo` is not a list of globs; the rule is not applied"
        return "paths", found, None
    return None, (), None


#: A file whose whole text is an @-import of another (Claude Code's `@AGENTS.md`).
_IMPORT = re.compile(r"@(?!~)([^\s@]+)")


# ------------------------------------------------------------------ reading


class _Reader:
    def __init__(self, root: Path):
        self.root = root
        self.files: list[RuleFile] = []
        self.skipped: list[str] = []
        self.seen: list[Path] = []
        self.budget = Budget(MAX_TOTAL_BYTES, "rules")
        self.folder_files = 0

    def name(self, path: Path, inside: Path) -> str:
        return path.relative_to(self.root).as_posix() if inside == self.root else str(path)

    def file(self, path: Path, fmt: Format, *, inside: Path | None = None, modes: tuple[str, ...] = (),
             paths: tuple[str, ...] | None = None, watch: bool = True) -> None:
        """One rule file, if there is one. `paths`: the globs it applies to (a nested AGENTS.md)."""
        inside = inside or self.root
        if watch:
            self.seen.append(path)
        name = self.name(path, inside)
        text = self.read(path, name, inside)
        if text is None:
            return
        front = FrontMatter(text)
        if front.problem:
            self.skipped.append(f"{name}: {front.problem}")
        scope, globs_, problem = conditions(fmt, path.name, front.data)
        if problem:
            self.skipped.append(f"{name}: {problem}")
        body, identity = front.body.strip(), _identity(path)
        if (imported := _IMPORT.fullmatch(body)) is not None:
            body, identity = self.imported(path, imported[1], name, inside, body, identity)
        if not body:
            return
        if paths is not None:
            scope, globs_ = "paths", paths
        scope = scope or ("mode" if modes else "always")
        if scope == "always" and modes:
            scope = "mode"
        self.files.append(RuleFile(name, body, fmt, scope, modes, globs_, inside != self.root, identity))

    def imported(self, path: Path, target: str, name: str, inside: Path, body: str, identity: tuple[int, int]):
        """A file that only says `@other.md` is other.md (relative to its folder, inside)."""
        other = path.parent / target
        try:
            check_inside(other, inside)
            text = self.read(other, self.name(Path(os.path.realpath(other)), inside), inside)
        except Refused as exc:
            self.skipped.append(f"{name}: its import {target}: {exc}")
            return body, identity
        if text is None:
            return body, identity  # not a file: the text as it is
        self.seen.append(other)
        return FrontMatter(text).body.strip(), _identity(other)

    def read(self, path: Path, name: str, inside: Path) -> str | None:
        return self.budget.read(path, MAX_FILE_BYTES, inside=inside, shown=name, skipped=self.skipped)

    def folder(self, folder: Path, fmt: Format, *, inside: Path | None = None, modes: tuple[str, ...] = (),
               take=lambda rel: True) -> None:
        """The files of a rule folder (and its folders), those `take(relative path)` accepts."""
        inside = inside or self.root
        self.seen.append(folder)
        try:
            check_inside(folder, inside)
        except Refused as exc:
            self.skipped.append(f"{self.name(folder, inside)}: {exc}")
            return
        if not folder.is_dir():
            return
        found, folders, problems = walk(folder, inside=inside, max_files=MAX_FILES - self.folder_files, max_depth=MAX_DEPTH)
        self.skipped += [p.replace(f"{self.root}/", "", 1) if inside == self.root else p for p in problems]
        self.seen += folders
        for path in found:
            if take(path.relative_to(folder).as_posix()):
                self.folder_files += 1
                self.file(path, fmt, inside=inside, modes=modes)

    def named(self, folder: Path, prefix: str) -> list[tuple[str, Path]]:
        """(slug, path) of the entries `<prefix><slug>` of a folder, by name."""
        try:
            names = sorted(e.name for e in os.scandir(folder) if e.name.startswith(prefix) and len(e.name) > len(prefix))
        except OSError:
            return []
        return [(name[len(prefix) :], folder / name) for name in names]

    def nested_agents(self) -> None:
        """`<dir>/AGENTS.md` below the root, for `<dir>/**`: a bounded walk (hidden folders and
        dependencies skipped, symlinked folders not followed); its folders are watched."""
        queue, looked, found = [(self.root, 0)], 0, []
        while queue:
            folder, depth = queue.pop(0)
            if looked == MAX_NESTED_FOLDERS:
                break  # the rest of a very large tree: nested AGENTS.md there are not found
            looked += 1
            self.seen.append(folder)
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir and depth < MAX_NESTED_DEPTH and not entry.name.startswith(".") and entry.name not in NESTED_SKIP:
                    queue.append((Path(entry.path), depth + 1))
                elif entry.name == "AGENTS.md" and folder != self.root and len(found) < MAX_NESTED:
                    found.append(folder.relative_to(self.root).as_posix())
        for rel in sorted(found):
            self.file(self.root / rel / "AGENTS.md", "agents", paths=(f"{rel}/**",))


def _identity(path: Path) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, hash(str(path)))  # gone since it was read: itself only
    return (st.st_dev, st.st_ino)


def load_rules(root: Path, global_dir: Path | None = None) -> Rules:
    """Every rule file of the workspace `root` (resolved) and of `global_dir` (the user's
    `$XDG_CONFIG_HOME/modus/rules`), for every mode, in the order they are told. Blocking."""
    r = _Reader(root)
    if global_dir is not None:
        real = Path(os.path.realpath(global_dir))
        r.seen.append(global_dir)
        if real.is_dir():
            r.folder(real, "modus", inside=real)
    r.file(root / "AGENTS.md", "agents")
    r.file(root / "CLAUDE.md", "claude")
    r.file(root / ".claude" / "CLAUDE.md", "claude")
    cline = root / ".clinerules"
    r.seen.append(cline)
    if cline.is_dir():
        r.folder(cline, "cline", take=lambda rel: rel.split("/")[0] not in CLINE_NOT_RULES and rel.endswith((".md", ".txt")))
    else:
        r.file(cline, "cline")
    r.file(root / ".roorules", "roo")
    r.folder(root / ".roo" / "rules", "roo")
    for slug, path in r.named(root, ".roorules-"):
        r.file(path, "roo", modes=(slug,))
    r.seen.append(root / ".roo")
    for slug, path in r.named(root / ".roo", "rules-"):
        r.folder(path, "roo", modes=(slug,))
    r.file(root / ".cursorrules", "cursor")
    r.folder(root / ".cursor" / "rules", "cursor", take=lambda rel: rel.endswith(".mdc"))
    r.file(root / ".github" / "copilot-instructions.md", "copilot")
    r.folder(root / ".github" / "instructions", "copilot", take=lambda rel: rel.endswith(".instructions.md"))
    r.folder(root / ".modus" / "rules", "modus")
    r.seen.append(root / ".modus")
    for slug, path in r.named(root / ".modus", "rules-"):
        r.folder(path, "modus", modes=(slug,))
    r.nested_agents()
    files = sorted(r.files, key=lambda f: (f.tier, FORMATS.index(f.format)))  # stable: reading order within
    return Rules(files=tuple(files), skipped=tuple(r.skipped), seen=looked_at(r.seen))
