"""Plan mode over the wire (SPEC §4): enter, explore inside the scope, present, the user's
decision, execute step by step, complete — and the plan surviving a SIGKILL."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from protocol import Command, methods

from .conftest import script
from .editor import Editor


def call(name: str, **arguments) -> dict:
    return {"toolCalls": [{"name": name, "arguments": arguments}]}


PLAN = {
    "summary": "Greet loudly",
    "approach": "Add a shout flag to main()",
    "steps": [
        {"id": "1", "description": "Add the flag", "files": ["src/app.py"], "verification": "python src/app.py --shout"},
        {"id": "2", "description": "Document it", "files": ["docs/usage.md"], "depends_on": ["1"], "verification": "read it"},
    ],
    "estimated_complexity": "small",
}
ENTER = call("plan_enter", goal="Add --shout", scope=["src"])
EXIT = call("plan_exit", plan=PLAN)


def plan_states(editor: Editor) -> list[str]:
    return [u["state"] for u in editor.of_kind("plan")]


def failures(editor: Editor) -> list[tuple[str, str, str]]:
    return [(u["name"], u["error"]["type"], u["error"]["message"]) for u in editor.of_kind("tool_call") if u["status"] == "failed"]


async def test_a_plan_from_enter_to_complete(editor, workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('hi')\n")
    (workspace / "README.md").write_text("readme\n")
    await editor.start(
        {
            **script(
                workspace,
                ENTER,
                call("read_file", path="README.md"),  # outside the scope
                call("read_file", path="src/app.py"),
                call("write_to_file", path="src/app.py", content="x"),  # not on the allow-list
                call("plan_exit", plan={**PLAN, "approach": "", "steps": []}),  # invalid: named fields
                EXIT,  # the user approves
                call("write_to_file", path="src/app.py", content="print('HI')\n"),
                call("plan_step_complete", step_id=1, verification_result="HI"),
                call("write_to_file", path="docs/usage.md", content="--shout\n"),
                call("plan_step_complete", step_id="2", verification_result="ok"),
                call("plan_complete", summary="Shouting works."),
                {"text": "Done."},
            ),
            "autoApprove": {"edit": True},
        }
    )
    assert (await editor.chat("Make it shout"))["outcome"] == "completed"

    refused = failures(editor)
    assert refused[0] == ("read_file", "PlanModeBlocked", "Tool 'read_file' cannot read README.md: the plan's scope is src. Read inside the scope.")
    assert refused[1][:2] == ("write_to_file", "PlanModeBlocked")
    assert "the plan state is planning (a plan is being drafted)" in refused[1][2] and "only these run: " in refused[1][2]
    assert refused[2][:2] == ("plan_exit", "InvalidParams")
    assert "- approach: must not be empty" in refused[2][2] and "- steps: must list at least one step" in refused[2][2]
    assert len(refused) == 3

    [approval] = editor.approvals
    assert approval["kind"] == "plan" and approval["title"] == "Approve the plan: Add --shout?"
    assert "Status: pending approval" in approval["detail"] and "Add the flag" in approval["detail"]
    assert plan_states(editor) == ["planning", "awaiting_approval", "executing", "executing", "executing", "normal"]
    # the plan changes when plan_enter runs, after the gate's checks: its `running` comes first
    kinds = [(u["kind"], u.get("name"), u.get("status")) for u in editor.updates if u["kind"] in ("tool_call", "plan")]
    assert kinds.index(("tool_call", "plan_enter", "running")) < kinds.index(("plan", None, None))
    assert [(u["from"], u["to"]) for u in editor.of_kind("phase_changed")] == [("act", "plan"), ("plan", "act")]
    assert editor.of_kind("plan")[3]["completedSteps"] == ["1"]
    assert (workspace / "src" / "app.py").read_text() == "print('HI')\n"

    state = await editor.request(methods.STATE)
    assert state["plan"]["state"] == "normal" and state["phase"] == "act"
    [plan_file] = (workspace / ".modus" / "plans").glob("*.md")
    text = plan_file.read_text()
    assert "Status: completed" in text and "Shouting works." in text and "HI" in text


@pytest.mark.parametrize(
    ("answer", "state", "result"),
    [
        ({"decision": "revise", "feedback": "Also cover --quiet"}, "planning", "The user wants changes to the plan: Also cover --quiet."),
        ({"decision": "deny", "feedback": "Not now"}, "normal", "The user rejected the plan. Their feedback: Not now"),
    ],
)
async def test_the_users_answer_to_a_plan(editor, workspace, answer, state, result):
    editor.decide = lambda request: answer
    await editor.start(script(workspace, ENTER, EXIT, {"text": "ok"}))
    await editor.chat("Plan it")
    [exit_call] = [u for u in editor.of_kind("tool_call") if u["name"] == "plan_exit" and u["status"] == "completed"]
    assert exit_call["result"].startswith(result)
    assert (await editor.request(methods.STATE))["plan"]["state"] == state
    if state == "normal":
        [plan_file] = (workspace / ".modus" / "plans").glob("*.md")
        assert "Status: rejected" in plan_file.read_text()


async def test_the_palette_answers_a_waiting_plan(editor, workspace):
    never: asyncio.Future = asyncio.get_running_loop().create_future()
    editor.decide = lambda request: never  # the card stays unanswered
    await editor.start(script(workspace, ENTER, EXIT, {"text": "on it"}))
    await editor.request(methods.CHAT_SEND, {"text": "Plan it"})
    await editor.wait_for(lambda: editor.approvals)
    state = await editor.command(Command.PLAN_APPROVE)
    await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    assert editor.approval_ids[0] in editor.cancelled_requests  # the card was withdrawn
    assert state["plan"]["state"] == "executing" and state["phase"] == "act"
    with pytest.raises(JsonRpcException) as nothing:
        await editor.request(methods.PLAN_APPROVE, {})
    assert nothing.value.code == -32602 and "No plan to approve: the plan state is executing" in nothing.value.message


async def test_plan_a_change_here_enters_planning_scoped_to_the_file(editor, workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("a = 1\nb = 2\nc = 3\n")
    await editor.start(script(workspace, call("read_file", path="src/app.py"), call("list_files", path="."), {"text": "Thinking."}))
    uri = (workspace / "src" / "app.py").as_uri()
    rng = {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 5}}
    state = await editor.command(Command.PLAN_SELECTION, {"uri": uri, "range": rng, "goal": "Rename b"})
    assert state["plan"]["state"] == "planning" and state["plan"]["scope"] == ["src/app.py"] and state["phase"] == "plan"
    await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    messages = (await editor.request(methods.CHAT_HISTORY, {"conversationId": state["conversationId"]}))["messages"]
    assert messages[0]["text"].startswith("Plan a change here: Rename b\n\nFile: src/app.py, lines 2-3:\n2 | b = 2\n3 | c = 3")
    assert [(name, kind) for name, kind, _ in failures(editor)] == [("list_files", "PlanModeBlocked")]  # the root is outside


async def test_a_plan_waiting_for_approval_survives_a_sigkill(workspace, tmp_path):
    first = Editor(workspace, tmp_path / "config")
    never: asyncio.Future = asyncio.get_running_loop().create_future()
    first.decide = lambda request: never
    settings = script(workspace, ENTER, EXIT, call("plan_step_complete", step_id="1", verification_result="fine"), {"text": "Going on."})
    await first.start(settings)
    try:
        await first.request(methods.CHAT_SEND, {"text": "Plan it"})
        await first.wait_for(lambda: first.approvals)
        todo = (await first.request(methods.STATE))["plan"]
    finally:
        await first.kill()
    second = Editor(workspace, tmp_path / "config")
    await second.start(settings)
    try:
        before = await second.request(methods.STATE)
        assert before["plan"]["state"] == "awaiting_approval" and before["plan"]["planId"] == todo["planId"]
        assert before["plan"]["plan"]["steps"][0]["id"] == "1" and before["phase"] == "plan"
        after = await second.request(methods.PLAN_APPROVE, {"feedback": "go"})
        assert after["plan"]["state"] == "executing" and after["phase"] == "act"
        await second.wait_for(lambda: second.of_kind("turn_ended"))  # the agent was told and went on
        told = [u["text"] for u in second.of_kind("message") if u["role"] == "system"]
        assert any(t.startswith("The user approved the plan; the phase is ACT MODE. The user adds: go") for t in told)
    finally:
        await second.stop()


async def test_environment_details_carry_the_plan_and_the_todos(editor, workspace):
    todos = call("todo_write", todos=[{"content": "Add the flag", "status": "in_progress"}, {"content": "Document it"}])
    await editor.start({**script(workspace, ENTER, todos, EXIT, {"text": "ok"}), "autoApprove": {"edit": True}})
    await editor.chat("Plan it")
    env = (await editor.request(methods.PROMPT_GET, {}))["environmentDetails"]
    plan_part = env[env.index("# Plan\n") : env.index("# Todos\n")]
    assert "State: executing (the approved plan is being carried out)\nGoal: Add --shout\nScope (reads stay inside): src\n" in plan_part
    assert "- [-] 1. Add the flag\n- [ ] 2. Document it\nCurrent step: 1" in plan_part
    assert "# Todos\n- [-] Add the flag\n- [ ] Document it\n\n# Current Mode" in env
    assert env.endswith("# Current Phase\nACT MODE\n</environment_details>")


async def test_a_sigkill_while_executing_loses_nothing(workspace, tmp_path):
    """Killed in the middle of carrying a plan out: plan, state, todos, mode and history are as
    they were, the interrupted turn is reported, nothing runs again by itself."""
    first = Editor(workspace, tmp_path / "config")
    never: asyncio.Future = asyncio.get_running_loop().create_future()
    first.decide = lambda request: {"decision": "approve"} if request["kind"] == "plan" else never
    todos = call("todo_write", todos=[{"content": "Add the flag", "status": "completed"}, {"content": "Document it", "status": "in_progress"}])
    settings = script(
        workspace,
        ENTER,
        EXIT,
        call("plan_step_complete", step_id="1", verification_result="HI"),
        todos,
        call("write_to_file", path="docs/usage.md", content="--shout\n"),  # its approval never comes
    )
    await first.start(settings)
    try:
        await first.request(methods.MODES_SWITCH, {"slug": "debug"})
        await first.request(methods.CHAT_SEND, {"text": "Plan and do it"})
        await first.wait_for(lambda: [a for a in first.approvals if a["kind"] == "tool"])
        before = await first.request(methods.STATE)
        todos_before = await first.request(methods.TODOS_GET, {})
    finally:
        await first.kill()
    second = Editor(workspace, tmp_path / "config")
    await second.start(settings)
    try:
        after = await second.request(methods.STATE)
        todos_after = await second.request(methods.TODOS_GET, {})
        history = (await second.request(methods.CHAT_HISTORY, {"conversationId": after["conversationId"]}))["messages"]
        await asyncio.sleep(0.2)  # nothing starts by itself
        assert second.of_kind("turn_started") == []
    finally:
        await second.stop()
    assert after["plan"] == before["plan"] and after["plan"]["state"] == "executing" and after["plan"]["completedSteps"] == ["1"]
    assert (after["mode"]["slug"], after["phase"]) == ("debug", "act")
    assert todos_after == todos_before and [t["status"] for t in todos_after["todos"]] == ["completed", "in_progress"]
    assert history[0]["text"] == "Plan and do it"
    assert history[-1]["role"] == "system" and "interrupted" in history[-1]["text"]
    interrupted = [m for m in history if m["role"] == "tool" and m["metadata"].get("errorType") == "Interrupted"]
    assert [m["metadata"]["name"] for m in interrupted] == ["write_to_file"]
    assert (workspace / "docs" / "usage.md").exists() is False
