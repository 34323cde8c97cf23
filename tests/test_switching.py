"""Switching modes (SPEC §2): switch_mode in its order of checks, user switches, new tasks, subtasks."""

from __future__ import annotations

import anyio
import pytest

from helpers import call_tool, chat, make_session, running
from memory_host import MemoryHost
from protocol import ApprovalResponse


def switch(slug=None, reason=None, **extra):
    args = dict(extra)
    if slug is not None:
        args["mode_slug"] = slug
    if reason is not None:
        args["reason"] = reason
    return {"toolCalls": [{"name": "switch_mode", "arguments": args}]}


# arguments, expected error type (None: success), expected text — in the order the checks run
SWITCH_CASES = [
    ({}, "InvalidParams", "~Missing value for required parameter 'mode_slug'."),
    ({"mode_slug": "  "}, "InvalidParams", "~Missing value for required parameter 'mode_slug'."),
    ({"mode_slug": "nosuch", "reason": 7}, "InvalidParams", "~Invalid value for parameter 'reason'"),
    ({"mode_slug": "nosuch"}, "InvalidParams", "Invalid mode: nosuch"),
    ({"mode_slug": "code"}, "ToolError", "Already in Code mode."),
    ({"mode_slug": "architect", "reason": "  design first  "}, None, "Successfully switched from Code mode to Architect mode because: design first."),
    ({"mode_slug": "architect", "reason": "   "}, None, "Successfully switched from Code mode to Architect mode."),
    ({"mode_slug": "ask"}, None, "Successfully switched from Code mode to Ask mode."),
]


@pytest.mark.parametrize("arguments, error, text", SWITCH_CASES)
async def test_switch_mode_tool(tmp_path, arguments, error, text):
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        before = session.task_for("modus").id
        result = await call_tool(session, "switch_mode", **arguments)
        after = session.task_for("modus")
    if text.startswith("~"):
        assert text[1:] in result.text
    else:
        assert result.text == text
    if error:
        assert result.error.type == error
        assert host.approvals == [] and host.of_kind("mode_changed") == []
        assert after.id == before and after.mode.slug == "code"
        return
    assert result.error is None
    [asked] = host.approvals
    assert asked.kind == "switch_mode" and asked.from_ == "code" and asked.to == arguments["mode_slug"]
    assert asked.reason == ((arguments.get("reason") or "").strip() or None)
    [changed] = host.of_kind("mode_changed")
    assert (changed.from_, changed.to, changed.by) == ("code", arguments["mode_slug"], "model")
    assert changed.task_id == after.id != before  # a new task for the new mode
    assert after.mode.slug == arguments["mode_slug"]


async def test_denied_switch_keeps_the_mode_and_task(tmp_path):
    host = MemoryHost(approve=lambda r: ApprovalResponse(decision="deny", feedback="stay here"))
    async with running(tmp_path, host=host) as session:
        before = session.task_for("modus").id
        result = await call_tool(session, "switch_mode", mode_slug="ask", reason="questions")
        assert result.error.type == "Denied"
        assert result.text == "The user denied this operation.\n<feedback>\nstay here\n</feedback>"
        assert session.task_for("modus").id == before
        assert session.mode_of("modus").slug == "code" and host.of_kind("mode_changed") == []


async def test_auto_approved_mode_switch_asks_nothing(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host, autoApprove={"modeSwitch": True}) as session:
        result = await call_tool(session, "switch_mode", mode_slug="debug")
    assert result.error is None and host.approvals == []


async def test_user_switch_needs_no_approval_and_builds_a_task(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        first = session.task_for("modus")
        task = session.switch_mode("architect", by="user")
        assert host.approvals == []
        [changed] = host.of_kind("mode_changed")
        assert (changed.by, changed.task_id) == ("user", task.id)
        assert task.id != first.id and session.state().task.id == task.id
        assert session.state().mode.name == "Architect"
        assert session.switch_mode("architect", by="user").id == task.id  # same mode: nothing happens


async def test_next_tool_call_waits_for_the_settle_delay(tmp_path):
    async with running(tmp_path, autoApprove={"modeSwitch": True}, modeSwitchDelayMs=150) as session:
        await call_tool(session, "switch_mode", mode_slug="ask")
        settle_until = session.switcher.settle_until
        await call_tool(session, "read_file", path=".")  # any call: it waits first
        assert anyio.current_time() >= settle_until
        user = session.switch_mode("code", by="user")
        assert user and session.switcher.settle_until == settle_until  # a user's switch sets no delay


async def test_conversation_carries_over_a_switch(tmp_path):
    turns = [
        switch("architect", "design"),
        {"text": "In architect now.", "toolCalls": [{"name": "attempt_completion", "arguments": {"result": "ok"}}]},
    ]
    host = MemoryHost()
    async with running(tmp_path, turns, host=host) as session:
        assert await chat(session, "hello") == "completed"
        messages = session.store.messages(session.conversation_id)
    roles = [m.role for m in messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool"]
    first, second = messages[1], messages[3]
    assert first.metadata["mode"] == "code" and second.metadata["mode"] == "architect"
    assert first.metadata["taskId"] != second.metadata["taskId"]


async def test_the_model_sees_the_whole_history_after_a_switch(tmp_path):
    seen = []
    turns = [switch("ask"), {"text": "done"}]
    async with running(tmp_path, turns) as session:
        task = session.task_for("modus")
        original = type(task.model).complete

        async def spy(self, request, *callbacks):
            seen.append(request)
            return await original(self, request, *callbacks)

        type(task.model).complete = spy
        try:
            await chat(session, "hello")
        finally:
            type(task.model).complete = original
    assert len(seen) == 2
    assert [m.role for m in seen[1].messages] == ["user", "assistant", "tool"]
    ask = session.modes.get("ask")
    assert seen[0].system.startswith(session.modes.get("code").role_definition)
    assert seen[1].system.startswith(ask.role_definition)  # the new task's prompt
    assert "<slug>code</slug>" in seen[0].messages[0].text  # environment_details of the first message


async def test_restart_restores_mode_and_conversation(tmp_path):
    first = make_session(tmp_path)
    async with first.running():
        first.switch_mode("debug", by="user")
        conversation = first.conversation_id
    first.close()
    second = make_session(tmp_path)
    try:
        assert second.mode_of("modus").slug == "debug" and second.conversation_id == conversation
        task = second.task_for("modus")
        assert second.routed.local.task(task.id)["mode"] == "debug"
    finally:
        second.close()


async def test_new_task_runs_a_subtask_and_restores_the_parent_mode(tmp_path):
    turns = [
        {"toolCalls": [{"name": "new_task", "arguments": {"mode": "ask", "message": "Find the entry point"}}]},
        {"text": "Looking.", "toolCalls": [{"name": "attempt_completion", "arguments": {"result": "It is main.py"}}]},
        {"toolCalls": [{"name": "attempt_completion", "arguments": {"result": "Parent done"}}]},
    ]
    host = MemoryHost()
    async with running(tmp_path, turns, host=host, autoApprove={"subtasks": True}) as session:
        assert await chat(session, "orchestrate") == "completed"
        assert session.mode_of("modus").slug == "code"
        parent = session.store.messages(session.conversation_id)
    results = [u for u in host.of_kind("tool_call") if u.status == "completed"]
    new_task = next(u for u in results if u.name == "new_task")
    assert new_task.result == "Subtask in Ask mode completed:\nIt is main.py"
    assert [(c.from_, c.to) for c in host.of_kind("mode_changed")] == [("code", "ask"), ("ask", "code")]
    # the subtask's own messages are not in the parent's history
    assert "Looking." not in [m.text for m in parent]


async def test_new_task_needs_approval_and_a_known_mode(tmp_path):
    host = MemoryHost(approve=lambda r: ApprovalResponse(decision="deny"))
    async with running(tmp_path, host=host) as session:
        unknown = await call_tool(session, "new_task", mode="nosuch", message="x")
        denied = await call_tool(session, "new_task", mode="ask", message="x")
    assert unknown.text == "Invalid mode: nosuch"
    assert denied.error.type == "Denied" and host.approvals[0].kind == "subtask"


async def test_a_switch_in_a_script_changes_what_the_next_call_may_do(tmp_path):
    turns = [
        switch("ask"),
        {"toolCalls": [{"name": "write_to_file", "arguments": {"path": "a.txt", "content": "x"}}]},
        {"text": "ok"},
    ]
    host = MemoryHost()
    async with running(tmp_path, turns, host=host) as session:
        await chat(session, "go")
    failed = [u for u in host.of_kind("tool_call") if u.status == "failed"]
    assert failed[0].error.type == "ToolNotAllowed"
    assert failed[0].error.message == 'Tool "write_to_file" is not allowed in ask mode.'
    assert not (tmp_path / "a.txt").exists()


async def test_script_cursor_survives_task_rebuilds(tmp_path):
    async with running(tmp_path, [{"text": "one"}, {"text": "two"}]) as session:
        await chat(session, "a")
        session.switch_mode("ask", by="user")
        await chat(session, "b")
        await chat(session, "c")
        texts = [u.text for u in session.host.of_kind("message") if u.role == "assistant"]
    assert texts == ["one", "two", "Script finished."]
