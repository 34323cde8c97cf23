"""The agent's todo list (SPEC §4): todo_read, todo_write, and update_todo_list (Roo Code's
markdown checklist). The rules of a write are server/plan/todos.py's; the session keeps the list.

A write is merged in `prepare`, so that a refused one fails as bad parameters do, before it
runs; `run` stores it (committed) and then announces it. Todo tools ask for no approval (the
list is the agent's own notes), so nothing waits between the read of the old list and the write
of the new one: two writes of the same agent cannot interleave.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, WithJsonSchema

from ..state.records import iso_utc
from ..errors import InvalidParams
from ..plan.todos import PRIORITIES, STATUSES, MergeResult, as_text, merge, merge_checklist
from .base import Params, Prepared, ToolContext, ToolSpec

if TYPE_CHECKING:
    from ..workspace import WorkspacePath

WHEN = "Keep a todo list for work of three or more distinct steps, not for a change of one or two."
EMPTY = "Your todo list is empty. " + WHEN


def _json_list(value: Any) -> Any:
    """XML-style calls deliver text: a JSON string of the list is read as the list."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); send a list of todo "
            "items (for a markdown checklist, use update_todo_list)"
        ) from None


_ITEM_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "Keep an item's id to update it; leave it out for a new item."},
        "content": {"type": "string"},
        "status": {"enum": list(STATUSES), "default": "pending"},
        "priority": {"enum": list(PRIORITIES), "default": "medium"},
    },
    "required": ["content"],
}

#: The items as the model sent them (checked by `merge`, which names every problem), or a JSON string of them.
TodoItems = Annotated[list[Any], BeforeValidator(_json_list), WithJsonSchema({"type": "array", "items": _ITEM_SCHEMA})]


class TodoReadParams(Params):
    pass


class TodoWriteParams(Params):
    todos: TodoItems


class UpdateTodoListParams(Params):
    todos: str


async def _todo_read(ctx: ToolContext, p: TodoReadParams, paths: list[WorkspacePath]) -> Prepared:
    async def run() -> str:
        todos = ctx.ports.todos.todos(ctx.agent)
        return as_text(todos, with_ids=True) if todos else EMPTY

    return Prepared(run)


async def _todo_write(ctx: ToolContext, p: TodoWriteParams, paths: list[WorkspacePath]) -> Prepared:
    return _write(ctx, merge(ctx.ports.todos.todos(ctx.agent), p.todos, _now()))


async def _update_todo_list(ctx: ToolContext, p: UpdateTodoListParams, paths: list[WorkspacePath]) -> Prepared:
    return _write(ctx, merge_checklist(ctx.ports.todos.todos(ctx.agent), p.todos, _now()))


def _write(ctx: ToolContext, result: MergeResult) -> Prepared:
    if result.errors:
        raise InvalidParams(result.summary)

    async def run() -> str:
        if result.changed:
            ctx.ports.todos.write_todos(ctx.agent, result.todos, ctx.conversation_id)
        return result.summary

    return Prepared(run)


def _now() -> str:
    return iso_utc(time.time())


TOOLS = (
    ToolSpec(
        "todo_read",
        "Read your todo list (yours across conversations): a checklist with each item's id and priority.",
        TodoReadParams,
        _todo_read,
    ),
    ToolSpec(
        "todo_write",
        "Replace your todo list with `todos`: a list of items {id?, content, status?: pending|in_progress|"
        "completed, priority?: high|medium|low} (in XML, a JSON array). Send the whole list each time, keep "
        "an item's id to update it, and have at most one item in_progress. Items you leave out are kept as "
        f"completed, unless every item you send is completed (then the old ones are dropped). {WHEN}",
        TodoWriteParams,
        _todo_write,
    ),
    ToolSpec(
        "update_todo_list",
        "Replace your todo list with a markdown checklist in `todos`, one item per line: `[ ] pending`, "
        "`[-] in progress` (at most one), `[x] completed`. Items you leave out are kept as completed, "
        f"unless every line is [x] (then the old ones are dropped). {WHEN}",
        UpdateTodoListParams,
        _update_todo_list,
    ),
)
