"""Approvals over the wire: a turn cancelled while one is pending, and the answer that comes late."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from protocol import methods

from .conftest import script
from .editor import Editor


def write(path: str, content: str) -> dict:
    return {"toolCalls": [{"name": "write_to_file", "arguments": {"path": path, "content": content}}]}


@pytest.mark.parametrize(
    "obey_cancel",
    [False, True],
    ids=["the editor answers the approval after the turn ended", "the editor answers RequestCancelled at once"],
)
async def test_cancel_withdraws_a_pending_approval_and_its_late_answer_is_dropped(workspace: Path, tmp_path: Path, obey_cancel: bool):
    editor = Editor(workspace, tmp_path / "config")
    answer: asyncio.Future[dict] = asyncio.get_running_loop().create_future()
    editor.decide = lambda request: answer
    editor.obey_cancel = obey_cancel
    await editor.start(script(workspace, write("a.txt", "x"), {"text": "Still here."}))
    try:
        sent = await editor.request(methods.CHAT_SEND, {"text": "write a.txt"})
        await editor.wait_for(lambda: editor.approvals)
        cancelled = await editor.request(methods.CHAT_CANCEL, {"conversationId": sent["conversationId"]})
        [ended] = await editor.wait_for(lambda: editor.of_kind("turn_ended"))
        # the server withdrew its request, as LSP has it: the editor can take the approval card away
        assert await editor.wait_for(lambda: editor.cancelled_requests) == editor.approval_ids
        if not obey_cancel:  # (else pygls answered RequestCancelled when the cancel came)
            answer.set_result({"decision": "approve"})  # the answer, long after the turn gave up
        state = await editor.request(methods.STATE)
        again = await editor.chat("are you there?")
    finally:
        await editor.stop()
    assert cancelled == {"cancelled": True} and ended["outcome"] == "cancelled"
    assert state["conversationId"] == sent["conversationId"]
    assert again["outcome"] == "completed"
    assert [u["text"] for u in editor.of_kind("message") if u["role"] == "assistant"] == ["Still here."]
    assert not (workspace / "a.txt").exists()
    logged = "".join(editor.stderr)
    assert "Traceback" not in logged and "InvalidStateError" not in logged
    assert "unknown message id" not in logged


async def test_an_approval_carries_the_id_of_the_tool_call_it_gates(editor, workspace):
    switch = {"name": "switch_mode", "arguments": {"mode_slug": "ask", "reason": "only questions"}}
    edit = {"name": "write_to_file", "arguments": {"path": "a.md", "content": "x"}}
    await editor.start(script(workspace, {"toolCalls": [edit, switch]}, {"text": "ok"}))
    await editor.chat("go")
    pending = [(u["name"], u["toolCallId"]) for u in editor.of_kind("tool_call") if u["status"] == "pending"]
    assert [(a["tool"], a["toolCallId"]) for a in editor.approvals] == pending
    assert [a["kind"] for a in editor.approvals] == ["tool", "switch_mode"]
    assert len({call_id for _, call_id in pending}) == 2
