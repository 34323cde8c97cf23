"""Checkpoints over the wire (PROTOCOL.md "Checkpoints"): one at each turn's start and before
each edit or command, listed, compared with now, and restored (files through the editor's
workspace/applyEdit or on disk, the conversation cut back, a restore undone)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import time
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from protocol import methods

from .conftest import script


def write(path: str, content: str) -> dict:
    return {"toolCalls": [{"name": "write_to_file", "arguments": {"path": path, "content": content}}]}


TURN = [write("new.txt", "new\n"), write("old.txt", "changed\n"), {"text": "Done."}]


async def edited(editor, workspace, **settings) -> dict:
    (workspace / "old.txt").write_text("original\n")
    await editor.start({**script(workspace, *TURN, {"text": "Second turn."}), "autoApprove": {"edit": True}, **settings})
    await editor.chat("edit")
    return await editor.request(methods.CHECKPOINTS_LIST, {})


async def test_a_checkpoint_at_the_turns_start_and_before_each_edit(editor, workspace):
    listed = await edited(editor, workspace)
    labels = [c["label"] for c in listed["checkpoints"]]
    assert labels == ["modus's turn starts", "before write_to_file new.txt", "before write_to_file old.txt"]
    calls = [u["toolCallId"] for u in editor.of_kind("tool_call") if u["status"] == "pending"]
    assert [c.get("toolCallId") for c in listed["checkpoints"]] == [None, *calls]
    start = listed["checkpoints"][0]
    assert start["conversationId"] == editor.of_kind("turn_started")[0]["conversationId"]
    diff = await editor.request(methods.CHECKPOINTS_DIFF, {"id": start["id"]})
    files = {f["path"]: f for f in diff["files"]}
    assert set(files) == {"new.txt", "old.txt"} and files["new.txt"]["status"] == "added"
    assert files["old.txt"]["status"] == "modified" and "-original\n+changed\n" in files["old.txt"]["diff"]


async def test_restoring_files_goes_through_the_editor_and_can_be_undone(editor, workspace):
    listed = await edited(editor, workspace)
    start = listed["checkpoints"][0]["id"]
    before = len(editor.edits)
    restored = await editor.request(methods.CHECKPOINTS_RESTORE, {"id": start, "restore": "files"})
    assert sorted(restored["restored"]) == ["new.txt", "old.txt"]
    assert (workspace / "old.txt").read_text() == "original\n" and not (workspace / "new.txt").exists()
    assert len(editor.edits) == before + 1  # the text change as one workspace/applyEdit; the delete on disk
    undo = await editor.request(methods.CHECKPOINTS_RESTORE, {"id": restored["checkpoint"], "restore": "files"})
    assert sorted(undo["restored"]) == ["new.txt", "old.txt"]
    assert (workspace / "old.txt").read_text() == "changed\n" and (workspace / "new.txt").read_text() == "new\n"


async def test_without_the_editors_edits_files_are_restored_on_disk(editor, workspace):
    (workspace / "old.txt").write_text("original\n")
    await editor.start({**script(workspace, *TURN), "autoApprove": {"edit": True}}, capabilities=lsp.ClientCapabilities())
    await editor.chat("edit")
    start = (await editor.request(methods.CHECKPOINTS_LIST, {}))["checkpoints"][0]["id"]
    await editor.request(methods.CHECKPOINTS_RESTORE, {"id": start, "restore": "files"})
    assert (workspace / "old.txt").read_text() == "original\n" and not (workspace / "new.txt").exists()
    assert editor.edits == []


async def test_restoring_the_conversation_cuts_it_back_and_a_new_turn_follows(editor, workspace):
    listed = await edited(editor, workspace)
    cid = listed["checkpoints"][0]["conversationId"]
    before_edit = listed["checkpoints"][2]  # before the second write
    task = (await editor.request(methods.STATE))["task"]["id"]
    restored = await editor.request(methods.CHECKPOINTS_RESTORE, {"id": before_edit["id"], "restore": "conversation"})
    assert restored["restored"] == [] and restored["conversationId"] == cid
    assert (workspace / "old.txt").read_text() == "changed\n"  # the files stay
    history = (await editor.request(methods.CHAT_HISTORY, {"conversationId": cid}))["messages"]
    calls = [m for m in history if m["role"] == "assistant" and m["metadata"].get("toolCalls")]
    assert [c["metadata"]["toolCalls"][0]["arguments"]["path"] for c in calls] == ["new.txt", "old.txt"]
    # cut just before the second write ran: that call has a result saying so
    assert (history[-1]["role"], history[-1]["metadata"]["errorType"]) == ("tool", "Restored")
    assert history[-1]["text"] == "Not run: the conversation was restored to a checkpoint taken before this call."
    state = await editor.request(methods.STATE)
    assert state["task"]["id"] != task  # a new task
    ended = await editor.chat("go on")
    assert ended["outcome"] == "completed"


async def test_checkpoints_off_by_setting_or_without_git(editor, workspace, monkeypatch):
    listed = await edited(editor, workspace, checkpoints=False)
    assert listed == {"checkpoints": [], "disabled": "Checkpoints are off: the checkpoints setting is false."}


async def test_without_git_the_user_is_told_once(editor, workspace, monkeypatch):
    monkeypatch.setenv("PATH", str(workspace / "no-bin"))
    listed = await edited(editor, workspace)
    assert listed["checkpoints"] == [] and "git program was not found" in listed["disabled"]
    told = [m.message for m in editor.client.messages if "git" in m.message]
    assert len(told) == 1 and (workspace / "new.txt").exists()  # the edits went on
    assert os.environ["PATH"].endswith("no-bin")


async def test_a_bad_id_and_a_restore_during_a_turn_are_refused(editor, workspace):
    await edited(editor, workspace)
    with pytest.raises(JsonRpcException) as refused:
        await editor.request(methods.CHECKPOINTS_DIFF, {"id": "nosuch"})
    assert refused.value.code == -32602 and refused.value.message.startswith("id: ")
    with pytest.raises(JsonRpcException) as refused:
        await editor.request(methods.CHECKPOINTS_RESTORE, {"id": "x", "restore": "everything"})
    assert refused.value.code == -32602 and "restore" in refused.value.message


async def test_no_restore_while_a_turn_runs(editor, workspace):
    sleep = {"toolCalls": [{"name": "execute_command", "arguments": {"command": "sleep 20"}}]}
    await editor.start({**script(workspace, sleep), "autoApprove": {"command": True}})
    sent = await editor.request(methods.CHAT_SEND, {"text": "wait"})
    await editor.wait_for(lambda: any(u["status"] == "running" for u in editor.of_kind("tool_call")))
    [start, before_command] = (await editor.request(methods.CHECKPOINTS_LIST, {}))["checkpoints"]
    assert before_command["label"] == "before execute_command"
    with pytest.raises(JsonRpcException) as refused:
        await editor.request(methods.CHECKPOINTS_RESTORE, {"id": start["id"], "restore": "both"})
    assert refused.value.message == f"restore: a turn is running in conversation {sent['conversationId']}; cancel it first"
    await editor.request(methods.CHAT_CANCEL, {"conversationId": sent["conversationId"]})
    await editor.wait_for(lambda: editor.of_kind("turn_ended"))


# ---------------------------------------------------------------------- untrusted input


async def test_untrusted_shadow_repository_shipped_in_the_workspace_is_never_used(editor, workspace, tmp_path):
    """A repository that knows where it will be cloned ships, where earlier versions kept the
    shadow repository (`<stateDir>/checkpoints/<hash of the workspace's path>/git`), one whose
    config runs a program (core.fsmonitor) and whose hooks do: checkpoints are kept elsewhere
    (the user's own state folder) and run neither."""
    marker = tmp_path / "it ran"
    run = workspace / "tools" / "fsmonitor.sh"
    run.parent.mkdir()
    run.write_text(f"#!/bin/sh\necho \"$0\" >> '{marker}'\n")
    run.chmod(0o755)
    old_hash = hashlib.sha256(os.fsencode(os.path.realpath(workspace))).hexdigest()[:16]  # as the old code did
    planted = Path(os.path.realpath(workspace / ".modus" / "state")) / "checkpoints" / old_hash / "git"
    subprocess.run(["git", "init", "-q", "--bare", "--template=", str(planted)], check=True, env={"PATH": os.environ["PATH"]})
    (planted / "config").write_text(f"[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = {run}\n")
    (planted / "info").mkdir()
    (planted / "hooks").mkdir()
    for hook in ("post-index-change", "reference-transaction"):
        (planted / "hooks" / hook).write_text(run.read_text())
        (planted / "hooks" / hook).chmod(0o755)

    listed = await edited(editor, workspace)

    assert not marker.exists(), marker.read_text()
    assert [c["label"] for c in listed["checkpoints"]] == [
        "modus's turn starts", "before write_to_file new.txt", "before write_to_file old.txt",
    ]
    new_hash = hashlib.sha256(os.fsencode(os.path.realpath(workspace))).hexdigest()[:16]
    assert (Path(os.environ["XDG_STATE_HOME"]) / "modus" / "checkpoints" / new_hash / "git" / "HEAD").is_file()
    assert not (planted / "refs" / "heads" / "checkpoints").exists()  # nothing was written there either


async def test_untrusted_fifo_gitignore_does_not_stall_the_turn(editor, workspace):
    """A FIFO named .gitignore in a folder (an archive can carry one): git's open() of it would
    wait for a writer that never comes; the turn goes on in seconds, its checkpoints taken."""
    (workspace / "vendor").mkdir()
    (workspace / "vendor" / "lib.py").write_text("x = 1\n")
    os.mkfifo(workspace / "vendor" / ".gitignore")
    (workspace / "old.txt").write_text("original\n")
    await editor.start({**script(workspace, *TURN), "autoApprove": {"edit": True}})
    started = time.monotonic()
    await editor.request(methods.CHAT_SEND, {"text": "edit"})
    await editor.wait_for(lambda: editor.of_kind("turn_ended"), timeout=20)
    assert time.monotonic() - started < 20
    assert editor.of_kind("turn_ended")[0]["outcome"] == "completed"
    assert (workspace / "new.txt").read_text() == "new\n" and (workspace / "old.txt").read_text() == "changed\n"
    listed = await asyncio.wait_for(editor.request(methods.CHECKPOINTS_LIST, {}), 20)
    assert len(listed["checkpoints"]) == 3
    diff = await editor.request(methods.CHECKPOINTS_DIFF, {"id": listed["checkpoints"][0]["id"]})
    assert {f["path"] for f in diff["files"]} == {"new.txt", "old.txt"}
