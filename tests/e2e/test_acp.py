"""`modus acp` end to end: the real subprocess over stdio, driven with the agent-client-protocol
package's client side (acp_client.py), a scripted model from each workspace's settings file.

Two agents run for the whole module, one per kind of client: an editor that reads and writes
files and runs terminals itself (like Zed), and a bare client that does none of it (the server
writes and runs itself). Each test opens its own session in its own workspace.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import json
import os
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from acp import RequestError, text_block
from acp import schema as acp

from .acp_client import TIMEOUT, modus_acp, workspace_with

pytestmark = pytest.mark.asyncio(loop_scope="module")

EDITOR = acp.ClientCapabilities(fs=acp.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True)


@pytest.fixture(scope="module")
def config_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("acp-config")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(config_home):
    async with modus_acp(config_home, EDITOR) as agent:
        yield agent


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bare(config_home):
    async with modus_acp(config_home) as agent:
        yield agent


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def done(result: str = "Done.") -> dict:
    return {"toolCalls": [call("attempt_completion", result=result)]}


def one_card(agent, sid: str, title: str) -> dict:
    [card] = [c for c in agent.client.calls(sid).values() if c.get("title") == title]
    return card


def text_of(card: dict) -> str:
    return "\n".join(c["content"]["text"] for c in card.get("content", []) if c.get("type") == "content")


async def expect_error(awaitable, code: int, *words: str) -> str:
    with pytest.raises(RequestError) as caught:
        await asyncio.wait_for(awaitable, TIMEOUT)
    assert caught.value.code == code, (caught.value.code, str(caught.value), caught.value.data)
    for word in words:
        assert word in str(caught.value), str(caught.value)
    return str(caught.value)


# ================================================================ start-up


async def test_initialize_and_a_new_session_offer_modes_the_phase_and_commands(editor, tmp_path):
    caps = editor.initialized.agent_capabilities
    assert editor.initialized.protocol_version == 1
    assert caps.load_session is True and caps.prompt_capabilities.embedded_context is True
    assert editor.initialized.agent_info.name == "modus"

    ws = workspace_with(tmp_path / "ws", [])
    (ws / ".modus" / "modes.yaml").write_text(
        "customModes:\n  - slug: docs-writer\n    name: Docs Writer\n    roleDefinition: You write docs.\n"
        "    description: Writes the documentation.\n    groups: [read]\n"
    )
    new = await editor.new(ws)
    modes = {m.id: m for m in new.modes.available_modes}
    assert new.modes.current_mode_id == "code"
    assert list(modes)[:5] == ["code", "architect", "ask", "debug", "orchestrator"]
    assert modes["docs-writer"].name == "Docs Writer" and modes["docs-writer"].description == "Writes the documentation."
    assert all(m.description for m in modes.values())
    mode, phase = new.config_options
    assert (mode.id, mode.category, mode.current_value) == ("mode", "mode", "code")
    assert [o.value for o in mode.options] == list(modes)
    assert (phase.id, phase.current_value, [o.value for o in phase.options]) == ("phase", "act", ["plan", "act"])
    [commands] = await editor.client.wait_for(lambda: editor.client.of(new.session_id, "available_commands_update") or None, "the commands")
    assert [c.name for c in commands.available_commands] == ["plan", "act", "mode", "plan-change", "trust", "condense"]


# ================================================================ a turn with a write


async def test_a_write_asks_permission_and_goes_through_fs_write_text_file(editor, tmp_path):
    ws = workspace_with(tmp_path / "ws", [
        {"text": "I'll write it.", "toolCalls": [call("write_to_file", path="hello.txt", content="hello")]},
        done("hello.txt is written."),
    ])
    sid = (await editor.new(ws)).session_id
    assert await editor.prompt(sid, "write hello.txt") == "end_turn"

    target = str(ws / "hello.txt")
    assert [w for w in editor.client.writes if w[0].startswith(str(ws))] == [(target, "hello\n")]
    assert (ws / "hello.txt").read_text() == "hello\n"
    [(_, asked, options)] = [p for p in editor.client.permissions if p[0] == sid]
    assert [(o.option_id, o.kind) for o in options] == [("allow", "allow_once"), ("always", "allow_always"), ("reject", "reject_once")]
    assert "autoApprove.modes.code.edit: true" in options[1].name
    [diff] = asked.content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == ("diff", target, None, "hello\n")
    card = editor.client.calls(sid)[asked.tool_call_id]
    assert (card["title"], card["kind"], card["statuses"]) == ("Write hello.txt", "edit", ["pending", "in_progress", "completed"])
    assert card["locations"] == [{"path": target}]
    assert "successfully saved to hello.txt" in text_of(card)
    kinds = [u.session_update for u in editor.client.updates[sid]]
    assert kinds.index("tool_call") < kinds.index("tool_call_update")
    assert editor.client.text(sid) == "I'll write it.hello.txt is written."  # the card is between them


async def test_a_write_the_client_fails_and_a_permission_answered_with_no_option_are_no(editor, tmp_path):
    ws = workspace_with(tmp_path / "ws", [
        {"toolCalls": [call("write_to_file", path="a.txt", content="a")]},
        {"toolCalls": [call("write_to_file", path="b.txt", content="b")]},
        done(),
    ])
    sid = (await editor.new(ws)).session_id
    editor.client.refuse_writes.add(sid)
    answers = iter(["allow", "no-such-option"])
    editor.client.policy[sid] = lambda tool_call, options: next(answers)
    assert await editor.prompt(sid, "write both") == "end_turn"
    failed = one_card(editor, sid, "Write a.txt")
    assert failed["status"] == "failed"
    assert text_of(failed).startswith("EditFailed: The editor did not apply the edit to a.txt: the client did not write a.txt: Internal error")
    denied = one_card(editor, sid, "Write b.txt")
    assert denied["status"] == "failed" and text_of(denied) == "Denied: The user denied this operation."
    assert not (ws / "a.txt").exists() and not (ws / "b.txt").exists()


async def test_without_client_files_the_server_writes_and_reads_the_disk(bare, tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"toolCalls": [call("write_to_file", path="a/b.txt", content="x")]}, done()])
    sid = (await bare.new(ws)).session_id
    assert await bare.prompt(sid, "go") == "end_turn"
    assert (ws / "a" / "b.txt").read_text() == "x\n"
    assert bare.client.writes == [] and bare.client.reads == []
    assert not list(ws.rglob("*.modus-tmp"))


async def test_reads_go_through_fs_read_text_file_so_unsaved_buffers_are_read(editor, tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"toolCalls": [call("read_file", path="notes.txt", start_line=1)]}, done()])
    (ws / "notes.txt").write_text("saved\n")
    editor.client.buffers[str(ws / "notes.txt")] = "unsaved\nlines\n"
    sid = (await editor.new(ws)).session_id
    assert await editor.prompt(sid, "read notes") == "end_turn"
    card = one_card(editor, sid, "Read notes.txt (lines 1–end)")
    assert card["kind"] == "read" and card["locations"] == [{"path": str(ws / "notes.txt"), "line": 1}]
    assert "1 | unsaved\n2 | lines" in text_of(card)
    assert str(ws / "notes.txt") in editor.client.reads


async def test_allow_always_writes_the_modes_rule_and_the_next_edit_asks_nothing(editor, tmp_path):
    ws = workspace_with(tmp_path / "ws", [
        {"toolCalls": [call("write_to_file", path="a.txt", content="a")]},
        {"toolCalls": [call("write_to_file", path="b.txt", content="b")]},
        done(),
    ])
    sid = (await editor.new(ws)).session_id
    editor.client.policy[sid] = lambda tool_call, options: "always" if any(o.option_id == "always" for o in options) else "allow"
    assert await editor.prompt(sid, "write both") == "end_turn"
    asked = [p[1] for p in editor.client.permissions if p[0] == sid]
    assert [a.title for a in asked] == ["Create a.txt?", "Always allow: write this rule to .modus/settings.json?"]
    [settings_diff] = asked[1].content
    assert settings_diff.path == str(ws / ".modus" / "settings.json") and '"edit": true' in settings_diff.new_text
    assert json.loads((ws / ".modus" / "settings.json").read_text())["autoApprove"] == {"modes": {"code": {"edit": True}}}
    assert (ws / "b.txt").read_text() == "b\n"


# ================================================================ modes and file rules


async def test_architect_refuses_a_code_file_with_FileRestrictionError(editor, tmp_path):
    ws = workspace_with(tmp_path / "ws", [
        {"toolCalls": [call("write_to_file", path="docs/design.md", content="# Design")]},
        {"toolCalls": [call("write_to_file", path="src/app.py", content="print('hi')")]},
        done(),
    ])
    sid = (await editor.new(ws)).session_id
    await asyncio.wait_for(editor.conn.set_session_mode(session_id=sid, mode_id="architect"), TIMEOUT)
    assert await editor.prompt(sid, "design, then code") == "end_turn"
    card = one_card(editor, sid, "Write src/app.py")
    assert card["status"] == "failed"
    assert text_of(card) == (
        "FileRestrictionError: Tool 'write_to_file' in mode 'Architect' can only edit files matching pattern: "
        "\\.md$ (Markdown files only). Got: src/app.py"
    )
    assert not (ws / "src" / "app.py").exists()
    assert [Path(p).name for p, _ in editor.client.writes if p.startswith(str(ws))] == ["design.md"]
    assert [p[1].title for p in editor.client.permissions if p[0] == sid] == ["Create docs/design.md?"]


async def test_set_mode_is_the_users_switch_and_the_models_switch_mode_is_reported(editor, tmp_path):
    ws = workspace_with(tmp_path / "ws", [
        {"toolCalls": [call("switch_mode", mode_slug="architect", reason="design first")]},
        done(),
    ])
    sid = (await editor.new(ws)).session_id
    await asyncio.wait_for(editor.conn.set_session_mode(session_id=sid, mode_id="ask"), TIMEOUT)
    await editor.client.wait_for(lambda: editor.client.of(sid, "current_mode_update"), "the mode update")
    assert [u.current_mode_id for u in editor.client.of(sid, "current_mode_update")] == ["ask"]
    assert not [p for p in editor.client.permissions if p[0] == sid]  # the user's switch asks nothing
    await expect_error(editor.conn.set_session_mode(session_id=sid, mode_id="nosuch"), -32602, "Invalid mode: nosuch")

    assert await editor.prompt(sid, "go") == "end_turn"
    [(_, asked, options)] = [p for p in editor.client.permissions if p[0] == sid]
    assert (asked.title, asked.kind) == ("Switch from Ask mode to Architect mode?", "switch_mode")
    assert [o.option_id for o in options] == ["allow", "reject"]
    assert [u.current_mode_id for u in editor.client.of(sid, "current_mode_update")] == ["ask", "architect"]
    configs = editor.client.of(sid, "config_option_update")
    assert configs[-1].config_options[0].current_value == "architect"
    assert one_card(editor, sid, "Switch to architect mode")["kind"] == "switch_mode"

    answer = await asyncio.wait_for(editor.conn.set_config_option(config_id="mode", session_id=sid, value="debug"), TIMEOUT)
    assert [o.current_value for o in answer.config_options] == ["debug", "act"]
    # the option's update came before the answer (a client shows the change in the order it happened)
    assert editor.client.of(sid, "config_option_update")[-1].config_options[0].current_value == "debug"
    await asyncio.wait_for(editor.conn.set_session_mode(session_id=sid, mode_id="code"), TIMEOUT)
    assert editor.client.of(sid, "current_mode_update")[-1].current_mode_id == "code"


# ================================================================ PLAN and ACT, plans, todos


async def test_plan_refuses_a_write_and_act_carries_the_plan_out(editor, tmp_path):
    ws = workspace_with(tmp_path / "ws", [
        {"toolCalls": [call("write_to_file", path="x.txt", content="x")]},
        {"toolCalls": [call("plan_mode_respond", response="I would write x.txt.")]},
        {"toolCalls": [call("write_to_file", path="x.txt", content="x")]},
        done("x.txt is there."),
    ])
    sid = (await editor.new(ws)).session_id
    answer = await asyncio.wait_for(editor.conn.set_config_option(config_id="phase", session_id=sid, value="plan"), TIMEOUT)
    assert [o.current_value for o in answer.config_options] == ["code", "plan"]
    assert await editor.prompt(sid, "add x") == "end_turn"
    card = one_card(editor, sid, "Write x.txt")
    assert card["status"] == "failed" and text_of(card).startswith("PlanModeBlocked: Tool 'write_to_file' cannot be used in PLAN MODE")
    assert "I would write x.txt." in editor.client.text(sid)
    assert not (ws / "x.txt").exists()

    before = len(editor.client.updates[sid])
    assert await editor.prompt(sid, "/act") == "end_turn"  # the waiting plan_mode_respond: carried out
    assert (ws / "x.txt").read_text() == "x\n"
    later = editor.client.updates[sid][before:]
    phases = [u.config_options[1].current_value for u in later if u.session_update == "config_option_update"]
    assert phases == ["act"]
    assert "x.txt is there." in editor.client.text(sid)


async def test_a_plan_with_approval_and_its_steps_as_plan_entries(editor, tmp_path):
    steps = [
        {"id": "1", "description": "Write a.txt", "files": ["a.txt"], "verification": "a.txt exists"},
        {"id": "2", "description": "Write b.txt", "files": ["b.txt"], "depends_on": ["1"], "verification": "b.txt exists"},
    ]
    ws = workspace_with(tmp_path / "ws", [
        {"toolCalls": [call("plan_enter", goal="Two files")]},
        {"toolCalls": [call("plan_exit", plan={"summary": "a then b", "approach": "write them", "steps": steps})]},
        {"toolCalls": [call("todo_write", todos=[{"id": "1", "content": "Write a.txt", "status": "in_progress"}, {"id": "2", "content": "Tell the user"}])]},
        {"toolCalls": [call("write_to_file", path="a.txt", content="a"), call("plan_step_complete", step_id="1", verification_result="ok")]},
        {"toolCalls": [call("write_to_file", path="b.txt", content="b"), call("plan_step_complete", step_id="2", verification_result="ok")]},
        {"toolCalls": [call("plan_complete", summary="Both written.")]},
        done(),
    ])
    sid = (await editor.new(ws)).session_id
    assert await editor.prompt(sid, "plan it") == "end_turn"

    plan_asks = [(p[1], p[2]) for p in editor.client.permissions if p[0] == sid and p[1].kind == "think"]
    [(asked, options)] = plan_asks
    assert asked.title == "Approve the plan: Two files?"
    assert [(o.option_id, o.name) for o in options] == [("allow", "Approve the plan"), ("revise", "Keep planning"), ("reject", "Reject the plan")]
    markdown = asked.content[0].content.text
    assert markdown.startswith("# Plan: Two files") and "Write a.txt" in markdown and "Write b.txt" in markdown
    shown = [[(e.content, e.status) for e in u.entries] for u in editor.client.of(sid, "plan")]
    tell = ("Tell the user", "pending")  # a todo that says what a step says is that step: not shown twice
    assert shown == [
        [("1. Write a.txt", "in_progress"), ("2. Write b.txt", "pending")],
        [("1. Write a.txt", "in_progress"), ("2. Write b.txt", "pending"), tell],
        [("1. Write a.txt", "completed"), ("2. Write b.txt", "in_progress"), tell],
        [("1. Write a.txt", "completed"), ("2. Write b.txt", "completed"), tell],
    ]
    phases = [u.config_options[1].current_value for u in editor.client.of(sid, "config_option_update")]
    assert phases == ["plan", "act"]  # plan_enter, then the approval
    assert (ws / "b.txt").read_text() == "b\n"


async def test_a_rejected_plan_shows_no_steps(bare, tmp_path):
    steps = [{"id": "1", "description": "Write a.txt", "verification": "exists"}]
    ws = workspace_with(tmp_path / "ws", [
        {"toolCalls": [call("plan_enter", goal="One file")]},
        {"toolCalls": [call("plan_exit", plan={"approach": "write it", "steps": steps})]},
        {"text": "Understood."},
    ])
    sid = (await bare.new(ws)).session_id
    bare.client.policy[sid] = lambda tool_call, options: "reject"
    assert await bare.prompt(sid, "plan it") == "end_turn"
    assert "Understood." in bare.client.text(sid)
    assert [u.entries for u in bare.client.of(sid, "plan")] == []
    assert not (ws / "a.txt").exists()


async def test_todos_are_plan_entries(bare, tmp_path):
    todos = [
        {"id": "1", "content": "Read the code", "status": "completed"},
        {"id": "2", "content": "Write the fix", "status": "in_progress", "priority": "high"},
        {"id": "3", "content": "Run the tests", "priority": "low"},
    ]
    ws = workspace_with(tmp_path / "ws", [{"toolCalls": [call("todo_write", todos=todos)]}, done()])
    sid = (await bare.new(ws)).session_id
    assert await bare.prompt(sid, "work") == "end_turn"
    [plan] = bare.client.of(sid, "plan")
    assert [(e.content, e.status, e.priority) for e in plan.entries] == [
        ("Read the code", "completed", "medium"), ("Write the fix", "in_progress", "high"), ("Run the tests", "pending", "low"),
    ]
    assert one_card(bare, sid, "Update the todo list")["kind"] == "think"


# ================================================================ commands and cancel


async def test_a_command_runs_in_the_clients_terminal(editor, tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"toolCalls": [call("execute_command", command="echo hi from $0")]}, done()])
    sid = (await editor.new(ws)).session_id
    created = len(editor.client.terminals)
    assert await editor.prompt(sid, "run it") == "end_turn"
    terminal = f"term-{created + 1}"
    assert ("create", "/bin/sh -c echo hi from $0") in editor.client.terminal_calls
    assert ("release", terminal) in editor.client.terminal_calls
    assert editor.client.terminals[terminal].output.decode() == "hi from /bin/sh\n"
    card = one_card(editor, sid, "`echo hi from $0`")
    assert card["kind"] == "execute" and card["status"] == "completed"
    assert card["content"] == [{"type": "terminal", "terminal_id": terminal}]


async def test_cancel_in_the_middle_of_a_command_in_the_clients_terminal(editor, tmp_path):
    ws = workspace_with(tmp_path / "ws", [
        {"toolCalls": [call("execute_command", command="echo started; sleep 60")]},
        {"text": "Still here."},
    ])
    sid = (await editor.new(ws)).session_id
    created = len(editor.client.terminals)
    terminal = f"term-{created + 1}"
    prompt = asyncio.create_task(editor.prompt(sid, "run it"))
    await editor.client.wait_for(
        lambda: terminal in editor.client.terminals and b"started" in editor.client.terminals[terminal].output, "the command to start"
    )
    await editor.conn.cancel(session_id=sid)
    assert await prompt == "cancelled"
    assert ("kill", terminal) in editor.client.terminal_calls and ("release", terminal) in editor.client.terminal_calls
    assert editor.client.terminals[terminal].killed
    card = one_card(editor, sid, "`echo started; sleep 60`")
    assert card["status"] == "failed" and "Cancelled" in text_of(card)
    assert await editor.prompt(sid, "are you there?") == "end_turn"  # the session goes on
    assert "Still here." in editor.client.text(sid)


async def test_cancel_in_the_middle_of_a_command_the_server_runs(bare, tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"toolCalls": [call("execute_command", command="echo $$ > pid.txt; exec sleep 60")]}])
    sid = (await bare.new(ws)).session_id
    prompt = asyncio.create_task(bare.prompt(sid, "run it"))
    await bare.client.wait_for(lambda: any(c["status"] == "in_progress" for c in bare.client.calls(sid).values()), "the command to run")
    for _ in range(2000):  # the shell has started once it wrote its pid
        if (ws / "pid.txt").exists() and (ws / "pid.txt").read_text().strip():
            break
        await asyncio.sleep(0.005)
    await bare.conn.cancel(session_id=sid)
    assert await prompt == "cancelled"
    pid = int((ws / "pid.txt").read_text())
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"


async def test_max_turn_requests_when_the_user_stops_at_the_limit(bare, tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"toolCalls": [call("list_files", path=".")]}, {"text": "more"}], maxRequestsPerTurn=1)
    sid = (await bare.new(ws)).session_id
    bare.client.policy[sid] = lambda tool_call, options: "reject"
    # the workspace's maxRequestsPerTurn decides how long a turn runs unasked: it waits for trust
    assert await bare.prompt(sid, "/trust go") == "max_turn_requests"
    [(_, asked, options)] = [p for p in bare.client.permissions if p[0] == sid]
    assert asked.title == "modus has made 1 model requests in this turn. Continue?"
    assert [o.option_id for o in options] == ["allow", "reject"]


async def test_slash_commands_switch_mode_and_phase_without_a_model_request(bare, tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"text": "first turn of the script"}])
    sid = (await bare.new(ws)).session_id
    assert await bare.prompt(sid, "/mode architect") == "end_turn"
    assert await bare.prompt(sid, "/plan") == "end_turn"
    assert await bare.prompt(sid, "/plan") == "end_turn"
    assert await bare.prompt(sid, "/mode nosuch") == "end_turn"
    assert [u.current_mode_id for u in bare.client.of(sid, "current_mode_update")] == ["architect"]
    assert bare.client.of(sid, "config_option_update")[-1].config_options[1].current_value == "plan"
    said = bare.client.text(sid)
    assert said == (
        "> **Modus:** The mode is Architect.\n\n> **Modus:** ACT → PLAN\n\n> **Modus:** The phase is PLAN already.\n\n"
        "> **Modus:** /mode: Invalid mode: nosuch"
    )
    assert "first turn of the script" not in said  # no model request so far
    assert await bare.prompt(sid, "/path/to/file is not a command") == "end_turn"
    assert "first turn of the script" in bare.client.text(sid)


async def test_plan_change_plans_in_the_attached_code_s_file(bare, tmp_path):
    """"Plan a change here" over ACP: the selection comes as an embedded resource; plan mode
    starts scoped to its file (a read elsewhere is refused), and the plan is put to the user."""
    steps = [{"id": "1", "description": "Add the parameter", "verification": "it runs"}]
    ws = workspace_with(tmp_path / "ws", [
        {"toolCalls": [call("read_file", path="other.txt")]},
        {"toolCalls": [call("read_file", path="src/app.py")]},
        {"toolCalls": [call("plan_exit", plan={"approach": "a keyword parameter", "steps": steps})]},
        {"text": "Kept as it is."},
    ])
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("def greet(name):\n    return f'Hello, {name}!'\n")
    (ws / "other.txt").write_text("elsewhere\n")
    sid = (await bare.new(ws)).session_id
    assert await bare.prompt(sid, "/plan-change") == "end_turn"
    assert "add a selection or a file to the prompt" in bare.client.text(sid)

    bare.client.policy[sid] = lambda tool_call, options: "reject"
    selection = acp.EmbeddedResourceContentBlock(type="resource", resource=acp.TextResourceContents(
        uri=f"{(ws / 'src' / 'app.py').as_uri()}#L1:2", text="def greet(name):\n    return f'Hello, {name}!'", mime_type="text/x-python"))
    answer = await asyncio.wait_for(bare.conn.prompt(session_id=sid, prompt=[text_block("/plan-change Let greet() take the greeting"), selection]), TIMEOUT)
    assert answer.stop_reason == "end_turn"
    refused = one_card(bare, sid, "Read other.txt")
    assert refused["status"] == "failed" and text_of(refused).startswith("PlanModeBlocked:") and "src/app.py" in text_of(refused)
    assert one_card(bare, sid, "Read src/app.py")["status"] == "completed"
    [(_, asked, _)] = [p for p in bare.client.permissions if p[0] == sid]
    assert asked.title == "Approve the plan: Let greet() take the greeting?"
    assert bare.client.of(sid, "config_option_update")[0].config_options[1].current_value == "plan"


async def test_trust_applies_the_workspaces_risky_settings(bare, tmp_path):
    ws = workspace_with(tmp_path / "ws", [
        {"toolCalls": [call("write_to_file", path="a.txt", content="a")]},
        {"toolCalls": [call("write_to_file", path="b.txt", content="b")]},
        done(),
    ], autoApprove={"edit": True})
    sid = (await bare.new(ws)).session_id
    bare.client.policy[sid] = lambda tool_call, options: "allow"
    assert await bare.prompt(sid, "/trust write a") == "end_turn"
    said = bare.client.text(sid)
    assert "sets autoApprove: not applied until you trust" in said and "Trusted as it is now: autoApprove." in said
    assert [p for p in bare.client.permissions if p[0] == sid] == []  # trusted before the message went to the model
    assert (ws / "a.txt").exists()


async def test_condense_summarises_the_older_part_of_the_session(bare, tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"text": "One."}, {"text": "Two."}, {"text": "The user said one and two."}])
    sid = (await bare.new(ws)).session_id
    assert await bare.prompt(sid, "/condense") == "end_turn"
    assert "Nothing to condense: the conversation has no messages yet." in bare.client.text(sid)
    assert await bare.prompt(sid, "one") == "end_turn"
    assert await bare.prompt(sid, "two") == "end_turn"
    assert await bare.prompt(sid, "/condense") == "end_turn"
    assert re.search(r"Condensed the conversation: [\d,]+ → [\d,]+ tokens\.", bare.client.text(sid))


# ================================================================ load


async def test_load_replays_a_saved_session_after_a_restart(config_home, tmp_path):
    ws = workspace_with(tmp_path / "ws", [
        {"text": "Let me look.", "toolCalls": [call("read_file", path="a.txt")]},
        {"toolCalls": [call("write_to_file", path="src/x.py", content="x = 1")]},
        done("All read."),
    ])
    (ws / "a.txt").write_text("alpha\n")
    async with modus_acp(config_home) as first:
        sid = (await first.new(ws)).session_id
        await asyncio.wait_for(first.conn.set_session_mode(session_id=sid, mode_id="architect"), TIMEOUT)
        assert await first.prompt(sid, "read a.txt") == "end_turn"
        live = first.client.calls(sid)
    async with modus_acp(config_home) as second:
        loaded = await asyncio.wait_for(second.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[]), TIMEOUT)
        assert loaded.modes.current_mode_id == "architect"
        assert loaded.config_options[0].current_value == "architect"
        replayed = second.client.updates[sid]
        assert replayed[0].session_update == "user_message_chunk" and replayed[0].content.text == "read a.txt"
        assert second.client.text(sid) == "Let me look.All read."
        cards = second.client.calls(sid)
        assert [(c["title"], c["status"]) for c in cards.values()] == [("Read a.txt", "completed"), ("Write src/x.py", "failed")]
        assert [(c["title"], c["status"]) for c in live.values()] == [("Read a.txt", "completed"), ("Write src/x.py", "failed")]
        assert text_of(cards[next(iter(cards))]).endswith("1 | alpha\n```")
        assert "FileRestrictionError" in text_of(list(cards.values())[1])
        assert await second.prompt(sid, "and now?") == "end_turn"  # the session goes on
        await expect_error(second.conn.load_session(cwd=str(ws), session_id="conv-nosuch", mcp_servers=[]), -32602, "conv-nosuch")


# ================================================================ bad requests, raw


class Raw:
    """The agent over its pipes, line by line: what a client that makes mistakes sends."""

    def __init__(self, process: asyncio.subprocess.Process, workspace: Path | None = None, stderr: list[str] | None = None):
        self.process = process
        self.next_id = 100
        self.seen: list[dict] = []  # what came before the answers waited for
        self.received: list[dict] = []  # everything read, in order
        self.workspace = workspace
        self.stderr = stderr if stderr is not None else []  # its log lines, when they are read

    async def send(self, line: str | dict) -> None:
        data = line if isinstance(line, str) else json.dumps(line)
        assert self.process.stdin is not None
        self.process.stdin.write(data.encode() + b"\n")
        await self.process.stdin.drain()

    async def read(self) -> dict:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), TIMEOUT)
        assert line, "the agent closed its output"
        self.received.append(json.loads(line))
        return self.received[-1]

    async def answer(self, msg_id) -> dict:
        """The response to `msg_id` (notifications and requests of the agent before it are kept)."""
        while True:
            message = await self.read()
            if "method" not in message and message.get("id") == msg_id:
                return message
            self.seen.append(message)

    async def request(self, method: str, params) -> dict:
        self.next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await self.answer(self.next_id)


async def test_bad_requests_are_answered_with_json_rpc_errors_and_the_agent_goes_on(config_home, tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"toolCalls": [call("write_to_file", path="a.txt", content="a")]}, done()])
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CONFIG_HOME": str(config_home)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", "acp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=env, cwd=str(tmp_path),
    )
    raw = Raw(process)
    try:
        await raw.send("this is not json")
        assert (await raw.read())["error"]["code"] == -32700
        await raw.send("[1, 2]")
        reply = await raw.read()
        assert (reply["id"], reply["error"]["code"]) == (None, -32600)
        await raw.send({"jsonrpc": "1.0", "id": 7, "method": "initialize"})
        reply = await raw.read()
        assert (reply["id"], reply["error"]["code"]) == (7, -32600)

        error = (await raw.request("nosuch/method", {}))["error"]
        assert error["code"] == -32601
        assert (await raw.request("initialize", {"protocolVersion": 1}))["result"]["protocolVersion"] == 1

        error = (await raw.request("session/new", {"mcpServers": []}))["error"]
        assert (error["code"], error["message"]) == (-32602, "Invalid params: cwd: Field required")
        assert error["data"] == {"errors": [{"loc": ["cwd"], "msg": "Field required", "type": "missing"}]}
        error = (await raw.request("session/new", {"cwd": 5, "mcpServers": []}))["error"]
        assert (error["code"], error["message"]) == (-32602, "Invalid params: cwd: Input should be a valid string")
        error = (await raw.request("session/new", {"cwd": "relative/path", "mcpServers": []}))["error"]
        assert error == {"code": -32602, "message": "cwd: must be the absolute path of a folder, got 'relative/path'", "data": None}
        error = (await raw.request("session/prompt", {"sessionId": "conv-nosuch", "prompt": [{"type": "text", "text": "hi"}]}))["error"]
        assert error["code"] == -32602 and "unknown session: conv-nosuch" in error["message"]
        error = (await raw.request("session/load", {"cwd": str(ws), "sessionId": "conv-nosuch", "mcpServers": []}))["error"]
        assert error["code"] == -32602 and "no session conv-nosuch" in error["message"]

        sid = (await raw.request("session/new", {"cwd": str(ws), "mcpServers": []}))["result"]["sessionId"]
        error = (await raw.request("session/set_mode", {"sessionId": sid, "modeId": "nosuch"}))["error"]
        assert error == {"code": -32602, "message": "modeId: Invalid mode: nosuch", "data": None}
        error = (await raw.request("session/set_config_option", {"sessionId": sid, "configId": "model", "value": "x"}))["error"]
        assert error["code"] == -32602 and "configId" in error["message"]
        error = (await raw.request("session/set_config_option", {"sessionId": sid, "configId": "phase", "value": "later"}))["error"]
        assert error["code"] == -32602 and "'plan' or 'act'" in error["message"]
        image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        error = (await raw.request("session/prompt", {"sessionId": sid, "prompt": [image]}))["error"]
        assert error["code"] == -32602 and "images[0].data: not a PNG, JPEG, WebP or GIF image" in error["message"]

        # a prompt waits for a permission; a second prompt meanwhile is refused; cancel answers it
        await raw.send({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}})
        while True:
            message = await raw.read()
            if message.get("method") == "session/request_permission":
                break
        error = (await raw.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "again"}]}))["error"]
        assert error["code"] == -32600 and "already running" in error["message"]
        await raw.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
        await raw.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": {"outcome": "cancelled"}}})
        assert (await raw.answer(1))["result"]["stopReason"] == "cancelled"
        assert not (ws / "a.txt").exists()
        # still answering
        result = (await raw.request("session/set_config_option", {"sessionId": sid, "configId": "phase", "value": "plan"}))["result"]
        assert [o["currentValue"] for o in result["configOptions"]] == ["code", "plan"]
    finally:
        assert process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), TIMEOUT)
    assert process.returncode == 0


@contextlib.asynccontextmanager
async def raw_agent(config_home: Path, tmp_path: Path):
    """`modus acp` spoken to line by line, initialized, with a session in a workspace: (raw, session id)."""
    ws = workspace_with(tmp_path / "ws", [{"text": "Hello."}, {"text": "Hello again."}])
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CONFIG_HOME": str(config_home)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", "acp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=str(tmp_path), limit=1 << 24,
    )
    stderr: list[str] = []

    async def drain() -> None:
        assert process.stderr is not None
        while line := await process.stderr.readline():
            stderr.append(line.decode(errors="replace"))

    reader = asyncio.create_task(drain())
    raw = Raw(process, ws, stderr)
    try:
        assert (await raw.request("initialize", {"protocolVersion": 1}))["result"]["protocolVersion"] == 1
        sid = (await raw.request("session/new", {"cwd": str(ws), "mcpServers": []}))["result"]["sessionId"]
        yield raw, sid
    finally:
        assert process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), TIMEOUT)
        await reader
    assert process.returncode == 0
    assert not [line for line in stderr if "Traceback" in line or "Logging error" in line], "".join(stderr)


def nested(levels: int, kind: str = "[") -> str:
    """JSON text of `levels` nested arrays, or objects {"a": …}."""
    return "[" * levels + "]" * levels if kind == "[" else '{"a":' * levels + "1" + "}" * levels


async def goes_on(raw: Raw, sid: str) -> None:
    """The agent answers the next requests: a new session, and a prompt."""
    assert "sessionId" in (await raw.request("session/new", {"cwd": str(raw.workspace), "mcpServers": []}))["result"]
    prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
    assert (await raw.request("session/prompt", prompt))["result"]["stopReason"] == "end_turn"
    assert "traceback" not in json.dumps(raw.received).lower()


TOO_DEEP = {"code": -32700, "message": "Parse error: nested deeper than 128 levels"}


async def test_wire_nesting_too_deep_is_a_parse_error_and_the_agent_goes_on(config_home, tmp_path):
    async with raw_agent(config_home, tmp_path) as (raw, sid):
        await raw.send(nested(100_000))  # 200 KB of brackets: json.loads gives up
        assert (await raw.answer(None))["error"] == TOO_DEEP
        await raw.send('{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"%s","prompt":[%s]}}'
                       % (sid, nested(100_000, "{")))  # its id cannot be read
        assert (await raw.answer(None))["error"] == TOO_DEEP
        for msg_id, params in enumerate([
            '{"sessionId":"%s","prompt":[{"type":"text","text":"hi"}],"_meta":%s}' % (sid, nested(500)),
            '{"sessionId":"%s","prompt":[{"type":"text","text":"hi","_meta":%s}]}' % (sid, nested(500, "{")),
            '{"sessionId":"%s","prompt":[{"type":"text","text":"hi","_meta":{"x":%s}}]}' % (sid, nested(124)),  # one level too many
        ], start=6):
            await raw.send('{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":%s}' % (msg_id, params))
            assert (await raw.answer(msg_id))["error"] == TOO_DEEP
        await raw.send('{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":1,"_meta":%s}}' % nested(500))
        assert (await raw.answer(9))["error"] == TOO_DEEP
        # a notification and a response nobody waits for: dropped, with a log line
        await raw.send('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"%s","_meta":%s}}' % (sid, nested(500)))
        await raw.send('{"jsonrpc":"2.0","id":77,"result":%s}' % nested(500))
        await goes_on(raw, sid)
        assert not [m for m in raw.seen if "error" in m]
    assert len([line for line in raw.stderr if "nested deeper than 128 levels" in line]) == 2 + 2 + 4


async def test_wire_nesting_up_to_the_limit_is_served_by_the_agent(config_home, tmp_path):
    async with raw_agent(config_home, tmp_path) as (raw, sid):
        params = '{"sessionId":"%s","prompt":[{"type":"text","text":"hi","_meta":{"x":%s}}]}' % (sid, nested(123))
        await raw.send('{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":%s}' % params)  # 128 levels
        assert (await raw.answer(5))["result"]["stopReason"] == "end_turn"


async def test_wire_surrogate_in_a_prompt_is_invalid_params_and_the_agent_goes_on(config_home, tmp_path):
    lone = r"ab\ud800c"  # as JSON text: a lone high surrogate, the third character
    async with raw_agent(config_home, tmp_path) as (raw, sid):
        for params, field in [
            ('{"sessionId":"%s","prompt":[{"type":"text","text":"%s"}]}' % (sid, lone), "prompt.0.text"),
            ('{"sessionId":"%s","prompt":[{"type":"text","text":"hi"}]}' % lone, "sessionId"),
            ('{"sessionId":"%s","prompt":[{"type":"resource","resource":{"uri":"file:///a.py","text":"%s"}}]}' % (sid, lone),
             "prompt.0.resource.text"),
        ]:
            await raw.send('{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":%s}' % params)
            assert (await raw.answer(5))["error"] == {
                "code": -32602, "message": f"Invalid params: {field}: invalid Unicode: a lone surrogate (\\ud800) at character 3"}
        for method, params, field in [
            ("session/set_mode", '{"sessionId":"%s","modeId":"%s"}' % (sid, lone), "modeId"),
            ("session/load", '{"cwd":"%s","sessionId":"%s","mcpServers":[]}' % (raw.workspace, lone), "sessionId"),
            ("session/new", '{"cwd":"/tmp/%s","mcpServers":[]}' % lone, "cwd"),
        ]:
            await raw.send('{"jsonrpc":"2.0","id":6,"method":"%s","params":%s}' % (method, params))
            error = (await raw.answer(6))["error"]
            assert error["code"] == -32602 and error["message"].startswith(f"Invalid params: {field}: invalid Unicode"), error
        await goes_on(raw, sid)


async def test_the_demo_over_acp_tells_the_whole_story(tmp_path):
    """`modus demo --acp`: the LSP demo's story and script, driven over ACP, to the same program."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CONFIG_HOME": str(tmp_path)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", "demo", "--acp", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env, cwd=str(tmp_path),
    )
    out, _ = await asyncio.wait_for(process.communicate(), 2 * TIMEOUT)
    text = out.decode()
    assert process.returncode == 0, text
    for seen in ("permission asked: Switch from Code mode to Architect mode?", "FileRestrictionError", "src/app.py on disk: not written",
                 "PlanModeBlocked", "permission asked: Approve the plan", "✓ 1. Give greet() a greeting parameter  ✓ 2. Say so in the design",
                 "mode → ask", "HELLO, ADA!", "The demo ran as expected."):
        assert seen in text, text


async def test_two_sessions_in_one_workspace_and_the_session_list(bare, tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"text": "Hello there."}])
    first = (await bare.new(ws)).session_id
    files = acp.McpServerStdio(name="files", command="mcp-files", args=["--root", "."], env=[acp.EnvVariable(name="K", value="v")])
    second = (await asyncio.wait_for(bare.conn.new_session(cwd=str(ws), mcp_servers=[files]), TIMEOUT)).session_id
    assert first != second
    assert await bare.prompt(first, "the first thread") == "end_turn"
    assert await bare.prompt(second, "the second thread") == "end_turn"
    assert bare.client.text(first) == bare.client.text(second) == "Hello there."  # each its own conversation
    listed = await asyncio.wait_for(bare.conn.list_sessions(cwd=str(ws)), TIMEOUT)
    assert {(s.session_id, s.title) for s in listed.sessions} == {(first, "the first thread"), (second, "the second thread")}
    assert all(s.cwd == str(ws) and s.updated_at for s in listed.sessions)
    assert bare.initialized.agent_capabilities.session_capabilities.list is not None


async def test_the_clients_mcp_servers_are_added_to_the_configured_ones(bare, tmp_path):
    toolbox = Path(__file__).resolve().parents[1] / "mcp_servers" / "toolbox.py"
    ws = workspace_with(tmp_path / "ws", [
        {"toolCalls": [call("use_mcp_tool", server_name="files", tool_name="echo", arguments={"text": "hi"})]},
        done("It echoed."),
    ])
    files = acp.McpServerStdio(name="files", command=sys.executable, args=[str(toolbox), "files"], env=[])
    sid = (await asyncio.wait_for(bare.conn.new_session(cwd=str(ws), mcp_servers=[files]), TIMEOUT)).session_id
    assert await bare.prompt(sid, "echo hi") == "end_turn"
    [card] = [c for c in bare.client.calls(sid).values() if "files says: hi" in text_of(c)]
    assert card["statuses"][-1] == "completed"  # the editor's own server: started without asking


async def test_a_new_session_leaves_a_running_turn_of_the_same_workspace_alone(bare, tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"toolCalls": [call("write_to_file", path="a.txt", content="a")]}, done()])
    first = (await bare.new(ws)).session_id
    go_on = asyncio.Event()

    async def later(tool_call, options):
        await go_on.wait()
        return "allow"

    bare.client.policy[first] = later
    running = asyncio.create_task(bare.prompt(first, "write a"))
    await bare.client.wait_for(lambda: any(p[0] == first for p in bare.client.permissions), "the permission")
    second = (await bare.new(ws)).session_id  # its Session must not take the running turn for an interrupted one
    go_on.set()
    assert await running == "end_turn"
    assert (ws / "a.txt").read_text() == "a\n"
    before = len(bare.client.updates[first])
    await asyncio.wait_for(bare.conn.load_session(cwd=str(ws), session_id=first, mcp_servers=[]), TIMEOUT)
    replayed = bare.client.updates[first][before:]
    assert [u.session_update for u in replayed][:3] == ["user_message_chunk", "tool_call", "tool_call_update"]
    assert not [u for u in replayed if u.session_update == "agent_message_chunk" and "interrupted" in u.content.text]


async def test_mode_files_are_read_again_their_problems_told_and_the_options_list_the_new_modes(bare, tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"text": "one"}, {"text": "two"}])
    modes = ws / ".modus" / "modes.yaml"
    modes.write_text("customModes:\n  - slug: Bad Slug!\n    name: Bad\n    roleDefinition: x\n    groups: [read]\n")
    sid = (await bare.new(ws)).session_id
    assert await bare.prompt(sid, "hi") == "end_turn"
    said = bare.client.text(sid)
    assert f"{modes}:2:" in said and "one" in said
    modes.write_text("customModes:\n  - slug: reviewer\n    name: Reviewer\n    roleDefinition: You review.\n    groups: [read]\n")
    assert await bare.prompt(sid, "again") == "end_turn"
    [update] = bare.client.of(sid, "config_option_update")
    assert [o.value for o in update.config_options[0].options][-1] == "reviewer"


async def test_the_models_thinking_streams_as_thought_chunks(bare, tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"thinking": "The user wants a greeting.", "text": "Hello."}])
    sid = (await bare.new(ws)).session_id
    assert await bare.prompt(sid, "hi") == "end_turn"
    assert bare.client.text(sid, "agent_thought_chunk") == "The user wants a greeting."
    assert bare.client.text(sid) == "Hello."  # the thinking is not the answer


async def test_initialize_is_answered_before_the_agent_loads_and_unreadable_capabilities_count_as_none(config_home: Path, tmp_path: Path):
    """`initialize` comes first and is answered at once (the ACP package loads meanwhile); what
    the package cannot read of the client's capabilities is told in the log and taken as none."""
    ws = workspace_with(tmp_path / "ws", [{"text": "Hello."}])
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "XDG_CONFIG_HOME": str(config_home)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", "acp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=str(tmp_path),
    )
    raw = Raw(process, ws)
    try:
        answer = await raw.request("initialize", {"protocolVersion": 3, "clientCapabilities": {"fs": 5}})
        assert answer["result"]["protocolVersion"] == 1 and answer["result"]["agentInfo"]["name"] == "modus"
        sid = (await raw.request("session/new", {"cwd": str(ws), "mcpServers": []}))["result"]["sessionId"]
        assert (await raw.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}))["result"]["stopReason"] == "end_turn"
    finally:
        assert process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), TIMEOUT)
    log = (await process.stderr.read()).decode()
    assert "initialize: the client's capabilities could not be read" in log and "taken as none" in log


async def test_the_workspace_slash_commands_are_listed_and_sent_expanded(editor, tmp_path):
    ws = workspace_with(tmp_path / "ws", [done("Reviewed.")])
    (ws / ".claude" / "commands").mkdir(parents=True)
    (ws / ".claude" / "commands" / "review.md").write_text("---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $1 with care.")
    (ws / ".claude" / "commands" / "plan.md").write_text("Modus's own /plan comes first.")
    sid = (await editor.new(ws)).session_id
    [commands] = await editor.client.wait_for(lambda: editor.client.of(sid, "available_commands_update") or None, "the commands")
    listed = {c.name: c for c in commands.available_commands}
    assert list(listed) == ["plan", "act", "mode", "plan-change", "trust", "condense", "review"]
    assert listed["review"].description == "Review a file" and listed["review"].input.root.hint == "<file>"
    assert await editor.prompt(sid, "/review app.py") == "end_turn"
    from server.state import Store

    store = Store(ws / ".modus" / "state")
    try:
        [user] = [m for m in store.messages(sid) if m.role == "user"]
    finally:
        store.close()
    assert (user.text, user.metadata["typed"]) == ("Review app.py with care.", "/review app.py")


async def test_a_hook_that_failed_is_a_note_and_one_that_blocked_a_call_its_card(tmp_path):
    config = tmp_path / "config"
    (config / "modus").mkdir(parents=True)
    (config / "modus" / "settings.json").write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo 'No shell here.' >&2; exit 2"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "echo 'lint is missing' >&2; exit 1"}]}],
    }}))
    ws = workspace_with(tmp_path / "ws", [{"toolCalls": [call("execute_command", command="rm -rf build")]}, done("Left as it is.")])
    async with modus_acp(config, EDITOR) as agent:
        sid = (await agent.new(ws)).session_id
        assert await agent.prompt(sid, "clean up") == "end_turn"
        card = one_card(agent, sid, "`rm -rf build`")
        said = agent.client.text(sid)
    assert card["status"] == "failed" and text_of(card) == "HookBlocked: No shell here."
    assert "The Stop hook `echo 'lint is missing' >&2; exit 1` failed: lint is missing" in said
