"""MCP servers over the wire: the real server, a repository's stdio MCP server (asked before it
runs), a provider's native tool call of one of its tools, `modus/mcp/list`, `mcp_changed`,
`modus.mcp.restart`, and no MCP process left behind when Modus stops or is killed."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from fake_models import Call, FakeAnthropic, Reply
from protocol import Command, methods

from .editor import Editor

TOOLBOX = str(Path(__file__).parent.parent / "mcp_servers" / "toolbox.py")


def repository_servers(workspace: Path, *names: str) -> None:
    (workspace / ".modus").mkdir(exist_ok=True)
    servers = {name: {"command": sys.executable, "args": [TOOLBOX, name]} for name in names}
    (workspace / ".modus" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def running(pid: int) -> bool:
    """Whether the process runs: it exists and is not a zombie (an orphan's exit waits for init to
    reap it, which takes its time in some containers)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


async def gone(pid: int, seconds: float = 10) -> bool:
    """Whether the process has stopped (waiting for it, up to `seconds`)."""
    async with asyncio.timeout(seconds):
        while running(pid):
            await asyncio.sleep(0.02)
    return True


async def test_a_repositorys_server_is_asked_for_then_listed_called_natively_and_restarted(editor: Editor, workspace: Path):
    repository_servers(workspace, "box", "other")
    editor.decide = lambda r: {"decision": "deny" if r["kind"] == "mcp_server" and "'other'" in r["title"] else "approve"}
    with FakeAnthropic() as model:
        model.add(
            Reply("Asking the box.", [Call("toolu_1", "mcp__box__echo", {"text": "over the wire"})]),
            Reply("And the other.", [Call("toolu_2", "use_mcp_tool", {"server_name": "other", "tool_name": "echo", "arguments": {"text": "x"}})]),
            Reply("Done."),
        )
        await editor.start({"models": {"default": {"provider": "anthropic", "baseUrl": model.url, "model": "fake"}}})
        before = await editor.request(methods.MCP_LIST)
        ended = await editor.chat("use the box")
        first_request = model.requests[0].body
    listed = await editor.request(methods.MCP_LIST)
    prompt = await editor.request(methods.PROMPT_GET, {})

    assert [(s["name"], s["state"]) for s in before["servers"]] == [("box", "disabled"), ("other", "disabled")]
    assert before["servers"][0]["error"].startswith("Not started yet")
    assert ended["outcome"] == "completed"
    # the turn started the servers its mode may use before its first request: asked first, once each
    assert [a["kind"] for a in editor.approvals] == ["mcp_server", "mcp_server", "tool"]
    assert editor.approvals[0]["title"] == f"Start the MCP server 'box' that .modus/mcp.json configures: `{sys.executable} {TOOLBOX} box`?"
    # the provider got one tool per MCP tool, with its input schema, and the prompt lists them
    tools = {t["name"]: t for t in first_request["tools"]}
    assert tools["mcp__box__echo"]["input_schema"]["required"] == ["text"]
    assert "mcp__other__echo" not in tools  # not started: the user said no
    assert "## box (connected)" in first_request["system"] and "## other (disabled: Not started: the user did not allow it" in first_request["system"]
    calls = [(u["name"], u["status"], u.get("result"), (u.get("error") or {}).get("message")) for u in editor.of_kind("tool_call") if u["status"] in ("completed", "failed")]
    assert calls == [
        ("use_mcp_tool", "completed", "box says: over the wire", None),
        ("use_mcp_tool", "failed", None, f"The MCP server 'other' is disabled. {listed['servers'][1]['error']}"),
    ]
    assert editor.approvals[2]["params"] == {"server_name": "box", "tool_name": "echo", "arguments": {"text": "over the wire"}}
    box = listed["servers"][0]
    assert box["state"] == "connected" and box["source"] == str(workspace / ".modus" / "mcp.json")
    assert {"name": "echo", "description": "Say the text back."} in box["tools"] and box["resources"] == [{"uri": "notes://readme", "name": "readme"}]
    assert "## box (connected)" in next(s["text"] for s in prompt["sections"] if s["id"] == "tool_use")
    states = [{s["name"]: s["state"] for s in u["servers"]} for u in editor.of_kind("mcp_changed")]
    assert {"box": "connected", "other": "disabled"} in states and {"box": "starting", "other": "starting"} in states

    # a restart: the list comes back at once, the server is not asked for again (the answer is kept)
    editor.updates.clear()
    restarted = await editor.command(Command.MCP_RESTART, "box")
    assert [(s["name"], s["state"]) for s in restarted["servers"]] == [("box", "starting"), ("other", "disabled")]
    await editor.wait_for(lambda: any(u["servers"][0]["state"] == "connected" for u in editor.of_kind("mcp_changed")))
    assert len(editor.approvals) == 3
    with pytest.raises(JsonRpcException, match="no MCP server named 'nope' is configured. Configured servers: box, other"):
        await editor.command(Command.MCP_RESTART, "nope")


@pytest.mark.parametrize("how", ["shutdown", "kill"])
async def test_no_mcp_process_outlives_modus(workspace: Path, tmp_path: Path, how: str):
    editor = Editor(workspace, tmp_path / "config")
    repository_servers(workspace, "box")
    pid_call = {"toolCalls": [{"name": "use_mcp_tool", "arguments": {"server_name": "box", "tool_name": "pid"}}]}
    (workspace / "script.yaml").write_text(json.dumps({"turns": [pid_call, {"text": "ok"}]}))
    await editor.start({"models": {"default": {"provider": "scripted", "script": "script.yaml"}}, "autoApprove": {"mcp": True}})
    await editor.chat("which process?")
    [done] = [u for u in editor.of_kind("tool_call") if u["status"] == "completed"]
    pid = int(done["result"])
    assert running(pid)  # while Modus runs
    if how == "shutdown":
        await editor.stop()
    else:
        await editor.kill()  # SIGKILL: Modus cleans nothing up; the server sees its stdin close
    assert await gone(pid)
