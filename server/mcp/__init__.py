"""MCP servers as tools: their configuration (config.py), their lives and the calls to them
(hub.py), one connection on the official SDK (connection.py), and what goes in and comes out of
a call (results.py). The SDK itself is loaded only when a server starts."""

from .config import ServerConfig, global_mcp_path
from .hub import McpHub, McpServerView, McpToolView

__all__ = ["McpHub", "McpServerView", "McpToolView", "ServerConfig", "global_mcp_path"]
