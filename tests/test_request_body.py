"""A request's body is built from what came since the last one (server/providers/wire.py): the
same bytes, whether a conversation grew one step at a time or is built afresh."""

from __future__ import annotations

import json
import random

import pytest

from protocol import Model
from server.providers.anthropic import AnthropicModel
from server.providers.base import ChatMessage, ModelLimits, ModelRequest, ToolCallRequest, ToolSchema
from server.providers.openai import OpenAIModel
from server.providers.wire import WireCache, body

TOOLS = (ToolSchema("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}),)


def model(provider: str, **config):
    cls = {"openai": OpenAIModel, "anthropic": AnthropicModel}[provider]
    return cls(Model(provider=provider, model="fake", base_url="http://127.0.0.1:9", **config), ModelLimits())


def call(i: int) -> ToolCallRequest:
    return ToolCallRequest(f"call_{i}", "read_file", {"path": f"f{i}.txt"})


def conversation(seed: int, steps: int) -> list[ChatMessage]:
    """A turn of native calls and results, XML calls answered as user text, other agents' words,
    empty replies, replies with thinking: in a random order of steps."""
    rng = random.Random(seed)
    out = [ChatMessage("user", "Read the files.")]
    for i in range(steps):
        kind = rng.choice(["native", "native", "two", "xml", "quote", "empty", "thinking"])
        if kind == "native":
            out += [ChatMessage("assistant", f"Reading {i}.", (call(i),)), ChatMessage("tool", f"content {i}", tool_call_id=f"call_{i}", tool_name="read_file")]
        elif kind == "two":  # two calls, a user's words between their results (an XML call's result)
            out += [
                ChatMessage("assistant", "", (call(i), call(i + 10_000))),
                ChatMessage("tool", "a", tool_call_id=f"call_{i}", tool_name="read_file"),
                ChatMessage("user", "[list_files] Result:\nx"),
                ChatMessage("tool", "b", tool_call_id=f"call_{i + 10_000}", tool_name="read_file", is_error=True),
            ]
        elif kind == "xml":
            out += [ChatMessage("assistant", "<read_file><path>x</path></read_file>"), ChatMessage("user", "[read_file] Result:\nx")]
        elif kind == "quote":
            out.append(ChatMessage("user", f"[coder said]\nstep {i}"))
        elif kind == "empty":
            out.append(ChatMessage("assistant", "  "))
        else:
            state = {"thinking": [{"type": "thinking", "thinking": "hm", "signature": f"s{i}"}]}
            out += [ChatMessage("assistant", "", (call(i),), state=state), ChatMessage("tool", "r", tool_call_id=f"call_{i}", tool_name="read_file")]
    return out


@pytest.mark.parametrize("provider, config", [("openai", {}), ("anthropic", {}), ("anthropic", {"thinking_budget_tokens": 1024})])
@pytest.mark.parametrize("seed", range(6))
def test_a_body_built_step_by_step_is_the_body_built_afresh(provider, config, seed):
    messages = conversation(seed, 40)
    growing = model(provider, **config)
    for n in range(1, len(messages) + 1):
        request = ModelRequest("You are Modus.", tuple(messages[:n]), TOOLS)
        assert growing._body(request) == model(provider, **config)._body(request), f"after {n} messages"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_conversation_that_changes_behind_the_last_request_is_built_again(provider):
    """A condensed conversation, another conversation, a message cut to fit: not the last request
    continued. The body is right all the same."""
    m = model(provider)
    first, other = conversation(1, 30), conversation(2, 30)
    for messages in (first, other, first[:10], [ChatMessage("user", "[summary]"), *first[-6:]], first):
        request = ModelRequest("s", tuple(messages), TOOLS)
        assert m._body(request) == model(provider)._body(request)


def test_the_openai_body_is_the_apis_shape():
    messages = [
        ChatMessage("user", "go"),
        ChatMessage("assistant", "Two calls.", (call(1), call(2))),
        ChatMessage("tool", "one", tool_call_id="call_1", tool_name="read_file"),
        ChatMessage("user", "[read_file] Result:\nxml"),
        ChatMessage("tool", "two", tool_call_id="call_2", tool_name="read_file"),
    ]
    sent = json.loads(model("openai", max_tokens=100)._body(ModelRequest("sys", tuple(messages), TOOLS)))
    assert sent == {
        "model": "fake", "stream": True, "stream_options": {"include_usage": True}, "max_tokens": 100,
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "Two calls.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "f1.txt"}'}},
                {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "f2.txt"}'}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "one"},
            {"role": "tool", "tool_call_id": "call_2", "content": "two"},  # results right after their call
            {"role": "user", "content": "[read_file] Result:\nxml"},
        ],
        "tools": [{"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": TOOLS[0].parameters}}],
    }


def test_the_anthropic_body_is_the_apis_shape():
    messages = [
        ChatMessage("user", "go"),
        ChatMessage("assistant", " "),  # empty: no message of its own, the user turns around it merge
        ChatMessage("user", "[coder said]\nhi"),
        ChatMessage("assistant", "Reading.", (call(1),)),
        ChatMessage("user", "[read_file] Result:\nxml"),
        ChatMessage("tool", "one", tool_call_id="call_1", tool_name="read_file", is_error=True),
    ]
    sent = json.loads(model("anthropic")._body(ModelRequest("sys", tuple(messages), TOOLS)))
    assert sent == {
        "model": "fake", "max_tokens": 8192, "stream": True, "cache_control": {"type": "ephemeral"}, "system": "sys",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "go"}, {"type": "text", "text": "[coder said]\nhi"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Reading."}, {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "f1.txt"}},
            ]},
            {"role": "user", "content": [  # the result first
                {"type": "tool_result", "tool_use_id": "call_1", "content": "one", "is_error": True},
                {"type": "text", "text": "[read_file] Result:\nxml"},
            ]},
        ],
        "tools": [{"name": "read_file", "description": "Read a file.", "input_schema": TOOLS[0].parameters}],
    }


def test_complete_groups_are_serialised_once_and_the_growing_one_each_time():
    cache, built = WireCache(limit=3), []

    def build(group):
        built.append(group)
        return [list(group)]

    a, b, c = ("a",), ("b",), ("c",)
    assert cache.encoded(a, build) == b'["a"]' and cache.encoded(a, build) == b'["a"]'
    assert cache.encoded(b, build, complete=False) == b'["b"]' and cache.encoded(b, build, complete=False) == b'["b"]'
    assert built == [a, b, b] and len(cache) == 1
    for g in (b, c, ("d",)):
        cache.encoded(g, build)
    assert len(cache) == 3  # the least recently used let go
    cache.encoded(a, build)
    assert built[-1] == a


def test_a_body_joins_what_was_serialised_already():
    assert body({"a": 1}, {"m": [b"1", b"", b"2"], "t": [b'{"x":1},{"y":2}'], "s": b'"sys"'}) == b'{"a":1,"m":[1,2],"t":[{"x":1},{"y":2}],"s":"sys"}'
    assert json.loads(body({"a": 1}, {"m": [], "s": b'"sys"'})) == {"a": 1, "m": [], "s": "sys"}
    assert body({}, {"m": [b"1"]}) == b'{"m":[1]}'
