"""End to end: the editor in the loop. The real server asks the test editor for the problems of
the files an edit wrote (`modus/client/diagnostics`) and tells the model the new ones; the user
changes an edit's proposal in review and the model is told. The model is a local fake of the
OpenAI API that records what it gets."""

from __future__ import annotations

import asyncio

from fake_models import Call, FakeOpenAI, Reply
from protocol import methods


def settings(base_url: str, **more) -> dict:
    return {"models": {"default": {"provider": "openai", "baseUrl": base_url, "model": "fake"}}, **more}


def problem(line: int, message: str, severity: int = 1, source: str = "pyright") -> dict:
    return {"range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 5}},
            "severity": severity, "message": message, "source": source}


def write(path: str, content: str) -> Reply:
    return Reply("Writing.", [Call("call_w", "write_to_file", {"path": path, "content": content})])


def tool_result(server: FakeOpenAI) -> str:
    [result] = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    return result["content"]


async def test_the_model_is_told_the_problems_its_edit_caused(editor, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    uri = (workspace / "a.py").as_uri()
    # the editor's language servers: one old warning that moves with the lines, one new error once `y` is used

    def problems(u: str) -> list:
        if u != uri:
            return []
        if "y" in (workspace / "a.py").read_text():
            return [problem(1, "unused x", 2), problem(0, '"y" is not defined')]
        return [problem(0, "unused x", 2)]

    editor.problems = problems
    with FakeOpenAI() as server:
        server.add(write("a.py", "z = y\nx = 1\n"), Reply("Fixed soon."))
        await editor.start(settings(server.url, diagnostics={"delayMs": 100, "severity": "error"}), problems=True)
        ended = await editor.chat("use y")
    assert ended["outcome"] == "completed"
    assert editor.problem_requests == [[uri], [uri]]  # before the edit and after it
    assert tool_result(server) == (
        "The content was successfully saved to a.py (2 lines).\n\n"
        'New problems after this edit:\na.py:1:5 error: "y" is not defined (pyright)'
    )
    history = await editor.request(methods.CHAT_HISTORY, {"conversationId": ended["conversationId"]})
    [stored] = [m for m in history["messages"] if m["role"] == "tool"]
    assert stored["metadata"]["problems"] == [problem(0, '"y" is not defined')]


async def test_a_problem_that_only_moved_is_not_new_and_a_cap_holds(editor, workspace):
    (workspace / "a.py").write_text("a\n")
    edited = lambda: "b" in (workspace / "a.py").read_text()  # noqa: E731
    editor.problems = lambda u: [problem(5 if edited() else 4, "old")] + ([problem(n, f"new {n}") for n in range(10)] if edited() else [])
    with FakeOpenAI() as server:
        server.add(write("a.py", "b\n"), Reply("Done."))
        await editor.start(settings(server.url, diagnostics={"delayMs": 0, "max": 3}), problems=True)
        await editor.chat("edit")
    assert tool_result(server).split("\n\n")[1] == (
        "New problems after this edit:\na.py:1:5 error: new 0 (pyright)\na.py:2:5 error: new 1 (pyright)\na.py:3:5 error: new 2 (pyright)"
    )


async def test_an_editor_that_never_answers_or_errs_costs_the_turn_at_most_the_delay(editor, workspace):
    answers = iter(["never", "error"])

    def problems(uri):
        how = next(answers)
        if how == "error":
            raise RuntimeError("the editor broke")
        return asyncio.Event().wait()  # never set

    editor.problems = problems
    editor.obey_cancel = True
    with FakeOpenAI() as server:
        server.add(write("a.py", "one\n"), write("b.py", "two\n"), Reply("Done."))
        await editor.start(settings(server.url, diagnostics={"delayMs": 1000}), problems=True)
        loop = asyncio.get_running_loop()
        started = loop.time()
        ended = await editor.chat("write two files")
        took = loop.time() - started
    assert ended["outcome"] == "completed"
    assert (workspace / "a.py").read_text() == "one\n" and (workspace / "b.py").read_text() == "two\n"
    assert len(editor.problem_requests) == 2  # once per edit: after a silence or an error, nothing more is asked
    assert len(editor.cancelled_requests) >= 1  # the unanswered request was withdrawn
    assert took < 1 + 5  # the silent editor's one delay, not an hour; the erring one's nothing
    results = [m["content"] for m in server.requests[2].body["messages"] if m["role"] == "tool"]
    assert results == ["The content was successfully saved to a.py (1 line).", "The content was successfully saved to b.py (1 line)."]


async def test_an_editor_without_the_capability_is_never_asked(editor, workspace):
    with FakeOpenAI() as server:
        server.add(write("a.py", "one\n"), Reply("Done."))
        await editor.start(settings(server.url))
        await editor.chat("write")
    assert editor.problem_requests == [] and tool_result(server) == "The content was successfully saved to a.py (1 line)."


async def test_the_user_changes_the_proposal_in_review(editor, workspace):
    (workspace / "notes.md").write_text("# Notes\nold\n")
    editor.decide = lambda r: {"decision": "approve", "content": "# Notes\nmine\nnew\n"}
    with FakeOpenAI() as server:
        server.add(write("notes.md", "# Notes\nnew\n"), Reply("Thanks."))
        await editor.start(settings(server.url))
        ended = await editor.chat("rewrite the notes")
    assert ended["outcome"] == "completed"
    [approval] = editor.approvals
    assert approval["file"] == {"path": "notes.md", "original": "# Notes\nold\n", "proposed": "# Notes\nnew\n"}
    assert (workspace / "notes.md").read_text() == "# Notes\nmine\nnew\n"
    assert tool_result(server) == (
        "The content was successfully saved to notes.md (2 lines).\n\n"
        "The user edited your proposal before saving it:\n"
        "--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1,3 @@\n # Notes\n+mine\n new\n"
    )
