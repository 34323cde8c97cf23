"""The context window over the wire: a `context` update after each model request, condensing
before a request would pass the threshold (by itself and on `modus/chat/condense`), the summary
in place of the older messages while the store keeps them all, and a result too large for the
window sent cut. With the scripted model, and with the real SDKs against the local fake servers
(whose recorded requests show what the model was sent)."""

from __future__ import annotations

import asyncio

import pytest
from pygls.exceptions import JsonRpcException

from fake_models import Call, Failure, FakeAnthropic, FakeOpenAI, Reply
from protocol import methods
from server.agent.context import CONDENSE_ASK, CONDENSE_SYSTEM
from server.agent.history import SUMMARY_HEADER

from .conftest import script
from .editor import Editor

WINDOW = 10_000  # the prompt takes about 5,400 of it; condensed at 8,000


def words(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def scripted(workspace, *turns, window: int = WINDOW) -> dict:
    settings = script(workspace, *turns)
    settings["models"]["default"]["contextWindow"] = window
    return settings


async def test_a_long_conversation_is_condensed_before_it_passes_the_threshold(editor, workspace):
    turns = [{"text": "Noted one."}, {"text": "Noted two."}, {"text": "SUMMARY: the user gave three long lists."}, {"text": "Noted three."}]
    await editor.start(scripted(workspace, *turns))
    await editor.chat(words("alpha", 500))
    [first] = editor.of_kind("context")
    assert first["window"] == WINDOW and first["threshold"] == 8_000 and 5_000 < first["used"] < 8_000
    await editor.chat(words("beta", 500))
    assert not editor.of_kind("condensed")
    await editor.chat(words("gamma", 500))  # this request would pass 8,000 tokens

    [condensed] = editor.of_kind("condensed")
    assert condensed["before"] > 8_000 and condensed["after"] < condensed["before"] - 1_000
    assert condensed["conversationId"] == (await editor.request(methods.STATE))["conversationId"]
    [said] = [m for m in editor.of_kind("message") if m["role"] == "system"]
    assert said["text"] == f"Condensed the conversation: {condensed['before']:,} → {condensed['after']:,} tokens."
    assert editor.of_kind("message")[-1]["text"] == "Noted three."  # the turn went on after the summary
    assert editor.of_kind("context")[-1]["used"] < 8_000

    state = await editor.request(methods.STATE)
    assert state["context"] == {"used": editor.of_kind("context")[-1]["used"], "window": WINDOW, "threshold": 8_000}
    history = (await editor.request(methods.CHAT_HISTORY, {"conversationId": state["conversationId"]}))["messages"]
    users = [m["text"] for m in history if m["role"] == "user"]
    assert [u.split()[0] for u in users] == ["alpha0", "beta0", "gamma0"]  # the store keeps every message
    [marker] = [m for m in history if m["role"] == "system"]
    assert marker["metadata"]["condensed"]["summary"] == "SUMMARY: the user gave three long lists."


def openai(url: str, window: int = WINDOW, **more) -> dict:
    model = {"provider": "openai", "baseUrl": url, "model": "local-model", "contextWindow": window, **more}
    return {"models": {"default": model}}


def usage(prompt: int, completion: int = 10) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": completion}


async def test_the_providers_count_decides_and_the_summary_replaces_the_older_part(editor):
    with FakeOpenAI() as server:
        server.add(
            Reply("First answer.", usage=usage(7_400)),
            Reply("Second answer.", usage=usage(7_950)),  # with what comes next: past 8,000
            Reply("The user gave a long list."),  # the summary
            Reply("Third answer.", usage=usage(5_600)),
        )
        await editor.start(openai(server.url))
        await editor.chat(words("first", 1000))
        await editor.chat("second question")
        assert editor.of_kind("context")[-1]["used"] == 7_960  # the provider's count, its reply included
        assert not editor.of_kind("condensed")
        await editor.chat("third question")
        bodies = [r.body for r in server.requests]
    assert len(bodies) == 4
    summary_request = bodies[2]
    system, [asked] = summary_request["messages"][0], summary_request["messages"][1:]
    assert system == {"role": "system", "content": CONDENSE_SYSTEM} and "tools" not in summary_request
    assert asked["content"].startswith("<conversation>\n[user]\nfirst0 first1") and asked["content"].endswith(CONDENSE_ASK)
    assert "First answer." not in asked["content"]  # the newest (a quarter of 8,000) are kept, not summarised
    after = bodies[3]["messages"]
    assert after[1]["role"] == "user" and after[1]["content"].startswith(SUMMARY_HEADER)
    assert after[1]["content"].endswith("The user gave a long list.")
    assert [m["content"] for m in after[2:5]] == ["First answer.", after[3]["content"], "Second answer."]
    assert after[3]["content"].startswith("second question") and after[-1]["content"].startswith("third question")
    assert "first0" not in str(after)
    [condensed] = editor.of_kind("condensed")
    assert condensed["before"] > 8_000 and condensed["after"] < condensed["before"] - 2_000


async def test_a_condensed_conversation_is_condensed_still_after_a_restart(workspace, tmp_path):
    with FakeOpenAI() as server:
        server.add(
            Reply("First answer.", usage=usage(7_000)),
            Reply("Second answer.", usage=usage(7_950)),
            Reply("A summary of the long list."),
            Reply("Third answer.", usage=usage(5_000)),
            Reply("Fourth answer.", usage=usage(5_100)),
        )
        settings = openai(server.url)
        first = Editor(workspace, tmp_path / "config")
        await first.start(settings)
        try:
            for text in (words("first", 1000), "second question", "third question"):
                await first.chat(text)
            conversation = (await first.request(methods.STATE))["conversationId"]
        finally:
            await first.stop()
        again = Editor(workspace, tmp_path / "config")
        await again.start(settings)
        try:
            reopened = await again.request(methods.CHAT_OPEN, {"conversationId": conversation})
            assert reopened["context"]["used"] == 5_010  # the last request before the restart, as counted
            await again.chat("fourth question")
        finally:
            await again.stop()
        before, last = server.requests[-2].body["messages"], server.requests[-1].body["messages"]
    assert last[1]["content"].endswith("A summary of the long list.") and "first0" not in str(last)
    assert last[:-2] == before  # what the model saw before the restart, and the new exchange
    assert last[-1]["content"].startswith("fourth question")


async def test_a_result_too_large_for_the_window_is_sent_cut_with_a_marker(editor, workspace):
    whole = "\n".join(f"line {i}: {words('w', 8)}" for i in range(1_000))
    (workspace / "big.txt").write_text(whole, encoding="utf-8")
    with FakeOpenAI() as server:
        server.add(Reply("Reading.", [Call("call_1", "read_file", {"path": "big.txt"})]), Reply("It is long."))
        # the prompt and a result cut to a quarter of the window stay below the threshold: nothing is condensed
        await editor.start(openai(server.url, window=12_000))
        await editor.chat("what is in big.txt?")
        [result] = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert "tokens cut here: this was too large for the context window" in result["content"]
    assert "line 0:" in result["content"] and "line 999:" in result["content"]  # its beginning and its end
    assert len(result["content"]) < len(whole) // 3
    history = (await editor.request(methods.CHAT_HISTORY, {"conversationId": (await editor.request(methods.STATE))["conversationId"]}))
    [stored] = [m for m in history["messages"] if m["role"] == "tool"]
    assert "line 500:" in stored["text"]  # the store keeps it whole


async def test_condense_on_demand(editor):
    with FakeAnthropic() as server:
        server.add(
            Reply("One.", usage={"input_tokens": 5_500, "output_tokens": 5}),
            Reply("Two.", usage={"input_tokens": 5_600, "output_tokens": 5}),
            Reply("Summary of one."),
            Reply("Three.", usage={"input_tokens": 5_000, "output_tokens": 5}),
        )
        model = {"provider": "anthropic", "baseUrl": server.url, "model": "claude-sonnet-4-5"}
        await editor.start({"models": {"default": model}})
        assert (await editor.request(methods.STATE))["context"] == {"window": 200_000, "threshold": 160_000}  # no request yet
        await editor.chat(words("first", 300))
        await editor.chat("second")
        got = await editor.request(methods.CHAT_CONDENSE, {})
        await editor.chat("third")
        bodies = [r.body for r in server.requests]
    assert got["after"] < got["before"]
    [condensed] = editor.of_kind("condensed")
    assert (condensed["before"], condensed["after"]) == (got["before"], got["after"])
    assert bodies[2]["system"] == CONDENSE_SYSTEM and "tools" not in bodies[2]
    assert [m["role"] for m in bodies[2]["messages"]] == ["user"] and bodies[2]["messages"][0]["content"][0]["text"].endswith(CONDENSE_ASK)
    first = bodies[3]["messages"][0]
    assert first["role"] == "user" and SUMMARY_HEADER in str(first["content"]) and "first0" not in str(bodies[3])


async def test_one_condensing_at_a_time_and_none_while_a_turn_runs(editor):
    with FakeOpenAI() as server:
        server.add(Reply("One."), Reply("Two."), Reply("A slow summary.", gap=0.3), Reply("Slow answer.", gap=0.3))
        await editor.start(openai(server.url, window=100_000))
        await editor.chat("one")
        await editor.chat("two")
        first = asyncio.ensure_future(editor.request(methods.CHAT_CONDENSE, {}))
        await editor.wait_for(lambda: len(server.requests) == 3)
        with pytest.raises(JsonRpcException, match="is being condensed already"):
            await editor.request(methods.CHAT_CONDENSE, {})
        assert (await first)["after"] > 0
        await editor.request(methods.CHAT_SEND, {"text": "three"})
        await editor.wait_for(lambda: len(server.requests) == 4)
        with pytest.raises(JsonRpcException, match="conversationId: a turn is running in conversation"):
            await editor.request(methods.CHAT_CONDENSE, {})
        await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 3)


async def test_a_model_that_fails_to_summarise_leaves_the_conversation_as_it_was(editor):
    with FakeOpenAI() as server:
        server.add(Reply("One."), Reply("Two."), Failure(400, "bad request from the model server"), Reply("Three."))
        await editor.start(openai(server.url, window=100_000))
        await editor.chat("one")
        await editor.chat("two")
        with pytest.raises(JsonRpcException, match="HTTP 400.*bad request from the model server") as failed:
            await editor.request(methods.CHAT_CONDENSE, {})
        assert failed.value.code == -32803  # LSP's RequestFailed
        assert (await editor.chat("three"))["outcome"] == "completed"
        last = server.requests[-1].body["messages"]
    assert not editor.of_kind("condensed") and last[1]["content"].startswith("one")
    assert "Traceback" not in "".join(editor.stderr)


async def test_a_failed_condensing_before_a_request_that_still_fits_lets_the_turn_go_on(editor):
    with FakeOpenAI() as server:
        server.add(Reply("First answer.", usage=usage(8_500)), Failure(400, "no summaries today"), Reply("Second answer.", usage=usage(8_700)))
        await editor.start(openai(server.url))
        await editor.chat(words("first", 1000))
        ended = await editor.chat("second question")  # past 8,000 of 10,000: condensed first, which fails
    assert ended["outcome"] == "completed" and editor.of_kind("message")[-1]["text"] == "Second answer."
    said = [m["text"] for m in editor.of_kind("message") if m["role"] == "system"]
    assert len(said) == 1 and said[0].startswith("Condensing the conversation failed (") and "no summaries today" in said[0]
    assert "first0" in str(server.requests[-1].body["messages"])  # sent as it was


async def test_a_woken_agents_summons_note_follows_the_summary_when_its_turn_condenses(editor, workspace):
    (workspace / "architect.yaml").write_text("turns:\n  - text: '@coder over to you.'\n", encoding="utf-8")
    with FakeOpenAI() as server:
        server.add(Reply("The user pasted a long list."), Reply("On it.", usage=usage(6_000)))
        coder = {"provider": "openai", "baseUrl": server.url, "model": "local-model", "contextWindow": WINDOW}
        await editor.start({"agents": [
            {"name": "architect", "model": {"provider": "scripted", "script": "architect.yaml"}},
            {"name": "coder", "model": coder},
        ]})
        await editor.request(methods.CHAT_SEND, {"text": "@architect " + words("item", 1800)})
        await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
        summary_request, request = (r.body["messages"] for r in server.requests)
    assert "item0" in summary_request[1]["content"]  # the coder's own view, condensed before its first request
    assert request[1]["content"].startswith(SUMMARY_HEADER) and "item0" not in str(request)
    assert request[-2]["content"] == "[architect said]\n@coder over to you."
    assert request[-1]["content"] == "[architect mentioned you in its words quoted above; this turn is your answer.]"


async def test_condense_refuses_what_it_cannot_do(editor, workspace):
    await editor.start(scripted(workspace, {"text": "hi"}, {"text": "The user said hello."}))
    with pytest.raises(JsonRpcException, match="conversationId: unknown conversation: conv-nope"):
        await editor.request(methods.CHAT_CONDENSE, {"conversationId": "conv-nope"})
    got = await editor.request(methods.CHAT_CONDENSE, {})  # the current conversation, no message yet
    assert got["before"] == got["after"] and not editor.of_kind("condensed")
    assert editor.of_kind("message")[-1]["text"] == "Nothing to condense: the conversation has no messages yet."
    await editor.chat("hello")
    got = await editor.request(methods.CHAT_CONDENSE, {})  # one exchange: the user's message is summarised
    [condensed] = editor.of_kind("condensed")
    assert (condensed["before"], condensed["after"]) == (got["before"], got["after"]) and got["after"] < got["before"]


async def test_a_summary_no_shorter_than_what_it_replaces_is_not_used(editor, workspace):
    await editor.start(scripted(workspace, {"text": "One."}, {"text": "Two."}, {"text": words("summary", 2000)}, {"text": "Three."}))
    await editor.chat("one")
    await editor.chat("two")
    got = await editor.request(methods.CHAT_CONDENSE, {})
    assert got["before"] == got["after"] and not editor.of_kind("condensed")
    [said] = [m["text"] for m in editor.of_kind("message") if m["role"] == "system"]
    assert said.startswith("The conversation was not condensed: the summary would take")
    await editor.chat("three")
    conversation = (await editor.request(methods.STATE))["conversationId"]
    history = (await editor.request(methods.CHAT_HISTORY, {"conversationId": conversation}))["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"] * 3  # no marker: the model sees it all


async def test_state_sums_the_conversations_usage(editor, workspace):
    await editor.start(scripted(workspace, {"text": "a", "usage": {"inputTokens": 10, "outputTokens": 2}}, {"text": "b", "usage": {"inputTokens": 30, "outputTokens": 4, "cacheReadTokens": 5}}))
    assert (await editor.request(methods.STATE))["usage"] == {"inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0, "cost": 0.0}
    await editor.chat("one")
    await editor.chat("two")
    state = await editor.request(methods.STATE)
    assert state["usage"] == {"inputTokens": 40, "outputTokens": 6, "cacheReadTokens": 5, "cacheWriteTokens": 0, "cost": None}
    assert state["context"]["used"] == 30 + 4 + 5  # the last request, as the provider counted it
