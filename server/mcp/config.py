"""Which MCP servers there are: the workspace's files, then the user's own (global) file.

`<workspace>/.modus/mcp.json`, `<workspace>/.roo/mcp.json`, `<workspace>/.mcp.json` and
`$XDG_CONFIG_HOME/modus/mcp.json` (beside the global modes file), in that order: the first file
that names a server wins. The shape is Roo's and Claude Code's:

    {"mcpServers": {"docs": {"command": "npx", "args": ["-y", "docs-mcp"], "env": {...},
                             "cwd": "tools", "disabled": false, "alwaysAllow": ["search"],
                             "timeout": 60},
                    "remote": {"type": "streamable-http", "url": "https://...", "headers": {...}}}}

A workspace file is a cloned repository's: it is read as untrusted input (server.untrusted:
a regular file inside the workspace, bounded, off the loop) and checked entry by entry. A bad
entry is reported naming the file and the key, and stays in the list as a server that cannot
start (so its name is not taken by a later file behind the user's back); the others load.
Keys this file does not know (other tools' own settings) are left alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ..untrusted import Refused, Signature, read_text, signature
from . import config_paths, global_mcp_path

#: An MCP settings file larger than this is not read.
MAX_FILE_BYTES = 256 * 1024
#: The most servers one file may configure (the rest are reported and left out).
MAX_SERVERS = 64
#: `timeout`: seconds a call may take (Roo's bounds and default).
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0

Transport = Literal["stdio", "streamable-http", "sse"]
#: `type` values and the transport each means (Claude Code writes "http").
TYPES: dict[str, Transport] = {"stdio": "stdio", "streamable-http": "streamable-http", "http": "streamable-http", "sse": "sse"}


class ConfigFile(NamedTuple):
    path: Path
    #: "workspace": the repository's (untrusted: its servers start once the user agreed);
    #: "global": the user's own; "client": given by the editor (an ACP client's session/new).
    origin: Literal["workspace", "global", "client"]


def config_files(workspace: Path, global_path: Path) -> tuple[ConfigFile, ...]:
    """The MCP settings files, highest precedence first."""
    *ours, users = config_paths(workspace, global_path)
    return (*(ConfigFile(path, "workspace") for path in ours), ConfigFile(users, "global"))


@dataclass(frozen=True)
class ServerConfig:
    name: str
    file: ConfigFile
    transport: Transport = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # secrets: never shown
    cwd: str | None = None
    url: str = ""
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    disabled: bool = False
    always_allow: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    #: Why the entry cannot be used (it names the file and the key), None when it is fine.
    problem: str | None = field(default=None, compare=False)

    @property
    def trusted(self) -> bool:
        """The user's own file, or the user's editor: its servers start without asking."""
        return self.file.origin in ("global", "client")

    def fingerprint(self) -> str:
        """What the server is: the command line, its environment and folder, or the address and
        headers. An approval is for one fingerprint; a changed command asks again."""
        import hashlib

        what = [self.transport, self.command, list(self.args), sorted(self.env), self.cwd, self.url, sorted(self.headers)]
        return hashlib.sha256(json.dumps(what).encode()).hexdigest()[:32]

    def command_line(self) -> str:
        import shlex

        return shlex.join([self.command, *self.args])

    def where(self, workspace: Path) -> Path:
        """The folder a stdio server runs in: `cwd` (relative to the workspace), else the workspace."""
        if not self.cwd:
            return workspace
        return workspace / Path(self.cwd).expanduser()


class Loaded(NamedTuple):
    servers: tuple[ServerConfig, ...]
    problems: tuple[str, ...]


class _Bad(Exception):
    """One key of an entry is wrong; the message names it."""


def parse_file(text: str, file: ConfigFile) -> Loaded:
    """The servers of one file, each entry checked on its own."""
    where = str(file.path)
    try:
        data = json.loads(text)
    except ValueError as exc:
        return Loaded((), (f"{where}: not valid JSON: {exc}",))
    if not isinstance(data, dict):
        return Loaded((), (f"{where}: must be a JSON object with the key mcpServers, got {_kind(data)}",))
    entries = data.get("mcpServers")
    if entries is None:
        return Loaded((), () if not data else (f"{where}: no mcpServers object: nothing to load",))
    if not isinstance(entries, dict):
        return Loaded((), (f"{where}: mcpServers: must be an object of servers by name, got {_kind(entries)}",))
    servers: list[ServerConfig] = []
    problems: list[str] = []
    for index, (name, entry) in enumerate(entries.items()):
        if index == MAX_SERVERS:
            problems.append(f"{where}: mcpServers: more than {MAX_SERVERS} servers; the rest are not loaded")
            break
        key = f"mcpServers.{name}"
        if not name.strip() or len(name) > 100:
            problems.append(f"{where}: {key}: a server name must be 1 to 100 characters, not blank")
            continue
        try:
            servers.append(_entry(name, entry, file, key))
        except _Bad as exc:
            problem = f"{where}: {exc}"
            problems.append(problem)
            servers.append(ServerConfig(name, file, problem=problem))
    return Loaded(tuple(servers), tuple(problems))


def load_file(file: ConfigFile, workspace: Path) -> Loaded:
    """Read and parse one file (blocking; run it off the loop). A workspace file must be a
    regular file, really inside the workspace; no file, no servers."""
    try:
        text = read_text(file.path, MAX_FILE_BYTES, inside=workspace if file.origin == "workspace" else None)
    except Refused as exc:
        return Loaded((), (f"{file.path}: not read: {exc}",))
    if text is None:
        return Loaded((), ())
    return parse_file(text, file)


def merge(loaded: list[Loaded]) -> tuple[ServerConfig, ...]:
    """The servers of all files, highest precedence first: the first file that names a server wins."""
    taken: set[str] = set()
    out: list[ServerConfig] = []
    for result in loaded:
        for server in result.servers:
            if server.name not in taken:
                taken.add(server.name)
                out.append(server)
    return tuple(out)


def file_signatures(files: tuple[ConfigFile, ...]) -> tuple[Signature | None, ...]:
    return tuple(signature(f.path) for f in files)


# ---------------------------------------------------------------- one entry


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def _entry(name: str, entry: Any, file: ConfigFile, key: str) -> ServerConfig:
    if not isinstance(entry, dict):
        raise _Bad(f"{key}: must be an object, got {_kind(entry)}")
    kind = entry.get("type")
    if kind is not None and kind not in TYPES:
        raise _Bad(f"{key}.type: must be one of {', '.join(TYPES)}, got {json.dumps(kind)}")
    transport: Transport = TYPES[kind] if kind is not None else ("stdio" if "command" in entry or "url" not in entry else "streamable-http")
    common = dict(
        disabled=_bool(entry, "disabled", key),
        always_allow=_strings(entry, "alwaysAllow", key),
        timeout=_timeout(entry, key),
    )
    if transport == "stdio":
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise _Bad(f"{key}.command: a stdio server needs a command (a non-empty string)" + _got(entry, "command"))
        if "url" in entry:
            raise _Bad(f"{key}: give either command (a stdio server) or url (with type streamable-http or sse), not both")
        cwd = entry.get("cwd")
        if cwd is not None and (not isinstance(cwd, str) or not cwd.strip()):
            raise _Bad(f"{key}.cwd: must be a folder path (a non-empty string), got {_kind(cwd)}")
        return ServerConfig(
            name, file, "stdio", command=command, args=_strings(entry, "args", key), env=_pairs(entry, "env", key), cwd=cwd, **common
        )
    url = entry.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise _Bad(f"{key}.url: a {transport} server needs an http:// or https:// URL" + _got(entry, "url"))
    if "command" in entry:
        raise _Bad(f"{key}: give either command (a stdio server) or url (with type streamable-http or sse), not both")
    return ServerConfig(name, file, transport, url=url, headers=_pairs(entry, "headers", key), **common)


def _got(entry: dict, name: str) -> str:
    return f", got {_kind(entry[name])}" if name in entry else ""


def _bool(entry: dict, name: str, key: str) -> bool:
    value = entry.get(name, False)
    if not isinstance(value, bool):
        raise _Bad(f"{key}.{name}: must be true or false, got {_kind(value)}")
    return value


def _strings(entry: dict, name: str, key: str) -> tuple[str, ...]:
    value = entry.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Bad(f"{key}.{name}: must be a list of strings, got {_kind(value)}")
    return tuple(value)


def _pairs(entry: dict, name: str, key: str) -> tuple[tuple[str, str], ...]:
    """`env`, `headers`: an object of strings (the values are never shown: they hold secrets)."""
    value = entry.get(name, {})
    if not isinstance(value, dict):
        raise _Bad(f"{key}.{name}: must be an object of strings, got {_kind(value)}")
    for k, v in value.items():
        if not isinstance(v, str):
            raise _Bad(f"{key}.{name}.{k}: must be a string, got {_kind(v)}")
        if "\0" in k or "\0" in v or (name == "env" and ("=" in k or not k)):
            raise _Bad(f"{key}.{name}.{k}: not a valid {'variable' if name == 'env' else 'header'} name or value")
    return tuple(value.items())


def _timeout(entry: dict, key: str) -> float:
    value = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_TIMEOUT:
        raise _Bad(f"{key}.timeout: must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, got {json.dumps(value)}")
    return float(value)


__all__ = ["ConfigFile", "Loaded", "ServerConfig", "config_files", "global_mcp_path", "load_file", "merge", "parse_file"]
