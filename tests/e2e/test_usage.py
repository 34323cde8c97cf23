"""Tokens and cost over the wire (PROTOCOL.md "usage"): a `usage` update after each model request,
and modus/usage/get summing them per task, mode and phase, and agent; real SDKs against the local
fake providers for what each API reports, cache tokens included."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException

from fake_models import Call, FakeAnthropic, FakeOpenAI, Reply
from protocol import methods

from .conftest import script

PRICE = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}


def used(input_tokens: int, output_tokens: int, **cache) -> dict:
    return {"inputTokens": input_tokens, "outputTokens": output_tokens, **cache}


async def test_usage_is_summed_per_task_mode_phase_and_agent_across_a_switch_and_a_flip(editor, workspace):
    turns = [
        {"toolCalls": [{"name": "switch_mode", "arguments": {"mode_slug": "ask"}}], "usage": used(1000, 100)},
        {"text": "Asked.", "usage": used(2000, 200, cacheReadTokens=1000)},
        {"text": "Planned.", "usage": used(500, 50, cacheWriteTokens=400)},
        {"text": "No usage reported."},
    ]
    settings = script(workspace, *turns)
    settings["models"]["default"]["pricing"] = PRICE
    await editor.start({**settings, "autoApprove": {"modeSwitch": True}})
    await editor.chat("start in code, go on in ask")
    await editor.request(methods.PHASE_SET, {"phase": "plan"})
    await editor.chat("now plan")
    await editor.chat("and once more")
    updates = editor.of_kind("usage")
    assert [(u["mode"], u["phase"], u["inputTokens"], u["outputTokens"]) for u in updates] == [
        ("code", "act", 1000, 100),
        ("ask", "act", 2000, 200),
        ("ask", "plan", 500, 50),
    ]  # the request that reported nothing made no update
    assert updates[0]["cost"] == (1000 * 3.0 + 100 * 15.0) / 1e6
    got = await editor.request(methods.USAGE_GET, {})
    assert got["total"] == {
        "inputTokens": 3500, "outputTokens": 350, "cacheReadTokens": 1000, "cacheWriteTokens": 400,
        "cost": round((3500 * 3.0 + 350 * 15.0 + 1000 * 0.3 + 400 * 3.75) / 1e6, 10),
    }
    assert set(got["byMode"]) == {"code", "ask"} and set(got["byMode"]["ask"]) == {"act", "plan"}
    assert got["byMode"]["ask"]["plan"]["cacheWriteTokens"] == 400 and "plan" not in got["byMode"]["code"]
    assert len(got["byTask"]) == 3 and set(got["byAgent"]) == {"modus"}  # a task per mode and phase


async def test_an_unknown_price_is_tokens_only(editor, workspace):
    await editor.start(script(workspace, {"text": "hi", "usage": used(10, 2)}))
    await editor.chat("hi")
    [update] = editor.of_kind("usage")
    assert update["cost"] is None and update["inputTokens"] == 10
    assert (await editor.request(methods.USAGE_GET, {}))["total"]["cost"] is None


def model(provider: str, url: str, name: str) -> dict:
    return {"models": {"default": {"provider": provider, "baseUrl": url, "model": name}}}


async def test_what_anthropic_reports_cache_reads_and_writes_included(editor):
    with FakeAnthropic() as server:
        usage = {"input_tokens": 20, "output_tokens": 7, "cache_read_input_tokens": 300, "cache_creation_input_tokens": 40}
        server.add(Reply("Hello.", usage=usage))
        await editor.start(model("anthropic", server.url, "claude-sonnet-4-5-20250929"))
        await editor.chat("hi")
    [update] = editor.of_kind("usage")
    assert (update["inputTokens"], update["outputTokens"], update["cacheReadTokens"], update["cacheWriteTokens"]) == (20, 7, 300, 40)
    assert update["cost"] == (20 * 3.0 + 7 * 15.0 + 300 * 0.3 + 40 * 3.75) / 1e6  # the known price of the model


async def test_what_an_openai_compatible_server_reports_cached_prompt_tokens_apart(editor):
    with FakeOpenAI() as server:
        server.add(
            Reply("Reading.", [Call("call_1", "list_files", {"path": "."})], usage={"prompt_tokens": 120, "completion_tokens": 9, "cached_tokens": 100}),
            Reply("Done."),
        )
        await editor.start(model("openai", server.url, "llama3.1"))
        await editor.chat("hi")
        asked = server.requests[0].body
    assert asked["stream_options"] == {"include_usage": True}
    [update] = editor.of_kind("usage")  # the second reply reported nothing
    assert (update["inputTokens"], update["cacheReadTokens"], update["outputTokens"], update["cost"]) == (20, 100, 9, None)


async def test_usage_of_an_unknown_conversation_is_a_clear_error(editor):
    await editor.start()
    with pytest.raises(JsonRpcException) as refused:
        await editor.request(methods.USAGE_GET, {"conversationId": "conv-nosuch"})
    assert refused.value.code == -32602 and refused.value.message == "conversationId: unknown conversation: conv-nosuch"
