"""Tool calls written in the model's streamed text (Roo/Cline style XML), and their parameters."""

from __future__ import annotations

import itertools

import pytest

from server.providers.xmlcalls import XmlCallParser, parse_params

NAMES = ("read_file", "write_to_file", "apply_diff", "ask_followup_question", "attempt_completion")


def parser() -> XmlCallParser:
    ids = itertools.count(1)
    return XmlCallParser(NAMES, lambda: f"xml-{next(ids)}")


def stream(chunks: list[str]) -> tuple[str, list[tuple[str, str, dict[str, str]]]]:
    """(all visible text, the calls as (id, name, arguments)) after feeding `chunks` and finishing."""
    p = parser()
    visible = "".join(p.feed(chunk) for chunk in chunks) + p.finish()
    return visible, [(c.id, c.name, c.arguments) for c in p.calls]


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


WRITE_HTML = (
    "Writing it.\n<write_to_file>\n<path>page.html</path>\n<content>\n"
    "<p>a</content> inside</p>\n  <div>\n    <content>x</content>\n    <b>y</b>\n  </div>\n"
    "</content>\n</write_to_file>\nSaved."
)

STREAMS = [
    (
        "a call in the middle of text",
        "Let me look.\n<read_file>\n<path>a.py</path>\n</read_file>\nThen more.",
        "Let me look.\n\nThen more.",
        [("read_file", {"path": "a.py"})],
    ),
    ("text only", "No tools here, just 2 < 3 and a > b.", "No tools here, just 2 < 3 and a > b.", []),
    (
        "unknown tags stay visible",
        "Use <b>bold</b>, <read_fileX>, </read_file> and <div class='x'> freely.",
        "Use <b>bold</b>, <read_fileX>, </read_file> and <div class='x'> freely.",
        [],
    ),
    (
        "two calls, ids in order",
        "<read_file><path>a</path></read_file> and <read_file><path>b</path></read_file>",
        " and ",
        [("read_file", {"path": "a"}), ("read_file", {"path": "b"})],
    ),
    (
        "content holding </content> and tags survives",
        WRITE_HTML,
        "Writing it.\n\nSaved.",
        [("write_to_file", {
            "path": "page.html",
            "content": "<p>a</content> inside</p>\n  <div>\n    <content>x</content>\n    <b>y</b>\n  </div>",
        })],
    ),
    (
        "content before path",
        "<write_to_file><content>\n<a><content>x</content><path>in</path></a>\n</content><path>f.xml</path></write_to_file>",
        "",
        [("write_to_file", {"content": "<a><content>x</content><path>in</path></a>", "path": "f.xml"})],
    ),
    (
        "an unclosed block at the end is still a call",
        "Here goes <write_to_file><path>p.txt</path><content>\n  partial line",
        "Here goes ",
        [("write_to_file", {"path": "p.txt", "content": "  partial line"})],
    ),
    (
        "an unclosed block with only a path",
        "<read_file><path>a.py",
        "",
        [("read_file", {"path": "a.py"})],
    ),
    ("a tag prefix left at the end is text", "What about <read_fi", "What about <read_fi", []),
    ("a lone < at the end is text", "x <", "x <", []),
    (
        "nested follow_up suggestions captured raw",
        "<ask_followup_question>\n<question>Which one?</question>\n<follow_up>\n"
        "<suggest>First</suggest>\n<suggest mode=\"code\">Second</suggest>\n</follow_up>\n</ask_followup_question>",
        "",
        [("ask_followup_question", {
            "question": "Which one?",
            "follow_up": "<suggest>First</suggest>\n<suggest mode=\"code\">Second</suggest>",
        })],
    ),
    (
        "a diff with markers",
        "<apply_diff>\n<path>a.py</path>\n<diff>\n<<<<<<< SEARCH\n    old\n=======\n    new\n>>>>>>> REPLACE\n</diff>\n</apply_diff>",
        "",
        [("apply_diff", {"path": "a.py", "diff": "<<<<<<< SEARCH\n    old\n=======\n    new\n>>>>>>> REPLACE"})],
    ),
    (
        "a tool tag inside a parameter is part of its value",
        "<attempt_completion><result>Use <read_file> to read.</result></attempt_completion>",
        "",
        [("attempt_completion", {"result": "Use <read_file> to read."})],
    ),
]


@pytest.mark.parametrize("text, visible, calls", [r[1:] for r in STREAMS], ids=[r[0] for r in STREAMS])
def test_stream(text, visible, calls):
    expected = (visible, [(f"xml-{n}", name, args) for n, (name, args) in enumerate(calls, 1)])
    assert stream([text]) == expected


@pytest.mark.parametrize("text", [r[1] for r in STREAMS], ids=[r[0] for r in STREAMS])
@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13])
def test_chunking_does_not_change_the_result(text, size):
    assert stream(pieces(text, size)) == stream([text])


def test_visible_text_is_released_as_soon_as_it_is_safe():
    p = parser()
    assert p.feed("Hello ") == "Hello "
    assert p.feed("<") == ""  # might open a tool tag
    assert p.feed("b") == "<b"  # no tool starts with "b"
    assert p.feed("> and <wri") == "> and "
    assert p.feed("te_") == ""
    assert p.feed("to_file><path>a</path><content>x</con") == ""  # inside the block: nothing shown
    assert p.feed("tent></write_") == ""
    assert p.feed("to_file> done") == " done"
    assert p.finish() == ""
    assert [(c.name, c.arguments) for c in p.calls] == [("write_to_file", {"path": "a", "content": "x"})]


def test_tag_split_across_chunks():
    p = parser()
    assert p.feed("<write_") == ""
    assert p.feed("to_file><path>a.txt</path><content>hi</content></write_to_file>") == ""
    assert p.finish() == ""
    assert [(c.id, c.name, c.arguments) for c in p.calls] == [("xml-1", "write_to_file", {"path": "a.txt", "content": "hi"})]


def test_a_call_is_collected_when_its_block_closes():
    p = parser()
    p.feed("<read_file><path>a</path>")
    assert p.calls == []
    p.feed("</read_file>")
    assert [c.arguments for c in p.calls] == [{"path": "a"}]


def test_finish_returns_held_back_text():
    p = parser()
    assert p.feed("see <read_f") == "see "
    assert p.finish() == "<read_f"
    assert p.calls == []


def test_only_the_given_tool_names_are_calls():
    p = XmlCallParser(["read_file"], lambda: "id")
    text = "<write_to_file><path>a</path></write_to_file>"
    assert p.feed(text) + p.finish() == text
    assert p.calls == []


PARAMS = [
    ("other params are stripped", "<path>\n  a.py \n</path>", {"path": "a.py"}),
    ("numbers and flags stay text", "<line>3</line><recursive> true </recursive>", {"line": "3", "recursive": "true"}),
    (
        "content keeps indentation, loses one leading and one trailing newline",
        "<content>\n\n    indented\n\n</content>",
        {"content": "\n    indented\n"},
    ),
    ("content without newlines is kept as is", "<content>  x  </content>", {"content": "  x  "}),
    ("CRLF newlines", "<content>\r\nx\r\n</content>", {"content": "x"}),
    ("diff is verbatim", "<diff>\n  a\n</diff>", {"diff": "  a"}),
    ("search and replace are verbatim", "<search>\n  a \n</search><replace> b\n</replace>", {"search": "  a ", "replace": " b"}),
    ("question is stripped", "<question>\n  Why?\n</question>", {"question": "Why?"}),
    ("whitespace between params", "<path>a</path>\n\n  <line>0</line>\n", {"path": "a", "line": "0"}),
    ("empty value", "<path></path><content></content>", {"path": "", "content": ""}),
    ("an unclosed value keeps what arrived", "<path>a</path><content>\n  half", {"path": "a", "content": "  half"}),
    (
        "</content> then a tag inside content",
        "<path>f.xml</path><content>\n<r><content>x</content>\n<name>y</name></r>\n</content>",
        {"path": "f.xml", "content": "<r><content>x</content>\n<name>y</name></r>"},
    ),
    (
        "a non-verbatim value ends at its first close",
        "<result>done</result><command>ls</command>",
        {"result": "done", "command": "ls"},
    ),
    (
        "nested tags are kept raw",
        "<follow_up>\n<suggest>A</suggest>\n<suggest>B</suggest>\n</follow_up>",
        {"follow_up": "<suggest>A</suggest>\n<suggest>B</suggest>"},
    ),
    (
        "apply_diff args are kept raw for the tool",
        "<args>\n<file><path>a</path><diff><content>x</content></diff></file>\n</args>",
        {"args": "<file><path>a</path><diff><content>x</content></diff></file>"},
    ),
    ("no params", "just text", {}),
]


@pytest.mark.parametrize("block, expected", [r[1:] for r in PARAMS], ids=[r[0] for r in PARAMS])
def test_parse_params(block, expected):
    assert parse_params(block) == expected
