"""A request's body as the provider's API takes it, built from what came since the last request.

An agent's turn sends the same conversation again and again, one step longer each time. Built
from scratch, each request would walk the whole conversation in Python: converting every message
to the API's shape, then the SDK walking it once more (OpenAI's SDK checks each value against its
types: at step 500 of a turn that was most of the step's time), then serialising it all. Here the
conversation is cut into groups, each the messages that make up one stretch of the API's
messages array whatever comes after them (an assistant reply with its results, for OpenAI; a run
of same-role messages, for Anthropic); a group is converted and serialised once, when it is
complete, and kept as JSON bytes; a request joins the kept bytes, adds the last group (the only
one still growing), and hands the body to the SDK's low-level request as it is. A step costs what
came since the last one, and the request's prefix stays byte for byte the same, as the
providers' prompt caches want it.

A request that continues the last one (its messages begin with the last request's, compared in
C: each is the same object, or an equal one) reuses the last request's groups but the last, and
cuts only what came since into groups: the step's Python work does not grow with the conversation.
Another request (a condensed conversation, another conversation of the same model) finds its
complete groups by the identity of their messages: the histories keep each message object for as
long as the conversation is live (server/agent/history.py), and a group that is not the one kept
(a new object, a message cut to fit the window) is simply built again.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any, Callable, NamedTuple, Sequence, TypeVar

T = TypeVar("T")

#: Complete groups kept per model, beyond the last request's (which continues without them): a
#: few conversations' worth, for one that comes back (the bytes and their messages are held).
KEPT_GROUPS = 2048


def dumps(value: Any) -> bytes:
    """JSON as the body carries it: compact, ASCII (no lone surrogate can break the encoding)."""
    return json.dumps(value, separators=(",", ":")).encode()


def split(items: Sequence[T], starts: Callable[[T, T], bool]) -> list[tuple[T, ...]]:
    """`items` cut into groups: a new group begins before each item for which `starts(previous,
    item)` is true."""
    groups: list[tuple[T, ...]] = []
    current: list[T] = []
    for item in items:
        if current and starts(current[-1], item):
            groups.append(tuple(current))
            current = []
        current.append(item)
    if current:
        groups.append(tuple(current))
    return groups


class _Last(NamedTuple):
    """The last request's messages, where each of its groups began, and each group serialised."""

    messages: tuple[Any, ...]
    starts: list[int]
    parts: list[bytes]


class WireCache:
    """The serialised wire form of complete groups, by the identity of their messages."""

    def __init__(self, limit: int = KEPT_GROUPS):
        self.limit = limit
        self._kept: OrderedDict[tuple[int, ...], tuple[tuple[Any, ...], bytes]] = OrderedDict()
        self._once: dict[str, tuple[Any, bytes]] = {}
        self._last: _Last | None = None

    def groups(
        self, messages: tuple[Any, ...], cut: Callable[[Sequence[Any]], list[tuple[Any, ...]]],
        build: Callable[[tuple[Any, ...]], list[Any]],
    ) -> list[bytes]:
        """Each group of `messages` (as `cut` cuts them) serialised (`build` makes its wire items).
        `cut` must cut a continued conversation as it cut its beginning: a group, once followed
        by another, never changes."""
        last, start, parts, starts = self._last, 0, [], []
        if last is not None and last.starts and messages[: len(last.messages)] == last.messages:
            start, parts, starts = last.starts[-1], last.parts[:-1], last.starts[:-1]  # the last group may grow
        new = cut(messages[start:])
        for i, group in enumerate(new):
            starts.append(start)
            parts.append(self.encoded(group, build, complete=i < len(new) - 1))
            start += len(group)
        self._last = _Last(messages, starts, parts)
        return parts

    def __len__(self) -> int:
        return len(self._kept)

    def encoded(self, group: tuple[Any, ...], build: Callable[[tuple[Any, ...]], list[Any]], complete: bool = True) -> bytes:
        """The group's wire items (`build(group)`), serialised and comma-joined; kept when the
        group is `complete` (a group still growing would be kept in vain)."""
        key = tuple(map(id, group))
        kept = self._kept.get(key)
        if kept is not None and all(a is b for a, b in zip(kept[0], group)):  # ids are reused only once freed
            self._kept.move_to_end(key)
            return kept[1]
        data = b",".join(map(dumps, build(group)))
        if complete:
            self._kept[key] = (group, data)  # the messages are held: their ids stay theirs
            if len(self._kept) > self.limit:
                self._kept.popitem(last=False)
        return data


    def once(self, name: str, value: Any, build: Callable[[Any], list[Any]]) -> bytes:
        """`build(value)`'s items serialised and comma-joined, kept under `name` while `value` is
        the same object (a task's system prompt, its tools: the same for every request of a turn)."""
        kept = self._once.get(name)
        if kept is None or kept[0] is not value:
            kept = self._once[name] = (value, b",".join(map(dumps, build(value))))
        return kept[1]


def body(fields: dict[str, Any], raw: dict[str, bytes | list[bytes]]) -> bytes:
    """A JSON object of `fields` (serialised here), then `raw`: JSON serialised already, or a list
    of serialised items that make an array (empty ones left out). The body is joined once: a long
    conversation's bytes are copied one time, not once per level of the object."""
    members = [dumps(k) + b":" + dumps(v) for k, v in fields.items()]
    pieces: list[bytes] = [b"{" + b",".join(members)]
    for key, value in raw.items():
        pieces[-1] += (b"," if members else b"") + dumps(key) + b":"
        members = [b""]
        if isinstance(value, bytes):
            pieces[-1] += value
            continue
        items = [item for item in value if item] if b"" in value else value
        pieces[-1] += b"[" + (items[0] if items else b"")
        pieces.extend(items[1:])
        pieces[-1] += b"]"
    pieces[-1] += b"}"
    return b",".join(pieces)
