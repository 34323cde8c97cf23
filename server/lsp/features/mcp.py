"""MCP servers: `modus/mcp/list` (each server's state, tools and resources) and the command
`modus.mcp.restart [name]` (one server, or all; answers with the list)."""

from __future__ import annotations

from protocol import names
from protocol.names import Command

from ...errors import BadRequest
from .requests import Routes


def register(routes: Routes) -> None:
    routes.request(names.MCP_LIST, lambda s, p: s.mcp_list())
    routes.command(Command.MCP_RESTART, _restart)


async def _restart(session, args):
    name = args[0] if args else None
    if name is not None and not isinstance(name, str):
        raise BadRequest(f"name: must be the name of an MCP server (a string), got {type(name).__name__}")
    return (await session.mcp_restart(name)).wire()
