"""The agents' todo lists (SPEC §4): each agent's, across its conversations, kept in the store."""

from __future__ import annotations

import protocol

from ..host import Host
from ..state import StateStore


class TodoList:
    def __init__(self, store: StateStore, host: Host):
        self.store = store
        self.host = host

    def todos(self, agent: str) -> list[protocol.Todo]:
        return [protocol.Todo.model_validate(item) for item in self.store.todos(agent)]

    def write_todos(self, agent: str, todos: list[protocol.Todo], conversation_id: str) -> None:
        """The agent's list becomes `todos`: committed first, then announced in the conversation."""
        self.store.replace_todos(agent, [todo.model_dump() for todo in todos])
        self.host.publish(protocol.TodosUpdate(conversation_id=conversation_id, agent=agent, todos=todos))

    def result(self, agent: str) -> protocol.TodosGetResult:
        """The agent's list, rendered."""
        from ..plan.todos import ansi_box, html

        todos = self.todos(agent)
        return protocol.TodosGetResult(agent=agent, todos=todos, ansi=ansi_box(todos), html=html(todos))
