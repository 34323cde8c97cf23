"""The LSP side of Modus: the pygls server, its Host, and the transports."""

from .run import serve_stdio, serve_tcp, serve_ws
from .server import ModusServer

__all__ = ["ModusServer", "serve_stdio", "serve_tcp", "serve_ws"]
