"""What a client sends, checked before anything else reads it: the LSP and ACP transports decode
every message here.

Two things in a JSON message would reach code that cannot take them:

- **Nesting.** json, pydantic, cattrs, json.dumps and repr recurse, a Python frame or more for
  each level of a value: 200 KB of `[[[[…` ends json.loads with RecursionError, and a value it
  still takes (900 levels) can end structuring, validating or echoing it. A message that cannot
  be decoded for its nesting is an error here like any other that is not JSON, and one nested
  deeper than MAX_DEPTH has a Flaw, before anything recurses on it.
- **Lone surrogates.** A JSON escape (`"\\ud800"`) can name one half of a UTF-16 pair; Python
  keeps it in the string, which then cannot be encoded as UTF-8: SQLite, files and subprocesses
  fail on it. The Flaw says where it is (`params.text`, character 3), for the error to name.

What a transport does with a flawed message is `verdict`'s: a request is answered with an error,
a response fails the request it answers, a notification is dropped, all with a log line; lone
surrogates in what cannot be answered (a notification, a response) become U+FFFD instead.

Both checks cost next to nothing (see `flaw`): about a microsecond on a usual request, a
few on a large document's text, next to the tens json.loads takes.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

#: The deepest a message may nest (the message itself is level 1, its params level 2). LSP and
#: ACP need about ten; Rust's serde_json stops at 128 too. Everything the server does with a
#: message (cattrs, pydantic, json.dumps, repr) takes this many levels with room to spare.
MAX_DEPTH = 128
#: Up to this many characters a message is checked as text (C speed, by the character); a
#: longer one by walking its values (see `flaw`).
GLANCE = 16 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

# Lone surrogates reach a string only through an escape (the text itself is UTF-8, which has
# none); json.loads joins an escaped pair (an emoji) into one character.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")

Path = tuple[str | int, ...]


class TooDeep(ValueError):
    """A message nested so deeply that json.loads could not decode it."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_DEPTH} levels")


@dataclass(frozen=True)
class Flaw:
    """Why a decoded message is not handled as it is: where (keys and indexes from the message's
    top; empty for the whole message) and what."""

    where: Path
    what: str
    depth: bool = False  # nested too deeply (else: a lone surrogate)

    @property
    def in_params(self) -> bool:
        return self.where[:1] == ("params",)

    @property
    def field(self) -> str:
        """Where, as an error message names it: dotted, from inside `params` when it is there."""
        path = self.where[1:] if self.in_params and len(self.where) > 1 else self.where
        return ".".join(str(p) for p in path)


def decode(data: bytes) -> tuple[Any, Flaw | None]:
    """A message's JSON value and its flaw, if it has one. ValueError when it has no value: not
    UTF-8 (a BOM is allowed), not JSON, or nested too deeply to decode at all (TooDeep)."""
    text = data.decode("utf-8-sig")  # strictly: json.loads would let surrogates encoded as bytes through
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep() from None
    return value, flaw(value, text)


def flaw(value: Any, text: str) -> Flaw | None:
    """What is wrong with `value`, decoded from `text`; None for nearly every message.

    A message of up to GLANCE characters (nearly all) is glanced at as text: with no more
    brackets than MAX_DEPTH it cannot nest too deeply, and with no `\\uD800`-`\\uDFFF` escape no
    string of it holds a lone surrogate. A longer one (a document's text, mostly) is walked
    instead, which costs by its values, not by its characters."""
    if len(text) <= GLANCE:
        deep = text.count("[") + text.count("{") > MAX_DEPTH and scan(value).deep
        lone = not deep and _SURROGATE_ESCAPE.search(text) is not None and scan(value).lone  # or an escaped pair
    else:
        deep, lone = scan(value)
    if deep:
        return Flaw((), f"nested deeper than {MAX_DEPTH} levels", depth=True)
    return lone_surrogate(value) if lone else None


class Scan(NamedTuple):
    deep: bool  # nested more levels than the limit
    lone: bool  # a string or a key holds a lone surrogate (not looked for once `deep`)


def scan(value: Any, limit: int = MAX_DEPTH) -> Scan:
    """Whether `value` nests lists and dicts more than `limit` levels deep (`[]` is one level),
    and whether one of its strings holds a lone surrogate: level by level, without recursion,
    never further down than level `limit` + 1."""
    lone = False
    items: list[Any] = [value]  # the values of one level
    for depth in itertools.count(1):
        level = []  # its lists and dicts
        for item in items:
            kind = type(item)
            if kind is str:
                lone = lone or _lone_in(item)
            elif kind is dict or kind is list:
                level.append(item)
        if not level:
            return Scan(False, lone)
        if depth > limit:
            return Scan(True, lone)
        items = []
        for container in level:
            if type(container) is dict:
                items.extend(container)  # its keys
                items.extend(container.values())
            else:
                items.extend(container)
    raise AssertionError("not reached")


def lone_surrogate(value: Any) -> Flaw | None:
    """The first string (or key) holding a lone surrogate, in document order; None when none does.
    Without recursion."""
    stack: list[tuple[Any, Path]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if problem := _invalid(item):
                return Flaw(path, f"invalid Unicode: {problem}")
        elif isinstance(item, dict):
            for key in item:
                if problem := _invalid(key):
                    return Flaw(path, f"invalid Unicode in a key: {problem}")
            stack.extend((v, (*path, k)) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((v, (*path, i)) for i, v in reversed(list(enumerate(item))))
    return None


def _lone_in(text: str) -> bool:
    """Whether `text` holds a lone surrogate; encoding finds out faster than a search."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _invalid(text: str) -> str | None:
    if text.isascii() or (found := _SURROGATE.search(text)) is None:
        return None
    return f"a lone surrogate (\\u{ord(found.group()):04x}) at character {found.start() + 1}"


def without_lone_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate replaced by U+FFFD: one UTF-16 unit for another, so that
    positions in an editor's text still hold. Recursive: for a value no deeper than MAX_DEPTH."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    return value


def valid_id(msg_id: Any) -> bool:
    """JSON-RPC ids, as LSP and ACP take them: integers or strings."""
    return isinstance(msg_id, str) or type(msg_id) is int


class Verdict(NamedTuple):
    """What a transport does with a flawed message:

    - `answer`: send the client the error `code`, `text` with `msg_id` (None: it cannot be read);
    - `fail`: a response: the server's request `msg_id` fails with that error;
    - `drop`: a notification: nothing but the log line `text`;
    - `go on`: handle `message` instead (its lone surrogates replaced), after the log line `text`.
    """

    action: Literal["answer", "fail", "drop", "go on"]
    text: str
    msg_id: Any = None
    code: int = 0
    message: Any = None


def verdict(message: Any, flaw: Flaw, invalid_params: str = "Invalid params for {method}") -> Verdict:
    """The Verdict on `message`, which has `flaw`; `invalid_params` starts a -32602 message."""
    fields = message if isinstance(message, dict) else {}
    msg_id, method = fields.get("id"), fields.get("method")
    if flaw.depth:
        code, text = PARSE_ERROR, f"Parse error: {flaw.what}"
    elif flaw.in_params and isinstance(method, str) and not _invalid(method):
        code, text = INVALID_PARAMS, f"{invalid_params.format(method=method)}: {flaw.field}: {flaw.what}"
    else:
        code, text = INVALID_REQUEST, f"Invalid Request: {flaw.field or 'the message'}: {flaw.what}"
    readable = valid_id(msg_id) and not (isinstance(msg_id, str) and _invalid(msg_id))
    if isinstance(method, str) and "id" in fields:  # a request
        return Verdict("answer", text, msg_id if readable else None, code)
    if isinstance(method, str) or (method is None and "id" in fields and readable):  # a notification, a response
        what = method if isinstance(method, str) else f"the answer to {msg_id}"
        if not flaw.depth:
            return Verdict("go on", f"{what}: {flaw.field}: {flaw.what}: replaced with U+FFFD", message=without_lone_surrogates(message))
        if isinstance(method, str):
            return Verdict("drop", f"dropping {what}: {flaw.what}")
        return Verdict("fail", f"Parse error in {what}: {flaw.what}", msg_id, code)
    return Verdict("answer", text, None, code)
