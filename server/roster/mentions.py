"""@-mentions (SPEC §5, seed 002), pure: no session, no store, no clock.

- `parse_user_message`: what the composer does with a message the user typed.
- `parse_agent_prose`: which agents an agent's finished turn wakes (the stricter rules).
- `default_responder`: who answers a message that mentions no agent.

The user's composer:

- A token is `@` and then `\\w+` (letters, digits, underscore; Unicode). Seed 002 says so in
  so many words: `@code-reviewer` is the token `code` and `@my agent` the token `my`. The token
  is matched like any other: `code` reaches an agent named `code`, else (by prefix) the first
  agent whose name starts with `code`, which may be `code-reviewer`. When the token and the
  hyphenated words right after it spell the name of the agent it reached (`@code-reviewer`
  reaching `code-reviewer`), those words go with the mention, so no `-reviewer` is left in
  the text; which agent is reached is decided by the token alone.
- Matching ignores case: an exact name first (when several names differ only in case, the one
  written exactly as typed, else the first in configuration order), then a prefix (the first
  agent in configuration order whose name starts with the token). A token no agent claims is
  matched against the human handles the same way; a token an agent claims never reaches a
  human. A token that matches nothing stays in the text as it was.
- Mentions are taken out of the text the agents see, and the whitespace and punctuation they
  leave are tidied: `@alice, fix it` gives `fix it`, `thanks @alice.` gives `thanks.`,
  `ask (@alice) about it` gives `ask about it`, a line left empty goes. Human mentions are taken
  out too (they ride the message's metadata). Code is never rewritten.
- Each agent and human is listed once, in order of first appearance, with the first spelling.
- A message with nothing left to do once its mentions are out (blank, or no letter or digit
  remains: `@alice`, `@alice ?`) is `empty`: it starts no agent, not even the default
  responder. A message without mentions is empty only when blank; its text is kept as it is.

Both parsers (decisions where SPEC and seed are silent):

- An `@` glued to the character before it is not a mention: `sam@host.com`, `pkg/@scope`,
  `node@20`. A mention starts the text, or follows whitespace or one of `( [ { *` (so that
  `(@alice)` and `**@alice**` work). SPEC states the rule for agents' prose; the composer
  applies it too, so that an e-mail address typed by the user does not mention its host.
- Code is not prose: no mention inside a fenced code block (``` or ~~~, at least three, up to
  three spaces of indentation, any info string; closed by a fence of the same character at
  least as long) or an inline code span (a run of n backticks closed by the next run of
  exactly n, within one paragraph). An unclosed fence runs to the end of the text. The
  composer applies this too: a pasted `@app.route` must not start an agent named `app-builder`
  and lose its `@app`. Indented (4-space) code blocks are not recognised, because list items
  are indented the same way.

An agent's prose, on top of that:

- A token keeps its hyphens (`@code-reviewer` is one token); a hyphen, dot, comma or colon at
  the end is punctuation, not part of the name. A token followed by `/`, `@` or a dot and a
  word character (`@types/node`, `@alice.py`) is a path or an address, not a mention.
- Exact names only, case ignored on the whole token, never by prefix. A token that matches two
  agents (names differing only in case) reaches no one and is refused as "ambiguous", even when
  one of them is the writer itself.
- Self-mentions and repeated names are ignored; unresolved names are silent. The first three
  agents named are the targets; every other one is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Literal, Protocol, Sequence

from .responder import AgentRef, default_responder  # noqa: F401 - default_responder: re-exported

#: The most agents one turn of an agent can wake.
MAX_MENTIONS_PER_TURN = 3
AMBIGUOUS = "ambiguous"
TOO_MANY = f"more than {MAX_MENTIONS_PER_TURN} mentions in one turn"




class MemberRef(Protocol):
    """A human member of the workspace (`protocol.Member` is one)."""

    @property
    def handle(self) -> str: ...

    @property
    def name(self) -> str: ...


@dataclass(frozen=True)
class Mention:
    """One mention of a user's message, as the wire reports it (`protocol.Mention`)."""

    raw: str  # as typed, e.g. "@arch"
    kind: Literal["agent", "human"]
    name: str  # the agent's name or the human's handle


@dataclass(frozen=True)
class Composed:
    """A user's message read by the composer."""

    #: What the agents see: the message without its mentions.
    text: str
    #: The agents it starts, in order of first mention; each gets the whole `text`. Empty when
    #: it mentions no agent (the default responder answers) or when it is `empty`.
    agents: list[str]
    #: Every agent and human it mentions, once each, in order of first appearance.
    mentions: list[Mention]
    #: Nothing to do once the mentions are out: the message starts no one.
    empty: bool


@dataclass(frozen=True)
class Refusal:
    """A mention that wakes no one, and why (posted to the conversation by `refusal_message`)."""

    mention: str  # e.g. "@erin"
    reason: str


@dataclass(frozen=True)
class ProseMentions:
    """What an agent's finished turn asks for."""

    #: The agents to wake, in order of appearance: exact names, at most three, not the writer.
    targets: list[str]
    #: The mentions refused by the parser ("ambiguous", more than three).
    refusals: list[Refusal]


# ------------------------------------------------------------------ the user's composer

_USER_TOKEN = re.compile(r"@(\w+)")
_HYPHEN_TAIL = re.compile(r"(?:-\w+)+")
_PAIRS = (("**", "**"), ("*", "*"), ("(", ")"), ("[", "]"), ("{", "}"))
_CLOSERS = tuple(".,:;!?)]}")


def parse_user_message(text: str, agents: Sequence[AgentRef], members: Sequence[MemberRef]) -> Composed:
    agent_names = [a.name for a in agents]
    handles = [m.handle for m in members]
    spans: list[tuple[int, int]] = []
    mentions: dict[tuple[str, str], Mention] = {}
    for start, end in _prose_segments(text):
        for m in _USER_TOKEN.finditer(text, start, end):
            if not _free(text, m.start()):
                continue
            token, stop = m[1], m.end()
            name = _resolve(token, agent_names)
            kind: Literal["agent", "human"] = "agent"
            if name is None:
                name, kind = _resolve(token, handles), "human"
            if name is None:
                continue  # stays as text
            if kind == "agent" and (tail := _HYPHEN_TAIL.match(text, stop, end)):
                if (token + tail[0]).casefold() == name.casefold():
                    stop = tail.end()
            spans.append((m.start(), stop))
            mentions.setdefault((kind, name), Mention(text[m.start() : stop], kind, name))
    stripped = _strip(text, spans)
    empty = not stripped.strip() or (bool(spans) and re.search(r"\w", stripped) is None)
    started = [] if empty else [m.name for m in mentions.values() if m.kind == "agent"]
    return Composed(stripped, started, list(mentions.values()), empty)


def _resolve(token: str, names: Sequence[str]) -> str | None:
    """Exact (case ignored; the exact spelling first), then the first name the token starts."""
    key = token.casefold()
    exact = [n for n in names if n.casefold() == key]
    if exact:
        return token if token in exact else exact[0]
    return next((n for n in names if n.casefold().startswith(key)), None)


def _strip(text: str, spans: list[tuple[int, int]]) -> str:
    """The text without the spans, tidied around each of them; a line they emptied goes. Only
    spaces and punctuation next to a span are touched: the rest (code above all) is kept."""
    if not spans:
        return text
    out, cut = "", 0
    for start, stop in spans:
        out += text[cut:start]
        for opener, closer in _PAIRS:  # "(@alice)" leaves nothing
            if out.endswith(opener) and text.startswith(closer, stop):
                out, stop = out[: -len(opener)], stop + len(closer)
                break
        line = out[out.rfind("\n") + 1 :]
        at_line_start = not line.strip()
        if at_line_start:
            out = out[: len(out) - len(line)]  # its indentation goes with it
            if text.startswith((",", ":", ";"), stop):
                stop += 1  # "@alice, fix it": the comma goes with the name
        if stop == len(text) or text.startswith(_CLOSERS + ("\n", "\r"), stop):
            out = out.rstrip(" \t")  # "thanks @alice." -> "thanks."
        elif at_line_start or out.endswith((" ", "\t")):
            while text.startswith((" ", "\t"), stop):
                stop += 1
        cut = stop
    out += text[cut:]
    lines = [new for old, new in zip(text.split("\n"), out.split("\n")) if new.strip() or not old.strip()]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


# ------------------------------------------------------------------ an agent's prose

#: Atomic, so that `@alice.py` is refused whole rather than read as `@alic`.
_PROSE_TOKEN = re.compile(r"@((?>\w+(?:-\w+)*))(?![/@]|\.\w)")


def parse_agent_prose(text: str, agents: Sequence[AgentRef], self_name: str) -> ProseMentions:
    targets: list[str] = []
    refusals: list[Refusal] = []
    seen: set[str] = set()
    for start, end in _prose_segments(text):
        for m in _PROSE_TOKEN.finditer(text, start, end):
            key = m[1].casefold()
            if not _free(text, m.start()) or key in seen:
                continue
            named = [a.name for a in agents if a.name.casefold() == key]
            if not named:
                continue  # unresolved: silent
            seen.add(key)
            if len(named) > 1:
                refusals.append(Refusal(m[0], AMBIGUOUS))
            elif named[0] == self_name:
                continue
            elif len(targets) < MAX_MENTIONS_PER_TURN:
                targets.append(named[0])
            else:
                refusals.append(Refusal(m[0], TOO_MANY))
    return ProseMentions(targets, refusals)


# ------------------------------------------------------------------ shared: boundaries and code

_OPENERS = "([{*"


def _free(text: str, at: int) -> bool:
    """Whether the `@` at `at` starts a mention rather than being glued to what precedes it."""
    return at == 0 or text[at - 1].isspace() or text[at - 1] in _OPENERS


_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*(?:\r?\n)")
_TICKS = re.compile(r"`+")


def _prose_segments(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) spans of `text` that are not code, in order."""
    pos = 0
    for start, end in _code_spans(text):
        if start > pos:
            yield pos, start
        pos = end
    if pos < len(text):
        yield pos, len(text)


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Fenced blocks (to the end of the text when unclosed) and inline code spans, in order."""
    spans: list[tuple[int, int]] = []
    fence: tuple[str, int] | None = None  # the opening run's character and length
    prose_start = block_start = 0
    for line in _LINE.finditer(text):
        if not line[0]:
            break
        body = line[0].rstrip("\r\n")
        if fence is None:
            m = _FENCE_OPEN.fullmatch(body)
            if m and not (m[1][0] == "`" and "`" in m[2]):  # a ``` info string has no backtick
                spans += _inline_spans(text, prose_start, line.start())
                fence, block_start = (m[1][0], len(m[1])), line.start()
        else:
            m = _FENCE_CLOSE.fullmatch(body)
            if m and m[1][0] == fence[0] and len(m[1]) >= fence[1]:
                spans.append((block_start, line.end()))
                fence, prose_start = None, line.end()
    if fence is not None:
        spans.append((block_start, len(text)))
    else:
        spans += _inline_spans(text, prose_start, len(text))
    return spans


def _inline_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Code spans between start and end: a run of n backticks up to the next run of exactly n
    in the same paragraph; a run without its match is plain text."""
    spans: list[tuple[int, int]] = []
    bounds = [start, *(m.end() for m in _PARAGRAPH_BREAK.finditer(text, start, end)), end]
    for para_start, para_end in zip(bounds, bounds[1:]):
        pos = para_start
        while opening := _TICKS.search(text, pos, para_end):
            pos = opening.end()
            for closing in _TICKS.finditer(text, opening.end(), para_end):
                if len(closing[0]) == len(opening[0]):
                    spans.append((opening.start(), closing.end()))
                    pos = closing.end()
                    break
    return spans


# ------------------------------------------------------------------ who answers
