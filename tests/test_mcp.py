"""MCP servers as tools, against real servers written with the `mcp` SDK (tests/mcp_servers):
one over streamable HTTP on 127.0.0.1, shared by this module, and stdio ones started by the
session for the tests that need a process of their own (a crash, a flood, a start that fails,
what a repository's file may start, what shutdown stops)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from helpers import call_tool, chat, settings, until, write_script
from memory_host import MemoryHost
from protocol import ApprovalResponse, ChatSendParams, PromptGetParams
from server.agent import Session
from server.mcp.connection import STDERR_KEEP
from server.mcp.results import MAX_RESULT_CHARS
from server.workspace import Workspace

TOOLBOX = str(Path(__file__).parent / "mcp_servers" / "toolbox.py")


def stdio(name: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [TOOLBOX, name], **extra}


def serve(name: str, transport: str) -> tuple[subprocess.Popen, str]:
    """The toolbox over HTTP on a free port of 127.0.0.1: its process and its URL."""
    process = subprocess.Popen([sys.executable, TOOLBOX, name, f"--{transport}"], stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    assert line.startswith("PORT "), f"the HTTP server did not start: {line!r}"
    return process, f"http://127.0.0.1:{int(line.split()[1])}/{'mcp' if transport == 'http' else 'sse'}"


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(10)


@pytest.fixture(scope="module")
def web() -> str:
    """The toolbox over streamable HTTP, for the whole module."""
    process, url = serve("web", "http")
    try:
        yield url
    finally:
        stop(process)


@asynccontextmanager
async def session_with(tmp_path: Path, servers: dict[str, Any], *, repo: dict[str, Any] | None = None,
                       host: MemoryHost | None = None, modes: str | None = None, turns: list | None = None, **overrides: Any):
    """A running session: `servers` in the user's global mcp.json, `repo` in the workspace's
    .modus/mcp.json, `modes` as its .modus/modes.yaml, `turns` its scripted model."""
    root = tmp_path / "ws"
    (root / ".modus").mkdir(parents=True, exist_ok=True)
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    (config / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    if repo is not None:
        (root / ".modus" / "mcp.json").write_text(json.dumps({"mcpServers": repo}))
    if modes is not None:
        (root / ".modus" / "modes.yaml").write_text(modes)
    script = write_script(root, turns) if turns is not None else None
    session = Session(
        workspace=Workspace(root), host=host or MemoryHost(), settings=settings(script, **overrides), global_modes=config / "modes.yaml"
    )
    try:
        async with session.running():
            yield session
    finally:
        session.close()


async def use(session: Session, server: str, tool: str, arguments: Any = None):
    return await call_tool(session, "use_mcp_tool", server_name=server, tool_name=tool, **({} if arguments is None else {"arguments": arguments}))


def state(session: Session, name: str) -> str:
    return session.mcp.servers[name].state


def test_a_workspace_without_mcp_settings_loads_nothing_of_mcp(tmp_path):
    """No settings file: start-up pays for a few stat calls, not for the MCP code."""
    probe = (
        "import sys, anyio; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
        "from helpers import make_session; from protocol import PromptGetParams;"
        "session = make_session(Path(sys.argv[2]));"
        "anyio.run(session.refresh); session.state(); session.prompt(PromptGetParams()); session.close();"
        "print(sorted(m for m in sys.modules if m.startswith(('server.mcp.', 'mcp', 'jsonschema', 'httpx2'))))"
    )
    root = tmp_path / "ws"
    root.mkdir()
    here = Path(__file__).parent
    out = subprocess.run([sys.executable, "-c", probe, str(here), str(root)], capture_output=True, text=True, check=True, cwd=here.parent)
    assert out.stdout.strip() == "[]"


# ================================================================ streamable HTTP: listing, calls, results


async def test_a_server_is_listed_with_its_tools_and_resources_and_called(tmp_path, web):
    host = MemoryHost()
    async with session_with(tmp_path, {"web": {"type": "streamable-http", "url": web}}, host=host) as session:
        before = session.mcp_list().servers[0]
        result = await use(session, "web", "echo", {"text": "hello"})
        after = session.mcp_list().servers[0]
    assert (before.state, before.tools) == ("disabled", []) and "Not started yet" in before.error
    assert result.error is None and result.text == "web says: hello"
    assert after.state == "connected" and after.error is None and after.source == str(tmp_path / "config" / "mcp.json")
    assert [t.name for t in after.tools] == ["echo", "add", "pid", "crash", "hang", "flood", "big", "picture"]
    assert after.tools[0].description == "Say the text back."
    assert [(r.uri, r.name) for r in after.resources] == [("notes://readme", "readme")]
    # every change of state went out as mcp_changed: listed (not started), starting, connected
    assert [[s.state for s in u.servers] for u in host.of_kind("mcp_changed")] == [["disabled"], ["starting"], ["connected"]]
    assert [a.kind for a in host.approvals] == ["tool"]  # the user's own server: only the call is asked


@pytest.mark.parametrize(
    "arguments, problem",
    [
        ({"a": "two", "b": 1}, "arguments.a: 'two' is not of type 'integer'"),
        ({"a": 1}, "arguments: 'b' is a required property"),
        ('{"a": 1, "b": [2]}', "arguments.b: [2] is not of type 'integer'"),
    ],
)
async def test_arguments_are_checked_against_the_tools_schema_before_anything_is_asked(tmp_path, web, arguments, problem):
    host = MemoryHost()
    async with session_with(tmp_path, {"web": {"url": web}}, host=host) as session:
        result = await use(session, "web", "add", arguments)
        good = await use(session, "web", "add", '{"a": 2, "b": 3}')  # the XML form: a JSON string
    assert result.error.type == "InvalidParams"
    assert result.text == (
        f"Invalid arguments for the tool 'add' of the MCP server 'web': {problem}. Please retry with arguments that match its input schema."
    )
    assert good.text == "5"
    assert len(host.approvals) == 1  # only the good call was put to the user


@pytest.mark.parametrize(
    "arguments, message",
    [
        ("[1, 2]", "Invalid value for parameter 'arguments': must be a JSON object of the tool's arguments, got list."),
        ("{nope", "Invalid value for parameter 'arguments': must be a JSON object, and this is not JSON"),
    ],
)
async def test_arguments_must_be_an_object_or_a_json_string_of_one(tmp_path, web, arguments, message):
    async with session_with(tmp_path, {"web": {"url": web}}) as session:
        result = await use(session, "web", "add", arguments)
    assert result.error.type == "InvalidParams" and result.text.startswith(message)


async def test_results_images_resources_and_the_cap(tmp_path, web):
    async with session_with(tmp_path, {"web": {"url": web}}) as session:
        picture = await use(session, "web", "picture")
        big = await use(session, "web", "big", {"chars": MAX_RESULT_CHARS + 12_345})
        readme = await call_tool(session, "access_mcp_resource", server_name="web", uri="notes://readme")
        missing = await call_tool(session, "access_mcp_resource", server_name="web", uri="notes://nope")
    assert picture.text == "a red dot\n\n[image: image/png, 2 KiB]"
    assert big.text.startswith("x" * MAX_RESULT_CHARS + "\n[... the result was cut here: 12,345 more characters not shown ...]")
    assert len(big.text) < MAX_RESULT_CHARS + 100
    assert readme.error is None and readme.text == "The notes of web."
    assert missing.error.type == "ToolError" and missing.text.startswith("The MCP server 'web' refused reading notes://nope: ")


async def test_a_call_that_hangs_is_cancelled_at_the_servers_timeout_and_the_server_goes_on(tmp_path, web):
    async with session_with(tmp_path, {"web": {"url": web, "timeout": 0.5}}) as session:
        hung = await use(session, "web", "hang")
        after = await use(session, "web", "echo", {"text": "still here"})
    assert hung.error.type == "ToolError"
    assert hung.text == "The MCP server 'web' did not answer the call to 'hang' within 0.5 s (its timeout); the call was cancelled."
    assert after.text == "web says: still here"


async def test_a_call_is_cancelled_with_its_turn(tmp_path, web):
    hang = {"toolCalls": [{"name": "use_mcp_tool", "arguments": {"server_name": "web", "tool_name": "hang"}}]}
    host = MemoryHost()
    async with session_with(tmp_path, {"web": {"url": web}}, host=host, turns=[hang, {"text": "after"}]) as session:
        await session.send(ChatSendParams(text="go"))
        await until(lambda: any(u.status == "running" for u in host.of_kind("tool_call")))
        assert session.cancel(session.conversation_id)
        await until(lambda: host.of_kind("turn_ended"))
        again = await use(session, "web", "echo", {"text": "x"})
    [ended] = host.of_kind("turn_ended")
    assert ended.outcome == "cancelled"
    assert host.of_kind("tool_call")[-1].status == "failed" and host.of_kind("tool_call")[-1].error.type == "Cancelled"
    assert again.text == "web says: x"


async def test_unknown_servers_and_tools_are_named_with_what_there_is(tmp_path, web):
    servers = {"web": {"url": web}, "docs": {"url": web}, "off": {"url": web, "disabled": True}}
    async with session_with(tmp_path, servers) as session:
        unknown = await use(session, "nope", "echo")
        tool = await use(session, "web", "ech0")
        off = await use(session, "off", "echo")
    assert unknown.error.type == "ToolError" and unknown.text == "No MCP server named 'nope' is configured. Configured servers: web, docs, off."
    assert tool.text == "The MCP server 'web' has no tool named 'ech0'. Its tools: echo, add, pid, crash, hang, flood, big, picture."
    assert off.text == f"The MCP server 'off' is disabled. Disabled in {tmp_path / 'config' / 'mcp.json'}."


async def test_always_allow_tools_run_without_asking_and_the_others_ask(tmp_path, web):
    host = MemoryHost()
    async with session_with(tmp_path, {"web": {"url": web, "alwaysAllow": ["echo"]}}, host=host) as session:
        await use(session, "web", "echo", {"text": "a"})
        await use(session, "web", "add", {"a": 1, "b": 2})
    assert [(a.kind, a.tool, a.title) for a in host.approvals] == [("tool", "use_mcp_tool", "Call 'add' of the MCP server 'web'?")]
    assert json.loads(host.approvals[0].detail) == {"a": 1, "b": 2}


async def test_auto_approve_mcp_skips_the_question(tmp_path, web):
    host = MemoryHost()
    async with session_with(tmp_path, {"web": {"url": web}}, host=host, autoApprove={"mcp": True}) as session:
        result = await use(session, "web", "echo", {"text": "a"})
    assert result.error is None and host.approvals == []


# ================================================================ per mode

DOCS_ONLY = (
    "customModes:\n  - slug: docs-only\n    name: Docs only\n    roleDefinition: You answer from the docs.\n"
    "    groups: [read, [mcp, {servers: [docs]}]]\n"
)


async def test_a_mode_reaches_only_its_servers_in_the_gate_and_in_the_prompt(tmp_path, web):
    host = MemoryHost()
    async with session_with(tmp_path, {"docs": {"url": web}, "web": {"url": web}}, host=host, modes=DOCS_ONLY) as session:
        session.switch_mode("docs-only", by="user")
        refused = await use(session, "web", "echo", {"text": "x"})
        resource = await call_tool(session, "access_mcp_resource", server_name="web", uri="notes://readme")
        web_state = state(session, "web")
        await session.mcp_ready("modus")  # what a turn does first: the mode's servers are started
        started = {name: state(session, name) for name in ("docs", "web")}
        allowed = await use(session, "docs", "echo", {"text": "x"})
        docs_prompt = session.prompt(PromptGetParams()).sections[1].text
        docs_tools = [t.name for t in session.task_for("modus").tool_schemas]
        await session.mcp.ensure()
        code_prompt = session.prompt(PromptGetParams(mode="code")).sections[1].text
    message = "The MCP server 'web' is not allowed in docs-only mode. Its MCP servers: docs."
    assert (refused.error.type, refused.text) == ("ToolNotAllowed", message)
    assert (resource.error.type, resource.text) == ("ToolNotAllowed", message)
    assert web_state == "idle" and [a.kind for a in host.approvals] == ["tool"]  # refused before anything was asked or started
    assert started == {"docs": "connected", "web": "idle"}
    assert allowed.error is None and allowed.text == "web says: x"  # (docs is the same server under another name)
    assert "## docs (connected)" in docs_prompt and "### echo (natively mcp__docs__echo)" in docs_prompt
    assert "## web" not in docs_prompt and "mcp__web__" not in docs_prompt
    assert "mcp__docs__echo" in docs_tools and not any(n.startswith("mcp__web__") for n in docs_tools)
    assert "## docs (connected)" in code_prompt and "## web (connected)" in code_prompt


async def test_a_turn_starts_its_servers_and_a_native_call_is_use_mcp_tool(tmp_path, web):
    native = {"toolCalls": [{"name": "mcp__web__add", "arguments": {"a": 20, "b": 22}}]}
    host = MemoryHost()
    async with session_with(tmp_path, {"web": {"url": web}}, host=host, turns=[native, {"text": "42 it is"}]) as session:
        outcome = await chat(session, "add them")
        task = session.task_for("modus")
        schemas = {s.name: s for s in task.tool_schemas}
        history = session.history(session.conversation_id).messages
    assert outcome == "completed"
    calls = [(u.name, u.status, u.params, u.result) for u in host.of_kind("tool_call")]
    routed = {"server_name": "web", "tool_name": "add", "arguments": {"a": 20, "b": 22}}
    assert calls == [("use_mcp_tool", "pending", routed, None), ("use_mcp_tool", "running", routed, None), ("use_mcp_tool", "completed", routed, "42")]
    assert schemas["mcp__web__add"].parameters["required"] == ["a", "b"]
    assert schemas["mcp__web__add"].description == "Add two integers.\n(The tool 'add' of the MCP server 'web'.)"
    assert "## web (connected)" in task.prompt.text
    [result] = [m for m in history if m.role == "tool"]
    assert result.text == "42" and result.metadata["toolCallId"] == history[1].metadata["toolCalls"][0]["id"]


def test_native_names_fit_every_provider():
    from server.mcp.hub import McpHub, Server
    from server.mcp.config import ConfigFile, ServerConfig

    hub = McpHub(Path("/ws"), Path("/g/mcp.json"), MemoryHost(), lambda: None)
    file = ConfigFile(Path("/g/mcp.json"), "global")
    for name, tools in (("git hub", ["search.code", "x" * 80]), ("a", ["b__c"]), ("a__b", ["c"])):
        server = hub.servers[name] = Server(ServerConfig(name, file))
        server.tools = {t: None for t in tools}
    hub._name_tools()
    names = {pair: native for native, pair in hub.native.items()}
    assert names[("git hub", "search.code")] == "mcp__git_hub__search_code"
    assert names[("a", "b__c")] == "mcp__a__b__c"
    long, clash = names[("git hub", "x" * 80)], names[("a__b", "c")]
    assert len(long) == 64 and long.startswith("mcp__git_hub__xxx")
    assert clash != "mcp__a__b__c" and clash.startswith("mcp__a__b__c_") and len(clash) == len("mcp__a__b__c_") + 8
    assert all(len(n) <= 64 and all(ch.isalnum() or ch in "_-" for ch in n) for n in hub.native)
    assert hub.route("mcp__a__b__c") == ("a", "b__c") and hub.route(clash) == ("a__b", "c") and hub.route("read_file") is None


async def test_the_older_sse_transport(tmp_path):
    process, url = serve("old", "sse")
    try:
        async with session_with(tmp_path, {"old": {"type": "sse", "url": url}}, autoApprove={"mcp": True}) as session:
            result = await use(session, "old", "echo", {"text": "from the past"})
            listed = session.mcp_list().servers[0]
    finally:
        stop(process)
    assert result.text == "old says: from the past" and listed.state == "connected" and len(listed.tools) == 8


async def test_an_http_server_that_goes_away_fails_the_call_and_is_tried_once_more(tmp_path):
    process, url = serve("gone", "http")
    try:
        async with session_with(tmp_path, {"gone": {"url": url}}, autoApprove={"mcp": True}) as session:
            before = await use(session, "gone", "echo", {"text": "x"})
            stop(process)
            during = await use(session, "gone", "echo", {"text": "x"})
            await until(lambda: state(session, "gone") == "failed")
            listed = session.mcp_list().servers[0]
    finally:
        if process.poll() is None:
            stop(process)
    assert before.text == "gone says: x"
    assert during.error.type == "ToolError" and during.text == "The MCP server 'gone' stopped during the call to 'echo'. It is being started again."
    assert listed.error == "It could not start: All connection attempts failed."


# ================================================================ stdio: crash, flood, failing start, shutdown


async def test_a_server_that_crashes_mid_call_fails_the_call_with_its_stderr_and_is_restarted_once(tmp_path):
    host = MemoryHost()
    async with session_with(tmp_path, {"box": stdio("box")}, host=host, autoApprove={"mcp": True}) as session:
        first_pid = (await use(session, "box", "pid")).text
        crashed = await use(session, "box", "crash", {"message": "boom: the disk is on fire"})
        await until(lambda: state(session, "box") == "connected" and session.mcp.servers["box"].connection.session is not None)
        second_pid = (await use(session, "box", "pid")).text  # a call goes through: the restart is earned back
        await use(session, "box", "crash", {"message": "boom again"})
        await until(lambda: state(session, "box") == "connected" and session.mcp.servers["box"].connection.session is not None)
        again = await use(session, "box", "crash", {"message": "third time"})  # no call went through since the restart
        await until(lambda: state(session, "box") == "failed")
        after = await use(session, "box", "echo", {"text": "x"})
        listed = session.mcp_list().servers[0]
    assert crashed.error.type == "ToolError"
    assert crashed.text.startswith("The MCP server 'box' stopped during the call to 'crash'. Its stderr ends with:\n")
    assert "boom: the disk is on fire" in crashed.text and crashed.text.endswith("It is being started again.")
    assert first_pid != second_pid
    assert "third time" in again.text and not again.text.endswith("It is being started again.")
    assert listed.state == "failed" and listed.error.startswith("It stopped again after being restarted once: ")
    assert "third time" in listed.error
    assert after.text == f"The MCP server 'box' is not available. {listed.error}"


async def test_a_server_that_floods_stderr_costs_a_bounded_buffer(tmp_path):
    async with session_with(tmp_path, {"box": stdio("box")}, autoApprove={"mcp": True}) as session:
        flooded = await use(session, "box", "flood", {"megabytes": 8})
        echo = await use(session, "box", "echo", {"text": "fine"})
        stderr = session.mcp.servers["box"].connection.stderr
        kept = stderr.text()
    assert flooded.text == "flooded" and echo.text == "box says: fine"
    assert stderr.total > 8_000_000 and len(stderr._tail) <= STDERR_KEEP
    assert kept.endswith("the flood is over") and len(kept) <= 2000


async def test_a_server_that_cannot_start_is_failed_with_its_stderr_and_the_others_work(tmp_path, web):
    servers = {
        "broken": {"command": sys.executable, "args": ["-c", "import sys; sys.stderr.write('no config found in ~/.broken\\n'); sys.exit(2)"]},
        "missing": {"command": "modus-no-such-mcp-server"},
        "nowhere": stdio("nowhere", cwd="no/such/folder"),
        "web": {"url": web},
    }
    host = MemoryHost()
    async with session_with(tmp_path, servers, host=host, autoApprove={"mcp": True}) as session:
        await session.mcp.ensure()
        listed = {s.name: s for s in session.mcp_list().servers}
        works = await use(session, "web", "echo", {"text": "ok"})
        broken = await use(session, "broken", "anything")
    assert listed["broken"].state == "failed"
    assert listed["broken"].error.startswith("It could not start: ") and listed["broken"].error.endswith("Its stderr ends with:\nno config found in ~/.broken")
    assert listed["missing"].error == "It could not start: cannot run 'modus-no-such-mcp-server': No such file or directory."
    assert listed["broken"].error.startswith("It could not start: Connection closed. Its stderr ends with:")
    assert listed["nowhere"].error == f"It could not start: its folder (cwd) {tmp_path / 'ws' / 'no/such/folder'} is not a directory."
    assert listed["web"].state == "connected" and works.text == "web says: ok"
    assert broken.text == f"The MCP server 'broken' is not available. {listed['broken'].error}"


async def test_the_servers_stop_with_the_session(tmp_path):
    async with session_with(tmp_path, {"a": stdio("a"), "b": stdio("b")}, autoApprove={"mcp": True}) as session:
        pids = [int((await use(session, name, "pid")).text) for name in ("a", "b")]
        for pid in pids:
            os.kill(pid, 0)  # alive
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


async def test_start_at_launch(tmp_path, web):
    async with session_with(tmp_path, {"web": {"url": web}}, mcpStartAtLaunch=True) as session:
        await until(lambda: state(session, "web") == "connected")


# ================================================================ a repository's servers need the user's consent


def repo_server(tmp_path: Path, *args: str) -> dict[str, Any]:
    return stdio("repo", args=[TOOLBOX, "repo", *args], env={"TOOLBOX_MARKER": str(tmp_path / "started"), "SECRET_TOKEN": "hunter2"})


async def test_a_workspace_server_denied_is_not_started_and_not_asked_again(tmp_path, caplog):
    host = MemoryHost(approve=lambda r: ApprovalResponse(decision="deny"))
    async with session_with(tmp_path, {}, repo={"repo": repo_server(tmp_path)}, host=host, yolo=True) as session:
        first = await use(session, "repo", "echo", {"text": "x"})
        second = await use(session, "repo", "echo", {"text": "x"})
        listed = session.mcp_list().servers[0]
    [asked] = host.approvals  # once; and yolo does not skip it
    assert asked.kind == "mcp_server"
    command_line = f"{sys.executable} {TOOLBOX} repo"
    assert asked.title == f"Start the MCP server 'repo' that .modus/mcp.json configures: `{command_line}`?"
    assert command_line in asked.detail and "SECRET_TOKEN" in asked.detail and "TOOLBOX_MARKER" in asked.detail
    assert "hunter2" not in asked.detail and "hunter2" not in json.dumps(asked.params) and "hunter2" not in caplog.text
    assert asked.params == {"server": "repo", "file": ".modus/mcp.json", "command": sys.executable, "args": [TOOLBOX, "repo"], "cwd": str(tmp_path / "ws")}
    assert not (tmp_path / "started").exists()  # nothing ran
    assert listed.state == "disabled" and listed.error.startswith("Not started: the user did not allow it")
    assert first.error.type == second.error.type == "ToolError" and first.text == f"The MCP server 'repo' is disabled. {listed.error}"


async def test_a_workspace_server_approved_is_remembered_for_its_exact_command(tmp_path):
    host = MemoryHost()
    async with session_with(tmp_path, {}, repo={"repo": repo_server(tmp_path)}, host=host, autoApprove={"mcp": True}) as session:
        first = await use(session, "repo", "echo", {"text": "x"})
    async with session_with(tmp_path, {}, repo={"repo": repo_server(tmp_path)}, host=host, autoApprove={"mcp": True}) as session:
        second = await use(session, "repo", "echo", {"text": "y"})
    async with session_with(tmp_path, {}, repo={"repo": repo_server(tmp_path, "--changed")}, host=host, autoApprove={"mcp": True}) as session:
        changed = await use(session, "repo", "echo", {"text": "z"})
    assert (first.text, second.text) == ("repo says: x", "repo says: y")
    assert changed.error is None
    assert [a.kind for a in host.approvals] == ["mcp_server", "mcp_server"]  # the first start, and the changed command
    assert "--changed" in host.approvals[1].title
    started = (tmp_path / "started").read_text().splitlines()
    assert len(started) == 3 and all(line.endswith(str(tmp_path / "ws")) for line in started)  # in the workspace, with its env


async def test_a_changed_file_is_read_again_and_a_bad_entry_is_reported_once(tmp_path, web):
    host = MemoryHost()
    async with session_with(tmp_path, {"web": {"url": web}}, host=host, autoApprove={"mcp": True}) as session:
        await use(session, "web", "echo", {"text": "x"})
        config = tmp_path / "config" / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"web": {"url": web + "?v=2"}, "bad": {"command": "x", "args": "y"}}}))
        os.utime(config, ns=(1, 1))  # a signature of its own, whatever the clock's resolution
        assert session.stale()
        await session.refresh()
        listed = {s.name: (s.state, s.error) for s in session.mcp_list().servers}
        await session.refresh()  # nothing changed: nothing said again
        await until(lambda: state(session, "web") == "connected")  # it was running: the new entry runs in its place
    problem = f"{config}: mcpServers.bad.args: must be a list of strings, got a string"
    assert listed["bad"] == ("failed", problem)
    assert listed["web"][0] == "starting"
    assert host.messages == [("warning", f"MCP settings: {problem}")]
