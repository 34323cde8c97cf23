"""End to end: a model server that refuses for now (429, 529, 5xx). The client is told of every
wait before the retry, as a system message of the conversation, and may cancel the turn meanwhile."""

from __future__ import annotations

from fake_models import Failure, FakeAnthropic, FakeOpenAI, Reply
from protocol import methods


def settings(provider: str, base_url: str) -> dict:
    return {"models": {"default": {"provider": provider, "baseUrl": base_url, "model": "fake"}}}


async def test_the_client_sees_the_wait_and_then_the_reply(editor):
    with FakeAnthropic() as server:
        server.add(Failure(429, "Slow down.", "rate_limit_error", retry_after=0), Reply("Hello after all."))
        await editor.start(settings("anthropic", server.url))
        ended = await editor.chat("hello?")
    assert ended["outcome"] == "completed" and len(server.requests) == 2
    shown = [(u["kind"], u.get("role"), u["text"]) for u in editor.updates if u["kind"] in ("message", "message_delta")]
    notice = "Rate limited: anthropic model fake answered HTTP 429 (rate_limit_error): Slow down. Retrying in 0 s (attempt 2 of 4)."
    assert shown[1] == ("message", "system", notice)  # after the user's message, before any of the reply
    assert "".join(text for kind, _, text in shown if kind == "message_delta") == "Hello after all."
    assert shown[-1] == ("message", "assistant", "Hello after all.")


async def test_cancel_during_the_wait_ends_the_turn(editor):
    with FakeOpenAI() as server:
        server.add(Failure(503, "Service unavailable.", retry_after=50), Reply("never asked for"))
        await editor.start(settings("openai", server.url))
        sent = await editor.request(methods.CHAT_SEND, {"text": "hello?"})
        await editor.wait_for(lambda: [u for u in editor.of_kind("message") if u["role"] == "system"])
        assert await editor.request(methods.CHAT_CANCEL, {"conversationId": sent["conversationId"]}) == {"cancelled": True}
        [ended] = await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    assert ended["outcome"] == "cancelled" and len(server.requests) == 1
