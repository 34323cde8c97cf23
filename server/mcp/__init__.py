"""MCP servers as tools: their configuration (config.py)."""

from .config import ServerConfig, global_mcp_path

__all__ = ["ServerConfig", "global_mcp_path"]
