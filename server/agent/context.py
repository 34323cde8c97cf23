"""The context window: what a request takes of the model's window, and condensing the
conversation before it would take too much.

What a request takes is the provider's own count of the last request (input, cache reads and
writes, and its reply's output) plus what came since, counted with the tokenizer
(providers/tokens.py). Nothing is counted while an upper bound shows there is room.

Before a request would take more than `condenseThreshold` % of the window, the model summarises
the older part of the conversation; the summary replaces that part in what the model sees from
then on (a marker in the store says where and with what), and the store keeps every message.
A single message too large for the window (a tool result, mostly) is sent cut, with a marker.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Sequence

import anyio

import protocol  # the messages (protocol.messages) load with the first one used
from protocol import ContextInfo

from ..errors import BadRequest
from ..providers import ChatMessage, ModelError, ModelRequest, ToolSchema
from ..providers.base import Usage
from ..providers.catalog import context_info, window_of
from ..providers.tokens import TOKENIZER, bound
from ..state import StoredMessage
from ..state.records import new_id
from .history import IMAGE_TOKENS, PER_MESSAGE, Measured, ModelHistory, calls_text, summary_message

if TYPE_CHECKING:
    from .session import Session
    from .task import Task

#: Messages of more than this many bytes are counted in a worker thread.
OFF_LOOP_BYTES = 64 * 1024
#: One message takes at most this share of the window (1/4); more is cut out of its middle.
MESSAGE_SHARE = 4
#: After condensing, the newest messages kept as they are take at most this share (1/4) of the
#: threshold, and of what the messages took: the rest is summarised.
KEEP_SHARE = 4

CUT_MARKER = (
    "\n\n[… {cut} tokens cut here: this was too large for the context window. "
    "Ask for a smaller part (a line range, a narrower search) to see them. …]\n\n"
)

CONDENSE_SYSTEM = (
    "You summarise a coding agent's conversation so that the agent can go on with its work from your "
    "summary alone: the messages you summarise will not be shown to it again. Answer with the summary "
    "and nothing else; call no tool."
)

#: The images of the summarised part that go with the summary request, at most (the newest).
CONDENSE_IMAGES = 10

CONDENSE_ASK = """Summarise the conversation above (between the conversation tags) for the agent that goes on with it. Under these headings:

1. Task: what the user asked for, in their own words where they matter, with every constraint and preference they gave.
2. Decisions: what was decided and why, and the approaches tried and given up.
3. Files: every file read, created or changed, with what matters about it (exact paths).
4. Plan: the plan being followed, its steps, and which of them are done.
5. Todos: the todo list, each item with its status.
6. Now: what was being done when this summary was asked for, and the next step.

Quote names, paths, commands and error messages exactly. Leave out what no longer matters."""

_PROMPTS: dict[tuple[int, bool], int] = {}  # (prompt key, exact) → its tokens


def prompt_key(system: str, tools: Sequence[ToolSchema]) -> int:
    return hash((system, tuple(t.name for t in tools)))


def _prompt_text(system: str, tools: Sequence[ToolSchema]) -> str:
    return system + "".join(t.name + t.description + json.dumps(t.parameters) for t in tools)


def _prompt_tokens(system: str, tools: Sequence[ToolSchema], exact: bool) -> int:
    """The system prompt's and the tool definitions' tokens (exact: counted, else the bound),
    worked out once per prompt."""
    key = (prompt_key(system, tools), exact)
    if key not in _PROMPTS:
        text = _prompt_text(system, tools)
        _remember(key, TOKENIZER.count(text) if exact else bound(text))
    return _PROMPTS[key]


def _remember(key: tuple[int, bool], tokens: int) -> None:
    if len(_PROMPTS) > 256:
        _PROMPTS.clear()
    _PROMPTS[key] = tokens


async def _tokenizer_and_prompt(system: str, tools: Sequence[ToolSchema]) -> None:
    """The tokenizer loaded and the prompt counted, both in a worker thread: a new task's prompt
    (some 20 KB) is the one long count, and the tokenizer lets other threads run while it counts,
    so the other agents' turns go on meanwhile."""
    await TOKENIZER.ready()
    key = (prompt_key(system, tools), True)
    if key not in _PROMPTS:
        _remember(key, await anyio.to_thread.run_sync(TOKENIZER.count, _prompt_text(system, tools)))


def _message_tokens(m: ChatMessage) -> int:
    return TOKENIZER.count(m.text) + TOKENIZER.count(calls_text(m)) + IMAGE_TOKENS * len(m.images) + PER_MESSAGE


class Fitted:
    """A history as the next request sends it: each message within its share of the window.

    A request's cost grows with what came since the one before, not with the conversation: the
    history keeps prefix sums of its messages' bounds and counts, and the messages too large,
    each looked at once."""

    def __init__(self, history: ModelHistory, window: int):
        self.history = history
        self.limit = window // MESSAGE_SHARE

    def _big(self) -> dict[int, tuple[ChatMessage, int] | None]:
        h = self.history
        limit, seen, big = h.fits if h.fits is not None and h.fits[0] == self.limit else (self.limit, 0, {})
        for i in range(seen, len(h.messages)):
            if h.bounds[i + 1] - h.bounds[i] > limit and h.messages[i].role != "assistant":
                big[i] = None
        h.fits = (limit, len(h.messages), big)
        return big

    async def messages(self) -> list[ChatMessage]:
        h, big = self.history, self._big()
        if not big:
            return h.messages
        await TOKENIZER.ready()
        out = list(h.messages)
        for i, fit in list(big.items()):
            if fit is None:  # a large text: counted and cut in a worker thread, the loop goes on
                fit = big[i] = await anyio.to_thread.run_sync(self._fit, h.messages[i])
            out[i] = fit[0]
        return out

    def _fit(self, m: ChatMessage) -> tuple[ChatMessage, int]:
        text, cut = TOKENIZER.cut(m.text, self.limit, CUT_MARKER)
        return (m._replace(text=text), TOKENIZER.count(text) + PER_MESSAGE) if cut else (m, _message_tokens(m))

    async def count(self) -> None:
        """The tokenizer loaded, and the messages not counted yet counted: in a worker thread
        when they are long (a pasted log, a large result), so that the loop goes on meanwhile."""
        await TOKENIZER.ready()
        h = self.history
        counts, start = h.counts, len(h.counts) - 1
        if h.bounds[len(h.messages)] - h.bounds[start] < OFF_LOOP_BYTES:
            return  # counted as it is asked for (used, tokens): a few small messages
        new = h.messages[start:]
        tokens = await anyio.to_thread.run_sync(lambda: [_message_tokens(m) for m in new])
        if h.counts is counts and len(counts) - 1 == start:  # nothing else counted, nor condensed, meanwhile
            for n in tokens:
                counts.append(counts[-1] + n)

    def _counted(self, n: int) -> list[int]:
        h = self.history
        while len(h.counts) <= n:
            h.counts.append(h.counts[-1] + _message_tokens(h.messages[len(h.counts) - 1]))
        return h.counts

    def _raw(self, i: int) -> int:
        counts = self._counted(i + 1)
        return counts[i + 1] - counts[i]

    def tokens(self, i: int) -> int:
        """Message `i`'s tokens, as sent."""
        fit = self._big().get(i)
        return fit[1] if fit is not None else self._raw(i)

    def used(self, system: str, tools: Sequence[ToolSchema], extra: Sequence[ChatMessage] = (), *, exact: bool) -> int:
        """The tokens a request with these messages takes (exact: counted; else an upper bound,
        at no cost). From the provider's last count when the prompt is the one it counted."""
        h = self.history
        n = len(h.messages)
        m = h.measured
        if m is not None and m.prompt == prompt_key(system, tools) and m.messages <= n:
            total, start = m.tokens, m.messages
        else:
            total, start = _prompt_tokens(system, tools, exact), 0
        sums = self._counted(n) if exact else h.bounds
        total += sums[n] - sums[start]
        for i, fit in self._big().items():
            if i >= start and fit is not None:
                total += fit[1] - (sums[i + 1] - sums[i])
        for e in extra:
            total += _message_tokens(e) if exact else bound(e.text) + PER_MESSAGE
        return total


def provider_count(usage: Usage) -> int:
    """What a request took of the window, as its provider counted it: its input, cached or not,
    and its reply."""
    return usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens + usage.output_tokens


def info(session: Session, task: Task, used: int | None) -> ContextInfo:
    return context_info(task.model_config, session.settings.condense_threshold, used)


async def measured(session: Session, task: Task, history: ModelHistory, request: ModelRequest, extra: Sequence[ChatMessage], usage: Usage | None) -> ContextInfo:
    """After a reply (already in the history): what the request took, its reply included. The
    provider's count when it gave one (the base of the next requests' counts), else the tokenizer's."""
    if usage is not None:
        used = provider_count(usage)
        history.measured = Measured(len(history.messages), used, prompt_key(request.system, request.tools))
    else:
        await _tokenizer_and_prompt(request.system, request.tools)
        fitted = Fitted(history, window_of(task.model_config))
        await fitted.count()
        used = fitted.used(request.system, request.tools, extra, exact=True)
    history.used = used
    return info(session, task, used)


async def room_for(
    session: Session, task: Task, history_id: str, agent: str, extra: Sequence[ChatMessage], conversation_id: str
) -> tuple[list[ChatMessage], int]:
    """Before a request: (the history's messages as it sends them, how many messages a summary
    replaced: 0 when not condensed). It condenses first when the request, with `extra`, would
    pass the threshold."""
    history = session.histories.get(history_id, agent)
    limits = info(session, task, None)
    fitted = Fitted(history, limits.window)
    messages = await fitted.messages()
    system, tools = task.prompt.text, task.tool_schemas
    if fitted.used(system, tools, extra, exact=False) <= limits.threshold:
        return messages, 0
    await _tokenizer_and_prompt(system, tools)
    await fitted.count()
    used = fitted.used(system, tools, extra, exact=True)
    if used <= limits.threshold:
        return messages, 0
    try:
        replaced = (await condense(session, task, history_id, agent, conversation_id, used))[1]
    except ModelError as exc:
        if used > limits.window:
            raise
        text = f"Condensing the conversation failed ({exc}); the request goes as it is, within the window."
        session.host.publish(protocol.MessageUpdate(conversation_id=conversation_id, agent=agent, task_id=task.id, role="system", text=text))
        return messages, 0
    return (await fitted.messages() if replaced else messages), replaced


async def condense(session: Session, task: Task, history_id: str, agent: str, conversation_id: str, before: int, trigger: str = "auto") -> tuple[int, int]:
    """The model summarises all but the newest messages of `agent`'s history; the summary
    replaces them. Returns (the tokens the next request takes, how many messages the summary
    replaced); `before`: what it took until now; `trigger`: "auto", or "manual" (the user's)."""
    await session.hookbook.fire("PreCompact", conversation_id=conversation_id, agent=agent, mode=task.mode.slug, phase=task.phase, trigger=trigger)
    history = session.histories.get(history_id, agent)
    limits = info(session, task, None)
    fitted = Fitted(history, limits.window)
    sent = await fitted.messages()
    await fitted.count()
    said = sum(fitted.tokens(i) for i in range(len(history.messages)))
    older = _older(history, fitted, min(limits.threshold, said) // KEEP_SHARE)
    if older == 0:
        text = "Nothing to condense: the conversation has no messages yet."
        session.host.publish(protocol.MessageUpdate(conversation_id=conversation_id, agent=agent, task_id=task.id, role="system", text=text))
        return before, 0
    room = limits.window - limits.window // 8 - _prompt_tokens(CONDENSE_SYSTEM, (), True) - 400  # the reply, the ask
    said = _summarised(sent, fitted, older, room)
    # the images of what is summarised go along (the newest few), for the summary to say what they show
    shown = tuple({i.id: i for m in said for i in m.images}.values())[-CONDENSE_IMAGES:]
    request = ModelRequest(CONDENSE_SYSTEM, (ChatMessage("user", f"{transcript(said)}\n\n{CONDENSE_ASK}", images=shown),))
    reply = await task.model.complete(request, lambda _: None)
    if reply.usage is not None:
        session.usage_book.record(conversation_id, task, reply.usage)
    summary = reply.text.strip()
    if not summary:
        raise ModelError("condensing the conversation failed: the model's summary was empty")
    after = _prompt_tokens(task.prompt.text, task.tool_schemas, True) + _message_tokens(summary_message(summary))
    after += sum(fitted.tokens(i) for i in range(older, len(history.messages)))
    if after >= before:  # the summary is no shorter than what it would replace
        text = f"The conversation was not condensed: the summary would take {after:,} tokens, and the conversation takes {before:,}."
        session.host.publish(protocol.MessageUpdate(conversation_id=conversation_id, agent=agent, task_id=task.id, role="system", text=text))
        return before, 0
    keep = len(history.messages) - older  # what came meanwhile (other agents' words) is kept too
    text = f"Condensed the conversation: {before:,} → {after:,} tokens."
    session.add_message(
        StoredMessage(
            new_id("msg-"), history_id, "system", text, agent,
            {"condensed": protocol.Condensed(agent=agent, keep=keep, summary=summary, before=before, after=after).wire()},
        )
    )
    publish = session.host.publish
    publish(protocol.MessageUpdate(conversation_id=conversation_id, agent=agent, task_id=task.id, role="system", text=text))
    publish(protocol.CondensedUpdate(conversation_id=conversation_id, agent=agent, task_id=task.id, before=before, after=after))
    publish(protocol.ContextUpdate(conversation_id=conversation_id, agent=agent, task_id=task.id, **info(session, task, after).model_dump()))
    return after, older


def _older(history: ModelHistory, fitted: Fitted, keep_budget: int) -> int:
    """How many of the oldest messages to summarise: all but the newest that fit in
    `keep_budget`, never splitting a reply's tool calls from their results (what is kept starts
    with no tool result); at least one."""
    kept, cut = 0, len(history.messages)
    for i in range(len(history.messages) - 1, 0, -1):
        kept += fitted.tokens(i)
        if kept > keep_budget:
            break
        if history.messages[i].role != "tool":
            cut = i
    return cut


def transcript(messages: Sequence[ChatMessage]) -> str:
    """The messages as one text for the summary request: with no tool definitions sent, the model
    cannot answer with a tool call, and no provider's rules on calls and results apply."""
    parts = []
    for m in messages:
        if m.role == "tool":
            images = "".join(f"\n[image {i.id} ({i.mime_type})]" for i in m.images)
            parts.append(f"[result of {m.tool_name}{' (failed)' if m.is_error else ''}]\n{m.text}{images}")
            continue
        lines = [f"[{m.role}]", m.text] if m.text.strip() else [f"[{m.role}]"]
        lines += [f"[calls {c.name}] {json.dumps(c.arguments)}" for c in m.tool_calls]
        lines += [f"[image {i.id} ({i.mime_type})]" for i in m.images]
        parts.append("\n".join(lines))
    return "<conversation>\n" + "\n\n".join(parts) + "\n</conversation>"


def _summarised(sent: list[ChatMessage], fitted: Fitted, older: int, room: int) -> list[ChatMessage]:
    """What the summary request sends: the `older` messages; when they are more than one request
    takes (`room` tokens), the first (the task, or the summary before) and the newest that fit,
    with a note of how many were left out between them (a tool result never without its call)."""
    if sum(fitted.tokens(i) for i in range(older)) <= room:
        return sent[:older]
    start, room = older, room - fitted.tokens(0)
    for i in range(older - 1, 0, -1):
        room -= fitted.tokens(i)
        if room < 0:
            break
        if sent[i].role != "tool":
            start = i
    note = ChatMessage("user", f"[{start - 1} messages left out here: more than one request can take.]")
    return [sent[0], note, *sent[start:older]]


async def condense_now(session: Session, cid: str) -> protocol.CondenseResult:
    """`modus/chat/condense`: the responder's view of the conversation, condensed now."""
    if cid != session.conversation_id and not session.store.conversation_exists(cid):  # the current one may have no message yet
        raise BadRequest(f"conversationId: unknown conversation: {cid}")
    session.runtimes.refuse_if_busy(cid, "conversationId")
    if cid in session.condensing:
        raise BadRequest(f"conversationId: {cid} is being condensed already")
    session.condensing.add(cid)
    try:
        agent = session.responder(cid)
        task = session.task_for(agent, cid)
        history = session.histories.get(cid, agent)
        await _tokenizer_and_prompt(task.prompt.text, task.tool_schemas)
        fitted = Fitted(history, window_of(task.model_config))
        await fitted.messages()
        await fitted.count()
        before = fitted.used(task.prompt.text, task.tool_schemas, exact=True)
        after, _ = await condense(session, task, cid, agent, cid, before, trigger="manual")
    finally:
        session.condensing.discard(cid)
    return protocol.CondenseResult(before=before, after=after)
