"""An agent's todo list (SPEC §4): the write rules and the renderings, pure (no I/O, no store).

Two tools write the list, and both end in `merge`:

- `todo_write(todos)`: `merge(old, todos, now)`, with the items as the model sent them;
- `update_todo_list(todos)` (a markdown checklist, as Roo Code's): `merge_checklist(old,
  markdown, now)`, which reads the checklist with `parse_checklist` into the same items.

The rules of a write:

- The new list replaces the old one. An old item the new list leaves out is kept, marked
  completed, unless every item of the new list is completed: then the old items are dropped (a
  clean start; an empty list therefore clears the list).
- An item is the old item with its `id`. An item without an id takes the id of an old item with
  the same content that no other item of the write has taken (so a checklist rewritten with
  the same lines keeps its ids and its dates); else it gets a new id `t<n>`, above every id
  in use.
- The server stamps the dates, the model's are ignored: a new item gets `created_at` =
  `updated_at` = now; an old one keeps its `created_at`, and its `updated_at` moves to now
  only when its content, status or priority changed (a left-out item marked completed counts).
- `status` left out is `pending`; `priority` left out is the old item's, else `medium`.
- At most one item is `in_progress`.

All or nothing. An invalid item (not an object; content missing, not a string or empty; a
status or priority outside its values; an id that is not a string or is used twice; a second
item in progress) refuses the whole write: the list stays as it was, and every problem is
reported, each naming its index and field (`todos[2].status: ...`; `line 3: ...` for a
checklist), so the model can fix them all in one go. Applying only the valid items would be
worse than refusing: the model sends the whole list each time, so an item dropped for being
invalid would count as left out, and be kept as "completed" when it is not. Two items in
progress are refused the same way (at the second one, naming the first) rather than the server
picking one: which task is under way is the model's to say.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from typing import Any, Optional

from protocol.messages import Todo

STATUSES = ("pending", "in_progress", "completed")
PRIORITIES = ("high", "medium", "low")


@dataclass(frozen=True)
class MergeResult:
    #: The list to keep: the new one, or the old one unchanged when the write was refused.
    todos: list[Todo]
    #: One line per problem, naming the item (`todos[i]` or `line n`) and the field. Empty: applied.
    errors: list[str]
    #: What the model is told: the counts, what happened to left-out items, or the problems.
    summary: str
    #: Whether `todos` differs from the old list (store it and send a `todos` update only then).
    changed: bool

    @property
    def applied(self) -> bool:
        return not self.errors


# ---------------------------------------------------------------- writing the list


@dataclass(frozen=True)
class _Item:
    """One valid item of a write, before it is matched to the old list."""

    id: Optional[str]
    content: str
    status: str
    priority: Optional[str]


def merge(old: list[Todo], items: list[Any], now: str) -> MergeResult:
    """todo_write: the list `items` describes, merged with `old` by the rules above."""
    if not isinstance(items, (list, tuple)):
        return _refused(old, [f"todos: must be a list of todo items (got {_got(items)})"])
    read, errors = _read(items)
    if errors:
        return _refused(old, errors)

    before = {todo.id: todo for todo in old}
    new = [_stamp(item, todo_id, before.get(todo_id), now) for item, todo_id in zip(read, _ids(old, read))]
    taken = {todo.id for todo in new}
    left_out = [todo for todo in old if todo.id not in taken]
    dropped = bool(left_out) and all(todo.status == "completed" for todo in new)
    kept = [] if dropped else [_completed(todo, now) for todo in left_out]
    todos = kept + new

    summary = f"Todo list updated: {_counts(todos)}."
    if kept:
        summary += f" {_items(len(kept))} left out of the new list kept as completed."
    if dropped:
        summary += f" {_items(len(left_out))} of the old list dropped (every new item is completed)."
    return MergeResult(todos, [], summary, changed=_dump(todos) != _dump(old))


def _read(items: list[Any] | tuple[Any, ...]) -> tuple[list[_Item], list[str]]:
    """The valid items, and a line per problem of the others."""
    read: list[_Item] = []
    errors: list[str] = []
    first_with: dict[str, int] = {}  # id -> index of its first item
    in_progress: Optional[int] = None
    for i, raw in enumerate(items):
        where = f"todos[{i}]"
        if isinstance(raw, Todo):
            raw = raw.model_dump()
        if not isinstance(raw, Mapping):
            errors.append(f"{where}: must be an object with content, status and priority (got {_got(raw)})")
            continue
        problems: list[str] = []

        todo_id = raw.get("id")
        if isinstance(todo_id, int) and not isinstance(todo_id, bool):
            todo_id = str(todo_id)
        if isinstance(todo_id, str) and todo_id.strip():
            todo_id = todo_id.strip()
            if todo_id in first_with:
                problems.append(f"{where}.id: {_got(todo_id)} is already the id of todos[{first_with[todo_id]}]")
            else:
                first_with[todo_id] = i
        elif todo_id is None or isinstance(todo_id, str):
            todo_id = None  # left out or blank: the server gives one
        else:
            problems.append(f"{where}.id: must be a string (got {_got(todo_id)})")

        content = raw.get("content")
        if content is None:
            problems.append(f"{where}.content: is required")
        elif not isinstance(content, str):
            problems.append(f"{where}.content: must be a string (got {_got(content)})")
        elif not content.strip():
            problems.append(f"{where}.content: must not be empty")

        status = raw.get("status")
        if status is None:
            status = "pending"
        if status not in STATUSES:
            problems.append(f"{where}.status: must be pending, in_progress or completed (got {_got(status)})")
        elif status == "in_progress" and in_progress is not None:
            problems.append(f"{where}.status: only one item may be in_progress, and todos[{in_progress}] already is")
        elif status == "in_progress":
            in_progress = i

        priority = raw.get("priority")
        if priority is not None and priority not in PRIORITIES:
            problems.append(f"{where}.priority: must be high, medium or low (got {_got(priority)})")

        errors += problems
        if not problems:
            read.append(_Item(todo_id, content.strip(), status, priority))
    return read, errors


def _ids(old: list[Todo], items: list[_Item]) -> list[str]:
    """The id of each item: its own; else an untaken old item's with the same content; else new."""
    own = {item.id for item in items if item.id}
    free = [todo for todo in old if todo.id not in own]
    in_use = own | {todo.id for todo in old}
    last = max((int(m[1]) for x in in_use if (m := re.fullmatch(r"t(\d+)", x))), default=0)
    ids: list[str] = []
    for item in items:
        same = None if item.id else next((todo for todo in free if todo.content == item.content), None)
        if item.id:
            ids.append(item.id)
        elif same is not None:
            free.remove(same)
            ids.append(same.id)
        else:
            last += 1
            ids.append(f"t{last}")
    return ids


def _stamp(item: _Item, todo_id: str, before: Optional[Todo], now: str) -> Todo:
    priority = item.priority or (before.priority if before else "medium")
    todo = Todo(id=todo_id, content=item.content, status=item.status, priority=priority, created_at=now, updated_at=now)
    if before is None:
        return todo
    same = (before.content, before.status, before.priority) == (todo.content, todo.status, todo.priority)
    return todo.model_copy(
        update={"created_at": before.created_at or now, "updated_at": (before.updated_at or now) if same else now}
    )


def _completed(todo: Todo, now: str) -> Todo:
    if todo.status == "completed":
        return todo
    return todo.model_copy(update={"status": "completed", "updated_at": now})


def _refused(old: list[Todo], errors: list[str]) -> MergeResult:
    head = f"Todo list not updated: {len(errors)} problem{'s' if len(errors) != 1 else ''}."
    tail = " Fix them and send the whole list again:" if len(errors) != 1 else " Fix it and send the whole list again:"
    summary = head + tail + "".join(f"\n- {error}" for error in errors)
    return MergeResult(list(old), errors, summary, changed=False)


def _counts(todos: list[Todo]) -> str:
    n = {status: sum(todo.status == status for todo in todos) for status in STATUSES}
    return f"{n['completed']} completed, {n['in_progress']} in progress, {n['pending']} pending"


def _items(n: int) -> str:
    return f"{n} item{'s' if n != 1 else ''}"


def _dump(todos: list[Todo]) -> list[dict[str, Any]]:
    return [todo.model_dump() for todo in todos]


def _got(value: Any) -> str:
    """A value as the model wrote it (JSON), cut short."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:39] + "…"


# ---------------------------------------------------------------- the markdown checklist

_CHECKLIST_LINE = re.compile(r"\s*(?:[-*]\s*)?\[([ xX-])\]\s*(.*)")
_CHECK_STATUS = {" ": "pending", "x": "completed", "X": "completed", "-": "in_progress"}
_NOT_AN_ITEM = 'not a checklist item, expected "[ ] text", "[-] text" or "[x] text"'


def parse_checklist(markdown: str) -> tuple[list[dict[str, str]], list[str]]:
    """The items of a checklist (`[ ]` pending, `[-]` in progress, `[x]` completed, one per
    line, optionally after `- ` or `* `), as `{content, status}` dicts for `merge`, and a line
    per problem (`line n: ...`). Blank lines are skipped; any other line is a problem."""
    if not isinstance(markdown, str):
        return [], [f"todos: must be a markdown checklist (got {_got(markdown)})"]
    items: list[dict[str, str]] = []
    errors: list[str] = []
    in_progress: Optional[int] = None
    for n, line in enumerate(markdown.splitlines(), 1):
        if not line.strip():
            continue
        match = _CHECKLIST_LINE.fullmatch(line)
        if match is None:
            errors.append(f"line {n}: {_NOT_AN_ITEM} (got {_got(line.strip())})")
            continue
        status, content = _CHECK_STATUS[match[1]], match[2].strip()
        if not content:
            errors.append(f"line {n}: the item has no text")
            continue
        if status == "in_progress" and in_progress is not None:
            errors.append(f"line {n}: only one item may be in progress ([-]), and line {in_progress} already is")
            continue
        if status == "in_progress":
            in_progress = n
        items.append({"content": content, "status": status})
    return items, errors


def merge_checklist(old: list[Todo], markdown: str, now: str) -> MergeResult:
    """update_todo_list: the checklist read by `parse_checklist`, then merged by `merge`."""
    items, errors = parse_checklist(markdown)
    return _refused(old, errors) if errors else merge(old, items, now)


# ---------------------------------------------------------------- renderings

MAX_WIDTH = 80
_MARK = {"completed": "✓", "in_progress": "▶", "pending": "○"}
_PRIORITY_MARK = {"high": "!", "medium": " ", "low": "↓"}
_STYLE = {"completed": "\x1b[2;9m", "in_progress": "\x1b[1m", "pending": ""}  # dim + struck; bold
_RESET = "\x1b[0m"
_CHECKBOX = {"completed": "[x]", "in_progress": "[-]", "pending": "[ ]"}


def ansi_box(todos: list[Todo], width: int = MAX_WIDTH) -> str:
    """The list in a box for a terminal, at most `width` columns wide (longer items end in `…`):
    a title line, then per item its mark (✓ completed, dim and struck through; ▶ in progress,
    bold; ○ pending), `!` for high priority or `↓` for low, and its content."""
    inner = width - 4  # "│ " + text + " │"
    rows: list[tuple[str, str]] = []  # (plain text, text with its style)
    for todo in todos:
        lead = f"{_MARK[todo.status]} {_PRIORITY_MARK[todo.priority]} "
        content = _fit(_one_line(todo.content), inner - _cols(lead))
        style = _STYLE[todo.status]
        rows.append((lead + content, lead + (f"{style}{content}{_RESET}" if style else content)))
    if not rows:
        rows.append(("No todos", "No todos"))
    done = sum(todo.status == "completed" for todo in todos)
    title = _fit(f"Todos ({done}/{len(todos)} completed)" if todos else "Todos", inner)
    size = max(_cols(text) for text, _ in [(title, title), *rows])

    def row(plain: str, styled: str) -> str:
        return f"│ {styled}{' ' * (size - _cols(plain))} │"

    rule = "─" * (size + 2)
    return "\n".join([f"┌{rule}┐", row(title, title), f"├{rule}┤", *(row(*r) for r in rows), f"└{rule}┘"])


def html(todos: list[Todo]) -> str:
    """The list as `<ul class="todos">`, one `<li class="todo <status> priority-<priority>">`
    per item; everything from the model is escaped."""
    items = [
        f'<li class="todo {escape(todo.status)} priority-{escape(todo.priority)}" data-id="{escape(todo.id)}">'
        f"{escape(todo.content)}</li>"
        for todo in todos
    ]
    return "\n".join(['<ul class="todos">', *items, "</ul>"]) if items else '<ul class="todos"></ul>'


def as_text(todos: list[Todo], with_ids: bool = False) -> str:
    """The list for the model, a checklist (`- [x]`, `- [-]`, `- [ ]`); "" when empty. Plain,
    it reads back with `parse_checklist` unchanged; `with_ids` adds each id and priority, for
    the model that writes with todo_write."""
    lines = []
    for todo in todos:
        line = f"- {_CHECKBOX[todo.status]} {_one_line(todo.content)}"
        lines.append(f"{line} (id: {todo.id}, priority: {todo.priority})" if with_ids else line)
    return "\n".join(lines)


def _one_line(text: str) -> str:
    """The text on one line, without control characters (no escape sequence reaches a terminal)."""
    return "".join(c for c in " ".join(text.split()) if unicodedata.category(c) != "Cc")


def _char_cols(c: str) -> int:
    if unicodedata.category(c) in ("Mn", "Me", "Cf"):
        return 0  # combining marks (Devanagari vowel signs, accents), joiners
    return 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1


def _cols(text: str) -> int:
    """The columns `text` takes in a terminal."""
    return sum(_char_cols(c) for c in text)


def _fit(text: str, cols: int) -> str:
    """`text` cut to at most `cols` columns, ending in `…` when cut."""
    if _cols(text) <= cols:
        return text
    kept, used = [], 0
    for c in text:
        used += _char_cols(c)
        if used > cols - 1:
            break
        kept.append(c)
    return "".join(kept).rstrip() + "…"
