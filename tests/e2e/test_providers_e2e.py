"""End to end: the real server talks to an OpenAI-compatible model server (a local fake)."""

from __future__ import annotations

from fake_models import Call, FakeOpenAI, Reply
from protocol import methods


def settings(base_url: str) -> dict:
    return {"models": {"default": {"provider": "openai", "baseUrl": base_url, "model": "fake"}}}


async def test_a_turn_against_an_openai_compatible_server(editor, workspace):
    (workspace / "a.txt").write_text("hi\n")
    with FakeOpenAI() as server:
        server.add(Reply("Reading it.", [Call("call_a", "read_file", {"path": "a.txt"})]), Reply("It says hi."))
        await editor.start(settings(server.url))
        ended = await editor.chat("what is in a.txt?")
    assert ended["outcome"] == "completed"
    assert [u["status"] for u in editor.of_kind("tool_call")] == ["pending", "running", "completed"]
    assert "".join(u["text"] for u in editor.of_kind("message_delta")) == "Reading it.It says hi."
    tool = server.requests[1].body["messages"][-1]
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_a" and tool["content"].startswith("a.txt")


async def test_a_dead_endpoint_fails_the_turn_and_the_server_goes_on(editor):
    with FakeOpenAI() as server:
        url = server.url  # closed on leaving: nothing listens there any more
    await editor.start(settings(url))
    ended = await editor.chat("hello?")
    assert ended["outcome"] == "failed"
    [system] = [u for u in editor.of_kind("message") if u["role"] == "system"]
    assert system["text"].startswith("The model request failed: openai model fake at ") and "cannot connect" in system["text"]
    state = await editor.request(methods.STATE)
    assert state["task"]["model"]["provider"] == "openai"


async def test_a_stream_cut_in_the_middle_fails_the_turn_as_cut(editor):
    with FakeOpenAI() as server:
        server.add(Reply("Hello, I am a fake model.", events=4, then="cut"))
        await editor.start(settings(server.url))
        ended = await editor.chat("hello?")
    assert ended["outcome"] == "failed"
    [system] = [u for u in editor.of_kind("message") if u["role"] == "system"]
    assert "the stream was cut off after 4 events: " in system["text"] and "cannot connect" not in system["text"]
