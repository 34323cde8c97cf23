"""Conversations over the wire: the history a client rebuilds its view from."""

from __future__ import annotations

from protocol import methods

from .conftest import script


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
