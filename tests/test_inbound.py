"""server/inbound.py: the depth bound and the lone-surrogate check every client message passes."""

from __future__ import annotations

import json

import pytest

from server.inbound import (
    MAX_DEPTH,
    Flaw,
    TooDeep,
    decode,
    lone_surrogate,
    scan,
    verdict,
    without_lone_surrogates,
)


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize(
    "value, depth",
    [(1, 0), ("x", 0), ([], 1), ({}, 1), ([1, "a"], 1), ([[]], 2), ({"a": [{"b": None}]}, 3), ([[], [[[]]], []], 4)],
)
def test_scan_counts_levels_of_lists_and_dicts(value, depth):
    assert not scan(value, depth).deep
    assert depth == 0 or scan(value, depth - 1).deep


def test_scan_takes_any_depth_without_recursion():
    value: list = []
    for _ in range(100_000):  # no json.loads could build this; a list of lists can
        value = [value]
    assert scan(value).deep
    assert not scan(value, 100_001).deep


@pytest.mark.parametrize(
    "value, lone",
    [("a\ud800", True), (["x", {"k": "\udfff"}], True), ({"\udc00": 1}, True), ({"a": ["\U0001f600", "é", 1]}, False)],
)
def test_scan_finds_lone_surrogates_in_strings_and_keys(value, lone):
    assert scan(value) == (False, lone)


@pytest.mark.parametrize("size", [100, 20_000])  # a glance at the text, or a walk
def test_either_way_a_message_is_checked_the_same(size):
    pad = b"x" * size
    assert decode(b'{"pad":"%s","t":"\\ud800"}' % pad)[1] == Flaw(("t",), r"invalid Unicode: a lone surrogate (\ud800) at character 1")
    assert decode(b'{"pad":"%s","t":%s}' % (pad, nested(MAX_DEPTH).encode()))[1].depth
    assert decode(b'{"pad":"%s","t":[%s]}' % (pad, b"[]," * 300 + b"[]"))[1] is None


def test_a_message_too_deep_for_json_is_too_deep_not_a_recursion_error():
    with pytest.raises(TooDeep, match=f"nested deeper than {MAX_DEPTH} levels"):
        decode(nested(100_000).encode())


@pytest.mark.parametrize("levels, flawed", [(MAX_DEPTH, False), (MAX_DEPTH + 1, True), (500, True)])
def test_the_depth_bound_is_exact(levels, flawed):
    value, flaw = decode(nested(levels).encode())
    assert (flaw == Flaw((), f"nested deeper than {MAX_DEPTH} levels", depth=True)) == flawed
    assert flawed or flaw is None


def test_brackets_inside_strings_do_not_count():
    text = json.dumps({"text": "[" * 10_000})
    assert decode(text.encode()) == ({"text": "[" * 10_000}, None)


@pytest.mark.parametrize(
    "text, where, what",
    [
        (r'{"params":{"text":"ab\ud800c"}}', ("params", "text"), r"invalid Unicode: a lone surrogate (\ud800) at character 3"),
        (r'{"params":{"a":["ok","\udfff"]}}', ("params", "a", 1), r"invalid Unicode: a lone surrogate (\udfff) at character 1"),
        (r'{"params":{"x\uDC00":1}}', ("params",), r"invalid Unicode in a key: a lone surrogate (\udc00) at character 2"),
        (r'{"method":"m\ud800","params":{"t":"\ud800"}}', ("method",), r"invalid Unicode: a lone surrogate (\ud800) at character 2"),
        (r'{"params":{"a":"\ud800","b":"\udbff"}}', ("params", "a"), r"invalid Unicode: a lone surrogate (\ud800) at character 1"),
    ],
)
def test_the_first_lone_surrogate_is_named_where_it_is(text, where, what):
    assert decode(text.encode())[1] == Flaw(where, what)


@pytest.mark.parametrize("text", [r'"\ud83d\ude00"', '"\U0001f600"', r'"\\ud800"', r'"\u00e9 \uffff"'])
def test_pairs_and_escaped_backslashes_are_not_lone_surrogates(text):
    assert decode(text.encode())[1] is None


def test_raw_surrogate_bytes_are_not_utf8():
    with pytest.raises(UnicodeDecodeError):
        decode(b'{"text":"\xed\xa0\x80"}')  # json.loads alone would pass them through


def test_without_lone_surrogates_keeps_everything_else():
    value = {"a\ud800": ["x\udfffy", "\U0001f600", 1, None, {"b": "\ud800"}]}
    assert without_lone_surrogates(value) == {"a\ufffd": ["x\ufffdy", "\U0001f600", 1, None, {"b": "\ufffd"}]}
    assert lone_surrogate(without_lone_surrogates(value)) is None


DEEP = Flaw((), "nested deeper than 128 levels", depth=True)
LONE = Flaw(("params", "text"), r"invalid Unicode: a lone surrogate (\ud800) at character 1")


@pytest.mark.parametrize(
    "message, flaw, expected",
    [
        ({"jsonrpc": "2.0", "id": 5, "method": "m", "params": {}}, DEEP,
         ("answer", "Parse error: nested deeper than 128 levels", 5, -32700)),
        ({"jsonrpc": "2.0", "id": [1], "method": "m"}, DEEP, ("answer", "Parse error: nested deeper than 128 levels", None, -32700)),
        ([[[]]], DEEP, ("answer", "Parse error: nested deeper than 128 levels", None, -32700)),
        ({"jsonrpc": "2.0", "method": "m", "params": {}}, DEEP, ("drop", "dropping m: nested deeper than 128 levels", None, 0)),
        ({"jsonrpc": "2.0", "id": 7, "result": []}, DEEP, ("fail", "Parse error in the answer to 7: nested deeper than 128 levels", 7, -32700)),
        ({"jsonrpc": "2.0", "id": 5, "method": "m", "params": {"text": "\ud800"}}, LONE,
         ("answer", r"Invalid params for m: text: invalid Unicode: a lone surrogate (\ud800) at character 1", 5, -32602)),
        ({"jsonrpc": "2.0", "id": "\ud800", "method": "m"}, Flaw(("id",), "invalid Unicode: …"),
         ("answer", "Invalid Request: id: invalid Unicode: …", None, -32600)),
    ],
)
def test_verdicts(message, flaw, expected):
    assert verdict(message, flaw)[:4] == expected


def test_what_cannot_be_answered_goes_on_with_its_lone_surrogates_replaced():
    notification = {"jsonrpc": "2.0", "method": "m", "params": {"text": "a\ud800"}}
    assert verdict(notification, LONE) == (
        "go on", r"m: text: invalid Unicode: a lone surrogate (\ud800) at character 1: replaced with U+FFFD", None, 0,
        {"jsonrpc": "2.0", "method": "m", "params": {"text": "a\ufffd"}})
    response = {"jsonrpc": "2.0", "id": 3, "result": {"feedback": "\ud800"}}
    assert verdict(response, Flaw(("result", "feedback"), "…")).message == {"jsonrpc": "2.0", "id": 3, "result": {"feedback": "\ufffd"}}


def test_acp_words_its_invalid_params_its_own_way():
    message = {"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": {"text": "\ud800"}}
    assert verdict(message, LONE, invalid_params="Invalid params").text.startswith("Invalid params: text: ")
