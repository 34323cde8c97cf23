"""Slash commands over the wire (PROTOCOL.md, "Project files of every peer"): Modus's own and each
peer's prompt files in `modus/commands/list`, `/<name> <args>` in `modus/chat/send` expanded for
the model while the chat shows what was typed, a command's mode switched to first, an unknown
`/word` plain text; Modus's own (`/plan`, `/act`, `/mode`, `/trust`, `/condense`) run, then what
follows them is the message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from fake_models import FakeOpenAI, Reply
from protocol import methods

from .conftest import script
from .editor import Editor
from .test_context import openai
from .test_rules import write

OWN = ["plan", "act", "mode", "trust", "condense"]

FILES = {
    ".modus/commands/hello.md": "Say hello to $1.",
    ".roo/commands/review.md": "---\ndescription: Review a file\nargument-hint: <file> [focus]\n---\nReview $1, with care for $2. All: $ARGUMENTS.",
    ".claude/commands/review.md": "Claude's review, shadowed by Roo's of the same name.",
    ".claude/commands/git/commit.md": "---\ndescription: Write the commit message\n---\nWrite a commit message for the staged changes.",
    ".clinerules/workflows/release.md": "---\nmode: architect\ndescription: Plan a release\n---\nPlan the release of version $1.",
    ".clinerules/workflows/broken.md": "---\nphase: later\n---\nNever listed.",
}


async def test_commands_of_every_peer_listed_and_expanded(workspace: Path, tmp_path: Path):
    write(workspace, FILES)
    write(tmp_path / "config" / "modus", {"commands/mine.md": "The user's own command."})
    editor = Editor(workspace, tmp_path / "config")
    await editor.start(script(workspace, {"text": "Reviewed."}, {"text": "Planned."}, {"text": "Plain."}))
    try:
        listed = (await editor.request(methods.COMMANDS_LIST, {}))["commands"]
        reviewed = await editor.chat("/review src/app.py speed")
        released = await editor.chat("/release 2.0")
        plain = await editor.chat("/nosuch command, as it is")
        cid = (await editor.request(methods.STATE))["conversationId"]
        history = (await editor.request(methods.CHAT_HISTORY, {"conversationId": cid}))["messages"]
        state = await editor.request(methods.STATE)
    finally:
        await editor.stop()

    mine = str((tmp_path / "config" / "modus" / "commands" / "mine.md").resolve())
    assert [c["name"] for c in listed[:5]] == OWN and all(c["source"] == "modus" and "path" not in c for c in listed[:5])
    assert listed[5:] == [
        {"name": "hello", "source": "workspace", "path": ".modus/commands/hello.md"},
        {"name": "review", "description": "Review a file", "argumentHint": "<file> [focus]", "source": "workspace", "path": ".roo/commands/review.md"},
        {"name": "git:commit", "description": "Write the commit message", "source": "workspace", "path": ".claude/commands/git/commit.md"},
        {"name": "release", "description": "Plan a release", "mode": "architect", "source": "workspace", "path": ".clinerules/workflows/release.md"},
        {"name": "mine", "source": "global", "path": mine},
    ]
    assert [t["outcome"] for t in (reviewed, released, plain)] == ["completed"] * 3
    users = [m for m in history if m["role"] == "user"]
    # the model gets the body, the front matter left out; the chat shows what was typed
    assert users[0]["text"] == "Review src/app.py, with care for speed. All: src/app.py speed."
    assert users[0]["metadata"]["typed"] == "/review src/app.py speed"
    assert users[1]["text"] == "Plan the release of version 2.0."
    assert users[2]["text"] == "/nosuch command, as it is" and "typed" not in users[2]["metadata"]
    shown = [u["text"] for u in editor.of_kind("message") if u["role"] == "user"]
    assert shown == ["/review src/app.py speed", "/release 2.0", "/nosuch command, as it is"]
    # /release switched to its mode first, as the user's switch
    [switch] = editor.of_kind("mode_changed")
    assert (switch["from"], switch["to"], switch["by"]) == ("code", "architect", "user")
    assert state["mode"]["slug"] == "architect"


async def test_a_command_file_changed_is_read_again(workspace: Path, tmp_path: Path):
    write(workspace, {".claude/commands/hi.md": "First words."})
    editor = Editor(workspace, tmp_path / "config")
    await editor.start(script(workspace, {"text": "One."}, {"text": "Two."}))
    try:
        await editor.chat("/hi")
        write(workspace, {".claude/commands/hi.md": "Second words, longer.", ".claude/commands/bye.md": "Bye."})
        await editor.chat("/hi")
        names = [c["name"] for c in (await editor.request(methods.COMMANDS_LIST, {}))["commands"]]
        cid = (await editor.request(methods.STATE))["conversationId"]
        history = (await editor.request(methods.CHAT_HISTORY, {"conversationId": cid}))["messages"]
    finally:
        await editor.stop()
    assert [m["text"] for m in history if m["role"] == "user"] == ["First words.", "Second words, longer."]
    assert names == [*OWN, "bye", "hi"]


async def test_modus_commands_run_and_what_follows_is_the_message(workspace: Path, tmp_path: Path):
    write(workspace, {".modus/settings.json": json.dumps({"yolo": True}), ".claude/commands/plan.md": "Never reached: /plan is Modus's."})
    editor = Editor(workspace, tmp_path / "config")
    await editor.start(script(workspace, {"text": "Docs written."}))
    try:
        send = lambda text: editor.request(methods.CHAT_SEND, {"text": text})  # noqa: E731
        listed = [c["name"] for c in (await editor.request(methods.COMMANDS_LIST, {}))["commands"]]
        planned = await send("/plan")
        await send("/plan")
        await send("/mode architect")
        with pytest.raises(JsonRpcException, match=r"text: /mode: Invalid mode: nosuch") as refused:
            await send("/mode nosuch")
        with pytest.raises(JsonRpcException, match=r"text: /mode: /mode <slug>, where the slug is one of `code`, `architect`"):
            await send("/mode")
        in_plan = await editor.request(methods.STATE)
        yolo_before = in_plan["yolo"]
        await send("/trust")
        acted = await send("/act write the docs")
        await editor.wait_for(lambda: editor.of_kind("turn_ended"))
        state = await editor.request(methods.STATE)
        history = (await editor.request(methods.CHAT_HISTORY, {"conversationId": state["conversationId"]}))["messages"]
    finally:
        await editor.stop()

    assert listed == [*OWN]  # the prompt file named plan is shadowed by Modus's /plan
    assert planned == {"conversationId": state["conversationId"], "messageId": "", "text": "", "dispatched": [], "mentions": [], "command": "plan"}
    assert refused.value.code == -32602
    assert (in_plan["phase"], in_plan["mode"]["slug"]) == ("plan", "architect")
    assert (yolo_before, state["yolo"], state["phase"]) == (False, True, "act")
    assert acted["command"] == "act" and acted["text"] == "write the docs" and acted["dispatched"] == ["modus"]
    notes = [u["text"] for u in editor.of_kind("message") if u["role"] == "system"]
    assert notes == ["The phase is PLAN already.", "The mode is Architect.", "Trusted as it is now: yolo."]
    # the commands alone sent nothing to the model and stored no message
    assert [m["text"] for m in history if m["role"] == "user"] == ["write the docs"]
    assert [u["text"] for u in editor.of_kind("message") if u["role"] == "user"] == ["write the docs"]


async def test_condense_as_a_command(workspace: Path, tmp_path: Path):
    with FakeOpenAI() as server:
        server.add(Reply("One."), Reply("Two."), Reply("Summary of one."), Reply("Three."))
        editor = Editor(workspace, tmp_path / "config")
        await editor.start(openai(server.url, window=100_000))
        try:
            await editor.chat("one")
            await editor.chat("two")
            condensed = await editor.chat("/condense and now three")
            last = server.requests[-1].body["messages"]
        finally:
            await editor.stop()
    assert condensed["outcome"] == "completed" and len(editor.of_kind("condensed")) == 1
    assert len(server.requests) == 4 and last[-1]["content"].startswith("and now three")
