"""A small MCP server for the tests, on the official SDK (MCPServer).

    python toolbox.py [NAME]                    over stdio
    python toolbox.py [NAME] --http             over streamable HTTP on 127.0.0.1, a free port
                                                (/mcp); its first line on stdout is `PORT <n>`
    python toolbox.py [NAME] --sse              the same over the older SSE transport (/sse)

Its tools cover what a client must cope with: a plain call, a typed schema, a crash in the
middle of a call, a call that never ends, a flood on stderr, a result too large, an image.
"""

from __future__ import annotations

import os
import socket
import sys

import anyio
from mcp.server.mcpserver import Image, MCPServer

NAME = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "toolbox"
server = MCPServer(NAME)

if os.environ.get("TOOLBOX_MARKER"):  # proof that it started, with the environment it was given
    with open(os.environ["TOOLBOX_MARKER"], "a") as marker:
        marker.write(f"{os.getpid()} {os.getcwd()}\n")


@server.tool(description="Say the text back.")
def echo(text: str) -> str:
    return f"{NAME} says: {text}"


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> str:
    return str(a + b)


@server.tool(description="The process id of this server.")
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Write a message on stderr and exit at once, in the middle of the call.")
def crash(message: str) -> str:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool(description="Never answer.")
async def hang() -> str:
    await anyio.sleep_forever()
    return "never"


@server.tool(description="Write `megabytes` MiB on stderr, then answer.")
def flood(megabytes: int) -> str:
    line = "noise " * 170 + "\n"  # about 1 KiB
    for _ in range(megabytes * 1024):
        sys.stderr.write(line)
    sys.stderr.write("the flood is over\n")
    sys.stderr.flush()
    return "flooded"


@server.tool(description="A text of `chars` characters.")
def big(chars: int) -> str:
    return "x" * chars


@server.tool(description="A tiny PNG and a caption.")
def picture() -> list:
    return ["a red dot", Image(data=b"\x89PNG" + b"\0" * 2044, format="png")]


@server.resource("notes://readme", name="readme", description="The readme")
def readme() -> str:
    return f"The notes of {NAME}."


def serve_http(app) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # connections wait in the backlog until uvicorn takes them: the port works once printed
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning")
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    if "--http" in sys.argv:
        serve_http(server.streamable_http_app())
    elif "--sse" in sys.argv:
        serve_http(server.sse_app())
    else:
        server.run()
