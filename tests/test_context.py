"""The parts of the context window: the tokenizer, what Modus knows of models, the summary in
place of the older messages as each history reads it, and where a conversation is cut."""

from __future__ import annotations

import random

import pytest

from protocol import Model
from server.agent.context import CUT_MARKER, Fitted, _older, _summarised, transcript
from server.agent.history import SUMMARY_HEADER, ModelHistory
from server.providers.catalog import DEFAULT_WINDOW, price_of, window_of
from server.providers.tokens import TOKENIZER, bound
from server.state import StoredMessage


def test_the_tokenizer_counts_as_cl100k_base_does():
    assert TOKENIZER.count("hello world") == 2
    assert TOKENIZER.count("") == 0
    assert TOKENIZER.count("def f(x):\n    return x + 1\n") == 11


@pytest.mark.parametrize("seed", range(5))
def test_the_byte_length_bounds_the_tokens_of_any_text(seed):
    rng = random.Random(seed)
    alphabet = "abc XYZ 123 \n\t{}()[];:.,'\"é中文🙂\u200b"
    text = "".join(rng.choice(alphabet) for _ in range(5_000))
    assert TOKENIZER.count(text) <= bound(text)


def test_a_cut_keeps_the_beginning_and_the_end_within_the_limit():
    text = "\n".join(f"line {i}" for i in range(2_000))
    cut, left_out = TOKENIZER.cut(text, 400, CUT_MARKER)
    assert cut.startswith("line 0\n") and cut.endswith("line 1999")
    assert f"[… {left_out} tokens cut here" in cut
    assert TOKENIZER.count(cut) <= 400 + TOKENIZER.count(CUT_MARKER) + 2
    assert left_out == TOKENIZER.count(text) - 400
    assert TOKENIZER.cut("short", 400, CUT_MARKER) == ("short", 0)


def test_windows_and_prices_of_known_and_unknown_models():
    assert window_of(Model(provider="anthropic", model="claude-sonnet-4-5-20250929")) == 200_000  # a dated id
    assert window_of(Model(provider="anthropic")) == 1_000_000  # the provider's default model
    assert price_of(Model(provider="anthropic")).output == 15.0
    assert window_of(Model(provider="openai", model="llama3.1")) == DEFAULT_WINDOW and price_of(Model(provider="openai", model="llama3.1")) is None
    assert window_of(Model(provider="openai", model="llama3.1", context_window=8192)) == 8192
    assert window_of(Model(provider="scripted")) == DEFAULT_WINDOW and price_of(Model(provider="scripted", model="gpt-5")) is None


def stored(role: str, text: str, agent: str | None = "modus", **metadata) -> StoredMessage:
    return StoredMessage(f"m-{text[:20]}", "c1", role, text, agent if role != "tool" else None, metadata)


def native(call_id: str) -> dict:
    return {"id": call_id, "name": "read_file", "arguments": {"path": "a"}, "native": True}


CONVERSATION = [
    stored("user", "first"),
    stored("assistant", "reading", toolCalls=[native("a")]),
    stored("tool", "content of a", toolCallId="a", name="read_file"),
    stored("assistant", "a says hi"),
    stored("user", "second"),
    stored("assistant", "reading b", toolCalls=[native("b")]),
    stored("tool", "content of b", toolCallId="b", name="read_file"),
]


def marker(keep: int, agent: str = "modus") -> StoredMessage:
    return stored("system", "Condensed.", agent, condensed={"agent": agent, "keep": keep, "summary": "THE SUMMARY"})


def test_a_history_read_again_puts_the_summary_in_place_of_what_it_replaced():
    history = ModelHistory([*CONVERSATION, marker(3), stored("assistant", "b says bye")], "modus")
    assert [(m.role, m.text) for m in history.messages] == [
        ("user", f"{SUMMARY_HEADER}\n\nTHE SUMMARY"),
        ("user", "second"),
        ("assistant", "reading b"),
        ("tool", "content of b"),
        ("assistant", "b says bye"),
    ]
    assert len(history.bounds) == len(history.messages) + 1 and history.measured is None


def test_another_agents_summary_is_not_this_ones():
    history = ModelHistory([*CONVERSATION[:4], marker(1, agent="coder")], "modus")
    assert [m.text for m in history.messages] == ["first", "reading", "content of a", "a says hi"]


def test_what_is_kept_never_starts_with_a_tool_result():
    history = ModelHistory(CONVERSATION, "modus")
    fitted = Fitted(history, 100_000)
    sizes = [fitted.tokens(i) for i in range(len(history.messages))]
    # a budget that holds the last two messages only (the call's result and the call): both kept
    assert _older(history, fitted, sizes[-1] + sizes[-2]) == 5
    # a budget that holds the result alone: it cannot be kept without its call, so all is summarised
    assert _older(history, fitted, sizes[-1]) == len(CONVERSATION)
    one_exchange = ModelHistory(CONVERSATION[:2], "modus")
    assert _older(one_exchange, Fitted(one_exchange, 100_000), 10**6) == 1  # the request, summarised; its reply kept
    assert _older(ModelHistory([], "modus"), fitted, 10**6) == 0  # nothing to summarise


async def test_a_message_too_large_is_sent_cut_and_the_history_keeps_it_whole():
    big = "\n".join(f"row {i} of the table" for i in range(3_000))
    history = ModelHistory([stored("user", "read it"), stored("assistant", "ok", toolCalls=[native("a")]), stored("tool", big, toolCallId="a", name="read_file")], "modus")
    fitted = Fitted(history, 8_000)
    sent = await fitted.messages()
    assert sent[:2] == history.messages[:2] and history.messages[2].text == big
    assert "tokens cut here" in sent[2].text and sent[2].tool_call_id == "a"
    assert fitted.tokens(2) <= 8_000 // 4 + 50
    assert await fitted.messages() == sent and history.fits[2][2][0] is sent[2]  # cut once


def test_older_messages_more_than_one_request_takes_are_summarised_from_the_first_and_the_newest():
    history = ModelHistory(CONVERSATION, "modus")
    fitted = Fitted(history, 100_000)
    sizes = [fitted.tokens(i) for i in range(len(history.messages))]
    assert _summarised(history.messages, fitted, 7, sum(sizes)) == history.messages  # all fit
    # room for the first and the last two: the result's call comes with it, the one between is left out
    said = _summarised(history.messages, fitted, 7, sizes[0] + sizes[5] + sizes[6])
    assert [m.text for m in said] == ["first", "[4 messages left out here: more than one request can take.]", "reading b", "content of b"]
    # room for the first and the last only: a result without its call is not sent
    said = _summarised(history.messages, fitted, 7, sizes[0] + sizes[6])
    assert [m.text for m in said] == ["first", "[6 messages left out here: more than one request can take.]"]


async def test_long_messages_are_counted_off_the_loop_as_they_would_be_on_it():
    log = "\n".join(f"2026-12-01 12:00:{i % 60:02d} worker {i} finished its job" for i in range(4_000))  # ~190 KB
    stored_log = [stored("user", "what went wrong?"), stored("assistant", "reading", toolCalls=[native("a")]), stored("tool", log, toolCallId="a", name="read_file")]
    history = ModelHistory(stored_log, "modus")
    fitted = Fitted(history, 10**7)
    await fitted.count()
    assert len(history.counts) == 4  # all three counted, by the worker thread
    inline = ModelHistory(stored_log, "modus")
    assert history.counts == Fitted(inline, 10**7)._counted(3)


def test_the_summary_request_reads_the_conversation_as_one_text():
    history = ModelHistory([*CONVERSATION[:3], stored("tool", "ignored")], "modus")
    assert transcript(history.messages) == (
        "<conversation>\n[user]\nfirst\n\n[assistant]\nreading\n[calls read_file] {\"path\": \"a\"}\n\n"
        "[result of read_file]\ncontent of a\n</conversation>"
    )
