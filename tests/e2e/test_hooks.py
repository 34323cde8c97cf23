"""Hooks over the wire (PROTOCOL.md, "Project files of every peer"): Claude Code's shape in the
settings, a PreToolUse hook that blocks by Claude Code's tool name (HookBlocked, its words), a
PostToolUse hook's words after the result, a UserPromptSubmit hook refusing a message, a Stop
hook sending the turn on, each run told as a `hook` update; and a repository's
`.claude/settings.json` hooks waiting for the user's trust."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from protocol import methods
from protocol.names import Command

from .conftest import script
from .editor import Editor


def hook(command: str, matcher: str | None = None) -> dict:
    return {**({"matcher": matcher} if matcher else {}), "hooks": [{"type": "command", "command": command, "timeout": 10}]}


def call(name: str, **arguments) -> dict:
    return {"toolCalls": [{"name": name, "arguments": arguments}]}


async def test_hooks_block_add_refuse_and_send_the_turn_on(workspace: Path, tmp_path: Path):
    (workspace / "a.txt").write_text("hello\n")
    marker = tmp_path / "stopped-once"
    settings = script(
        workspace,
        call("execute_command", command="rm -rf build"),
        call("read_file", path="a.txt"),
        {"text": "Done."},
        {"text": "Tests run, now done."},
    )
    settings["hooks"] = {
        "PreToolUse": [hook("cat > /dev/null; echo 'No shell here: use the tools.' >&2; exit 2", "Bash")],
        "PostToolUse": [hook("echo 'Remember: a.txt is generated.'", "Read")],
        "UserPromptSubmit": [hook("grep -q secret && { echo 'No secrets in prompts.' >&2; exit 2; }; exit 0")],
        "Stop": [hook(f"test -e {marker} && exit 0; touch {marker}; echo 'Run the tests before you stop.' >&2; exit 2")],
    }
    editor = Editor(workspace, tmp_path / "config")
    await editor.start(settings)
    try:
        with pytest.raises(JsonRpcException) as refused:
            await editor.request(methods.CHAT_SEND, {"text": "the secret is 42"})
        ended = await editor.chat("clean up, then read a.txt")
        cid = (await editor.request(methods.STATE))["conversationId"]
        history = (await editor.request(methods.CHAT_HISTORY, {"conversationId": cid}))["messages"]
    finally:
        await editor.stop()

    assert refused.value.code == -32602 and refused.value.message == "text: refused by a UserPromptSubmit hook: No secrets in prompts."
    assert ended["outcome"] == "completed"
    cards = [u for u in editor.of_kind("tool_call") if u.get("status") in ("completed", "failed")]
    shell, read = cards
    assert shell["status"] == "failed" and shell["error"] == {"type": "HookBlocked", "message": "No shell here: use the tools."}
    assert read["status"] == "completed" and read["result"].endswith("\n\n[PostToolUse hook] Remember: a.txt is generated.")
    assert [m["text"] for m in history if m["role"] == "user"][-1] == "Run the tests before you stop."
    assert [m["text"] for m in history if m["role"] == "assistant"][-1] == "Tests run, now done."
    told = [(u["event"], u["outcome"]) for u in editor.of_kind("hook")]
    assert told == [
        ("UserPromptSubmit", "blocked"), ("UserPromptSubmit", "ok"), ("PreToolUse", "blocked"), ("PostToolUse", "ok"),
        ("Stop", "blocked"), ("Stop", "ok"),
    ]
    assert editor.of_kind("hook")[2]["output"] == "No shell here: use the tools."


async def test_a_repository_s_hooks_wait_for_trust(workspace: Path, tmp_path: Path):
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(json.dumps({
        "permissions": {"allow": ["Bash(*)"]},  # Claude Code's own: not read
        "hooks": {"PreToolUse": [hook("echo 'Blocked by the repository.' >&2; exit 2", "Write")]},
    }))
    editor = Editor(workspace, tmp_path / "config")
    await editor.start(script(workspace, call("write_to_file", path="one.txt", content="1"), {"text": "One."},
                              call("write_to_file", path="two.txt", content="2"), {"text": "Two."}))
    try:
        await editor.chat("write one")
        texts = [m.message for m in editor.client.messages]
        await editor.command(Command.TRUST_WORKSPACE_SETTINGS)
        await editor.chat("write two")
    finally:
        await editor.stop()
    assert any("sets hooks (.claude/settings.json): not applied until you trust" in t for t in texts)
    assert (workspace / "one.txt").read_text() == "1\n" and not (workspace / "two.txt").exists()
    failed = [u for u in editor.of_kind("tool_call") if u.get("status") == "failed"]
    assert [f["error"] for f in failed] == [{"type": "HookBlocked", "message": "Blocked by the repository."}]


async def test_the_session_s_events_tell_their_hooks(workspace: Path, tmp_path: Path):
    log = tmp_path / "events.log"
    record = f"python3 -c \"import json,sys; d=json.load(sys.stdin); print(d['hook_event_name'], d.get('from_mode') or d.get('from_phase') or d.get('trigger') or d.get('source'), file=open('{log}','a'))\""
    settings = script(workspace, {"text": "Hello."}, {"text": "A summary of it all."})
    settings["hooks"] = {
        "SessionStart": [hook(f"{record}; echo 'The build is red since Monday.'")],
        "ModeChange": [hook(record)],
        "PhaseChange": [hook(record)],
        "PreCompact": [hook(record)],
    }
    editor = Editor(workspace, tmp_path / "config")
    await editor.start(settings)
    try:
        await editor.wait_for(lambda: log.exists() and "SessionStart" in log.read_text())
        await editor.chat("hello")
        lines = lambda: len(log.read_text().splitlines())  # noqa: E731 - the hooks of a switch run in the background
        await editor.command(Command.SWITCH_MODE, "ask")
        await editor.wait_for(lambda: lines() == 2)
        await editor.request(methods.PHASE_SET, {"phase": "plan"})
        await editor.wait_for(lambda: lines() == 3)
        await editor.request(methods.CHAT_CONDENSE, {})
        await editor.wait_for(lambda: lines() == 4)
        cid = (await editor.request(methods.STATE))["conversationId"]
        history = (await editor.request(methods.CHAT_HISTORY, {"conversationId": cid}))["messages"]
    finally:
        await editor.stop()
    assert log.read_text().splitlines() == ["SessionStart startup", "ModeChange code", "PhaseChange act", "PreCompact manual"]
    [first] = [m for m in history if m["role"] == "user"]
    assert first["text"] == "hello\n\nThe build is red since Monday." and first["metadata"]["typed"] == "hello"
