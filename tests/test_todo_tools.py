"""The todo tools (SPEC §4) through the gate: todo_write, update_todo_list and todo_read; the list
stored before the `todos` update that announces it, a refused write leaving everything as it
was, and the list belonging to the agent across conversations. The rules of a write themselves
are tested in test_todos.py."""

from __future__ import annotations

import json
import re

import pytest

from helpers import call_tool, running
from memory_host import MemoryHost
from protocol import Todo
from server.errors import BadRequest
from server.plan.todos import ansi_box, html
from server.tools.todos import EMPTY

RETRY = " Please retry with a complete and valid tool call."
ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
TWO_AGENTS = [{"name": "modus"}, {"name": "helper"}]

ITEMS = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Fix the bug", "status": "in_progress", "priority": "high"},
    {"content": "Write a test"},
]


def rows(todos) -> list[tuple[str, str, str, str]]:
    return [(t.id, t.content, t.status, t.priority) for t in todos]


def spied(session, host: MemoryHost) -> list[tuple]:
    """What reaches the store and the host, in order; each update with the list stored when it went out."""
    events: list[tuple] = []
    store = session.store
    replace, publish = store.replace_todos, host.publish

    def replace_todos(agent, items):
        events.append(("stored", agent, [item["content"] for item in items]))
        replace(agent, items)

    def published(update):
        events.append(("published", update.kind, [item["content"] for item in store.todos(update.agent)]))
        publish(update)

    store.replace_todos, host.publish = replace_todos, published
    return events


async def test_todo_write_stores_the_list_then_announces_it(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        events = spied(session, host)
        result = await call_tool(session, "todo_write", todos=ITEMS)
        stored = session.todos("modus")
        cid = session.conversation_id

    assert result.error is None
    assert result.text == "Todo list updated: 1 completed, 1 in progress, 1 pending."
    contents = [item["content"] for item in ITEMS]
    assert events == [("stored", "modus", contents), ("published", "todos", contents)]
    assert rows(stored) == [
        ("t1", "Read the parser", "completed", "medium"),
        ("t2", "Fix the bug", "in_progress", "high"),
        ("t3", "Write a test", "pending", "medium"),
    ]
    assert all(ISO_MS.fullmatch(t.created_at) and t.updated_at == t.created_at for t in stored)
    [update] = host.of_kind("todos")
    assert (update.conversation_id, update.agent, update.todos) == (cid, "modus", stored)
    assert host.approvals == []  # the agent's own notes: nothing to approve


async def test_a_refused_write_stores_nothing_and_announces_nothing(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        await call_tool(session, "todo_write", todos=ITEMS)
        before = session.todos("modus")
        events = spied(session, host)
        result = await call_tool(session, "todo_write", todos=[{"content": " "}, {"content": "x", "status": "done"}, "y"])
        after = session.todos("modus")

    assert result.error is not None and result.error.type == "InvalidParams"
    assert result.text == (
        "Todo list not updated: 3 problems. Fix them and send the whole list again:\n"
        "- todos[0].content: must not be empty\n"
        '- todos[1].status: must be pending, in_progress or completed (got "done")\n'
        '- todos[2]: must be an object with content, status and priority (got "y")'
    )
    assert events == [] and after == before


async def test_an_unchanged_list_is_not_written_again(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        await call_tool(session, "todo_write", todos=ITEMS)
        events = spied(session, host)
        same = [{"id": t.id, "content": t.content, "status": t.status} for t in session.todos("modus")]
        result = await call_tool(session, "todo_write", todos=same)
    assert result.error is None and result.text == "Todo list updated: 1 completed, 1 in progress, 1 pending."
    assert events == []


async def test_todo_write_takes_a_json_string_of_the_list(tmp_path):
    async with running(tmp_path) as session:
        result = await call_tool(session, "todo_write", todos=json.dumps(ITEMS))
        assert result.error is None, result.text
        assert [t.content for t in session.todos("modus")] == [item["content"] for item in ITEMS]

        broken = await call_tool(session, "todo_write", todos="[{'content': 'x'}]")
        assert broken.error is not None and broken.error.type == "InvalidParams"
        assert broken.text == (
            "Invalid value for parameter 'todos': not valid JSON (Expecting property name enclosed in double "
            "quotes at line 1 column 3); send a list of todo items (for a markdown checklist, use "
            "update_todo_list)." + RETRY
        )
        not_a_list = await call_tool(session, "todo_write", todos='{"content": "x"}')
        assert not_a_list.text == "Invalid value for parameter 'todos': Input should be a valid list." + RETRY
        assert len(session.todos("modus")) == 3


async def test_update_todo_list_writes_the_checklist(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        events = spied(session, host)
        first = await call_tool(session, "update_todo_list", todos="- [x] Read the parser\n- [-] Fix the bug\n- [ ] Write a test")
        created = session.todos("modus")
        again = await call_tool(session, "update_todo_list", todos="[x] Read the parser\n[x] Fix the bug\n[-] Write a test")
        rewritten = session.todos("modus")

    assert first.error is None and first.text == "Todo list updated: 1 completed, 1 in progress, 1 pending."
    assert again.error is None and again.text == "Todo list updated: 2 completed, 1 in progress, 0 pending."
    assert [e[0] for e in events] == ["stored", "published", "stored", "published"]
    assert rows(rewritten) == [
        ("t1", "Read the parser", "completed", "medium"),
        ("t2", "Fix the bug", "completed", "medium"),
        ("t3", "Write a test", "in_progress", "medium"),
    ]
    assert [t.created_at for t in rewritten] == [t.created_at for t in created]  # same lines: same items
    assert [u.todos for u in host.of_kind("todos")] == [created, rewritten]


async def test_a_bad_checklist_is_refused_naming_its_lines(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        await call_tool(session, "update_todo_list", todos="[ ] one")
        events = spied(session, host)
        result = await call_tool(session, "update_todo_list", todos="[-] two\nthree\n[-] four")
        after = session.todos("modus")
    assert result.error is not None and result.error.type == "InvalidParams"
    assert result.text == (
        "Todo list not updated: 2 problems. Fix them and send the whole list again:\n"
        '- line 2: not a checklist item, expected "[ ] text", "[-] text" or "[x] text" (got "three")\n'
        "- line 3: only one item may be in progress ([-]), and line 1 already is"
    )
    assert events == [] and rows(after) == [("t1", "one", "pending", "medium")]


async def test_todo_read_gives_the_list_with_ids_or_says_it_is_empty(tmp_path):
    async with running(tmp_path) as session:
        empty = await call_tool(session, "todo_read")
        await call_tool(session, "todo_write", todos=ITEMS)
        listed = await call_tool(session, "todo_read")
    assert empty.error is None and empty.text == EMPTY
    assert listed.text == (
        "- [x] Read the parser (id: t1, priority: medium)\n"
        "- [-] Fix the bug (id: t2, priority: high)\n"
        "- [ ] Write a test (id: t3, priority: medium)"
    )


async def test_the_list_is_the_agents_across_conversations(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host, agents=TWO_AGENTS) as session:
        written_in = session.conversation_id
        await call_tool(session, "todo_write", todos=ITEMS)
        written = rows(session.todos("modus"))
        read_in = session.open(None).conversation_id
        mine = await call_tool(session, "todo_read")
        theirs = await call_tool(session, "todo_read", agent="helper")
        await call_tool(session, "todo_write", agent="helper", todos=[{"content": "Review"}])
        both = rows(session.todos("modus")), rows(session.todos("helper"))
    assert read_in != written_in
    assert mine.text.startswith("- [x] Read the parser (id: t1")
    assert theirs.text == EMPTY
    assert both == (written, [("t1", "Review", "pending", "medium")])
    assert [(u.conversation_id, u.agent) for u in host.of_kind("todos")] == [(written_in, "modus"), (read_in, "helper")]


async def test_todo_tools_are_allowed_in_plan_mode(tmp_path):
    async with running(tmp_path) as session:
        session.set_phase("plan", by="user")
        result = await call_tool(session, "todo_write", todos=ITEMS)
        assert result.error is None, result.text
        assert (await call_tool(session, "update_todo_list", todos="[ ] next")).error is None
        assert (await call_tool(session, "todo_read")).error is None


async def test_todos_result_renders_the_responders_list_or_the_named_agents(tmp_path):
    async with running(tmp_path, agents=TWO_AGENTS) as session:
        await call_tool(session, "todo_write", todos=[{"content": "Escape <b>&</b>", "status": "in_progress"}])
        result = session.todos_result(None)
        helper = session.todos_result("helper")
        with pytest.raises(BadRequest, match="^agent: unknown agent: nobody$"):
            session.todos_result("nobody")
    assert result.agent == "modus" and rows(result.todos) == [("t1", "Escape <b>&</b>", "in_progress", "medium")]
    assert result.ansi == ansi_box(result.todos) and "▶" in result.ansi
    assert result.html == html(result.todos) and "Escape &lt;b&gt;&amp;&lt;/b&gt;" in result.html
    assert (helper.agent, helper.todos, helper.html) == ("helper", [], html([]))
    assert isinstance(result.todos[0], Todo)
