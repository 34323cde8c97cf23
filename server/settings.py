"""The settings in effect: the client's (`initializationOptions.modus`, didChangeConfiguration)
over the workspace's `.modus/settings.json` over the global `$XDG_CONFIG_HOME/modus/settings.json`
over the defaults; objects merge key by key (PROTOCOL.md "Settings files").

A bad key is reported naming its file (or `modus` for the client's) and the key, and left out;
the rest applies. The files are read again when they change. Each file's keys are validated and
kept in their one canonical spelling (camelCase), so `base_url` and `baseUrl` are one setting.

The workspace's file comes with the repository, so it is untrusted: a setting that decides what
runs or where requests go (protocol's `DECIDES` mark: yolo, autoApprove, stateDir,
mcpStartAtLaunch, maxRequestsPerTurn, globalModesFile, a model's `baseUrl`/`apiKeyEnv`) applies only once the user trusted that
content ("Modus: Trust Workspace Settings", `modus.trustWorkspaceSettings`). What waits is
found on the validated settings, whatever spelling set it: each top-level key under which such
a setting is set. The trust is kept beside the global settings, outside the workspace, as a hash
of those keys per workspace: when they change, they wait for the user again. A rule Modus writes
itself on the user's "always allow" keeps the file trusted only if it was trusted before the
write (`trusted_text`): the agent's own edits of the file are never trusted along with it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from protocol import Settings
from protocol.models import decisive

from .untrusted import Refused, Signature, read_text, signature
from .userdirs import claude_dir
from .userdirs import UserRecord

log = logging.getLogger(__name__)

#: A settings file larger than this is not read.
MAX_FILE_BYTES = 256 * 1024


def read_settings(data: Any, where: str = "modus") -> tuple[Settings, list[str]]:
    """Settings from the client; a bad key is reported (`modus.key: why`) and left at its default
    (a key Modus does not know is let through quietly: an editor may send its own)."""
    good, problems = checked(data, where, strict=False)
    return Settings.model_validate(good), problems


def checked(data: Any, where: str, strict: bool = True) -> tuple[dict[str, Any], list[str]]:
    """The keys of `data` that are valid settings, and a problem for each other one (`strict`:
    an unknown key too)."""
    if not isinstance(data, dict):
        return {}, ([] if data is None else [f"{where}: settings must be an object, got {type(data).__name__}"])
    good: dict[str, Any] = {}
    problems: list[str] = []
    sep = ": " if strict else "."  # "<file>: key: why", "modus.key: why"
    for key, value in data.items():
        try:
            Settings.model_validate({key: value})
        except ValidationError as exc:
            for e in exc.errors():
                problems.append(f"{where}{sep}{'.'.join(str(p) for p in e['loc'])}: {e['msg']}")
            continue
        if strict and key not in _KEYS:
            problems.append(f"{where}{sep}{key}: not a Modus setting")
            continue
        good[key] = value
    return good, problems


_KEYS = {f.alias or name for name, f in Settings.model_fields.items()}


def merged(high: dict[str, Any], low: dict[str, Any]) -> dict[str, Any]:
    """`high` over `low`: objects merge key by key, anything else is replaced."""
    out = dict(low)
    for key, value in high.items():
        below = out.get(key)
        out[key] = merged(value, below) if isinstance(value, dict) and isinstance(below, dict) else value
    return out


class Parsed(NamedTuple):
    """A settings file's content: its valid keys (canonical spelling), the part of them that
    decides what runs or where requests go, and a problem for each bad key."""

    data: dict[str, Any]
    waiting: dict[str, Any]
    problems: list[str]


def parse(text: str | None, where: str, only: frozenset[str] | None = None) -> Parsed:
    """A settings file's text, checked key by key (an empty or missing file is no settings);
    `only`: the keys read (another agent's file: its other keys are its own business)."""
    if text is None or not text.strip():
        return Parsed({}, {}, [])
    try:
        raw = json.loads(text)
    except ValueError as exc:
        return Parsed({}, {}, [f"{where}: not JSON: {exc}"])
    if only is not None and isinstance(raw, dict):
        raw = {k: v for k, v in raw.items() if k in only}
    good, problems = checked(raw, where)
    settings = Settings.model_validate(good)  # each key is valid on its own, and none depends on another
    data = settings.model_dump(mode="json", by_alias=True, exclude_unset=True)
    waiting = {key: data.get(key) for key in dict.fromkeys(path[0] for path in decisive(settings))}  # in the fields' order
    return Parsed(data, waiting, problems)


def fingerprint(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class SettingsFile:
    """One settings file, read again when its signature changes."""

    def __init__(self, path: Path, inside: Path | None, only: frozenset[str] | None = None):
        self.path = path
        self.inside = inside
        self.only = only
        self.data: dict[str, Any] = {}
        #: the part of `data` that decides what runs or where requests go
        self.waiting: dict[str, Any] = {}
        self.problems: list[str] = []
        self._signature: Signature | None | bool = False  # False: never read

    def stale(self) -> bool:
        return self._signature != signature(self.path)

    def load(self) -> None:
        """Read and check it (blocking): JSON, an object; a bad key is a problem naming it."""
        self._signature = signature(self.path)
        try:
            text = read_text(self.path, MAX_FILE_BYTES, inside=self.inside)
        except Refused as exc:
            text, refused = None, f"{self.path}: not read: {exc}"
        else:
            refused = None
        self.data, self.waiting, self.problems = parse(text, str(self.path), self.only)
        if refused:
            self.problems = [refused]


class Trust:
    """Which content of each workspace's settings file the user trusted (a JSON file of the user's)."""

    def __init__(self, path: Path):
        self.record = UserRecord(path)

    def trusted(self, workspace: Path, waiting: dict[str, Any]) -> bool:
        return self.record.load().get(str(workspace)) == fingerprint(waiting)

    def trust(self, workspace: Path, waiting: dict[str, Any]) -> None:
        self.record.update(lambda entries: entries.__setitem__(str(workspace), fingerprint(waiting)))


#: Claude Code's settings files: only their `hooks` are read.
CLAUDE_KEYS = frozenset({"hooks"})


class LayeredSettings:
    """The client's settings over the workspace's file over the global one; and the hooks of
    Claude Code's settings files (the workspace's `.claude/settings.json` and
    `settings.local.json`, which wait for trust like the workspace's own, and `~/.claude/`'s)."""

    def __init__(self, workspace: Path, global_dir: Path, claude_home: Path | None = None):
        self.workspace = workspace
        self.workspace_file = SettingsFile(workspace / ".modus" / "settings.json", inside=workspace)
        self.global_file = SettingsFile(global_dir / "settings.json", inside=None)
        claude = workspace / ".claude"
        self.claude_files = tuple(SettingsFile(claude / name, inside=workspace, only=CLAUDE_KEYS) for name in ("settings.json", "settings.local.json"))
        home = claude_home if claude_home is not None else claude_dir()
        self.claude_global = SettingsFile(home / "settings.json", inside=None, only=CLAUDE_KEYS)
        self.trust = Trust(global_dir / "trusted-workspaces.json")
        #: The workspace files' keys that wait for trust (empty: nothing waits).
        self.untrusted: dict[str, Any] = {}

    @property
    def files(self) -> tuple[SettingsFile, ...]:
        return (self.workspace_file, self.global_file, *self.claude_files, self.claude_global)

    def stale(self) -> bool:
        return any(f.stale() for f in self.files)

    def load(self) -> None:
        """Read the files that changed (blocking)."""
        for f in self.files:
            if f.stale():
                f.load()

    def waiting(self, modus: dict[str, Any]) -> dict[str, Any]:
        """What waits for the user's trust: the decisive keys of the workspace's settings file
        (`modus`), and the hooks of its `.claude/` files (named `hooks (<file>)`)."""
        extra = {f"hooks ({f.path.relative_to(self.workspace).as_posix()})": f.data["hooks"] for f in self.claude_files if f.data.get("hooks")}
        return {**modus, **extra}

    def hooks(self) -> list[tuple[str, Any]]:
        """(origin, hooks) of Claude Code's files that apply: `~/.claude/`'s, and the
        workspace's once trusted (whatever waits, waits whole)."""
        files = (self.claude_global,) if self.untrusted else (*self.claude_files, self.claude_global)
        return [(str(f.path), f.data["hooks"]) for f in files if f.data.get("hooks")]

    def effective(self, client: Settings) -> Settings:
        """The settings in effect: the keys the client set over the files over the defaults."""
        ours, waiting = self.workspace_file.data, self.waiting(self.workspace_file.waiting)
        self.untrusted = waiting if waiting and not self.trust.trusted(self.workspace, waiting) else {}
        workspace = {k: v for k, v in ours.items() if k not in self.untrusted}
        data = merged(client.model_dump(mode="json", by_alias=True, exclude_unset=True), merged(workspace, self.global_file.data))
        try:
            return Settings.model_validate(data)
        except ValidationError as exc:  # each layer was valid on its own: a merge gone wrong
            log.warning("the settings files do not combine (%s); the client's settings apply", exc.errors()[0]["msg"])
            return client

    @property
    def problems(self) -> list[str]:
        return [p for f in self.files for p in f.problems]

    def trust_workspace(self) -> list[str]:
        """The user trusts the workspace files' content as it is; returns what waited (its keys,
        `hooks (<file>)` for a `.claude/` file's), none when nothing did."""
        waiting = self.waiting(self.workspace_file.waiting)
        if waiting:
            self.trust.trust(self.workspace, waiting)
        return list(waiting)

    def trusted_text(self, text: str | None) -> bool:
        """Whether this content of the workspace's file applies whole: nothing in it decides what
        runs, or the user trusted what does (as it is in this very text)."""
        waiting = self.waiting(parse(text, "").waiting)
        return not waiting or self.trust.trusted(self.workspace, waiting)

    def trust_text(self, text: str) -> None:
        """The user trusts this content of the workspace's file (a rule they approved, written)."""
        waiting = self.waiting(parse(text, "").waiting)
        if waiting:
            self.trust.trust(self.workspace, waiting)
