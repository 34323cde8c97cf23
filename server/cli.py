"""`modus` / `python -m server`: start the language server, or run the demo."""

from __future__ import annotations

import argparse
import sys

from . import __version__


def _address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host or "127.0.0.1", int(port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="modus",
        description="Modus: a language server (LSP over stdio by default) for mode-aware coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"modus {__version__}")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="run the language server (the default)")
    for p in (parser, serve):
        group = p.add_mutually_exclusive_group()
        group.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout (the default)")
        group.add_argument("--tcp", metavar="HOST:PORT", type=_address, help="listen for one client on TCP")
        group.add_argument("--ws", metavar="HOST:PORT", type=_address, help="listen for one client on WebSocket")
        p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    sub.add_parser("demo", help="run the offline demo: a scripted session against a real server")
    args = parser.parse_args(argv)

    if args.command == "demo":
        from .demo import main as demo

        return demo()

    from .lsp import ModusServer, serve_stdio, serve_tcp, serve_ws
    from .lsp.run import configure_logging

    server = ModusServer()
    configure_logging(server, args.log_level)
    if args.tcp:
        return serve_tcp(server, *args.tcp)
    if args.ws:
        return serve_ws(server, *args.ws)
    return serve_stdio(server)


if __name__ == "__main__":
    sys.exit(main())
