"""The todo list over the wire: a model writes it in two turns (todo_write natively, then
update_todo_list in XML text), the client sees each `todos` update, `modus/todos/get` renders
it, and a server killed and started again finds it as it was."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException

from protocol import Todo, methods
from server.plan.todos import ansi_box

from .conftest import script
from .editor import Editor

TITLE = "Escape <b>&</b> in the title"
WRITE = {
    "toolCalls": [
        {
            "name": "todo_write",
            "arguments": {"todos": [{"content": TITLE, "status": "in_progress", "priority": "high"}, {"content": "Write the test"}]},
        }
    ]
}
CHECKLIST = f"<update_todo_list>\n<todos>\n[x] {TITLE}\n[-] Write the test\n[ ] Ship it\n</todos>\n</update_todo_list>"


def listed(todos: list[dict]) -> list[tuple[str, str, str, str]]:
    return [(t["id"], t["content"], t["status"], t["priority"]) for t in todos]


async def test_todos_written_in_two_turns_are_announced_rendered_and_kept_across_a_restart(workspace, tmp_path):
    settings = script(workspace, WRITE, {"text": "Planned."}, {"text": CHECKLIST}, {"text": "Half done."})
    first = Editor(workspace, tmp_path / "config")
    await first.start(settings)
    try:
        planned = await first.chat("plan the fix")
        went_on = await first.chat("go on")
        got = await first.request(methods.TODOS_GET, {})
        with pytest.raises(JsonRpcException) as refused:
            await first.request(methods.TODOS_GET, {"agent": "nobody"})
    finally:
        await first.kill()

    assert (planned["outcome"], went_on["outcome"]) == ("completed", "completed")
    calls = [(u["name"], u["status"]) for u in first.of_kind("tool_call") if u["status"] in ("completed", "failed")]
    assert calls == [("todo_write", "completed"), ("update_todo_list", "completed")]
    updates = first.of_kind("todos")
    assert [(u["agent"], u["conversationId"]) for u in updates] == [("modus", planned["conversationId"])] * 2
    assert [listed(u["todos"]) for u in updates] == [
        [("t1", TITLE, "in_progress", "high"), ("t2", "Write the test", "pending", "medium")],
        [("t1", TITLE, "completed", "high"), ("t2", "Write the test", "in_progress", "medium"), ("t3", "Ship it", "pending", "medium")],
    ]
    assert updates[1]["todos"][0]["createdAt"] == updates[0]["todos"][0]["createdAt"]

    assert got["agent"] == "modus" and got["todos"] == updates[-1]["todos"]
    assert got["ansi"] == ansi_box([Todo.model_validate(t) for t in got["todos"]])
    assert "✓ ! \x1b[2;9mEscape <b>&</b> in the title\x1b[0m" in got["ansi"] and "▶   \x1b[1mWrite the test" in got["ansi"]
    assert "Escape &lt;b&gt;&amp;&lt;/b&gt; in the title</li>" in got["html"] and "<b>" not in got["html"]
    assert refused.value.code == -32602 and refused.value.message == "agent: unknown agent: nobody"

    second = Editor(workspace, tmp_path / "config")
    await second.start(settings)
    try:
        again = await second.request(methods.TODOS_GET, {"agent": "modus"})
    finally:
        await second.stop()
    assert again == got  # ids, dates (createdAt unchanged) and renderings
