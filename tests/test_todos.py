"""The todo list (SPEC §4): the rules of a write, the problems reported by index and field, the
markdown checklist, and the renderings (ANSI box, HTML, the checklist for the model)."""

from __future__ import annotations

import re
import unicodedata

import pytest

from protocol import Todo
from server.plan.todos import (
    MAX_WIDTH,
    MergeResult,
    ansi_box,
    as_text,
    html,
    merge,
    merge_checklist,
    parse_checklist,
)

T0, T1, T2 = "2024-05-01T10:00:00Z", "2024-05-01T11:00:00Z", "2024-05-01T12:00:00Z"


def todo(id: str, content: str, status: str = "pending", priority: str = "medium", at: str = T0) -> Todo:
    return Todo(id=id, content=content, status=status, priority=priority, created_at=at, updated_at=at)


def applied(old: list[Todo], items, now: str = T1) -> MergeResult:
    result = merge(old, items, now)
    assert result.errors == [], result.summary
    return result


def refused(old: list[Todo], items) -> list[str]:
    result = merge(old, items, T1)
    assert result.todos == old and not result.changed and not result.applied
    assert result.summary.startswith("Todo list not updated: ")
    assert all(f"\n- {error}" in result.summary for error in result.errors)
    return result.errors


def rows(todos: list[Todo]) -> list[tuple]:
    return [(t.id, t.content, t.status, t.priority, t.created_at, t.updated_at) for t in todos]


OLD = [
    todo("t1", "Read the code", "completed"),
    todo("t2", "Write the parser", "in_progress"),
    todo("t3", "Write the tests"),
]


# ---------------------------------------------------------------- the rules of a write


def test_a_first_write_gets_ids_defaults_and_the_dates_of_now():
    items = [{"content": "Read the code", "priority": "high"}, {"content": " Write it ", "status": "in_progress"}]
    result = applied([], items)
    assert rows(result.todos) == [
        ("t1", "Read the code", "pending", "high", T1, T1),
        ("t2", "Write it", "in_progress", "medium", T1, T1),
    ]
    assert result.summary == "Todo list updated: 0 completed, 1 in progress, 1 pending."
    assert result.changed and result.applied


def test_items_left_out_are_kept_as_completed_before_the_new_ones():
    result = applied(OLD, [{"id": "t3", "content": "Write the tests", "status": "in_progress"}, {"content": "Docs"}])
    assert rows(result.todos) == [
        ("t1", "Read the code", "completed", "medium", T0, T0),  # already completed: untouched
        ("t2", "Write the parser", "completed", "medium", T0, T1),  # marked completed now
        ("t3", "Write the tests", "in_progress", "medium", T0, T1),
        ("t4", "Docs", "pending", "medium", T1, T1),
    ]
    assert result.summary == (
        "Todo list updated: 2 completed, 1 in progress, 1 pending. 2 items left out of the new list kept as completed."
    )


@pytest.mark.parametrize(
    "items, expected",
    [
        ([{"id": "t9", "content": "Ship it", "status": "completed"}], [("t9", "Ship it", "completed")]),
        ([], []),  # an empty list clears the list
    ],
)
def test_when_every_new_item_is_completed_the_old_ones_are_dropped(items, expected):
    result = applied(OLD, items)
    assert [(t.id, t.content, t.status) for t in result.todos] == expected
    assert result.summary.endswith("3 items of the old list dropped (every new item is completed).")


def test_a_new_list_with_work_left_keeps_even_completed_old_items():
    result = applied([todo("t1", "Read", "completed")], [{"content": "Write"}])
    assert [(t.id, t.status) for t in result.todos] == [("t1", "completed"), ("t2", "pending")]


@pytest.mark.parametrize(
    "change, updated",
    [
        ({}, T0),  # the same item again: not changed
        ({"content": "Write the tests first"}, T1),
        ({"status": "completed"}, T1),
        ({"priority": "high"}, T1),
    ],
)
def test_a_rewrite_keeps_created_at_and_moves_updated_at_only_for_a_changed_item(change, updated):
    items = [{"id": t.id, "content": t.content, "status": t.status, "priority": t.priority} for t in OLD]
    items[2].update(change)
    result = applied(OLD, items)
    assert [(t.created_at, t.updated_at) for t in result.todos] == [(T0, T0), (T0, T0), (T0, updated)]
    assert result.changed == (updated == T1)


def test_the_models_timestamps_are_ignored():
    stamps = {"created_at": "1999-01-01T00:00:00Z", "updated_at": "2999-01-01T00:00:00Z", "createdAt": "x"}
    items = [{"id": "t1", "content": "Read the code", "status": "completed", **stamps}, {"content": "New", **stamps}]
    result = applied(OLD[:1], items)
    assert [(t.created_at, t.updated_at) for t in result.todos] == [(T0, T0), (T1, T1)]


def test_generated_ids_go_above_every_id_in_use():
    old = [todo("t1", "a", "completed"), todo("t3", "b", "completed"), todo("setup", "c", "completed")]
    result = applied(old, [{"content": "d"}, {"id": "t7", "content": "e"}, {"content": "f"}])
    assert [t.id for t in result.todos] == ["t1", "t3", "setup", "t8", "t7", "t9"]


def test_an_item_without_id_takes_the_id_of_an_old_item_with_its_content():
    old = [todo("t1", "Same", priority="high"), todo("t2", "Same", "in_progress"), todo("t5", "Other")]
    # "t1" is claimed by its own id, so the first id-less "Same" takes t2, the second is new
    items = [
        {"content": "Same", "status": "completed"},
        {"id": "t1", "content": "Renamed"},
        {"content": "Same"},
        {"content": "Other"},
    ]
    result = applied(old, items)
    assert rows(result.todos) == [
        ("t2", "Same", "completed", "medium", T0, T1),
        ("t1", "Renamed", "pending", "high", T0, T1),
        ("t6", "Same", "pending", "medium", T1, T1),
        ("t5", "Other", "pending", "medium", T0, T0),
    ]


def test_left_out_fields_status_is_pending_priority_is_the_old_items():
    old = [todo("a", "Task", "in_progress", "low")]
    result = applied(old, [{"id": "a", "content": "Task"}, {"id": "b", "content": "New"}])
    assert [(t.status, t.priority) for t in result.todos] == [("pending", "low"), ("pending", "medium")]


def test_ids_are_strings_trimmed_and_numbers_are_accepted_as_strings():
    result = applied([], [{"id": 7, "content": "a"}, {"id": "  x ", "content": "b"}, {"id": "  ", "content": "c"}])
    assert [t.id for t in result.todos] == ["7", "x", "t1"]


def test_todo_objects_are_accepted_as_items_and_old_is_not_changed():
    old = [todo("t1", "a", "in_progress")]
    before = [t.model_copy() for t in old]
    result = applied(old, [Todo(id="t2", content="b")])
    assert [t.id for t in result.todos] == ["t1", "t2"] and old == before


# ---------------------------------------------------------------- invalid items: all reported, nothing applied


BAD_STATUS = "todos[0].status: must be pending, in_progress or completed (got "


@pytest.mark.parametrize(
    "items, errors",
    [
        ("[]", ['todos: must be a list of todo items (got "[]")']),
        (None, ["todos: must be a list of todo items (got null)"]),
        (["Write tests"], ['todos[0]: must be an object with content, status and priority (got "Write tests")']),
        ([{"content": "ok"}, 3], ["todos[1]: must be an object with content, status and priority (got 3)"]),
        ([{"status": "pending"}], ["todos[0].content: is required"]),
        ([{"content": 5}], ["todos[0].content: must be a string (got 5)"]),
        ([{"content": "  "}], ["todos[0].content: must not be empty"]),
        ([{"content": "a", "status": "done"}], [BAD_STATUS + '"done")']),
        ([{"content": "a", "status": "In_Progress"}], [BAD_STATUS + '"In_Progress")']),
        ([{"content": "a", "priority": "urgent"}], ['todos[0].priority: must be high, medium or low (got "urgent")']),
        ([{"content": "a", "priority": 1}], ["todos[0].priority: must be high, medium or low (got 1)"]),
        ([{"id": ["x"], "content": "a"}], ['todos[0].id: must be a string (got ["x"])']),
        ([{"id": True, "content": "a"}], ["todos[0].id: must be a string (got true)"]),
        (
            [{"id": "a", "content": "x"}, {"content": "y"}, {"id": "a", "content": "z"}],
            ['todos[2].id: "a" is already the id of todos[0]'],
        ),
        (
            [{"content": "x" * 60, "status": "x" * 60}],
            [BAD_STATUS + '"' + "x" * 38 + "…)"],  # a long value is cut
        ),
    ],
)
def test_an_invalid_item_is_reported_by_index_and_field(items, errors):
    assert refused(OLD, items) == errors


def test_every_problem_of_every_item_is_reported_at_once():
    items = [
        {"content": "ok"},
        {"content": "", "status": "done", "priority": "p"},
        "x",
        {"content": "ok", "priority": "zzz"},
    ]
    assert refused(OLD, items) == [
        "todos[1].content: must not be empty",
        'todos[1].status: must be pending, in_progress or completed (got "done")',
        'todos[1].priority: must be high, medium or low (got "p")',
        'todos[2]: must be an object with content, status and priority (got "x")',
        'todos[3].priority: must be high, medium or low (got "zzz")',
    ]
    result = merge(OLD, items, T1)
    assert result.summary.startswith("Todo list not updated: 5 problems. Fix them and send the whole list again:\n- ")


def test_at_most_one_item_is_in_progress_a_second_one_names_the_first():
    items = [{"content": "a"}, *({"content": c, "status": "in_progress"} for c in "bcd")]
    assert refused(OLD, items) == [
        "todos[2].status: only one item may be in_progress, and todos[1] already is",
        "todos[3].status: only one item may be in_progress, and todos[1] already is",
    ]


def test_one_problem_is_told_in_the_singular():
    result = merge([], [{"content": ""}], T1)
    assert result.summary == (
        "Todo list not updated: 1 problem. Fix it and send the whole list again:\n- todos[0].content: must not be empty"
    )


def test_an_old_item_in_progress_left_out_does_not_count_as_a_second_one():
    result = applied([todo("t1", "a", "in_progress")], [{"content": "b", "status": "in_progress"}])
    assert [(t.id, t.status) for t in result.todos] == [("t1", "completed"), ("t2", "in_progress")]


# ---------------------------------------------------------------- the markdown checklist


def test_a_checklist_becomes_the_items_of_a_write():
    markdown = "[x] Read the code\n\n- [-] Write the parser\n* [ ] Write the tests\n  - [X]   Tidy up  \r\n[ ]Docs\n"
    assert parse_checklist(markdown) == (
        [
            {"content": "Read the code", "status": "completed"},
            {"content": "Write the parser", "status": "in_progress"},
            {"content": "Write the tests", "status": "pending"},
            {"content": "Tidy up", "status": "completed"},
            {"content": "Docs", "status": "pending"},
        ],
        [],
    )


NOT_AN_ITEM = 'not a checklist item, expected "[ ] text", "[-] text" or "[x] text"'


@pytest.mark.parametrize(
    "markdown, errors",
    [
        ("# Plan\n[ ] a", [f'line 1: {NOT_AN_ITEM} (got "# Plan")']),
        ("[ ] a\n\n- b", [f'line 3: {NOT_AN_ITEM} (got "- b")']),
        ("[?] a", [f'line 1: {NOT_AN_ITEM} (got "[?] a")']),
        ("[ ] a\n- [x]   ", ["line 2: the item has no text"]),
        ("[-] a\n[ ] b\n[-] c", ["line 3: only one item may be in progress ([-]), and line 1 already is"]),
        (["[ ] a"], ['todos: must be a markdown checklist (got ["[ ] a"])']),
    ],
)
def test_a_line_that_is_not_a_checklist_item_is_reported_by_number(markdown, errors):
    assert parse_checklist(markdown)[1] == errors
    result = merge_checklist(OLD, markdown, T1)
    assert result.todos == OLD and result.errors == errors and not result.changed


def test_a_rewritten_checklist_keeps_ids_dates_and_priorities_of_unchanged_lines():
    old = [todo("t1", "Read the code", "in_progress", "high"), todo("t2", "Write the parser")]
    result = merge_checklist(old, "- [x] Read the code\n- [-] Write the parser\n- [ ] Write the tests", T1)
    assert rows(result.todos) == [
        ("t1", "Read the code", "completed", "high", T0, T1),
        ("t2", "Write the parser", "in_progress", "medium", T0, T1),
        ("t3", "Write the tests", "pending", "medium", T1, T1),
    ]
    # a reworded line is a new item; the old one, left out, is kept as completed
    again = merge_checklist(result.todos, "- [x] Read the code\n- [-] Write the parser well", T2)
    assert [(t.id, t.content, t.status) for t in again.todos] == [
        ("t2", "Write the parser", "completed"),
        ("t3", "Write the tests", "completed"),
        ("t1", "Read the code", "completed"),
        ("t4", "Write the parser well", "in_progress"),
    ]


def test_the_plain_checklist_reads_back_without_a_change():
    result = merge_checklist(OLD, as_text(OLD), T1)
    assert result.todos == OLD and not result.changed and result.applied


# ---------------------------------------------------------------- renderings

DIM_STRUCK, BOLD, RESET = "\x1b[2;9m", "\x1b[1m", "\x1b[0m"
MIXED = [
    todo("t1", "Read the code", "completed", "high"),
    todo("t2", "Write the parser", "in_progress"),
    todo("t3", "Write the tests", "pending", "low"),
]


def columns(line: str) -> int:
    """Terminal columns of a line, its escape sequences left out."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", line)
    zero = sum(unicodedata.category(c) in ("Mn", "Me", "Cf") for c in plain)
    wide = sum(unicodedata.east_asian_width(c) in ("W", "F") for c in plain)
    return len(plain) - zero + wide


def test_the_ansi_box_marks_each_status_and_priority():
    assert ansi_box(MIXED) == "\n".join(
        [
            "┌───────────────────────┐",
            "│ Todos (1/3 completed) │",
            "├───────────────────────┤",
            f"│ ✓ ! {DIM_STRUCK}Read the code{RESET}     │",
            f"│ ▶   {BOLD}Write the parser{RESET}  │",
            "│ ○ ↓ Write the tests   │",
            "└───────────────────────┘",
        ]
    )


def test_an_empty_list_is_a_box_saying_so():
    assert ansi_box([]).split("\n") == ["┌──────────┐", "│ Todos    │", "├──────────┤", "│ No todos │", "└──────────┘"]


def test_a_long_item_is_cut_with_an_ellipsis_to_the_width():
    box = ansi_box([todo("t1", "word " * 40, "in_progress")]).split("\n")
    assert {columns(line) for line in box} == {MAX_WIDTH}
    assert box[3] == f"│ ▶   {BOLD}{('word ' * 15)[:71]}…{RESET} │"
    narrow = ansi_box([todo("t1", "abcdefghijklmnopqrstuvwxyz")], width=24).split("\n")
    assert narrow[3] == "│ ○   abcdefghijklmno… │" and {columns(line) for line in narrow} == {24}
    spaced = ansi_box([todo("t1", "abcdefghijklmn  opqrstuvwxyz")], width=24).split("\n")
    assert spaced[3] == "│ ○   abcdefghijklmn…  │"  # no space left before the ellipsis


@pytest.mark.parametrize("content", ["日本語のタスクを書く", "परीक्षण लिखें", "Café déjà vu", "寿司" * 50])
def test_wide_and_combining_characters_keep_the_box_straight(content):
    box = ansi_box([todo("t1", content), todo("t2", "short")]).split("\n")
    assert len({columns(line) for line in box}) == 1 and columns(box[0]) <= MAX_WIDTH


def test_the_content_is_put_on_one_line_and_control_characters_never_reach_the_terminal():
    box = ansi_box([todo("t1", "evil\x1b[31m red\x07\nsecond   line\tend")])
    assert "│ ○   evil[31m red second line end │" in box.split("\n")
    assert "\x1b[31m" not in box and "\x07" not in box
    assert as_text([todo("t1", "a\nb\x1b")]) == "- [ ] a b"


def test_html_is_a_list_with_a_class_per_status_and_priority_and_escaped_content():
    todos = [*MIXED, todo('x"><script>', '<script>alert("hi")</script> & \'quotes\'')]
    assert html(todos) == "\n".join(
        [
            '<ul class="todos">',
            '<li class="todo completed priority-high" data-id="t1">Read the code</li>',
            '<li class="todo in_progress priority-medium" data-id="t2">Write the parser</li>',
            '<li class="todo pending priority-low" data-id="t3">Write the tests</li>',
            '<li class="todo pending priority-medium" data-id="x&quot;&gt;&lt;script&gt;">'
            "&lt;script&gt;alert(&quot;hi&quot;)&lt;/script&gt; &amp; &#x27;quotes&#x27;</li>",
            "</ul>",
        ]
    )
    assert html([]) == '<ul class="todos"></ul>'


def test_as_text_is_a_checklist_for_the_model():
    assert as_text(MIXED) == "- [x] Read the code\n- [-] Write the parser\n- [ ] Write the tests"
    assert as_text(MIXED, with_ids=True) == (
        "- [x] Read the code (id: t1, priority: high)\n"
        "- [-] Write the parser (id: t2, priority: medium)\n"
        "- [ ] Write the tests (id: t3, priority: low)"
    )
    assert as_text([]) == ""
