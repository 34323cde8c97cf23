"""The settings files over the wire: the workspace's and the global one under the client's, a
change applied without a restart, and the workspace's risky keys waiting for the user's trust."""

from __future__ import annotations

import json

from lsprotocol import types as lsp

from protocol import methods
from protocol.names import Command


async def test_the_files_apply_under_the_clients_settings_and_reload(editor, workspace, tmp_path):
    settings = workspace / ".modus" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"members": [{"handle": "sam", "name": "Sam"}], "agents": [{"name": "architect"}, {"name": "coder"}]}))
    global_settings = tmp_path / "config" / "modus" / "settings.json"
    global_settings.parent.mkdir(parents=True)
    global_settings.write_text(json.dumps({"members": [{"handle": "ann", "name": "Ann"}], "yolo": True}))
    await editor.start({"agents": [{"name": "solo"}]})
    listed = await editor.request(methods.AGENTS_LIST)
    assert [a["name"] for a in listed["agents"]] == ["solo"]  # the client's setting wins
    assert [m["handle"] for m in listed["members"]] == ["sam"]  # the workspace's over the global's
    assert (await editor.request(methods.STATE))["yolo"] is True  # the user's own global file is trusted

    settings.write_text(json.dumps({"members": [{"handle": "kim", "name": "Kim"}]}))
    editor.client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=settings.as_uri(), type=lsp.FileChangeType.Changed)])
    )
    listed = await editor.request(methods.AGENTS_LIST)
    assert [m["handle"] for m in listed["members"]] == ["kim"]


async def test_the_workspaces_risky_keys_apply_once_the_user_trusts_them(editor, workspace):
    settings = workspace / ".modus" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"yolo": True, "bogus": 1}))
    await editor.start()
    await editor.wait_for(lambda: len(editor.client.messages) >= 2)
    texts = [m.message for m in editor.client.messages]
    assert f"Modus: {settings}: bogus: not a Modus setting" in texts
    assert any("sets yolo: not applied until you trust" in t for t in texts)
    assert (await editor.request(methods.STATE))["yolo"] is False
    state = await editor.command(Command.TRUST_WORKSPACE_SETTINGS)
    assert state["yolo"] is True


async def test_an_edited_settings_file_tells_the_client_the_new_state(editor, workspace, tmp_path):
    global_settings = tmp_path / "config" / "modus" / "settings.json"
    global_settings.parent.mkdir(parents=True)
    global_settings.write_text(json.dumps({"yolo": False}))
    await editor.start()
    assert (await editor.request(methods.STATE))["yolo"] is False
    assert not editor.of_kind("state_changed")  # starting is no change
    global_settings.write_text(json.dumps({"yolo": True}))
    editor.client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=global_settings.as_uri(), type=lsp.FileChangeType.Changed)])
    )
    [changed] = await editor.wait_for(lambda: editor.of_kind("state_changed"))
    assert changed["state"]["yolo"] is True and changed["conversationId"] == changed["state"]["conversationId"]
