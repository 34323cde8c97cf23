"""The editor in the loop, in the core: the problems an edit caused (tools/problems.py) and the
review of an edit before it is applied (the approval's `file`, the answer's `content`)."""

from __future__ import annotations

import asyncio
import time

import pytest

from helpers import call_tool, running
from memory_host import MemoryHost
from protocol import ApprovalResponse, Diagnostic
from server.tools.problems import new_problems


def problem(line: int, message: str, severity: int | None = 1, source: str | None = "pyright", col: int = 4, code=None) -> Diagnostic:
    data = {"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 3}}, "message": message}
    if severity is not None:
        data["severity"] = severity
    if source is not None:
        data["source"] = source
    if code is not None:
        data["code"] = code
    return Diagnostic.model_validate(data)


def editor_with(before: list, after: list) -> MemoryHost:
    """An editor whose language servers report `before` until the file is edited, then `after`."""
    host = MemoryHost()
    host.problem_source = lambda path: list(after if host.edits else before)
    return host


QUICK = {"diagnostics": {"delayMs": 0}}


# ---------------------------------------------------------------- what is new


NEW = [
    ("an added problem is new", [], [problem(2, "x")], ["x"]),
    ("the same problem moved down a line is not", [problem(2, "x")], [problem(3, "x")], []),
    ("a second copy of a known problem is new", [problem(2, "x")], [problem(2, "x"), problem(9, "x")], ["x"]),
    ("another source is another problem", [problem(2, "x", source="a")], [problem(2, "x", source="b")], ["x"]),
    ("another code is another problem", [problem(2, "x", code=1)], [problem(2, "x", code=2)], ["x"]),
    ("a fixed problem is not reported", [problem(2, "x")], [], []),
]


@pytest.mark.parametrize("before, after, messages", [r[1:] for r in NEW], ids=[r[0] for r in NEW])
def test_new_problems(before, after, messages):
    assert [d.message for d in new_problems(before, after)] == messages


# ---------------------------------------------------------------- in an edit's result


async def test_an_edit_reports_the_problems_it_caused(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    host = editor_with([problem(0, "old one", severity=2)], [problem(1, "old one", severity=2), problem(0, "Undefined name `y`\n  (see docs)")])
    async with running(tmp_path, host=host, **QUICK) as session:
        result = await call_tool(session, "write_to_file", path="a.py", content="x = y\nz = 2\n")
    assert result.error is None
    assert result.text == (
        "The content was successfully saved to a.py (2 lines).\n\n"
        "New problems after this edit:\na.py:1:5 error: Undefined name `y` (see docs) (pyright)"
    )
    [reported] = result.metadata["problems"]
    assert reported["message"] == "Undefined name `y`\n  (see docs)" and reported["range"]["start"] == {"line": 0, "character": 4}
    assert host.problem_requests == [[tmp_path / "a.py"]] * 2  # before and after


SEVERITY = [
    ("error: warnings left out", "error", ["e", "no severity"]),
    ("warning: warnings too", "warning", ["e", "no severity", "w"]),
]


@pytest.mark.parametrize("least, messages", [r[1:] for r in SEVERITY], ids=[r[0] for r in SEVERITY])
async def test_the_least_severity_reported(tmp_path, least, messages):
    after = [problem(0, "e"), problem(1, "w", severity=2), problem(2, "i", severity=3), problem(3, "h", severity=4),
             problem(4, "no severity", severity=None, source=None)]
    host = editor_with([], after)
    async with running(tmp_path, host=host, diagnostics={"delayMs": 0, "severity": least}) as session:
        result = await call_tool(session, "write_to_file", path="a.py", content="x\n")
    assert [d["message"] for d in result.metadata["problems"]] == messages
    assert "a.py:5:5 error: no severity\n" in result.text + "\n"  # no source: no parentheses


async def test_at_most_max_problems(tmp_path):
    host = editor_with([], [problem(n, f"p{n}") for n in range(30)])
    async with running(tmp_path, host=host, diagnostics={"delayMs": 0, "max": 7}) as session:
        result = await call_tool(session, "write_to_file", path="a.py", content="x\n")
    lines = result.text.split("New problems after this edit:\n")[1].split("\n")
    assert lines == [f"a.py:{n + 1}:5 error: p{n} (pyright)" for n in range(7)]
    assert len(result.metadata["problems"]) == 7


async def test_no_new_problem_no_words(tmp_path):
    host = editor_with([problem(0, "x")], [problem(5, "x")])
    async with running(tmp_path, host=host, **QUICK) as session:
        result = await call_tool(session, "write_to_file", path="a.py", content="x\n")
    assert result.text == "The content was successfully saved to a.py (1 line)." and result.metadata == {}


async def test_disabled_or_an_editor_that_cannot_say_is_not_asked(tmp_path):
    host = editor_with([], [problem(0, "x")])
    async with running(tmp_path, host=host, diagnostics={"enabled": False}) as session:
        result = await call_tool(session, "write_to_file", path="a.py", content="x\n")
    assert host.problem_requests == [] and "New problems" not in result.text
    quiet = MemoryHost()  # no problem_source: the editor does not declare the capability
    async with running(tmp_path, host=quiet) as session:
        started = time.monotonic()
        result = await call_tool(session, "write_to_file", path="b.py", content="x\n")
        assert time.monotonic() - started < 0.5  # not the default 1 s delay
    assert result.error is None and quiet.problem_requests == []


async def test_an_editor_that_never_answers_costs_at_most_the_delay(tmp_path):
    host = MemoryHost()
    host.problem_source = lambda path: []

    async def never(paths):
        host.problem_requests.append(list(paths))
        await asyncio.sleep(3600)

    host.problems = never  # type: ignore[method-assign]
    async with running(tmp_path, host=host, diagnostics={"delayMs": 300}) as session:
        started = time.monotonic()
        result = await call_tool(session, "write_to_file", path="a.py", content="x\n")
        took = time.monotonic() - started
    assert result.error is None and (tmp_path / "a.py").read_text() == "x\n"
    assert len(host.problem_requests) == 1  # nothing asked after the edit: the editor never answered before it
    assert 0.3 <= took < 0.9


async def test_an_editor_that_errs_costs_nothing_more(tmp_path):
    host = MemoryHost()
    host.problem_source = lambda path: []

    async def erring(paths):
        host.problem_requests.append(list(paths))
        return None

    host.problems = erring  # type: ignore[method-assign]
    async with running(tmp_path, host=host, diagnostics={"delayMs": 2000}) as session:
        started = time.monotonic()
        result = await call_tool(session, "write_to_file", path="a.py", content="x\n")
        assert time.monotonic() - started < 1.5
    assert result.error is None and len(host.problem_requests) == 1


# ---------------------------------------------------------------- review before apply


def answering(content: str | None):
    return MemoryHost(approve=lambda r: ApprovalResponse(decision="approve", content=content))


async def test_an_edit_is_offered_for_review(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    host = answering(None)
    async with running(tmp_path, host=host) as session:
        await call_tool(session, "write_to_file", path="a.txt", content="two")
        await call_tool(session, "write_to_file", path="new.txt", content="fresh")
    assert [r.wire()["file"] for r in host.approvals] == [
        {"path": "a.txt", "original": "one\n", "proposed": "two\n"},
        {"path": "new.txt", "original": None, "proposed": "fresh\n"},
    ]


async def test_the_users_changes_are_written_and_told(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    host = answering("one\nTWO!\nthree\n")
    async with running(tmp_path, host=host) as session:
        result = await call_tool(session, "write_to_file", path="a.txt", content="one\n2\nthree\n")
    assert (tmp_path / "a.txt").read_text() == "one\nTWO!\nthree\n"
    assert host.edits[0][0].new_text == "one\nTWO!\nthree\n"
    assert result.text == (
        "The content was successfully saved to a.txt (3 lines).\n\n"
        "The user edited your proposal before saving it:\n"
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-2\n+TWO!\n three\n"
    )


async def test_content_as_proposed_says_nothing_more(tmp_path):
    host = answering("x\n")
    async with running(tmp_path, host=host) as session:
        result = await call_tool(session, "write_to_file", path="a.txt", content="x")
    assert result.text == "The content was successfully saved to a.txt (1 line)."


async def test_an_edit_of_several_files_is_not_offered_for_review(tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    host = answering("ignored\n")
    diff = "<<<<<<< SEARCH\n{0}\n=======\n{0}{0}\n>>>>>>> REPLACE"
    async with running(tmp_path, host=host) as session:
        result = await call_tool(session, "apply_diff", files=[{"path": "a.txt", "diff": diff.format("a")}, {"path": "b.txt", "diff": diff.format("b")}])
    assert result.error is None and "file" not in host.approvals[0].wire()
    assert (tmp_path / "a.txt").read_text() == "aa\n" and (tmp_path / "b.txt").read_text() == "bb\n"
