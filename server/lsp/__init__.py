"""The LSP side of Modus: the pygls server, its Host, and the transports (listen.py: TCP, WebSocket)."""

from .run import serve_stdio
from .server import ModusServer

__all__ = ["ModusServer", "serve_stdio"]
