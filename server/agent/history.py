"""Conversations as the model sees them, kept in memory while they are live.

A history is read from the store once: when a conversation is first used after the server
started, or after it was let go for being idle. From then on each message is appended as it is
written, so a model request costs the same at call 1,000 of a turn as at call 1.
"""

from __future__ import annotations

import json
from collections import OrderedDict
import base64
from typing import TYPE_CHECKING, Callable, Iterable, NamedTuple

from ..providers import ChatMessage, ImagePart, ToolCallRequest
from ..providers.tokens import bound
from ..state import StoredMessage

if TYPE_CHECKING:
    from ..state import StateStore

#: What a message's framing (its role, the separators) costs, in tokens, as OpenAI counts it.
PER_MESSAGE = 4

#: Where a condensed conversation starts: the summary of what it replaces.
SUMMARY_HEADER = (
    "[The conversation so far, condensed to fit the context window: the older messages are summarised "
    "here, the newer ones follow as they were.]"
)

#: The metadata key of a message's images: `[{id, mimeType}]` (each image stored once, in the state).
IMAGES = "images"

#: What an image costs in a request, in tokens, as a bound: Anthropic's largest (about 1,600 for
#: 1.15 megapixels), OpenAI's at high detail near it.
IMAGE_TOKENS = 1_600

#: An image's type and bytes by its id (the state's), None when unknown.
ImageSource = Callable[[str], "tuple[str, bytes] | None"]

#: Histories kept in memory; the least recently used beyond this are let go (the store keeps them).
LIVE_HISTORIES = 8


def tool_result(call_id: str | None, name: str | None, error_type: str | None = None) -> dict:
    """The metadata of a stored tool result. A failed call carries its error type (the
    `error.type` of its `tool_call` update: `FileRestrictionError`, `Denied`, `Cancelled`,
    `Interrupted`, ...), so a client can show it again from the history."""
    metadata = {"toolCallId": call_id, "name": name, "isError": error_type is not None}
    if error_type is not None:
        metadata["errorType"] = error_type
    return metadata


#: The outcomes of a turn that `modus/chat/retry` runs again.
RETRYABLE = frozenset({"failed", "cancelled", "interrupted"})


def turn_ended(outcome: str, error_type: str, message: str) -> dict:
    """The metadata of the stored system message that ends a turn that did not complete: its
    outcome and why (`error`: the `turn_ended` update's). It is the turn's last message, so the
    history shows why it ended, and `modus/chat/retry` finds what to run again."""
    return {"outcome": outcome, "error": {"type": error_type, "message": message}}


class Measured(NamedTuple):
    """A provider's count: the first `messages` messages of a history, with the prompt whose key
    is `prompt` (context.prompt_key), took `tokens`."""

    messages: int
    tokens: int
    prompt: int


def calls_text(m: ChatMessage) -> str:
    """A message's tool calls as the model reads them (their names and arguments), to count them."""
    return "".join(c.name + json.dumps(c.arguments) for c in m.tool_calls)


def summary_message(summary: str) -> ChatMessage:
    return ChatMessage("user", f"{SUMMARY_HEADER}\n\n{summary}")


class ModelHistory:
    """A conversation as one agent's model sees it. Native calls and their results stay paired
    (tool_use / tool_result); a call the model wrote as XML gets its result back as user text, Roo
    style. What other agents of the conversation said comes as quoted user text, without their
    tool calls and results: agents run in parallel, and another's calls would break the pairing."""

    def __init__(self, stored: Iterable[StoredMessage] = (), agent: str | None = None, images: ImageSource | None = None):
        self.agent = agent
        #: where a message's images are read (none: the messages go without them)
        self.images = images
        self.messages: list[ChatMessage] = []
        self._native: set[str] = set()
        #: this agent's calls still without a result (None: every call is this agent's)
        self._mine: set[str] | None = None if agent is None else set()
        #: others' words said while this agent's native calls wait for results: they follow the
        #: results (a provider wants the results right after the calls)
        self._held: list[ChatMessage] = []
        #: prefix sums of an upper bound of each message's tokens (tokens.bound), at no cost:
        #: bounds[i] is that of the first i messages
        self.bounds: list[int] = [0]
        #: prefix sums of the messages' tokens, as far as they have been counted (context.Fitted)
        self.counts: list[int] = [0]
        #: the messages too large for a limit of tokens: (the limit, how many messages were looked
        #: at, {index: (the message as sent, its tokens), or None before it was cut})
        self.fits: tuple[int, int, dict[int, tuple[ChatMessage, int] | None]] | None = None
        #: the provider's last count, and what the last request took (the context bar)
        self.measured: Measured | None = None
        self.used: int | None = None
        for m in stored:
            self.append(m)

    def _add(self, m: ChatMessage) -> None:
        self.messages.append(m)
        self.bounds.append(self.bounds[-1] + bound(m.text) + bound(calls_text(m)) + IMAGE_TOKENS * len(m.images) + PER_MESSAGE)

    def _images(self, m: StoredMessage) -> tuple[ImagePart, ...]:
        """The images of a stored message (`metadata.images`), read from the state; one that is
        gone is left out."""
        refs = m.metadata.get(IMAGES)
        if not refs or self.images is None:
            return ()
        parts = []
        for ref in refs:
            found = self.images(ref.get("id", ""))
            if found is not None:
                parts.append(ImagePart(ref["id"], found[0], base64.b64encode(found[1]).decode("ascii")))
        return tuple(parts)

    def condense(self, keep: int, summary: str) -> None:
        """The summary replaces every message but the last `keep` (context.condense)."""
        tail = self.messages[len(self.messages) - keep :] if keep else []
        self.messages, self.bounds, self.counts = [], [0], [0]
        self.fits, self.measured = None, None
        for m in (summary_message(summary), *tail):
            self._add(m)

    def _others(self, m: StoredMessage) -> bool:
        return self.agent is not None and m.agent is not None and m.agent != self.agent

    def append(self, m: StoredMessage) -> None:
        if m.role == "system":
            condensed = m.metadata.get("condensed")
            if condensed and condensed.get("agent") == self.agent:
                self.condense(condensed["keep"], condensed["summary"])
                self.used = condensed.get("after")
        elif m.role == "user":
            env = m.metadata.get("environmentDetails")
            self._add(ChatMessage("user", f"{m.text}\n\n{env}" if env else m.text, images=self._images(m)))
        elif m.role == "assistant" and self._others(m):
            if m.text:
                handoff = m.metadata.get("handoff")
                said = f"{m.agent} to {handoff['to']}" if handoff else f"{m.agent} said"
                quote = ChatMessage("user", f"[{said}]\n{m.text}")
                self._held.append(quote) if self._native else self._add(quote)
        elif m.role == "assistant" and "handoff" in m.metadata:
            return  # this agent's own hand-off: its tool call holds the words
        elif m.role == "assistant":
            self.used = m.metadata.get("contextUsed", self.used)
            if self._mine is not None:
                self._mine.update(c["id"] for c in m.metadata.get("toolCalls", ()))
            calls = [c for c in m.metadata.get("toolCalls", ()) if c.get("native")]
            self._native.update(c["id"] for c in calls)
            requests = tuple(ToolCallRequest(c["id"], c["name"], c["arguments"]) for c in calls)
            self._add(ChatMessage("assistant", m.metadata.get("raw", m.text), requests, state=m.metadata.get("providerState")))
        elif m.role == "tool":
            call_id, name = m.metadata.get("toolCallId"), m.metadata.get("name")
            if self._mine is not None:
                if call_id not in self._mine:
                    return  # another agent's call
                self._mine.discard(call_id)
            if call_id in self._native:
                self._native.discard(call_id)
                error = bool(m.metadata.get("isError"))
                self._add(ChatMessage("tool", m.text, tool_call_id=call_id, tool_name=name, is_error=error, images=self._images(m)))
                if not self._native and self._held:
                    for quote in self._held:
                        self._add(quote)
                    self._held.clear()
            else:
                self._add(ChatMessage("user", f"[{name}] Result:\n{m.text}", images=self._images(m)))


class Histories:
    """The histories of the conversations in use, loaded on first use, appended on every write.
    The conversations used least recently beyond `capacity` are let go, each with the views of
    all its agents (however many agents speak in one, it is one conversation)."""

    def __init__(self, store: StateStore, capacity: int = LIVE_HISTORIES):
        self.store = store
        self.capacity = capacity
        self._live: OrderedDict[str, dict[str | None, ModelHistory]] = OrderedDict()

    def get(self, conversation_id: str, agent: str | None = None) -> ModelHistory:
        """The conversation as `agent` sees it (None: every message as the one speaker's)."""
        views = self._live.get(conversation_id)
        if views is None:
            views = self._live[conversation_id] = {}
            while len(self._live) > self.capacity:
                self._live.popitem(last=False)
        else:
            self._live.move_to_end(conversation_id)
        history = views.get(agent)
        if history is None:
            history = views[agent] = ModelHistory(self.store.messages(conversation_id), agent, lambda image_id: self.store.image(image_id))
        return history

    def forget(self, conversation_id: str) -> None:
        """The conversation changed in the store (cut back): read it again when next used."""
        self._live.pop(conversation_id, None)

    def written(self, m: StoredMessage) -> None:
        for history in self._live.get(m.conversation_id, {}).values():
            history.append(m)

    def __len__(self) -> int:
        """The conversations in memory."""
        return len(self._live)
