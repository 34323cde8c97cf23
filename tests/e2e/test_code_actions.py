"""Code actions over the wire: what the light bulb offers, and the turns its commands start."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from protocol import Command, methods

from .conftest import script

APP = "import sys\n\n\ndef greet(name):\n    return 'Hello, ' + name\n"


def selection(start: int, end: int, end_char: int = 0) -> lsp.Range:
    return lsp.Range(start=lsp.Position(line=start, character=0), end=lsp.Position(line=end, character=end_char))


async def code_actions(editor, uri: str, rng: lsp.Range, diagnostics=()) -> list:
    params = lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=rng, context=lsp.CodeActionContext(diagnostics=list(diagnostics))
    )
    return await editor.client.text_document_code_action_async(params)


async def user_messages(editor) -> list[str]:
    cid = (await editor.request(methods.STATE))["conversationId"]
    messages = (await editor.request(methods.CHAT_HISTORY, {"conversationId": cid}))["messages"]
    return [m["text"] for m in messages if m["role"] == "user"]


@pytest.fixture
async def started(editor, workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text(APP)
    init = await editor.start(script(workspace, {"text": "It greets."}, {"text": "Fixed."}))
    return init, (workspace / "src" / "app.py").as_uri()


async def test_the_light_bulb_offers_plan_explain_and_fix(editor, started):
    init, uri = started
    kinds = init.capabilities.code_action_provider.code_action_kinds
    assert "refactor.modus.plan" in kinds
    rng = selection(3, 5)
    found = await code_actions(editor, uri, rng)
    assert [(a.title, a.kind, a.command.command) for a in found] == [
        ("Plan a change here", "refactor.modus.plan", Command.PLAN_SELECTION),
        ("Explain this", "refactor.modus.explain", Command.START_IN_MODE),
    ]
    plan_args = found[0].command.arguments[0]
    assert plan_args["uri"] == uri and plan_args["range"]["start"] == {"line": 3, "character": 0}
    problem = lsp.Diagnostic(range=selection(4, 4, 10), message="name 'nme' is not defined", source="pyflakes")
    with_fix = await code_actions(editor, uri, rng, [problem])
    fix = with_fix[-1]
    assert (fix.title, fix.kind) == ("Fix this with the agent", "quickfix.modus.fix")
    assert fix.command.arguments[0]["mode"] == "debug" and "name 'nme' is not defined" in fix.command.arguments[0]["prompt"]
    only = lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=rng, context=lsp.CodeActionContext(diagnostics=[], only=["refactor.modus.plan"])
    )
    assert [a.title for a in await editor.client.text_document_code_action_async(only)] == ["Plan a change here"]


async def test_explain_starts_a_turn_in_ask_mode_with_the_numbered_selection(editor, started):
    _, uri = started
    [_, explain] = await code_actions(editor, uri, selection(3, 5))
    state = await editor.command(explain.command.command, *explain.command.arguments)
    assert state["mode"]["slug"] == "ask"  # answered at once; the turn streams
    await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    assert [u["text"] for u in editor.of_kind("message") if u["role"] == "assistant"] == ["It greets."]
    [message] = await user_messages(editor)
    assert message == (
        "Explain this code.\n\n"
        "File: src/app.py, lines 4-5:\n"
        "4 | def greet(name):\n"
        "5 |     return 'Hello, ' + name"
    )
    [changed] = editor.of_kind("mode_changed")
    assert (changed["to"], changed["by"]) == ("ask", "user")


async def test_fix_quotes_the_editor_buffer_not_the_disk(editor, started):
    _, uri = started
    unsaved = APP.replace("name\n", "nme\n")
    editor.client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=unsaved))
    )
    problem = lsp.Diagnostic(range=selection(4, 4, 27), message="undefined name 'nme'", source="pyflakes")
    fix = (await code_actions(editor, uri, selection(4, 4, 27), [problem]))[-1]
    state = await editor.command(fix.command.command, *fix.command.arguments)
    assert state["mode"]["slug"] == "debug"
    await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    [message] = await user_messages(editor)
    assert message.startswith("Fix this problem (pyflakes): undefined name 'nme'\n\nFile: src/app.py, lines 5-5:\n")
    assert message.endswith("5 |     return 'Hello, ' + nme")


@pytest.mark.parametrize(
    ("argument", "fragment"),
    [
        ({"mode": "ask", "uri": "file:///etc/passwd", "range": {"start": {"line": 0}, "end": {"line": 1}}, "prompt": "x"}, "uri: "),
        ({"mode": "nosuch", "uri": "SRC", "range": {"start": {"line": 0}, "end": {"line": 0}}, "prompt": "x"}, "mode: Invalid mode: nosuch"),
        ({"mode": "ask", "uri": "SRC", "range": {"start": {"line": 3}, "end": {"line": 1}}, "prompt": "x"}, "range: lines 3..1"),
        ({"mode": "ask", "uri": "SRC", "prompt": "x"}, "range"),
    ],
)
async def test_bad_arguments_are_named(editor, started, argument, fragment):
    _, uri = started
    argument = {k: (uri if v == "SRC" else v) for k, v in argument.items()}
    with pytest.raises(JsonRpcException) as refused:
        await editor.command(Command.START_IN_MODE, argument)
    assert refused.value.code == -32602 and fragment in refused.value.message
    assert (await editor.request(methods.STATE))["mode"]["slug"] == "code"  # nothing changed


@pytest.mark.parametrize(
    ("trigger", "titles"),
    [
        (lsp.CodeActionTriggerKind.Automatic, []),  # the cursor moved: no light bulb on every line
        (lsp.CodeActionTriggerKind.Invoked, ["Plan a change here", "Explain this"]),  # the user asked
        (None, ["Plan a change here", "Explain this"]),  # a client that does not say
    ],
)
async def test_an_empty_range_offers_the_plan_only_when_asked(editor, started, trigger, titles):
    _, uri = started
    cursor = lsp.Range(start=lsp.Position(line=3, character=4), end=lsp.Position(line=3, character=4))
    params = lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=cursor, context=lsp.CodeActionContext(diagnostics=[], trigger_kind=trigger)
    )
    assert [a.title for a in await editor.client.text_document_code_action_async(params) or []] == titles
