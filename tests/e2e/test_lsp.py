"""End to end: the real server over stdio, driven like an editor (pytest-lsp)."""

from __future__ import annotations

import os

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from protocol import Command, methods
from server.demo import apply_to_disk

from test_tools import deep_folder

from .conftest import script
from .editor import Editor

ARCHITECT_PY = (
    "Tool 'write_to_file' in mode 'Architect' can only edit files matching pattern: \\.md$ (Markdown files only). "
    "Got: src/app.py"
)


def switch(slug, reason=None):
    arguments = {"mode_slug": slug} | ({"reason": reason} if reason else {})
    return {"toolCalls": [{"name": "switch_mode", "arguments": arguments}]}


def write(path, content):
    return {"toolCalls": [{"name": "write_to_file", "arguments": {"path": path, "content": content}}]}


async def test_initialize_advertises_modus(editor):
    result = await editor.start()
    caps = result.capabilities
    assert caps.experimental == {"modus": {"protocolVersion": 1}}
    assert {Command.SWITCH_MODE, Command.SHOW_PROMPT} <= set(caps.execute_command_provider.commands)
    assert caps.text_document_sync is not None
    assert result.server_info.name == "modus"


async def test_state_and_modes(editor):
    await editor.start()
    state = await editor.request(methods.STATE)
    assert state["mode"] == {"slug": "code", "name": "Code"}
    assert state["phase"] == "act" and state["yolo"] is False
    assert state["plan"] == {"state": "normal", "completedSteps": []}
    assert state["task"]["mode"] == "code" and state["task"]["phase"] == "act"
    assert state["task"]["model"] == {
        "provider": "scripted",
        "model": None,
        "reasoningEffort": None,
        "thinkingBudgetTokens": None,
        "maxTokens": None,
    }
    listed = await editor.request(methods.MODES_LIST)
    assert listed["current"] == "code"
    assert [m["slug"] for m in listed["modes"]] == ["code", "architect", "ask", "debug", "orchestrator"]
    architect = listed["modes"][1]
    assert architect["source"] == "builtin" and architect["whenToUse"]
    assert architect["groups"][1] == ["edit", {"fileRegex": "\\.md$", "description": "Markdown files only"}]


async def test_user_switches_by_request_and_by_command(editor):
    await editor.start()
    first = await editor.request(methods.STATE)
    state = await editor.request(methods.MODES_SWITCH, {"slug": "architect"})
    assert state["mode"] == {"slug": "architect", "name": "Architect"}
    assert state["task"]["id"] != first["task"]["id"]
    changed = await editor.wait_for(lambda: editor.of_kind("mode_changed"))
    assert (changed[0]["from"], changed[0]["to"], changed[0]["by"], changed[0]["taskId"]) == (
        "code",
        "architect",
        "user",
        state["task"]["id"],
    )
    state = await editor.command(Command.SWITCH_MODE, "debug")
    assert state["mode"]["slug"] == "debug" and editor.approvals == []


@pytest.mark.parametrize(
    "method, params, code, message",
    [
        (methods.MODES_SWITCH, {"slug": "nosuch"}, -32602, "Invalid mode: nosuch"),
        (methods.MODES_SWITCH, {}, -32602, "Invalid params for modus/modes/switch: slug: Field required"),
        (methods.MODES_SWITCH, {"slug": 3}, -32602, "slug: Input should be a valid string"),
        (methods.CHAT_SEND, {"text": ""}, -32602, "text: must not be empty"),
        (methods.CHAT_SEND, {}, -32602, "text: Field required"),
        (methods.CHAT_HISTORY, {"conversationId": "nope"}, -32602, "unknown conversation: nope"),
        (methods.CHAT_CANCEL, [], -32602, "expected an object"),
        ("modus/nosuch", {}, -32601, "modus/nosuch"),
        (lsp.WORKSPACE_EXECUTE_COMMAND, {"command": Command.SWITCH_MODE, "arguments": []}, -32602, "one argument"),
        (lsp.WORKSPACE_EXECUTE_COMMAND, {"command": Command.SWITCH_MODE, "arguments": ["nosuch"]}, -32602, "Invalid mode: nosuch"),
        (lsp.WORKSPACE_EXECUTE_COMMAND, {"command": "modus.nosuch", "arguments": []}, -32602, "modus.nosuch"),
    ],
)
async def test_bad_requests_get_a_clear_error_and_the_server_keeps_serving(editor, method, params, code, message):
    await editor.start()
    if method == lsp.WORKSPACE_EXECUTE_COMMAND:
        params = lsp.ExecuteCommandParams(**params)
    with pytest.raises(JsonRpcException) as raised:
        await editor.request(method, params)
    assert raised.value.code == code
    assert message in raised.value.message
    assert (await editor.request(methods.STATE))["mode"]["slug"] == "code"


async def test_the_demo_flow(editor, workspace):
    settings = script(
        workspace,
        switch("architect", "design first"),
        write("docs/design.md", "# Design\n"),
        write("src/app.py", "print('early')\n"),
        switch("code"),
        write("src/app.py", "print('hello')\n"),
        {"toolCalls": [{"name": "attempt_completion", "arguments": {"result": "Built."}}]},
    )
    await editor.start(settings)
    sent = await editor.request(methods.CHAT_SEND, {"text": "Build it"})
    assert sent["dispatched"] == ["modus"] and sent["mentions"] == [] and sent["text"] == "Build it"
    await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    assert editor.of_kind("turn_ended")[0]["outcome"] == "completed"

    switch_approvals = [a for a in editor.approvals if a["kind"] == "switch_mode"]
    assert (switch_approvals[0]["from"], switch_approvals[0]["to"], switch_approvals[0]["reason"]) == (
        "code",
        "architect",
        "design first",
    )
    tool_approvals = [a for a in editor.approvals if a["kind"] == "tool"]
    assert [a["tool"] for a in tool_approvals] == ["write_to_file", "write_to_file"]
    assert "+# Design" in tool_approvals[0]["detail"]

    failed = [u for u in editor.of_kind("tool_call") if u["status"] == "failed"]
    assert [(u["error"]["type"], u["error"]["message"]) for u in failed] == [("FileRestrictionError", ARCHITECT_PY)]
    # the refused edit never reached the editor; the other two did, as documentChanges
    edited = [c.text_document.uri.rsplit("/", 2)[-2:] for e in editor.edits for c in e.edit.document_changes if isinstance(c, lsp.TextDocumentEdit)]
    assert edited == [["docs", "design.md"], ["src", "app.py"]]
    assert isinstance(editor.edits[0].edit.document_changes[0], lsp.CreateFile)
    assert (workspace / "src" / "app.py").read_text() == "print('hello')\n"

    modes = [(u["from"], u["to"], u["by"], u.get("reason")) for u in editor.of_kind("mode_changed")]
    assert modes == [("code", "architect", "model", "design first"), ("architect", "code", "model", None)]
    task_ids = [u["taskId"] for u in editor.of_kind("mode_changed")]
    assert len(set(task_ids)) == 2

    history = await editor.request(methods.CHAT_HISTORY, {"conversationId": sent["conversationId"]})
    first = history["messages"][0]
    assert (first["role"], first["text"], first["id"]) == ("user", "Build it", sent["messageId"])
    assert first["metadata"]["environmentDetails"].endswith("<slug>code</slug>\n<name>Code</name>\n\n# Current Phase\nACT MODE\n</environment_details>")
    # work-done progress while the turn ran: begun and ended
    [reports] = editor.client.progress_reports.values()
    assert [r.kind for r in reports] == ["begin", "end"]
    assert reports[0].title == "Modus: modus is working"


async def test_approval_falls_back_to_show_message_request(editor, workspace):
    settings = script(workspace, switch("ask", "questions only"), switch("debug"))
    editor.decide = lambda request: {"decision": "approve" if "to Ask mode" in request["title"] else "deny"}
    await editor.start(settings, profile="neovim", approvals=False)
    await editor.chat("go")
    assert editor.approvals == []
    assert [r.message.splitlines()[0] for r in editor.message_requests] == [
        "Switch from Code mode to Ask mode?",
        "Switch from Ask mode to Debug mode?",
    ]
    assert [a.title for a in editor.message_requests[0].actions] == ["Approve", "Deny"]
    results = [u for u in editor.of_kind("tool_call") if u["status"] in ("completed", "failed")]
    assert results[0]["result"] == "Successfully switched from Code mode to Ask mode because: questions only."
    assert results[1]["error"] == {"type": "Denied", "message": "The user denied this operation."}
    assert (await editor.request(methods.STATE))["mode"]["slug"] == "ask"


async def test_without_apply_edit_the_server_writes_the_file(editor, workspace):
    settings = script(workspace, write("notes/todo.txt", "one\n"), {"text": "ok"})
    await editor.start(settings, capabilities=lsp.ClientCapabilities())
    await editor.chat("write it")
    assert editor.edits == []
    assert (workspace / "notes" / "todo.txt").read_text() == "one\n"


async def test_a_declined_edit_is_a_failure_for_the_model(editor, workspace):
    settings = script(workspace, write("a.txt", "x\n"), {"text": "ok"})
    editor.apply_edits = False
    await editor.start(settings)
    await editor.chat("write it")
    [failed] = [u for u in editor.of_kind("tool_call") if u["status"] == "failed"]
    assert failed["error"]["type"] == "EditFailed"
    assert failed["error"]["message"] == "The editor did not apply the edit to a.txt: the user closed the diff"
    assert not (workspace / "a.txt").exists()


FAILING_CALLS = [
    ("a 5,000-character file name", "read_file", lambda ws: {"path": "a" * 5000}, "InvalidParams", "The path 'aaaa"),
    (
        "an OSError inside the tool: a file past the system's path length",
        "list_code_definition_names",
        lambda ws: {"path": deep_folder(ws, os.pathconf(ws, "PC_PATH_MAX") - 10)},
        "ToolError",
        "list_code_definition_names failed: File name too long: '{ws}/ddd",
    ),
]


@pytest.mark.parametrize("tool, arguments, error, starts", [r[1:] for r in FAILING_CALLS], ids=[r[0] for r in FAILING_CALLS])
async def test_a_tool_that_fails_fails_alone_and_the_turn_goes_on(editor, workspace, tool, arguments, error, starts):
    (workspace / "ok.txt").write_text("fine\n")
    calls = [{"name": tool, "arguments": arguments(workspace)}, {"name": "read_file", "arguments": {"path": "ok.txt"}}]
    await editor.start(script(workspace, {"toolCalls": calls}, {"text": "Done."}))
    ended = await editor.chat("go")
    assert ended["outcome"] == "completed"
    last = {u["toolCallId"]: u for u in editor.of_kind("tool_call")}  # each call's last update, in call order
    failing, reading = last.values()
    assert (failing["name"], failing["status"], failing["error"]["type"]) == (tool, "failed", error)
    assert failing["error"]["message"].startswith(starts.format(ws=workspace.resolve())) and len(failing["error"]["message"]) < 400, failing
    assert (reading["status"], reading["result"]) == ("completed", "ok.txt (lines 1-1 of 1)\n1 | fine")
    assert not [u for u in editor.of_kind("message") if u["role"] == "system"]


# path, text before (None: no file), content written, (line, character) where the edit's range ends
WHOLE_DOCUMENT_EDITS = [
    ("new.txt", None, "one\ntwo", (1, 0)),
    ("newline.txt", "a\nb\n", "x\n", (3, 0)),
    ("no-newline.txt", "a\nb", "x\n", (2, 0)),
    ("crlf.txt", "a\r\nb\r\n", "x\n", (3, 0)),
    ("old-mac.txt", "a\rb\r", "x\n", (3, 0)),
    ("emptied.txt", "a\n", "", (2, 0)),
]


async def test_an_edit_replaces_the_whole_document_up_to_one_line_past_its_end(editor, workspace):
    """Neovim then drops the empty line the replacement leaves (fixeol), VS Code clamps the end to
    the document's: the file, once saved, is exactly the content."""
    for path, before, _, _ in WHOLE_DOCUMENT_EDITS:
        if before is not None:
            (workspace / path).write_bytes(before.encode())
    calls = [{"name": "write_to_file", "arguments": {"path": p, "content": c}} for p, _, c, _ in WHOLE_DOCUMENT_EDITS]
    await editor.start(script(workspace, {"toolCalls": calls}, {"text": "Done."}))
    assert (await editor.chat("write"))["outcome"] == "completed"
    sent = [[c for c in e.edit.document_changes] for e in editor.edits]
    assert [type(c).__name__ for c in sent[0]] == ["CreateFile", "TextDocumentEdit"]
    assert sent[0][0].options == lsp.CreateFileOptions(overwrite=False, ignore_if_exists=False)  # Neovim then creates it
    [edits] = zip(*[change.edits for *_, change in sent])
    assert [(e.range.start, e.range.end) for e in edits] == [(U(0, 0), U(*end)) for *_, end in WHOLE_DOCUMENT_EDITS]
    # applied as VS Code does, each file is exactly the text sent
    assert [(workspace / path).read_bytes().decode() for path, *_ in WHOLE_DOCUMENT_EDITS] == [e.new_text for e in edits]
    assert edits[0].new_text == "one\ntwo\n"


U = lsp.Position


def document_edit(uri: str, *edits: tuple[tuple[int, int], tuple[int, int], str]) -> lsp.TextDocumentEdit:
    return lsp.TextDocumentEdit(
        text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
        edits=[lsp.TextEdit(range=lsp.Range(U(*start), U(*end)), new_text=text) for start, end, text in edits],
    )


# before, edits ((start), (end), new text), after: ranges applied as VS Code does (UTF-16 columns,
# a position past a line's end or past the last line clamped to that end)
APPLIED = [
    ("whole, ends with a newline, one line past", "a\nb\n", [((0, 0), (3, 0), "x\n")], "x\n"),
    ("whole, no final newline, one line past", "a\nb", [((0, 0), (2, 0), "x\n")], "x\n"),
    ("whole, far past the end", "a\n", [((0, 0), (99, 7), "x")], "x"),
    ("whole, exact end", "a\nb", [((0, 0), (1, 1), "x")], "x"),
    ("a word", "hello world\n", [((0, 6), (0, 11), "there")], "hello there\n"),
    ("past a line's end: before its line break", "ab\ncd\n", [((0, 9), (0, 9), "!")], "ab!\ncd\n"),
    ("CRLF lines", "a\r\nb\r\n", [((1, 0), (1, 5), "c")], "a\r\nc\r\n"),
    ("UTF-16 columns", "é😀x\n", [((0, 3), (0, 4), "y")], "é😀y\n"),
    ("several edits, applied from the end", "abc\n", [((0, 0), (0, 1), "A"), ((0, 2), (0, 3), "C")], "AbC\n"),
]


@pytest.mark.parametrize("before, edits, after", [r[1:] for r in APPLIED], ids=[r[0] for r in APPLIED])
def test_the_test_editor_applies_ranges_as_vs_code_does(tmp_path, before, edits, after):
    path = tmp_path / "f.txt"
    path.write_bytes(before.encode())
    assert apply_to_disk(lsp.WorkspaceEdit(document_changes=[document_edit(path.as_uri(), *edits)])) == [path.as_uri()]
    assert path.read_bytes().decode() == after


def test_the_test_editor_creates_a_file_and_its_folders(tmp_path):
    path = tmp_path / "new" / "deep" / "f.txt"
    create = lsp.CreateFile(uri=path.as_uri(), options=lsp.CreateFileOptions(overwrite=False, ignore_if_exists=False))
    apply_to_disk(lsp.WorkspaceEdit(document_changes=[create, document_edit(path.as_uri(), ((0, 0), (1, 0), "one\n"))]))
    assert path.read_bytes() == b"one\n"


async def test_cancel_a_running_turn(editor, workspace):
    settings = script(workspace, {"toolCalls": [{"name": "execute_command", "arguments": {"command": "sleep 30"}}]})
    await editor.start(settings | {"autoApprove": {"command": True}})
    sent = await editor.request(methods.CHAT_SEND, {"text": "wait"})
    await editor.wait_for(lambda: [u for u in editor.of_kind("tool_call") if u["status"] == "running"])
    assert await editor.request(methods.CHAT_CANCEL, {"conversationId": sent["conversationId"]}) == {"cancelled": True}
    [ended] = await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    assert ended["outcome"] == "cancelled"
    assert await editor.request(methods.CHAT_CANCEL, {"conversationId": sent["conversationId"]}) == {"cancelled": False}


MODES_WITH_ERRORS = """customModes:
  - slug: reviewer
    name: Reviewer
    roleDefinition: You review.
    groups: [read]
  - slug: Bad Slug
    name: Bad
    roleDefinition: x
    groups: [read]
  - slug: regexy
    name: Regexy
    roleDefinition: x
    groups:
      - [edit, {fileRegex: "(unclosed"}]
"""


async def test_mode_file_diagnostics_and_reload(editor, workspace):
    mode_file = workspace / ".modus" / "modes.yaml"
    mode_file.parent.mkdir()
    mode_file.write_text(MODES_WITH_ERRORS)
    await editor.start()
    uri = mode_file.as_uri()
    diagnostics = await editor.wait_for(lambda: editor.client.diagnostics.get(uri))
    assert [(d.range.start.line, d.severity) for d in diagnostics] == [(5, lsp.DiagnosticSeverity.Error), (13, lsp.DiagnosticSeverity.Error)]
    assert "slug" in diagnostics[0].message and "fileRegex" in diagnostics[1].message
    listed = await editor.request(methods.MODES_LIST)
    assert [m["slug"] for m in listed["modes"]][-1] == "reviewer"  # the good mode of the file loaded
    assert listed["modes"][-1]["source"] == "project"

    mode_file.write_text(MODES_WITH_ERRORS.split("  - slug: Bad Slug")[0])
    editor.client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=uri, type=lsp.FileChangeType.Changed)])
    )
    await editor.wait_for(lambda: len(editor.client.diagnostics[uri]) == 0)
    assert (await editor.request(methods.MODES_SWITCH, {"slug": "reviewer"}))["mode"]["name"] == "Reviewer"


ROOMODES_AS_ROO_READS_THEM = (
    "\ufeff{\n"  # a byte order mark, then JSON indented with tabs
    '\t"customModes": [\n'
    '\t\t{"slug": "writer", "name": "No", "roleDefinition": "You write.",\n'
    '\t\t "groups": [["edit", {"fileRegex": "\\\\.md$", "foo": 1}]]},\n'
    '\t\t{"slug": "loose", "name": "Loose", "roleDefinition": "r",\n'
    '\t\t "groups": [["edit", {"fileRegex": null}]]}\n'
    "\t]\n"
    "}\n"
)


async def test_roomodes_warnings_and_errors_have_their_severity_and_line(editor, workspace):
    mode_file = workspace / ".roomodes"
    mode_file.write_text(ROOMODES_AS_ROO_READS_THEM, encoding="utf-8")
    await editor.start()
    diagnostics = await editor.wait_for(lambda: editor.client.diagnostics.get(mode_file.as_uri()))
    assert [(d.range.start.line, d.severity) for d in diagnostics] == [
        (3, lsp.DiagnosticSeverity.Warning),  # an unknown option: the mode loads
        (5, lsp.DiagnosticSeverity.Error),  # fileRegex null: the mode is skipped, never unbounded
    ]
    assert "groups.0.foo: not an option of group 'edit'" in diagnostics[0].message
    assert diagnostics[1].message == "Mode 'loose' skipped: groups.0.fileRegex: must be a string (a regular expression), got null"
    listed = {m["slug"]: m for m in (await editor.request(methods.MODES_LIST))["modes"]}
    assert "loose" not in listed
    assert (listed["writer"]["name"], listed["writer"]["groups"]) == ("No", [["edit", {"fileRegex": "\\.md$"}]])


async def test_global_modes_file_reads_roos_custom_modes_where_the_user_points(editor, tmp_path):
    roo = tmp_path / "Code" / "User" / "globalStorage" / "rooveterinaryinc.roo-cline" / "settings" / "custom_modes.yaml"
    roo.parent.mkdir(parents=True)
    roo.write_text("customModes:\n  - slug: from-roo\n    name: On\n    roleDefinition: You came along. Welcome.\n    groups: [read, [edit, {fileRegex: null}]]\n"
                   "  - slug: roo-ok\n    name: Roo OK\n    roleDefinition: r\n    groups: [read]\n")
    await editor.start({"globalModesFile": str(roo)})
    listed = {m["slug"]: m for m in (await editor.request(methods.MODES_LIST))["modes"]}
    assert (listed["roo-ok"]["name"], listed["roo-ok"]["source"]) == ("Roo OK", "global") and "from-roo" not in listed
    [problem] = await editor.wait_for(lambda: editor.client.diagnostics.get(roo.as_uri()))
    assert problem.range.start.line == 4 and "groups.1.fileRegex: must be a string" in problem.message

    editor.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"modus": {}}))
    listed = {m["slug"] for m in (await editor.request(methods.MODES_LIST))["modes"]}
    assert "roo-ok" not in listed
    await editor.wait_for(lambda: len(editor.client.diagnostics[roo.as_uri()]) == 0)  # its problems go with it


async def test_settings_problems_are_shown_and_the_rest_applies(editor):
    await editor.start({"yolo": "maybe", "autoApprove": {"edit": True}, "agents": []})
    await editor.wait_for(lambda: editor.client.messages)
    texts = [m.message for m in editor.client.messages]
    assert any("modus.yolo" in t for t in texts) and any("modus.agents" in t for t in texts)
    state = await editor.request(methods.STATE)
    assert state["yolo"] is False


async def test_settings_change_with_did_change_configuration(editor):
    await editor.start()
    editor.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"modus": {"yolo": True}}))
    # notifications and requests are handled in order: the next request sees the new settings
    assert (await editor.request(methods.STATE))["yolo"] is True


async def test_mode_survives_a_restart(workspace, tmp_path):
    first = Editor(workspace, tmp_path / "config")
    await first.start()
    await first.request(methods.MODES_SWITCH, {"slug": "debug"})
    conversation = (await first.request(methods.STATE))["conversationId"]
    await first.stop()
    second = Editor(workspace, tmp_path / "config")
    await second.start()
    try:
        state = await second.request(methods.STATE)
        assert state["mode"]["slug"] == "debug" and state["conversationId"] == conversation
    finally:
        await second.stop()


async def test_show_prompt_command_returns_the_system_prompt(editor):
    await editor.start()
    await editor.request(methods.MODES_SWITCH, {"slug": "architect"})
    text = await editor.command(Command.SHOW_PROMPT)
    assert "technical leader" in text and "ACT MODE V.S. PLAN MODE" in text


async def test_cancelling_the_progress_cancels_the_turn(editor, workspace):
    settings = script(workspace, {"toolCalls": [{"name": "execute_command", "arguments": {"command": "sleep 30"}}]})
    await editor.start(settings | {"autoApprove": {"command": True}})
    await editor.request(methods.CHAT_SEND, {"text": "wait"})
    await editor.wait_for(lambda: [u for u in editor.of_kind("tool_call") if u["status"] == "running"])
    [token] = editor.client.progress_reports
    begin = editor.client.progress_reports[token][0]
    assert begin.cancellable is True
    editor.client.window_work_done_progress_cancel(lsp.WorkDoneProgressCancelParams(token=token))
    [ended] = await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    assert ended["outcome"] == "cancelled"


async def test_a_session_that_cannot_start_says_why_and_the_server_stays_up(editor, workspace):
    (workspace / "not-a-dir").write_text("a file where the state folder should go")
    await editor.start({"stateDir": "not-a-dir/state"})
    await editor.wait_for(lambda: editor.client.messages)
    assert editor.client.messages[0].message.startswith("Modus: could not start: ")
    for _ in range(2):  # asked twice: answered twice
        with pytest.raises(JsonRpcException) as raised:
            await editor.request(methods.STATE)
        assert raised.value.code == -32603 and "could not start" in raised.value.message


async def test_did_save_reloads_a_mode_file_and_the_global_file_is_read(editor, workspace):
    global_file = editor.config_home / "modus" / "modes.yaml"
    global_file.parent.mkdir(parents=True)
    global_file.write_text("customModes:\n  - slug: mine\n    name: Mine\n    roleDefinition: r\n    groups: [read]\n")
    mode_file = workspace / ".roomodes"
    mode_file.write_text('{"customModes": []}')
    await editor.start()
    listed = await editor.request(methods.MODES_LIST)
    assert (listed["modes"][-1]["slug"], listed["modes"][-1]["source"]) == ("mine", "global")

    mode_file.write_text('{"customModes": [{"slug": "mine", "name": "Project Mine", "roleDefinition": "r", "groups": ["reed"]}]}')
    editor.client.text_document_did_save(lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=mode_file.as_uri())))
    [problem] = await editor.wait_for(lambda: editor.client.diagnostics.get(mode_file.as_uri()))
    assert "unknown group 'reed'" in problem.message and problem.range.start.line == 0


async def test_server_log_lines_reach_the_client(editor, workspace):
    await editor.start()
    await editor.wait_for(lambda: editor.client.log_messages)
    assert any(f"workspace {workspace}" in m.message for m in editor.client.log_messages)


def test_the_demo_prints_what_an_editor_would_show_and_nothing_of_its_client_s_internals(tmp_path):
    """`modus demo` (the README's first command): the repository's hooks waiting for trust are
    shown as the editor's notification would show them, and the client prints nothing of its own."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CONFIG_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "server", "demo"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    text = done.stdout + done.stderr
    assert done.returncode == 0, text
    assert "⚠ Modus: " in text and "sets hooks (.claude/settings.json): not applied until you trust" in text
    assert "Ignoring notification" not in text
    assert text.rstrip().endswith("The demo ran as expected."), text[-500:]
