"""`modus` / `python -m server`: start the language server, or run the demo."""

from __future__ import annotations

import argparse
import gc
import os
import sys

from . import ADDED_ENV, __version__


#: While the server starts, the cyclic garbage collector runs less often: start-up makes a great
#: many objects that all live for good (classes, modules), and collecting young garbage every
#: 700 allocations costs more than the little it finds. (Switching it off would keep that
#: garbage, several MB, for good.)
START_GC = (5000, 50, 1000)
DEFAULT_GC = gc.get_threshold()


def _lean_start() -> None:
    """No pydantic plugin runs in a process that holds the user's keys and code, so their
    discovery (an entry-point scan) is skipped; and the garbage collector waits (START_GC)."""
    gc.set_threshold(*START_GC)
    if "PYDANTIC_DISABLE_PLUGINS" not in os.environ:
        os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
        ADDED_ENV.add("PYDANTIC_DISABLE_PLUGINS")


def started() -> None:
    """The end of start-up (the session runs): what exists now lives for good (gc.freeze), and
    the garbage collector goes back to its usual pace."""
    gc.freeze()
    gc.set_threshold(*DEFAULT_GC)


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

    _lean_start()
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
