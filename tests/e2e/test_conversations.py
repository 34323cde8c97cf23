"""Conversations over the wire: the history a client rebuilds its view from."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException

from protocol import methods

from .conftest import script
from .editor import Editor


def write(path: str) -> dict:
    return {"toolCalls": [{"name": "write_to_file", "arguments": {"path": path, "content": "x"}}]}


async def test_the_history_keeps_the_error_type_of_each_failed_call(editor, workspace):
    editor.decide = lambda request: {"decision": "deny"}
    await editor.start(script(workspace, write("src/app.py"), write("notes.md"), {"text": "I give up."}))
    await editor.request(methods.MODES_SWITCH, {"slug": "architect"})
    sent = await editor.request(methods.CHAT_SEND, {"text": "write them"})
    await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    history = await editor.request(methods.CHAT_HISTORY, {"conversationId": sent["conversationId"]})
    failed = [u for u in editor.of_kind("tool_call") if u["status"] == "failed"]
    tools = [m for m in history["messages"] if m["role"] == "tool"]
    assert [u["error"]["type"] for u in failed] == ["FileRestrictionError", "Denied"]
    assert [(m["metadata"]["toolCallId"], m["metadata"]["errorType"], m["text"]) for m in tools] == [
        (u["toolCallId"], u["error"]["type"], u["error"]["message"]) for u in failed
    ]
    assert all(m["metadata"]["isError"] is True for m in tools)


def read(path: str) -> dict:
    return {"toolCalls": [{"name": "read_file", "arguments": {"path": path}}]}


async def test_the_conversation_list(editor, workspace):
    (workspace / "a.txt").write_text("hello\n")
    await editor.start(script(workspace, read("a.txt"), {"text": "one"}, {"text": "two"}))
    assert await editor.request(methods.CHAT_LIST) == {"conversations": []}
    first = (await editor.request(methods.STATE))["conversationId"]
    await editor.chat("\n  Why is   the sky blue?\nExplain it simply.")
    opened = await editor.request(methods.CHAT_OPEN)
    await editor.request(methods.MODES_SWITCH, {"slug": "architect"})
    await editor.chat("x" * 100)
    listed = (await editor.request(methods.CHAT_LIST))["conversations"]
    second = opened["conversationId"]
    assert second != first
    assert [(c["id"], c["title"], c["mode"], c["messages"]) for c in listed] == [
        (second, "x" * 79 + "…", "architect", 2),  # the user message and the reply
        (first, "Why is the sky blue?", "code", 4),  # the user message, a reply calling read_file, its result, a reply
    ]
    assert listed[0]["updatedAt"] > listed[1]["updatedAt"] >= listed[1]["createdAt"]
    assert all(c["createdAt"].endswith("Z") and len(c["createdAt"]) == len("2026-12-01T11:28:57.123Z") for c in listed)


async def test_open_is_remembered_across_a_restart(workspace, tmp_path):
    first = Editor(workspace, tmp_path / "config")
    await first.start(script(workspace, {"text": "one"}))
    try:
        sent = await first.chat("hello")  # its turn ended before the kill
        opened = await first.request(methods.CHAT_OPEN, {"conversationId": "picked-by-the-client"})
        assert opened["conversationId"] == "picked-by-the-client"
        assert (await first.request(methods.STATE))["conversationId"] == "picked-by-the-client"
    finally:
        await first.kill()
    second = Editor(workspace, tmp_path / "config")
    await second.start(script(workspace, {"text": "one"}))
    try:
        assert (await second.request(methods.STATE))["conversationId"] == "picked-by-the-client"
        back = await second.request(methods.CHAT_OPEN, {"conversationId": sent["conversationId"]})
        history = await second.request(methods.CHAT_HISTORY, {"conversationId": sent["conversationId"]})
    finally:
        await second.stop()
    assert back["conversationId"] == sent["conversationId"]
    assert [m["text"] for m in history["messages"]] == ["hello", "one"]


@pytest.mark.parametrize("params", [{"conversationId": ""}, {"conversationId": "a b"}, {"conversationId": "x" * 5000}])
async def test_open_refuses_a_bad_id_naming_the_field(editor, params):
    await editor.start()
    before = await editor.request(methods.STATE)
    with pytest.raises(JsonRpcException) as refused:
        await editor.request(methods.CHAT_OPEN, params)
    assert refused.value.code == -32602 and "conversationId: must be 1 to 128" in refused.value.message
    assert len(refused.value.message) < 300
    assert await editor.request(methods.STATE) == before


async def test_open_leaves_a_turn_running_in_another_conversation_alone(editor, workspace):
    sleep = {"toolCalls": [{"name": "execute_command", "arguments": {"command": "sleep 30"}}]}
    await editor.start(script(workspace, sleep) | {"autoApprove": {"command": True}})
    sent = await editor.request(methods.CHAT_SEND, {"text": "wait"})
    await editor.wait_for(lambda: [u for u in editor.of_kind("tool_call") if u["status"] == "running"])
    opened = await editor.request(methods.CHAT_OPEN)
    assert opened["conversationId"] != sent["conversationId"]
    assert not editor.of_kind("turn_ended")
    assert await editor.request(methods.CHAT_CANCEL, {"conversationId": sent["conversationId"]}) == {"cancelled": True}
    [ended] = await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    assert ended["conversationId"] == sent["conversationId"] and ended["outcome"] == "cancelled"
