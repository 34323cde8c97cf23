"""The Anthropic and OpenAI providers, through the official SDKs, against local fake servers:
streaming, tool calls, the request shapes, keys, failures, time limits and cancellation."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import anyio
import pytest
from pydantic import ValidationError

from fake_models import Call, Failure, FakeAnthropic, FakeOpenAI, FakeServer, Raw, Reply, Stall
from helpers import chat, running, until
from protocol import ChatSendParams, Model, ModelsConfig, Settings
from server.agent import build_task
from server.settings import read_settings
from server.modes import BUILTIN_MODES
from server.prompt import PromptContext
from server.providers import (
    ChatMessage, ModelError, ModelLimits, ModelReply, ModelRequest, ScriptCursor, ToolCallRequest, ToolSchema, open_model,
)
from server.providers.openai import RAW_ARGUMENTS
from server.providers.sdk import backoff, retry_after

KEY_ENV = "MODUS_TEST_API_KEY"
KEY = "sk-test-0123456789abcdef"
READ_FILE = ToolSchema(
    "read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
)
HELLO = ModelRequest("You are a test.", (ChatMessage("user", "hello"),), (READ_FILE,))


def model(server: FakeServer, limits: ModelLimits = ModelLimits(), **settings):
    config = {"provider": server.provider, "baseUrl": server.url, "apiKeyEnv": KEY_ENV, "model": "fake-model", **settings}
    return open_model(Model.model_validate(config), workspace=Path("."), cursor=ScriptCursor(), limits=limits)


async def ask(server: FakeServer, request: ModelRequest = HELLO, **settings) -> tuple[ModelReply, list[str]]:
    chunks: list[str] = []
    reply = await model(server, **settings).complete(request, chunks.append)
    return reply, chunks


async def attempt(server: FakeServer, limits: ModelLimits = ModelLimits()) -> tuple[str, list[str]]:
    """The reply's text or the ModelError's, and the notices told meanwhile."""
    notices: list[str] = []
    with anyio.fail_after(10):
        try:
            reply = await model(server, limits).complete(HELLO, lambda _: None, notices.append)
        except ModelError as exc:
            return str(exc), notices
    return reply.text, notices


async def failure(server: FakeServer, **settings) -> str:
    with anyio.fail_after(10), pytest.raises(ModelError) as caught:
        await ask(server, **settings)
    return str(caught.value)


@pytest.fixture(params=["anthropic", "openai"])
def fake(request, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    with (FakeAnthropic if request.param == "anthropic" else FakeOpenAI)() as server:
        yield server


@pytest.fixture
def anthropic(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def openai(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeOpenAI() as server:
        yield server


# ------------------------------------------------------------ both providers


async def test_text_streams_in_pieces_and_the_reply_is_whole(fake):
    fake.add(Reply("Hello, I am a fake model."))
    reply, chunks = await ask(fake)
    assert len(chunks) > 1 and "".join(chunks) == reply.text == "Hello, I am a fake model."
    assert reply.tool_calls == ()


async def test_thinking_is_not_visible_text(fake):
    fake.add(Reply("The answer.", thinking="Let me think about it."))
    reply, chunks = await ask(fake, thinkingBudgetTokens=2048)
    assert "".join(chunks) == reply.text == "The answer."


async def test_a_native_tool_call_comes_back_with_parsed_arguments(fake):
    fake.add(Reply("Reading.", [Call("call_7", "read_file", {"path": "src/a.py", "start_line": 3})]))
    reply, _ = await ask(fake)
    assert reply.text == "Reading."
    assert reply.tool_calls == (ToolCallRequest("call_7", "read_file", {"path": "src/a.py", "start_line": 3}),)


async def test_the_key_from_api_key_env_is_sent(fake):
    fake.add(Reply("ok"))
    await ask(fake)
    headers = fake.requests[0].headers
    assert headers.get("x-api-key") == KEY or headers.get("authorization") == f"Bearer {KEY}"
    assert fake.requests[0].body["model"] == "fake-model"


@pytest.mark.parametrize(
    "status, message, kind",
    [
        (400, "messages: at least one message is required", "invalid_request_error"),
        (401, f"Invalid API key: {KEY}", "authentication_error"),
        (403, "Your key may not use this model.", "permission_error"),
        (404, "model: fake-model", "not_found_error"),
        (413, "Request exceeds the maximum size.", "request_too_large"),
        (422, "Unprocessable.", "invalid_request_error"),
    ],
)
async def test_a_client_error_fails_at_once_with_status_and_message(fake, status, message, kind):
    fake.add(Failure(status, message, kind), Reply("never asked for"))
    text, notices = await attempt(fake)
    assert text.startswith(f"{fake.provider} model fake-model at {fake.url}")
    assert text.endswith(f": HTTP {status} ({kind}): {message.replace(KEY, '***')}") and KEY not in text
    assert len(fake.requests) == 1 and notices == []


async def test_a_dead_endpoint_fails_at_once_as_connection_refused(fake):
    fake.close()
    text, notices = await attempt(fake)
    assert text.startswith(f"{fake.provider} model fake-model at {fake.url}")
    assert text.endswith(": cannot connect (connection refused)")
    assert notices == []


async def test_a_401_without_a_key_says_none_was_sent(fake):
    fake.add(Failure(401, "Missing API key.", "authentication_error"))
    text = await failure(fake, apiKeyEnv=None)
    assert "HTTP 401" in text and "no API key was sent" in text


async def test_a_malformed_stream_is_a_model_error(fake):
    fake.add(Raw("event: message_start\ndata: {broken\n\n"))
    assert "malformed response" in await failure(fake)


async def test_a_tool_call_cut_off_by_max_tokens_does_not_run(fake):
    cut = "max_tokens" if fake.provider == "anthropic" else "length"
    fake.add(Reply(calls=[Call("call_1", "write_to_file", {"path": "a.txt", "content": "only the begin"})], stop=cut))
    assert "reached max tokens" in await failure(fake, maxTokens=100)


async def test_a_key_env_that_is_not_set_is_a_model_error(fake, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    text = await failure(fake)
    assert f"{KEY_ENV} is not set" in text
    assert fake.requests == []


@pytest.mark.parametrize("stall", [Stall(), Reply("Hello", events=0, then="hang")], ids=["no headers", "headers only"])
async def test_no_first_event_in_time_fails_the_request(fake, stall):
    fake.add(stall)
    # 1 s: long enough for the request to reach the fake on a loaded machine (0.2 s was not, once)
    text = await failure(fake, limits=ModelLimits(first_byte=1.0, idle=30))
    assert text.startswith(f"{fake.provider} model fake-model at ")
    assert text.endswith(": no response within 1 s (modelFirstByteTimeoutSeconds)")
    assert len(fake.requests) == 1  # our limit, not the SDK's timeout and retry


async def test_a_stream_that_stalls_fails_after_the_idle_timeout(fake):
    fake.add(Reply("Thinking out loud for a long time", events=3, then="hang"))
    chunks: list[str] = []
    with anyio.fail_after(10), pytest.raises(ModelError) as caught:
        await model(fake, ModelLimits(first_byte=30, idle=0.2)).complete(HELLO, chunks.append)
    assert str(caught.value).endswith(": the stream stalled: nothing received for 0.2 s (modelIdleTimeoutSeconds)")
    assert chunks  # text came first


async def test_a_slow_but_steady_stream_is_not_cut(fake):
    # 0.05 s between events, 12 events or more: longer than either limit in all, shorter in every gap
    fake.add(Reply("Hello, I am a fake model.", [Call("call_1", "read_file", {"path": "a"})], gap=0.05))
    reply, _ = await ask(fake, limits=ModelLimits(first_byte=0.4, idle=0.4))
    assert reply.text == "Hello, I am a fake model." and reply.tool_calls[0].arguments == {"path": "a"}


async def test_the_sdk_timeout_only_backs_up_the_limits(fake):
    fake.add(Reply("ok"))
    client = model(fake, ModelLimits(first_byte=7, idle=3))
    await client.complete(HELLO, lambda _: None)
    assert (await client.client()).timeout.read == 7  # never the SDK's own 10 minutes


@pytest.mark.parametrize("events", [0, 4])
async def test_a_stream_cut_in_the_middle_is_reported_as_cut(fake, events):
    fake.add(Reply("Hello, I am a fake model.", events=events, then="cut"))
    text = await failure(fake)
    assert f": the stream was cut off after {events} events: peer closed connection without sending complete" in text
    assert "cannot connect" not in text
    assert len(fake.requests) == 1  # a stream that started is never sent again


@pytest.mark.parametrize(
    "reply",
    [Reply("Hello, I am a fake model.", events=4), Reply(calls=[Call("call_1", "write_to_file", {"path": "a", "content": "b"})], events=5)],
    ids=["text", "tool call"],
)
async def test_a_stream_that_ends_before_the_reply_is_complete_is_cut(fake, reply):
    fake.add(reply)
    text = await failure(fake)
    assert text.endswith(f": the stream was cut off after {reply.events} events: it ended before the reply was complete")


async def test_cancellation_while_waiting_for_the_first_byte(fake):
    fake.add(Stall())
    with anyio.move_on_after(5) as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(model(fake).complete, HELLO, lambda _: None)
            while not fake.requests:
                await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
    assert not scope.cancelled_caught  # cancelled at once: no ModelError, no waiting


async def test_cancellation_propagates(fake):
    fake.add(Reply("Thinking out loud for a long time", events=3, then="hang"))
    chunks: list[str] = []
    with anyio.move_on_after(5) as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(model(fake).complete, HELLO, chunks.append)
            while not chunks:
                await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
    assert chunks and not scope.cancelled_caught  # cancelled at once: no ModelError, no waiting


# ------------------------------------------------------------ both providers: retries


REFUSALS = {429: ("Slow down.", "rate_limit_error"), 529: ("Overloaded", "overloaded_error"), 503: ("Service unavailable.", "api_error")}
NOTICE = {429: "Rate limited", 529: "Overloaded", 503: "Server error"}


def refused(status: int, **headers) -> Failure:
    return Failure(status, *REFUSALS[status], **headers)


@pytest.mark.parametrize("status, wait", [(429, 0), (429, 1), (529, 0), (503, 0)])
async def test_a_refusal_for_now_is_retried_after_the_wait_the_server_asks(fake, status, wait):
    fake.add(refused(status, retry_after=wait), Reply("Hello after all."))
    text, notices = await attempt(fake)
    message, kind = REFUSALS[status]
    assert text == "Hello after all." and len(fake.requests) == 2
    assert notices == [
        f"{NOTICE[status]}: {fake.provider} model fake-model answered HTTP {status} ({kind}): {message.rstrip('.')}. "
        f"Retrying in {wait} s (attempt 2 of 4)."
    ]


async def test_retry_after_ms_comes_first(fake):
    fake.add(refused(429, retry_after=30, retry_after_ms=200), Reply("ok"))
    text, [notice] = await attempt(fake)
    assert text == "ok" and notice.endswith("Retrying in 0.2 s (attempt 2 of 4).")


async def test_after_max_retries_the_request_fails_with_the_last_answer(fake):
    fake.add(refused(529), refused(503), refused(503), Reply("too late"))
    text, notices = await attempt(fake, ModelLimits(retries=2))
    assert text.startswith(f"{fake.provider} model fake-model at {fake.url}")
    assert text.endswith(": gave up after 3 attempts (maxRetries 2); the last answer: HTTP 503 (api_error): Service unavailable.")
    assert len(fake.requests) == 3
    assert [n.split(". Retrying ")[1] for n in notices] == ["in 0 s (attempt 2 of 3).", "in 0 s (attempt 3 of 3)."]


async def test_with_no_retries_a_refusal_fails_at_once(fake):
    fake.add(refused(429), Reply("never asked for"))
    text, notices = await attempt(fake, ModelLimits(retries=0))
    assert text.endswith(": gave up after 1 attempt (maxRetries 0); the last answer: HTTP 429 (rate_limit_error): Slow down.")
    assert len(fake.requests) == 1 and notices == []


async def test_a_wait_past_the_total_cap_is_not_started(fake):
    fake.add(refused(429, retry_after=30), Reply("never asked for"))
    text, notices = await attempt(fake, ModelLimits(retry_wait=10))
    assert text.endswith(
        ": gave up after 1 attempt (waiting 30 s more would pass maxRetryWaitSeconds, 10 s in all); "
        "the last answer: HTTP 429 (rate_limit_error): Slow down."
    )
    assert len(fake.requests) == 1 and notices == []


async def test_the_waits_of_one_request_add_up_to_at_most_the_cap(fake):
    fake.add(*[refused(503, retry_after=None, retry_after_ms=300)] * 3, Reply("never asked for"))
    text, notices = await attempt(fake, ModelLimits(retry_wait=0.5))
    assert "gave up after 2 attempts (waiting 0.3 s more would pass maxRetryWaitSeconds, 0.5 s in all)" in text
    assert len(fake.requests) == 2 and len(notices) == 1


async def test_without_retry_after_the_wait_is_a_backoff(fake):
    # the first backoff is 0.5 to 1 s: past a cap of 0.1 s, so it is not started
    fake.add(refused(503, retry_after=None), Reply("never asked for"))
    text, notices = await attempt(fake, ModelLimits(retry_wait=0.1))
    assert re.search(r"gave up after 1 attempt \(waiting (0\.[5-9]|1) s more would pass maxRetryWaitSeconds", text)
    assert notices == []


async def test_the_key_is_not_in_a_notice(fake):
    fake.add(Failure(429, f"Too many requests for key {KEY}.", "rate_limit_error"), Reply("ok"))
    _, [notice] = await attempt(fake)
    assert KEY not in notice and "for key ***" in notice


async def test_cancelling_during_a_wait_ends_it_at_once(fake):
    fake.add(refused(429, retry_after=30), Reply("never asked for"))
    notices: list[str] = []
    with anyio.move_on_after(5) as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(model(fake).complete, HELLO, lambda _: None, notices.append)
            while not notices:
                await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
    assert not scope.cancelled_caught  # cancelled at once: no ModelError, no waiting
    assert notices[0].endswith("Retrying in 30 s (attempt 2 of 4).") and len(fake.requests) == 1


def test_retry_after_in_seconds_milliseconds_or_as_a_date():
    now = datetime(2026, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert retry_after({"retry-after": "8"}, now) == 8
    assert retry_after({"retry-after": "8", "retry-after-ms": "1500"}, now) == 1.5
    assert retry_after({"retry-after": "Fri, 01 May 2026 12:00:30 GMT"}, now) == 30
    assert retry_after({"retry-after": "Fri, 01 May 2026 11:59:00 GMT"}, now) == 0  # the date has passed
    assert retry_after({"retry-after": "-3"}, now) == 0
    for nothing in ({}, {"retry-after": "soon"}, {"retry-after": "nan"}, {"retry-after-ms": "inf"}):
        assert retry_after(nothing, now) is None


def test_backoff_doubles_up_to_a_limit_with_jitter():
    assert [backoff(n, 0) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]
    assert backoff(3, 0.5) == 3 and backoff(3, 0.999) > 2


# ------------------------------------------------------------ Anthropic


def history() -> tuple[ChatMessage, ...]:
    """A reply with text and two native calls, their results, the result of an XML call and the next user message."""
    return (
        ChatMessage("user", "Look at a and b."),
        ChatMessage(
            "assistant",
            "Reading both.",
            (ToolCallRequest("t1", "read_file", {"path": "a"}), ToolCallRequest("t2", "read_file", {"path": "b"})),
        ),
        ChatMessage("user", "[list_files] Result:\na\nb"),
        ChatMessage("tool", "a says hi", tool_call_id="t1", tool_name="read_file"),
        ChatMessage("tool", "No such file: b", tool_call_id="t2", tool_name="read_file", is_error=True),
        ChatMessage("user", "And now?"),
    )


async def test_anthropic_request_shape(anthropic):
    anthropic.add(Reply("ok"))
    await ask(anthropic, ModelRequest("System prompt.", history(), (READ_FILE,)))
    body = anthropic.requests[0].body
    assert anthropic.requests[0].path == "/v1/messages"
    assert body["model"] == "fake-model" and body["max_tokens"] == 8192 and body["stream"] is True
    assert body["system"] == "System prompt."
    assert body["tools"] == [{"name": "read_file", "description": "Read a file.", "input_schema": READ_FILE.parameters}]
    assert "thinking" not in body
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Look at a and b."}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading both."},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
            {"type": "tool_use", "id": "t2", "name": "read_file", "input": {"path": "b"}},
        ]},
        {"role": "user", "content": [  # results first, then the text that came between and after
            {"type": "tool_result", "tool_use_id": "t1", "content": "a says hi", "is_error": False},
            {"type": "tool_result", "tool_use_id": "t2", "content": "No such file: b", "is_error": True},
            {"type": "text", "text": "[list_files] Result:\na\nb"},
            {"type": "text", "text": "And now?"},
        ]},
    ]


async def test_anthropic_thinking_budget_and_max_tokens(anthropic):
    anthropic.add(Reply("ok"), Reply("ok"))
    await ask(anthropic, thinkingBudgetTokens=4000, maxTokens=16000)
    await ask(anthropic, thinkingBudgetTokens=4000)
    first, second = (r.body for r in anthropic.requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 4000} and first["max_tokens"] == 16000
    assert second["max_tokens"] == 8192 + 4000  # room for the answer on top of the thinking


async def test_anthropic_thinking_goes_back_with_its_tool_calls(anthropic):
    anthropic.add(
        Reply("Looking.", [Call("toolu_think", "read_file", {"path": "a"})], thinking="I should read a."), Reply("Done.")
    )
    client = model(anthropic, thinkingBudgetTokens=2048)
    first = await client.complete(HELLO, lambda _: None)
    after = HELLO.messages + (
        ChatMessage("assistant", first.text, first.tool_calls, state=first.state),
        ChatMessage("tool", "a says hi", tool_call_id="toolu_think", tool_name="read_file"),
    )
    await client.complete(ModelRequest(HELLO.system, after, HELLO.tools), lambda _: None)
    assistant = anthropic.requests[1].body["messages"][1]
    assert [b["type"] for b in assistant["content"]] == ["thinking", "text", "tool_use"]
    assert assistant["content"][0] == {"type": "thinking", "thinking": "I should read a.", "signature": "sig-1"}


# ------------------------------------------------------------ OpenAI and compatible servers


async def test_openai_request_shape(openai):
    openai.add(Reply("ok"))
    await ask(openai, ModelRequest("System prompt.", history(), (READ_FILE,)), reasoningEffort="high", maxTokens=1234)
    body = openai.requests[0].body
    assert openai.requests[0].path == "/v1/chat/completions"
    assert body["model"] == "fake-model" and body["stream"] is True
    assert body["reasoning_effort"] == "high" and body["max_tokens"] == 1234
    function = {"name": "read_file", "description": "Read a file.", "parameters": READ_FILE.parameters}
    assert body["tools"] == [{"type": "function", "function": function}]
    assert body["messages"] == [
        {"role": "system", "content": "System prompt."},
        {"role": "user", "content": "Look at a and b."},
        {"role": "assistant", "content": "Reading both.", "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a"}'}},
            {"id": "t2", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "b"}'}},
        ]},
        {"role": "tool", "tool_call_id": "t1", "content": "a says hi"},  # results right after their calls
        {"role": "tool", "tool_call_id": "t2", "content": "No such file: b"},
        {"role": "user", "content": "[list_files] Result:\na\nb"},
        {"role": "user", "content": "And now?"},
    ]


async def test_openai_arguments_that_are_not_json_are_kept_raw(openai):
    openai.add(Reply(calls=[Call("call_1", "read_file", '{"path": "a.txt"'), Call("call_2", "read_file", {"path": "b"})]))
    reply, _ = await ask(openai)
    assert [c.arguments for c in reply.tool_calls] == [{RAW_ARGUMENTS: '{"path": "a.txt"'}, {"path": "b"}]


async def test_openai_compatible_server_without_a_key(openai, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-users-real-openai-key")
    openai.add(Reply("Hi from a local model."))
    config = Model.model_validate({"provider": "openai", "baseUrl": openai.url, "model": "llama3.1"})
    reply = await open_model(config, workspace=Path("."), cursor=ScriptCursor()).complete(HELLO, lambda _: None)
    assert reply.text == "Hi from a local model."
    assert "sk-the-users-real-openai-key" not in str(openai.requests[0].headers)  # never sent to another host unasked


async def test_openai_without_base_url_uses_its_key_and_max_completion_tokens(openai, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", openai.url)  # stands in for api.openai.com
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    openai.add(Reply("ok"))
    config = Model.model_validate({"provider": "openai", "model": "gpt-5.5", "maxTokens": 500})
    await open_model(config, workspace=Path("."), cursor=ScriptCursor()).complete(HELLO, lambda _: None)
    request = openai.requests[0]
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["max_completion_tokens"] == 500 and "max_tokens" not in request.body


async def test_openai_without_a_key_for_openai_itself_is_a_model_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = Model.model_validate({"provider": "openai", "model": "gpt-5.5"})
    with pytest.raises(ModelError, match="OPENAI_API_KEY is not set"):
        await open_model(config, workspace=Path("."), cursor=ScriptCursor()).complete(HELLO, lambda _: None)


# ------------------------------------------------------------ through the session


async def test_a_turn_with_a_native_tool_call_against_an_openai_server(tmp_path, openai):
    (tmp_path / "a.txt").write_text("hi\n")
    openai.add(Reply("Reading it.", [Call("call_a", "read_file", {"path": "a.txt"})]), Reply("It says hi."))
    models = {"default": {"provider": "openai", "baseUrl": openai.url, "model": "fake-model"}}
    async with running(tmp_path, models=models) as session:
        assert await chat(session, "what is in a.txt?") == "completed"
        stored = session.store.messages(session.conversation_id)
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[-1].text == "It says hi."
    messages = openai.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["tool_calls"][0]["id"] == "call_a"
    assert messages[3]["tool_call_id"] == "call_a" and messages[3]["content"].startswith("a.txt (lines 1-1 of 1)")


async def test_thinking_survives_a_mode_switch_in_the_middle_of_a_turn(tmp_path, anthropic):
    anthropic.add(
        Reply("Switching.", [Call("toolu_sw", "switch_mode", {"mode_slug": "ask"})], thinking="Ask mode fits."),
        Reply("Done."),
    )
    models = {"default": {"provider": "anthropic", "baseUrl": anthropic.url, "model": "fake", "thinkingBudgetTokens": 1024}}
    async with running(tmp_path, models=models, autoApprove={"modeSwitch": True}) as session:
        assert await chat(session, "go") == "completed"
        stored = session.store.messages(session.conversation_id)[1]
    assert stored.metadata["providerState"]["thinking"][0]["thinking"] == "Ask mode fits."
    # the second request, made by the new task of the new mode, sends the thinking back first
    assistant = anthropic.requests[1].body["messages"][1]
    assert [b["type"] for b in assistant["content"]] == ["thinking", "text", "tool_use"]


async def test_a_turn_shows_the_wait_before_a_retry_and_keeps_the_reply_clean(tmp_path, anthropic):
    anthropic.add(refused(529), Reply("Hello after all."))
    models = {"default": {"provider": "anthropic", "baseUrl": anthropic.url, "model": "fake-model"}}
    async with running(tmp_path, models=models) as session:
        assert await chat(session, "hello") == "completed"
        stored = session.store.messages(session.conversation_id)
        host = session.host
    notice = "Overloaded: anthropic model fake-model answered HTTP 529 (overloaded_error): Overloaded. Retrying in 0 s (attempt 2 of 4)."
    shown = [("user", "hello"), ("system", notice), ("assistant", "Hello after all.")]
    assert [(m.role, m.text) for m in host.of_kind("message")] == shown
    assert "".join(u.text for u in host.of_kind("message_delta")) == "Hello after all."
    # kept with the conversation (a reopened one shows it too), never sent to the model
    assert [(m.role, m.text) for m in stored] == shown
    assert [m["role"] for m in anthropic.requests[1].body["messages"]] == ["user"]


async def test_a_turn_fails_when_the_retries_are_used_up(tmp_path, openai):
    openai.add(refused(429), refused(429), Reply("too late"))
    models = {"default": {"provider": "openai", "baseUrl": openai.url, "model": "fake-model"}}
    async with running(tmp_path, models=models, maxRetries=1) as session:
        assert await chat(session, "hello") == "failed"
        host = session.host
    *_, notice, failed = [m.text for m in host.of_kind("message") if m.role == "system"]
    assert notice.endswith("Retrying in 0 s (attempt 2 of 2).")
    assert failed.startswith("The model request failed: openai model fake-model at ")
    assert failed.endswith(": gave up after 2 attempts (maxRetries 1); the last answer: HTTP 429 (rate_limit_error): Slow down.")
    assert len(openai.requests) == 2


async def test_cancelling_the_turn_during_a_wait_ends_it_cancelled(tmp_path, openai):
    openai.add(refused(503, retry_after=60), Reply("never asked for"))
    models = {"default": {"provider": "openai", "baseUrl": openai.url, "model": "fake-model"}}
    async with running(tmp_path, models=models, maxRetryWaitSeconds=120) as session:
        host = session.host
        await session.send(ChatSendParams(text="hello"))
        await until(lambda: [m for m in host.of_kind("message") if m.role == "system"])
        assert session.cancel(session.conversation_id) is True
        await until(lambda: host.of_kind("turn_ended"))
    assert host.of_kind("turn_ended")[0].outcome == "cancelled"
    assert len(openai.requests) == 1


# ------------------------------------------------------------ the time limits as settings


def test_the_time_limits_are_settings_with_defaults():
    assert (Settings().model_first_byte_timeout_seconds, Settings().model_idle_timeout_seconds) == (120, 60)
    assert ModelLimits.of(Settings()) == ModelLimits() == ModelLimits(first_byte=120, idle=60)
    chosen = Settings.model_validate({"modelFirstByteTimeoutSeconds": 30, "modelIdleTimeoutSeconds": 2.5})
    assert ModelLimits.of(chosen) == ModelLimits(first_byte=30, idle=2.5)
    for bad in ({"modelFirstByteTimeoutSeconds": 0}, {"modelIdleTimeoutSeconds": -1}):
        with pytest.raises(ValidationError):
            Settings.model_validate(bad)


def test_the_retries_are_settings_with_defaults():
    assert (Settings().max_retries, Settings().max_retry_wait_seconds) == (3, 60)
    assert ModelLimits.of(Settings()) == ModelLimits() == ModelLimits(retries=3, retry_wait=60)
    chosen = Settings.model_validate({"maxRetries": 0, "maxRetryWaitSeconds": 2.5})
    assert ModelLimits.of(chosen)[2:] == (0, 2.5)
    settings, problems = read_settings({"maxRetries": -1, "maxRetryWaitSeconds": "a minute", "maxRequestsPerTurn": 9})
    assert problems == [
        "modus.maxRetries: Input should be greater than or equal to 0",
        "modus.maxRetryWaitSeconds: Input should be a valid number, unable to parse string as a number",
    ]
    assert (settings.max_retries, settings.max_retry_wait_seconds, settings.max_requests_per_turn) == (3, 60, 9)


async def test_the_task_factory_hands_the_limits_to_the_model(tmp_path, openai):
    openai.add(Stall())
    context = PromptContext(
        mode=BUILTIN_MODES[0], phase="act", tools=frozenset(), modes=BUILTIN_MODES, workspace=tmp_path, yolo=False, agent="modus"
    )
    models = ModelsConfig.model_validate({"default": {"provider": "openai", "baseUrl": openai.url, "model": "fake"}})
    task = build_task(
        context=context, agent_model=None, models=models, cursor=ScriptCursor(), generation=0,
        limits=ModelLimits(first_byte=0.2, idle=30),
    )
    with anyio.fail_after(10), pytest.raises(ModelError, match=r"no response within 0\.2 s"):
        await task.model.complete(HELLO, lambda _: None)


async def test_a_turn_fails_after_the_configured_first_byte_timeout(tmp_path, openai):
    openai.add(Stall())
    models = {"default": {"provider": "openai", "baseUrl": openai.url, "model": "fake-model"}}
    with anyio.fail_after(3):
        async with running(tmp_path, models=models, modelFirstByteTimeoutSeconds=0.2) as session:
            assert await chat(session, "hello?") == "failed"
        [system] = [m for m in session.host.of_kind("message") if m.role == "system"]
    assert "no response within 0.2 s (modelFirstByteTimeoutSeconds)" in system.text


async def test_scripted_call_ids_are_not_reused_by_a_restarted_server(tmp_path):
    # a conversation outlives its server: the ids of a new process's calls must not collide
    script = tmp_path / "script.json"
    script.write_text('{"turns": [{"toolCalls": [{"name": "read_file", "arguments": {"path": "a"}}]}]}')
    config = Model.model_validate({"provider": "scripted", "script": str(script)})
    first, after_restart = [
        (await open_model(config, workspace=tmp_path, cursor=ScriptCursor()).complete(HELLO, lambda _: None)).tool_calls[0].id
        for _ in range(2)
    ]
    assert first != after_restart


async def test_the_models_thinking_goes_apart_from_its_text(fake):
    fake.add(Reply("The answer.", thinking="Let me think this through."))
    text: list[str] = []
    thought: list[str] = []
    reply = await model(fake, thinkingBudgetTokens=1024, maxTokens=4096).complete(HELLO, text.append, on_thinking=thought.append)
    assert "".join(thought) == "Let me think this through." and "".join(text) == reply.text == "The answer."


def test_the_providers_loaded_ahead_are_every_one_the_settings_name():
    from protocol import Settings
    from server.providers import _models

    settings = Settings.model_validate({
        "models": {
            "default": {"provider": "scripted"},
            "phases": {"plan": {"provider": "anthropic"}},
            "modes": {"ask": {"provider": "openai", "act": {"provider": "anthropic", "model": "m"}}},
        },
        "agents": [{"name": "a"}, {"name": "b", "model": {"provider": "openai", "baseUrl": "http://x"}}],
    })
    assert [m.provider for m in _models(settings)] == ["scripted", "anthropic", "openai", "anthropic", "openai"]


async def test_the_tasks_of_one_endpoint_share_one_client_per_event_loop():
    """A mode switch builds a new task and its model: not a new client (its TLS context, its pool)."""
    import threading

    from server.providers.openai import OpenAIModel

    config = Model(provider="openai", model="fake", base_url="http://127.0.0.1:9/v1")
    first, second = OpenAIModel(config, ModelLimits()), OpenAIModel(config, ModelLimits())
    other = OpenAIModel(Model(provider="openai", model="fake", base_url="http://127.0.0.1:8/v1"), ModelLimits())
    assert await first.client() is await second.client()
    assert await other.client() is not await first.client()
    elsewhere: list = []
    thread = threading.Thread(target=lambda: elsewhere.append(anyio.run(OpenAIModel(config, ModelLimits()).client)))
    thread.start()
    thread.join()
    assert elsewhere[0] is not await first.client()  # another loop: its own


def test_what_the_first_turn_runs_is_named_as_it_imports():
    """The modules loaded ahead (Session's TURN_MODULES) exist: a renamed one would only be a line
    in the log, and the first message would wait for it again."""
    import importlib

    from server.agent.session import TURN_MODULES

    for name in TURN_MODULES:
        module, _, function = name.partition(":")
        loaded = importlib.import_module(module)
        assert not function or callable(getattr(loaded, function))


def test_start_up_answers_without_the_first_turns_modules(tmp_path):
    """A session answers `modus/state` without the tool registry or anything else of a turn:
    those load ahead in the background (or with the first message), never on the way to the
    first answer. (A host of its own: the tests' MemoryHost imports the edit tools.)"""
    probe = """
import sys, anyio
from pathlib import Path
import server.providers
server.providers.preload = lambda *a, **k: None  # what the background would load
from protocol import Settings
from server.agent.session import TURN_MODULES, Session
from server.workspace import Workspace

class Quiet:
    def publish(self, update): pass
    def show_message(self, level, text): pass
    def publish_diagnostics(self, path, diagnostics): pass

root = Path(sys.argv[1])
session = Session(workspace=Workspace(root), host=Quiet(), settings=Settings(), global_modes=root / "g.yaml")
anyio.run(session.refresh)
session.state()
session.close()
turn = {n.partition(":")[0] for n in TURN_MODULES} | {"server.tools", "protocol.messages"}
print(sorted(turn & set(sys.modules)))
"""
    out = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, check=True, cwd=Path(__file__).parent.parent)
    assert out.stdout.strip() == "[]"
