"""A real server killed at a bad moment, or started on a corrupt database, and what comes after."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from fake_models import Call, FakeAnthropic, Reply
from protocol import methods
from server.agent.conversations import INTERRUPTED_CALL, INTERRUPTED_NOTICE, INTERRUPTED_TURN
from server.state.store import DB_NAME, Store

from .conftest import script
from .editor import Editor


def anthropic(url: str) -> dict:
    return {"models": {"default": {"provider": "anthropic", "baseUrl": url, "model": "fake"}}}


def paired(messages: list[dict]) -> bool:
    """The Messages API rule: each assistant tool_use is answered by a tool_result in the next message."""
    for i, m in enumerate(messages):
        uses = [b["id"] for b in m["content"] if isinstance(m["content"], list) and b["type"] == "tool_use"]
        if not uses:
            continue
        answer = messages[i + 1]["content"] if i + 1 < len(messages) else []
        results = [b["tool_use_id"] for b in answer if isinstance(answer, list) and b["type"] == "tool_result"]
        if sorted(uses) != sorted(results):
            return False
    return True


async def killed_while_asked(workspace: Path, tmp_path: Path, url: str, text: str) -> dict:
    """A server killed (SIGKILL) while the turn that `text` starts waits for an approval."""
    first = Editor(workspace, tmp_path / "config")
    asked = asyncio.Event()

    async def never_answered(request: dict) -> dict:
        asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    first.decide = never_answered
    await first.start(anthropic(url))
    sent = await first.request(methods.CHAT_SEND, {"text": text})
    await asyncio.wait_for(asked.wait(), 15)
    await first.kill()
    return sent


async def test_a_kill_while_a_native_call_waits_for_approval(workspace: Path, tmp_path: Path):
    with FakeAnthropic() as model:
        model.add(Reply("Writing it.", [Call("toolu_1", "write_to_file", {"path": "a.md", "content": "x"})]), Reply("Here again."))
        sent = await killed_while_asked(workspace, tmp_path, model.url, "write a.md")

        second = Editor(workspace, tmp_path / "config")
        await second.start(anthropic(model.url))
        try:
            ended = await second.chat("still there?")
            history = await second.request(methods.CHAT_HISTORY, {"conversationId": sent["conversationId"]})
        finally:
            await second.stop()
    assert ended["outcome"] == "completed"
    assert [u["text"] for u in second.of_kind("message") if u["role"] == "assistant"] == ["Here again."]
    request = model.requests[-1].body["messages"]
    assert paired(request)
    assert any(b.get("content") == INTERRUPTED_CALL for m in request if isinstance(m["content"], list) for b in m["content"])
    roles = [m["role"] for m in history["messages"]]
    assert roles == ["user", "assistant", "tool", "system", "user", "assistant"]
    assert not (workspace / "a.md").exists()


async def test_a_corrupt_database_is_reported_and_replaced(workspace: Path, tmp_path: Path):
    state = workspace / ".modus" / "state"
    state.mkdir(parents=True)
    (state / DB_NAME).write_bytes(b"this is not a database" * 100)
    editor = Editor(workspace, tmp_path / "config")
    await editor.start()
    try:
        shown = await editor.wait_for(lambda: [m.message for m in editor.client.messages if "database" in m.message])
        [moved] = [p for p in state.iterdir() if p.name.startswith(f"{DB_NAME}.corrupt-")]
        assert str(moved) in shown[0] and str(state / DB_NAME) in shown[0]
        assert moved.read_bytes() == b"this is not a database" * 100
        state_now = await editor.request(methods.STATE)
        assert state_now["mode"]["slug"] == "code"
    finally:
        await editor.stop()



async def test_an_interrupted_turn_is_reported_once_and_not_run_again(workspace: Path, tmp_path: Path):
    with FakeAnthropic() as model:
        model.add(Reply("Writing it.", [Call("toolu_1", "write_to_file", {"path": "a.md", "content": "x"})]))
        sent = await killed_while_asked(workspace, tmp_path, model.url, "write a.md")
        requests = len(model.requests)

        def interrupted(editor: Editor) -> tuple[list, list]:
            updates = [u for u in editor.of_kind("message") if u["role"] == "system"]
            notices = [m.message for m in editor.client.messages if "interrupted" in m.message]
            return updates, notices

        for start in range(2):
            editor = Editor(workspace, tmp_path / "config")
            await editor.start(anthropic(model.url))
            try:
                await editor.request(methods.STATE)  # every notice of the start is in by its answer
                updates, notices = interrupted(editor)
                started = editor.of_kind("turn_started")
            finally:
                await editor.stop()
            if start == 0:
                [update] = updates
                assert update["conversationId"] == sent["conversationId"] and update["agent"] == "modus"
                assert update["text"] == INTERRUPTED_TURN.format(agent="modus")
                [notice] = notices
                assert INTERRUPTED_NOTICE.format(conversation=sent["conversationId"]) in notice
            else:
                assert updates == notices == []  # told once
            assert started == [] and len(model.requests) == requests  # nothing ran again by itself


async def test_a_kill_after_the_final_reply_interrupted_no_turn(workspace: Path, tmp_path: Path):
    """The reply that ends the turn is stored with its end: a kill while what follows it runs (here
    a slow Stop hook; the context's measure, the wakes) is not reported as an interrupted turn."""
    settings = script(workspace, {"text": "All done."}, {"text": "Still here."})
    settings["hooks"] = {"Stop": [{"hooks": [{"type": "command", "command": "exec sleep 20", "timeout": 60}]}]}
    first = Editor(workspace, tmp_path / "config")
    await first.start(settings)
    sent = await first.request(methods.CHAT_SEND, {"text": "finish it"})
    await first.wait_for(lambda: [u for u in first.of_kind("message") if u["role"] == "assistant"])
    await first.kill()
    assert first.of_kind("turn_ended") == []  # killed while the turn's Stop hook ran

    second = Editor(workspace, tmp_path / "config")
    await second.start(settings)
    try:
        history = await second.request(methods.CHAT_HISTORY, {"conversationId": sent["conversationId"]})
        notices = [m.message for m in second.client.messages if "interrupted" in m.message]
    finally:
        await second.stop()
    assert [(m["role"], m["text"]) for m in history["messages"]] == [("user", "finish it"), ("assistant", "All done.")]
    assert notices == [] and [u for u in second.of_kind("message") if u["role"] == "system"] == []


async def test_a_database_of_a_newer_modus_is_refused_with_the_reason(workspace: Path, tmp_path: Path):
    state = workspace / ".modus" / "state"
    Store(state).close()
    with closing(sqlite3.connect(state / DB_NAME)) as db:
        db.execute("PRAGMA user_version = 9")
    editor = Editor(workspace, tmp_path / "config")
    await editor.start()
    try:
        [shown] = await editor.wait_for(lambda: [m.message for m in editor.client.messages if "could not start" in m.message])
        assert f"the state database {state / DB_NAME} is version 9, newer than this Modus understands" in shown
        assert "upgrade Modus or set modus.stateDir elsewhere" in shown
        with pytest.raises(JsonRpcException, match="newer than this Modus understands"):
            await editor.request(methods.STATE)
    finally:
        await editor.stop()
    assert [p.name for p in state.iterdir() if ".corrupt-" in p.name] == []
