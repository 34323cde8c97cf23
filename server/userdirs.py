"""The user's own folders for Modus, which no repository can write: the configuration
(`$XDG_CONFIG_HOME/modus`: global settings, modes, MCP servers, workspace trust) and the state
(`$XDG_STATE_HOME/modus`: the approvals the user gave per workspace, the checkpoints' shadow
repositories, listener tokens). Elsewhere than Linux, the platform's folders (platformdirs costs a
few ms of start-up: not on Linux)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _xdg(variable: str, default: str) -> Path:
    return Path(os.environ.get(variable, "").strip() or os.path.expanduser(default)) / "modus"


def config_dir() -> Path:
    """`$XDG_CONFIG_HOME/modus` (`~/.config/modus`)."""
    if sys.platform.startswith("linux"):
        return _xdg("XDG_CONFIG_HOME", "~/.config")
    import platformdirs

    return Path(platformdirs.user_config_dir("modus", appauthor=False))


def state_dir() -> Path:
    """`$XDG_STATE_HOME/modus` (`~/.local/state/modus`)."""
    if sys.platform.startswith("linux"):
        return _xdg("XDG_STATE_HOME", "~/.local/state")
    import platformdirs

    return Path(platformdirs.user_state_dir("modus", appauthor=False))
