"""MCP servers as tools: their configuration (config.py), their lives and the calls to them
(hub.py), one connection on the official SDK (connection.py), and what goes in and comes out of
a call (results.py).

Importing this package costs nothing but these few names: a session looks for the settings
files with `config_paths` (a few stat calls) and loads the rest only when one exists; the SDK
itself loads when a server starts."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any


def config_paths(workspace: Path, global_path: Path) -> tuple[Path, ...]:
    """The MCP settings files, highest precedence first: the workspace's three, then the user's."""
    return (workspace / ".modus" / "mcp.json", workspace / ".roo" / "mcp.json", workspace / ".mcp.json", global_path)


def global_mcp_path(global_modes: Path | None = None) -> Path:
    """`mcp.json` beside the global modes file (`$XDG_CONFIG_HOME/modus/`)."""
    from ..modes import global_modes_path

    return (global_modes or global_modes_path()).parent / "mcp.json"


_LAZY = {"McpHub": ".hub", "McpServerView": ".hub", "McpToolView": ".hub", "ServerConfig": ".config"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["McpHub", "McpServerView", "McpToolView", "ServerConfig", "config_paths", "global_mcp_path"]
