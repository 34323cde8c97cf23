"""A real server killed at a bad moment, or started on a corrupt database, and what comes after."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fake_models import Call, FakeAnthropic, Reply
from protocol import methods
from server.agent.session import INTERRUPTED_CALL
from server.state.store import DB_NAME

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


async def test_a_kill_while_a_native_call_waits_for_approval(workspace: Path, tmp_path: Path):
    with FakeAnthropic() as model:
        model.add(Reply("Writing it.", [Call("toolu_1", "write_to_file", {"path": "a.md", "content": "x"})]), Reply("Here again."))
        first = Editor(workspace, tmp_path / "config")
        asked = asyncio.Event()

        async def never_answered(request: dict) -> dict:
            asked.set()
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

        first.decide = never_answered
        await first.start(anthropic(model.url))
        sent = await first.request(methods.CHAT_SEND, {"text": "write a.md"})
        await asyncio.wait_for(asked.wait(), 15)
        await first.kill()

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

