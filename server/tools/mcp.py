"""The mcp group: use_mcp_tool and access_mcp_resource (Roo's names), on the session's MCP hub.

The gate has already checked that the mode may use the server. Here, before anything is asked:
the server is known (else the error names the configured ones), started if it had not been,
has the tool, and the arguments fit the tool's input schema (else InvalidParams naming the
field). A tool its server's `alwaysAllow` lists runs without the approval.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import field_validator
from pydantic_core import PydanticCustomError

from ..errors import InvalidParams, ToolError
from .base import Params, Prepared, ToolContext, ToolSpec
from .flow import Required

if TYPE_CHECKING:
    from ..workspace import WorkspacePath

#: What the approval shows of a call's arguments.
DETAIL_CHARS = 4000


class UseMcpToolParams(Params):
    server_name: Required
    tool_name: Required
    #: an object, or a JSON string of one (the XML form); none: {}
    arguments: dict[str, Any] | None = None

    @field_validator("arguments", mode="before")
    @classmethod
    def _json_object(cls, value: Any) -> Any:
        if isinstance(value, str):
            if not value.strip():
                return None
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise PydanticCustomError("json_object", "must be a JSON object, and this is not JSON ({reason})", {"reason": str(exc)})
        if value is not None and not isinstance(value, dict):
            raise PydanticCustomError("json_object", "must be a JSON object of the tool's arguments, got {kind}", {"kind": type(value).__name__})
        return value


class AccessMcpResourceParams(Params):
    server_name: Required
    uri: Required


def _allowed(ctx: ToolContext) -> tuple[str, ...] | None:
    group = ctx.task.mode.group("mcp")
    return group.servers if group is not None else None


async def _use_mcp_tool(ctx: ToolContext, p: UseMcpToolParams, paths: list[WorkspacePath]) -> Prepared:
    hub = ctx.ports.config.mcp
    server = hub.server(p.server_name, _allowed(ctx))
    await hub.connected(server)
    tool = server.tools.get(p.tool_name)
    if tool is None:
        listed = ", ".join(server.tools) or "none"
        raise ToolError(f"The MCP server '{p.server_name}' has no tool named '{p.tool_name}'. Its tools: {listed}.")
    arguments = p.arguments or {}
    from ..mcp.results import check_arguments

    problem = check_arguments(tool.input_schema, arguments)
    if problem is not None:
        raise InvalidParams(
            f"Invalid arguments for the tool '{p.tool_name}' of the MCP server '{p.server_name}': {problem}. "
            "Please retry with arguments that match its input schema."
        )

    async def run() -> str:
        return await hub.call_tool(server, p.tool_name, arguments)

    detail = json.dumps(arguments, indent=2, ensure_ascii=False)
    if len(detail) > DETAIL_CHARS:
        detail = detail[:DETAIL_CHARS] + "\n…"
    return Prepared(
        run,
        title=f"Call '{p.tool_name}' of the MCP server '{p.server_name}'?",
        detail=detail,
        preapproved=hub.always_allowed(server, p.tool_name),
    )


async def _access_mcp_resource(ctx: ToolContext, p: AccessMcpResourceParams, paths: list[WorkspacePath]) -> Prepared:
    hub = ctx.ports.config.mcp
    server = hub.server(p.server_name, _allowed(ctx))
    await hub.connected(server)

    async def run() -> str:
        return await hub.read_resource(server, p.uri)

    return Prepared(run, title=f"Read {p.uri} from the MCP server '{p.server_name}'?", detail=p.uri)


TOOLS = (
    ToolSpec(
        "use_mcp_tool",
        "Call a tool of an MCP server: server_name, tool_name, and arguments (a JSON object that "
        "matches the tool's input schema).",
        UseMcpToolParams,
        _use_mcp_tool,
        group="mcp",
        approval="mcp",
    ),
    ToolSpec(
        "access_mcp_resource",
        "Read a resource of an MCP server: server_name and the resource's uri.",
        AccessMcpResourceParams,
        _access_mcp_resource,
        group="mcp",
        approval="mcp",
    ),
)
