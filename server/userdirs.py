"""The user's own folders for Modus, which no repository can write: the configuration
(`$XDG_CONFIG_HOME/modus`: global settings, modes, MCP servers, workspace trust) and the state
(`$XDG_STATE_HOME/modus`: the approvals the user gave per workspace, the checkpoints' shadow
repositories, listener tokens). Elsewhere than Linux, the platform's folders (platformdirs costs a
few ms of start-up: not on Linux)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

try:
    import fcntl
except ImportError:  # Windows: no lock between processes
    fcntl = None  # type: ignore[assignment]


def _xdg(variable: str, default: str) -> Path:
    return Path(os.environ.get(variable, "").strip() or os.path.expanduser(default)) / "modus"


def config_dir() -> Path:
    """`$XDG_CONFIG_HOME/modus` (`~/.config/modus`)."""
    if sys.platform.startswith("linux"):
        return _xdg("XDG_CONFIG_HOME", "~/.config")
    import platformdirs

    return Path(platformdirs.user_config_dir("modus", appauthor=False))


def claude_dir() -> Path:
    """Claude Code's folder of the user (`$CLAUDE_CONFIG_DIR`, else `~/.claude`): its settings'
    hooks and its skills are read from there."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR", "").strip() or os.path.expanduser("~/.claude"))


def state_dir() -> Path:
    """`$XDG_STATE_HOME/modus` (`~/.local/state/modus`)."""
    if sys.platform.startswith("linux"):
        return _xdg("XDG_STATE_HOME", "~/.local/state")
    import platformdirs

    return Path(platformdirs.user_state_dir("modus", appauthor=False))


class UserRecord:
    """A small JSON object in a file of the user's own (what they trusted or approved, per
    workspace): read whole, changed under a lock, written atomically and readable by them only.
    A file that is missing, unreadable or not an object reads as empty (asking again is safe)."""

    #: A larger file is not read (a record holds a few entries per workspace).
    MAX_BYTES = 4 * 1024 * 1024

    def __init__(self, path: Path):
        self.path = path

    def load(self) -> dict[str, Any]:
        try:
            with open(self.path, "rb") as f:
                data = json.loads(f.read(self.MAX_BYTES))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def update(self, change: Callable[[dict[str, Any]], Any]) -> None:
        """Apply `change` to the record as it is on disk now, and write it back."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(self.path.with_name(f".{self.path.name}.lock"), "a") as lock:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)  # two servers of one user: neither loses the other's entry
            entries = self.load()
            change(entries)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entries, f, indent=2, sort_keys=True)
            os.replace(tmp, self.path)
