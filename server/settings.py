"""The settings in effect: the client's (`initializationOptions.modus`, didChangeConfiguration)
over the workspace's `.modus/settings.json` over the global `$XDG_CONFIG_HOME/modus/settings.json`
over the defaults; objects merge key by key (PROTOCOL.md "Settings files").

A bad key is reported naming its file (or `modus` for the client's) and the key, and left out;
the rest applies. The files are read again when they change.

The workspace's file comes with the repository, so it is untrusted: what would loosen the
user's control or send their keys elsewhere (`yolo`, `autoApprove`, `stateDir`, a model's or an
agent's `baseUrl`/`apiKeyEnv`) applies only once the user trusted that content ("Modus: Trust
Workspace Settings", `modus.trustWorkspaceSettings`). The trust is kept beside the global
settings, outside the workspace (a repository could ship a state folder), as a hash of those
keys per workspace: when they change, they wait for the user again. Rules Modus writes itself
on the user's "always allow" keep the file trusted.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from protocol import Settings

from .untrusted import Refused, Signature, read_text, signature

log = logging.getLogger(__name__)

#: A settings file larger than this is not read.
MAX_FILE_BYTES = 256 * 1024
#: Top-level keys of the workspace's file that wait for the user's trust.
SENSITIVE_KEYS = ("yolo", "autoApprove", "stateDir")
#: Keys that, anywhere under `models` or `agents`, make that whole key wait for trust.
ENDPOINT_KEYS = ("baseUrl", "apiKeyEnv")


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


def sensitive(data: dict[str, Any]) -> dict[str, Any]:
    """The part of a workspace file that waits for the user's trust."""
    out = {k: data[k] for k in SENSITIVE_KEYS if k in data}
    for key in ("models", "agents"):
        if key in data and _mentions(data[key], ENDPOINT_KEYS):
            out[key] = data[key]
    return out


def _mentions(value: Any, keys: tuple[str, ...]) -> bool:
    if isinstance(value, dict):
        return any(k in keys or _mentions(v, keys) for k, v in value.items())
    if isinstance(value, list):
        return any(_mentions(v, keys) for v in value)
    return False


def fingerprint(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class SettingsFile:
    """One settings file, read again when its signature changes."""

    def __init__(self, path: Path, inside: Path | None):
        self.path = path
        self.inside = inside
        self.data: dict[str, Any] = {}
        self.problems: list[str] = []
        self._signature: Signature | None | bool = False  # False: never read

    def stale(self) -> bool:
        return self._signature != signature(self.path)

    def load(self) -> None:
        """Read and check it (blocking): JSON, an object; a bad key is a problem naming it."""
        self._signature = signature(self.path)
        self.data, self.problems = {}, []
        try:
            text = read_text(self.path, MAX_FILE_BYTES, inside=self.inside)
        except Refused as exc:
            self.problems = [f"{self.path}: not read: {exc}"]
            return
        if text is None or not text.strip():
            return
        try:
            data = json.loads(text)
        except ValueError as exc:
            self.problems = [f"{self.path}: not JSON: {exc}"]
            return
        self.data, self.problems = checked(data, str(self.path))


class Trust:
    """Which content of each workspace's settings file the user trusted (a JSON file of the user's)."""

    def __init__(self, path: Path):
        self.path = path

    def _all(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def trusted(self, workspace: Path, data: dict[str, Any]) -> bool:
        return self._all().get(str(workspace)) == fingerprint(data)

    def trust(self, workspace: Path, data: dict[str, Any]) -> None:
        entries = self._all()
        entries[str(workspace)] = fingerprint(data)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(entries, indent=2, sort_keys=True), encoding="utf-8")
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)


class LayeredSettings:
    """The client's settings over the workspace's file over the global one."""

    def __init__(self, workspace: Path, global_dir: Path):
        self.workspace = workspace
        self.workspace_file = SettingsFile(workspace / ".modus" / "settings.json", inside=workspace)
        self.global_file = SettingsFile(global_dir / "settings.json", inside=None)
        self.trust = Trust(global_dir / "trusted-workspaces.json")
        #: The workspace file's keys that wait for trust (empty: nothing waits).
        self.untrusted: dict[str, Any] = {}

    def stale(self) -> bool:
        return self.workspace_file.stale() or self.global_file.stale()

    def load(self) -> None:
        """Read the files that changed (blocking)."""
        for f in (self.workspace_file, self.global_file):
            if f.stale():
                f.load()

    def effective(self, client: Settings) -> Settings:
        """The settings in effect: the keys the client set over the files over the defaults."""
        ours = self.workspace_file.data
        waiting = sensitive(ours)
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
        return self.workspace_file.problems + self.global_file.problems

    def trust_workspace(self) -> bool:
        """The user trusts the workspace file's content as it is; False when nothing waited."""
        waiting = sensitive(self.workspace_file.data)
        if not waiting:
            return False
        self.trust.trust(self.workspace, waiting)
        return True
