"""The demo's MCP server: a tiny documentation lookup over stdio, on the official `mcp` SDK.

    python -m server.demo.docs_server
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

PAGES = {
    "argparse": "argparse: parser.add_argument('--shout', action='store_true') adds a flag that is False unless given.",
    "str.upper": "str.upper(): a copy of the string with every cased character in upper case.",
}

server = MCPServer("docs")


@server.tool(description="Look up a Python documentation topic (e.g. argparse, str.upper).")
def lookup(topic: str) -> str:
    return PAGES.get(topic, f"No page for {topic!r}; topics: {', '.join(PAGES)}.")


if __name__ == "__main__":
    server.run()
