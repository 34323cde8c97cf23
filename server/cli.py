"""`modus` / `python -m server`: start the language server, the ACP agent (`acp`), or run the demo."""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING
from pathlib import Path

from . import __version__
from .startup import lean_start

if TYPE_CHECKING:
    import argparse


def _address(value: str) -> tuple[str, int]:
    """`[HOST:]PORT`; loopback when no host is given. IPv6 hosts go in brackets: `[::1]:2087`."""
    host, _, port = value.rpartition(":")
    if not port.isdigit() or int(port) > 65535:
        import argparse

        raise argparse.ArgumentTypeError(f"expected [HOST:]PORT, got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def _token(args, parser: argparse.ArgumentParser):
    """The token the user gave (--token-file, else $MODUS_TOKEN), or a new one."""
    from .lsp.listen import Token

    if args.token_file is not None:
        path: Path = args.token_file
        try:
            value = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            parser.error(f"--token-file {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})")
        if not value:
            parser.error(f"--token-file {path}: the file is empty")
        if path.stat().st_mode & 0o077:
            logging.getLogger(__name__).warning("--token-file %s can be read by other users: chmod 600 it", path)
        return Token(value, str(path))
    if value := os.environ.get("MODUS_TOKEN", "").strip():
        return Token(value, "$MODUS_TOKEN")
    return Token()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:  # what editors run: stdio, the default; no argument parser needed to start it
        return _serve_stdio("info")
    import argparse

    parser = argparse.ArgumentParser(
        prog="modus",
        description="Modus: a language server (LSP over stdio by default) for mode-aware coding agents.",
        epilog="TCP and WebSocket clients must present a token: MODUS_TOKEN, --token-file, or a new one "
        "written to a private file under the user's state directory (named when the server starts).",
    )
    from protocol.names import PROTOCOL_VERSION

    parser.add_argument("--version", action="version", version=f"modus {__version__} (protocol {PROTOCOL_VERSION})")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="run the language server (the default)")
    for p in (parser, serve):
        group = p.add_mutually_exclusive_group()
        group.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout (the default)")
        group.add_argument("--tcp", metavar="[HOST:]PORT", type=_address,
                           help="listen on TCP, for one client at a time (host: 127.0.0.1 unless given)")
        group.add_argument("--ws", metavar="[HOST:]PORT", type=_address,
                           help="listen on WebSocket, for one client at a time (host: 127.0.0.1 unless given)")
        p.add_argument("--token-file", metavar="PATH", type=Path,
                       help="--tcp/--ws: read the clients' token from this file (never give a token on the command line)")
        p.add_argument("--allow-origin", metavar="ORIGIN", action="append",
                       help="--ws: a web page origin allowed to connect, e.g. http://localhost:3000 (repeatable); "
                       "requests without an Origin header are always allowed")
        p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    acp = sub.add_parser("acp", help="run as an Agent Client Protocol agent on stdio (Zed, JetBrains, ...)")
    acp.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    demo = sub.add_parser("demo", help="run the offline demo: a scripted session against a real server")
    demo.add_argument("--acp", action="store_true", help="drive `modus acp` (the Agent Client Protocol) instead of the language server")
    demo.add_argument("--space", action="store_true",
                      help="a team space: two members and an agent on a PostgreSQL the demo starts and removes (needs initdb and pg_ctl)")
    space = sub.add_parser("space", help="team spaces on PostgreSQL (see `modus space init --help`)",
                           description="Team spaces: the shared state of a team's conversations, on PostgreSQL.")
    space_sub = space.add_subparsers(dest="space_command", required=True, metavar="{init}")
    init = space_sub.add_parser(
        "init", help="create the space's schema in a PostgreSQL database, or bring it up to date",
        description="Create the space's tables in the database of URL, or apply the migrations it lacks (safe to run "
        "again, and while servers are attached). The database must exist; the user needs the right to create tables in it.",
        epilog="The password: in the URL, in $PGPASSWORD or ~/.pgpass (libpq's own), or in the variable named by "
        "--password-env. It is never printed.",
    )
    init.add_argument("url", metavar="URL", help="postgresql://[user[:password]@]host[:port]/database")
    init.add_argument("--password-env", metavar="NAME", help="read the password from this environment variable")
    args = parser.parse_args(argv)

    if args.command == "space":
        return _space_init(args.url, args.password_env)
    if args.command == "demo":
        if args.space:
            from .demo.space import main as demo_space

            return demo_space()
        if args.acp:
            from .demo.acp import main as demo_acp

            return demo_acp()
        from .demo import main as demo

        return demo()
    if args.command == "acp":
        lean_start()
        from .acp.run import serve_stdio

        return serve_stdio(args.log_level)

    if args.allow_origin and not args.ws:
        parser.error("--allow-origin applies to --ws only")
    if args.token_file is not None and not (args.tcp or args.ws):
        parser.error("--token-file applies to --tcp and --ws only (stdio needs no token)")

    if not (args.tcp or args.ws):
        return _serve_stdio(args.log_level)
    lean_start()
    from .lsp.listen import serve_tcp, serve_ws
    from .lsp.run import configure_logging

    configure_logging(args.log_level)
    if args.tcp:
        return serve_tcp(*args.tcp, _token(args, parser))
    return serve_ws(*args.ws, _token(args, parser), args.allow_origin or [])


def _space_init(url: str, password_env: str | None) -> int:
    """`modus space init URL`: the schema created or migrated; what was done, or why not."""
    from .state.pg import SpaceUnreachable, where

    out = sys.stdout
    password = None
    if password_env is not None:
        password = os.environ.get(password_env)
        if password is None:
            print(f"modus space init: ${password_env} is not set (--password-env)", file=sys.stderr)
            return 2
    if not url.startswith(("postgresql://", "postgres://")):
        print(f"modus space init: expected a postgresql:// URL, got one that starts {url.split(':', 1)[0]!r}", file=sys.stderr)
        return 2
    try:
        from .state.pg.migrations import SpaceTooNew
        from .state.pg.store import SpaceStore

        schema = SpaceStore(url, password=password, min_size=0, max_size=1)
    except (SpaceUnreachable, SpaceTooNew) as exc:
        print(f"modus space init: {exc}", file=sys.stderr)
        return 1
    schema.close()
    found, now = schema.migrated
    place = where(url)
    if found == now:
        print(f"The space at {place} is up to date (schema version {now}): nothing to do.", file=out)
    elif found == 0:
        print(f"Created the space's schema at {place}: migrations 1 to {now} applied (schema version {now}).", file=out)
    else:
        print(f"Migrated the space at {place} from schema version {found} to {now}.", file=out)
    return 0


def _serve_stdio(log_level: str) -> int:
    lean_start()
    from .lsp.run import configure_logging, serve_stdio

    configure_logging(log_level)
    return serve_stdio()


if __name__ == "__main__":
    sys.exit(main())
