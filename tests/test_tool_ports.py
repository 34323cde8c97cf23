"""A tool tested on its own: its ports are fakes with the two or three methods it uses; no
session, no store."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from protocol import Todo

from server.errors import ToolNotAllowed
from server.tools import TOOLS, ToolContext
from server.tools.ports import Ports
from server.workspace import Workspace


class FakeTodos:
    def __init__(self, todos: list[Todo]):
        self.lists = {"coder": todos}
        self.written: list[tuple[str, list[Todo], str]] = []

    def todos(self, agent: str) -> list[Todo]:
        return self.lists.get(agent, [])

    def write_todos(self, agent: str, todos: list[Todo], conversation_id: str) -> None:
        self.lists[agent] = todos
        self.written.append((agent, todos, conversation_id))


class FakeChat:
    """Who waits for whom: ask_agent refuses to wait in a circle before anything is sent."""

    def __init__(self, waits: dict[str, str]):
        self.waits = waits
        self.woken: list[str] = []

    def agent_names(self) -> list[str]:
        return ["coder", "reviewer", "tester"]

    def waiting_for(self, conversation_id: str, agent: str) -> str | None:
        return self.waits.get(agent)

    @contextmanager
    def asking(self, conversation_id: str, asker: str, to: str):
        yield

    async def wake(self, conversation_id, agent, summons=None) -> None:
        self.woken.append(agent)


def context(tmp_path, **ports) -> ToolContext:
    fields = dict.fromkeys(("host", "config", "chat", "switches", "plans", "todos", "subtasks", "guards", "hooks", "images", "browsers"))
    return ToolContext(Ports(workspace=Workspace(tmp_path), **{**fields, **ports}), None, "coder", "conv-1", "turn-1", "call-1")


async def test_update_todo_list_writes_the_merged_list_through_its_port(tmp_path):
    todos = FakeTodos([Todo(id="1", content="Read the code", status="completed"), Todo(id="2", content="Fix the bug", status="pending")])
    spec = TOOLS["update_todo_list"]
    ctx = context(tmp_path, todos=todos)
    prepared = await spec.prepare(ctx, spec.params(todos="[x] Read the code\n[-] Fix the bug\n[ ] Add a test"), [])
    summary = await prepared.run()
    [(agent, written, cid)] = todos.written
    assert (agent, cid) == ("coder", "conv-1")
    assert [(t.content, t.status) for t in written] == [
        ("Read the code", "completed"), ("Fix the bug", "in_progress"), ("Add a test", "pending"),
    ]
    assert summary == "Todo list updated: 1 completed, 1 in progress, 1 pending."


async def test_ask_agent_refuses_a_question_that_would_wait_in_a_circle(tmp_path):
    chat = FakeChat({"reviewer": "tester", "tester": "coder"})  # reviewer waits for tester, tester for coder
    spec = TOOLS["ask_agent"]
    with pytest.raises(ToolNotAllowed, match=r"reviewer is waiting for your answer \(reviewer → tester → coder\)"):
        await spec.prepare(context(tmp_path, chat=chat), spec.params(to="reviewer", question="Is it done?"), [])
    assert chat.woken == []
