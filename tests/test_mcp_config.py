"""MCP settings files: the shape of Roo's and Claude Code's, checked entry by entry (a bad entry
named by file and key, the others loaded), the first file that names a server wins, and a
workspace file read as untrusted input."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from server.mcp import global_mcp_path
from server.mcp.config import ConfigFile, ServerConfig, config_files, load_file, merge, parse_file

WS = ConfigFile(Path("/ws/.modus/mcp.json"), "workspace")


def parse(servers) -> tuple[list[ServerConfig], list[str]]:
    loaded = parse_file(json.dumps({"mcpServers": servers}), WS)
    return list(loaded.servers), list(loaded.problems)


def test_a_stdio_and_the_http_entries_as_they_are_written():
    servers, problems = parse(
        {
            "docs": {"command": "npx", "args": ["-y", "docs-mcp"], "env": {"TOKEN": "s3cret"}, "cwd": "tools",
                     "alwaysAllow": ["search"], "timeout": 5, "watchPaths": ["x"]},
            "remote": {"type": "streamable-http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer t"}},
            "claude": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
            "old": {"type": "sse", "url": "http://127.0.0.1:9/sse", "disabled": True},
            "bare": {"url": "http://127.0.0.1:9/mcp"},
        }
    )
    assert problems == []
    docs, remote, claude, old, bare = servers
    assert (docs.transport, docs.command, docs.args, docs.env, docs.cwd) == ("stdio", "npx", ("-y", "docs-mcp"), (("TOKEN", "s3cret"),), "tools")
    assert (docs.always_allow, docs.timeout, docs.trusted) == (("search",), 5.0, False)
    assert docs.command_line() == "npx -y docs-mcp" and docs.where(Path("/ws")) == Path("/ws/tools")
    assert (remote.transport, remote.url, remote.headers) == ("streamable-http", "https://mcp.example.com/mcp", (("Authorization", "Bearer t"),))
    assert (claude.transport, old.transport, old.disabled, bare.transport) == ("streamable-http", "sse", True, "streamable-http")
    assert remote.timeout == 60.0


BAD = [
    ({"command": "x", "args": "-y"}, "mcpServers.s.args: must be a list of strings, got a string"),
    ({"command": "x", "args": ["a", 1]}, "mcpServers.s.args: must be a list of strings, got a list"),
    ({"command": "x", "env": {"TOKEN": 42}}, "mcpServers.s.env.TOKEN: must be a string, got a number"),
    ({"command": "x", "env": ["A=1"]}, "mcpServers.s.env: must be an object of strings, got a list"),
    ({"command": "x", "timeout": 0}, "mcpServers.s.timeout: must be a number of seconds above 0 and at most 3600, got 0"),
    ({"command": "x", "timeout": "60"}, 'mcpServers.s.timeout: must be a number of seconds above 0 and at most 3600, got "60"'),
    ({"command": "x", "disabled": "yes"}, "mcpServers.s.disabled: must be true or false, got a string"),
    ({"command": "x", "alwaysAllow": "search"}, "mcpServers.s.alwaysAllow: must be a list of strings, got a string"),
    ({"command": "", "args": []}, "mcpServers.s.command: a stdio server needs a command (a non-empty string), got a string"),
    ({"args": ["x"]}, "mcpServers.s.command: a stdio server needs a command (a non-empty string)"),
    ({"command": "x", "cwd": 3}, "mcpServers.s.cwd: must be a folder path (a non-empty string), got a number"),
    ({"type": "websocket", "url": "ws://x"}, 'mcpServers.s.type: must be one of stdio, streamable-http, http, sse, got "websocket"'),
    ({"type": "sse", "url": "file:///etc/passwd"}, "mcpServers.s.url: a sse server needs an http:// or https:// URL, got a string"),
    ({"type": "streamable-http"}, "mcpServers.s.url: a streamable-http server needs an http:// or https:// URL"),
    ({"command": "x", "url": "http://h/mcp"}, "mcpServers.s: give either command (a stdio server) or url (with type streamable-http or sse), not both"),
    ({"url": "http://h/mcp", "headers": {"X": None}}, "mcpServers.s.headers.X: must be a string, got null"),
    ("npx docs", "mcpServers.s: must be an object, got a string"),
]


@pytest.mark.parametrize("entry, message", BAD, ids=[m.split(": ", 1)[1][:50] for _, m in BAD])
def test_a_bad_entry_is_named_by_file_and_key_and_the_others_load(entry, message):
    servers, problems = parse({"good": {"command": "ok"}, "s": entry})
    assert problems == [f"/ws/.modus/mcp.json: {message}"]
    good, bad = servers
    assert (good.name, good.problem) == ("good", None)
    assert (bad.name, bad.problem) == ("s", problems[0])  # listed as a server that cannot start: its name stays taken


@pytest.mark.parametrize(
    "text, problem",
    [
        ("{not json", "/ws/.modus/mcp.json: not valid JSON: "),
        ("[1, 2]", "/ws/.modus/mcp.json: must be a JSON object with the key mcpServers, got a list"),
        ('{"mcpServers": []}', "/ws/.modus/mcp.json: mcpServers: must be an object of servers by name, got a list"),
        ('{"servers": {}}', "/ws/.modus/mcp.json: no mcpServers object: nothing to load"),
        ('{"mcpServers": {" ": {"command": "x"}}}', "/ws/.modus/mcp.json: mcpServers. : a server name must be 1 to 100 characters"),
    ],
)
def test_a_file_that_is_not_the_shape_loads_nothing_and_says_why(text, problem):
    loaded = parse_file(text, WS)
    assert loaded.servers == () and len(loaded.problems) == 1 and loaded.problems[0].startswith(problem)


def test_an_empty_object_is_no_servers_and_no_problem():
    assert parse_file("{}", WS) == ((), ())


def test_the_first_file_that_names_a_server_wins(tmp_path: Path):
    files = config_files(tmp_path, tmp_path / "global" / "mcp.json")
    assert [(str(f.path.relative_to(tmp_path)), f.origin) for f in files] == [
        (".modus/mcp.json", "workspace"),
        (".roo/mcp.json", "workspace"),
        (".mcp.json", "workspace"),
        ("global/mcp.json", "global"),
    ]
    loaded = [
        parse_file(json.dumps({"mcpServers": {"docs": {"command": "modus-docs"}}}), files[0]),
        parse_file(json.dumps({"mcpServers": {"docs": {"command": "roo-docs"}, "git": {"command": "roo-git"}}}), files[1]),
        parse_file(json.dumps({"mcpServers": {"git": {"command": "claude-git"}, "web": {"url": "http://h/mcp"}}}), files[2]),
        parse_file(json.dumps({"mcpServers": {"web": {"url": "http://global/mcp"}, "mine": {"command": "me"}}}), files[3]),
    ]
    merged = merge(loaded)
    assert [(s.name, s.command or s.url, s.trusted) for s in merged] == [
        ("docs", "modus-docs", False),
        ("git", "roo-git", False),
        ("web", "http://h/mcp", False),
        ("mine", "me", True),
    ]


def test_the_global_file_is_beside_the_global_modes_file(tmp_path: Path, monkeypatch):
    assert global_mcp_path(tmp_path / "cfg" / "modes.yaml") == tmp_path / "cfg" / "mcp.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert global_mcp_path() == tmp_path / "xdg" / "modus" / "mcp.json"


def test_what_an_approval_is_for_changes_with_the_command_and_not_with_the_rest():
    [base] = parse({"s": {"command": "x", "args": ["a"], "env": {"K": "v"}, "alwaysAllow": [], "timeout": 5}})[0]
    same = parse({"s": {"command": "x", "args": ["a"], "env": {"K": "v"}, "alwaysAllow": ["t"], "timeout": 9, "disabled": True}})[0][0]
    assert base.fingerprint() == same.fingerprint()
    for changed in ({"command": "y", "args": ["a"], "env": {"K": "v"}}, {"command": "x", "args": ["b"], "env": {"K": "v"}},
                    {"command": "x", "args": ["a"], "env": {"K": "w"}}, {"command": "x", "args": ["a"], "env": {"K": "v"}, "cwd": "sub"}):
        assert parse({"s": changed})[0][0].fingerprint() != base.fingerprint()


@pytest.mark.parametrize("kind", ["fifo", "outside", "huge", "directory"])
def test_a_workspace_file_is_read_as_untrusted_input(tmp_path: Path, kind: str):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    path = ws / ".mcp.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "outside":
        (outside / "mcp.json").write_text(json.dumps({"mcpServers": {"x": {"command": "x"}}}))
        path.symlink_to(outside / "mcp.json")
    elif kind == "huge":
        path.write_text(json.dumps({"mcpServers": {}, "pad": "x" * 300_000}))
    else:
        path.mkdir()
    loaded = load_file(ConfigFile(path, "workspace"), ws.resolve())
    assert loaded.servers == ()
    [problem] = loaded.problems
    reason = {"fifo": "it is a FIFO", "outside": "it leads outside the workspace", "huge": "it is larger than 256 KiB", "directory": "it is a directory"}[kind]
    assert problem.startswith(f"{path}: not read: ") and reason in problem
