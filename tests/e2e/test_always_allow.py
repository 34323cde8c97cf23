"""Auto-approval per mode and "always allow" on an approval card, over the wire: the rule shown
on the card, its diff approved before the workspace's settings file is written, and the next
such call not asked."""

from __future__ import annotations

import json

from protocol import methods

from .conftest import script


def command(line: str) -> dict:
    return {"toolCalls": [{"name": "execute_command", "arguments": {"command": line}}]}


async def test_always_allow_writes_the_rule_after_its_diff_and_the_next_call_is_not_asked(editor, workspace):
    settings = workspace / ".modus" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"maxRetries": 2}))
    await editor.start(script(workspace, command("echo one*"), command("echo one*"), command("echo two"), {"text": "done"}))
    editor.decide = lambda request: {"decision": "approve", "always": (request.get("params") or {}).get("command") == "echo one*"}
    await editor.chat("run them")
    first, diff, third = editor.approvals  # the second echo one* was not asked
    assert first["alwaysAllow"] == 'autoApprove.modes.code.command: "echo one\\\\*"'
    assert diff["title"] == "Always allow: write this rule to .modus/settings.json?"
    assert diff["toolCallId"] == first["toolCallId"]  # shown with the call it came from
    assert '-{"maxRetries": 2}\n\\ No newline at end of file\n+{\n' in diff["detail"]
    assert '+        "command": [\n+          "echo one\\\\*"' in diff["detail"] and diff.get("alwaysAllow") is None
    assert third["params"]["command"] == "echo two"  # "echo one*" is a glob of itself only
    assert json.loads(settings.read_text()) == {"maxRetries": 2, "autoApprove": {"modes": {"code": {"command": ["echo one\\*"]}}}}
    done = [u for u in editor.of_kind("tool_call") if u["status"] == "completed"]
    assert [u["result"].splitlines()[-1] for u in done][:2] == ["one*", "one*"]


async def test_a_declined_diff_writes_nothing_and_the_call_still_runs(editor, workspace):
    await editor.start(script(workspace, command("echo hi"), {"text": "done"}))
    editor.decide = lambda request: {"decision": "approve", "always": True} if request.get("alwaysAllow") else {"decision": "deny"}
    await editor.chat("run it")
    assert len(editor.approvals) == 2 and not (workspace / ".modus" / "settings.json").exists()
    assert [u["status"] for u in editor.of_kind("tool_call")][-1] == "completed"


async def test_per_mode_overrides_of_auto_approval(editor, workspace):
    (workspace / "a.txt").write_text("x\n")
    turns = [
        {"toolCalls": [{"name": "write_to_file", "arguments": {"path": "b.txt", "content": "b\n"}}]},
        {"toolCalls": [{"name": "switch_mode", "arguments": {"mode_slug": "debug"}}]},
        {"toolCalls": [{"name": "write_to_file", "arguments": {"path": "c.txt", "content": "c\n"}}]},
        {"text": "done"},
    ]
    await editor.start({**script(workspace, *turns), "autoApprove": {"modeSwitch": True, "modes": {"code": {"edit": True}}}})
    await editor.chat("write")
    asked = [a.get("tool") for a in editor.approvals]
    assert asked == ["write_to_file"]  # code: edits approved by its override; debug: asked
    assert editor.approvals[0]["params"]["path"] == "c.txt"
    state = await editor.request(methods.STATE)
    assert state["mode"]["slug"] == "debug"


async def test_a_client_without_approval_cards_gets_an_always_allow_button(editor, workspace):
    await editor.start(script(workspace, command("echo hi"), {"text": "done"}), approvals=False)
    await editor.chat("run it")
    [asked] = editor.message_requests
    assert [a.title for a in asked.actions] == ["Approve", "Always allow", "Deny"]
    assert asked.message.endswith('Always allow: autoApprove.modes.code.command: "echo hi"')


async def test_command_globs_approve_a_line_whose_every_command_matches(editor, workspace):
    turns = [command("echo a && echo b | cat"), command("echo a; ls"), {"text": "done"}]
    await editor.start({**script(workspace, *turns), "autoApprove": {"modes": {"code": {"command": ["echo *", "cat"]}}}})
    await editor.chat("run them")
    assert [a["params"]["command"] for a in editor.approvals] == ["echo a; ls"]  # ls matches no glob


async def test_always_allow_of_an_mcp_tool_goes_to_its_servers_always_allow(editor, workspace, tmp_path):
    import sys
    from pathlib import Path

    toolbox = Path(__file__).resolve().parents[1] / "mcp_servers" / "toolbox.py"
    mcp_json = tmp_path / "config" / "modus" / "mcp.json"
    mcp_json.parent.mkdir(parents=True)
    mcp_json.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [str(toolbox), "tb"]}}}))
    echo = {"toolCalls": [{"name": "use_mcp_tool", "arguments": {"server_name": "tb", "tool_name": "echo", "arguments": {"text": "hi"}}}]}
    await editor.start(script(workspace, echo, echo, {"text": "done"}))
    editor.decide = lambda request: {"decision": "approve", "always": True}
    await editor.chat("echo twice")
    asked = [a for a in editor.approvals if a["kind"] == "tool"]
    assert [a["title"] for a in asked] == ["Call 'echo' of the MCP server 'tb'?", f"Always allow: write this rule to {mcp_json}?"]
    assert asked[0]["alwaysAllow"] == 'mcpServers.tb.alwaysAllow: "echo"'
    assert json.loads(mcp_json.read_text())["mcpServers"]["tb"]["alwaysAllow"] == ["echo"]
    results = [u["result"] for u in editor.of_kind("tool_call") if u["status"] == "completed"]
    assert results == ["tb says: hi", "tb says: hi"]  # the second call was not asked


async def test_a_settings_file_that_is_a_fifo_is_not_read_and_nothing_hangs(editor, workspace):
    import os

    (workspace / ".modus").mkdir()
    os.mkfifo(workspace / ".modus" / "settings.json")  # a repository's trap: reading it would wait forever
    await editor.start(script(workspace, command("echo hi"), {"text": "done"}))
    editor.decide = lambda request: {"decision": "approve", "always": True}
    ended = await editor.chat("run it")
    assert ended["outcome"] == "completed"
    assert [a.get("tool") for a in editor.approvals] == ["execute_command"]  # no diff asked: the file was not read
    texts = [m.message for m in editor.client.messages]
    assert "Modus: .modus/settings.json not read (it is a FIFO, not a regular file): the rule was not written." in texts
