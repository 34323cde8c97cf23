"""Anthropic models through the official SDK's Messages API, streamed. The body is built here from
what came since the last request (wire.py) and sent with the SDK's low-level request; the SDK's
stream helper puts the events together into the reply as `messages.stream` does."""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Sequence

from .base import ChatMessage, ImagePart, ModelReply, ModelRequest, ToolCallRequest, Usage, image_note, no_notice
from .catalog import DEFAULT_MODEL
from .sdk import SdkModel
from .wire import body

DEFAULT_MAX_TOKENS = 8192


class AnthropicModel(SdkModel):
    provider = "anthropic"
    default_model = DEFAULT_MODEL["anthropic"]
    default_key_env = "ANTHROPIC_API_KEY"
    client_class = "AsyncAnthropic"
    derived_events = frozenset({"text", "input_json", "citation", "thinking", "signature"})  # beside the raw events

    async def ask_once(
        self, request: ModelRequest, on_text: Callable[[str], None], on_thinking: Callable[[str], None] = no_notice
    ) -> ModelReply:
        client = await self.client()
        from anthropic import AsyncStream  # loaded with the client
        from anthropic.lib.streaming import AsyncMessageStreamManager
        from anthropic.types import Message, RawMessageStreamEvent

        message = None
        opening = AsyncMessageStreamManager(
            client.post("/v1/messages", cast_to=Message, content=self._body(request), stream=True, stream_cls=AsyncStream[RawMessageStreamEvent])
        )
        async with self.streaming(opening) as events:
            async for event in events:
                if event.type == "text":
                    on_text(event.text)
                elif event.type == "thinking":
                    on_thinking(event.thinking)
                elif event.type == "message_stop":  # the last event: the SDK adds the whole message
                    message = event.message
        if message is None:
            raise self.cut(events)
        text = "".join(b.text for b in message.content if b.type == "text")
        calls = tuple(ToolCallRequest(b.id, b.name, dict(b.input)) for b in message.content if b.type == "tool_use")
        if calls and message.stop_reason == "max_tokens":
            raise self.max_tokens_in_call()
        # While the tool loop goes on, the API wants a reply's thinking blocks back, unchanged,
        # before its tool_use blocks: they travel with the message as its provider state.
        thinking = [_thinking_block(b) for b in message.content if b.type in ("thinking", "redacted_thinking")]
        return ModelReply(text, calls, {"thinking": thinking} if calls and thinking else None, _usage(message.usage))

    def _body(self, request: ModelRequest) -> bytes:
        """The request as the API takes it (JSON): the conversation's groups (each one message of
        the API: a run of same-role messages) serialised once each (wire.py)."""
        budget = self.config.thinking_budget_tokens
        fields: dict[str, Any] = {
            "model": self.model,
            # Without maxTokens, room for the answer comes on top of the thinking budget.
            "max_tokens": self.config.max_tokens or DEFAULT_MAX_TOKENS + (budget or 0),
            "stream": True,
            # The API puts a cache breakpoint on the last block of each request: the next request,
            # this one and a step more (its prefix the same bytes: wire.py), reads it from the cache.
            "cache_control": {"type": "ephemeral"},
        }
        if budget:
            fields["thinking"] = {"type": "enabled", "budget_tokens": budget}
        raw: dict[str, Any] = {
            "messages": self.wire.groups(request.messages, _groups, partial(_message, with_thinking=bool(budget), vision=self.vision))
        }
        if request.system:
            raw["system"] = self.wire.once("system", request.system, lambda text: [text])
        if request.tools:
            raw["tools"] = [self.wire.once("tools", request.tools, _tools)]
        return body(fields, raw)


def _tools(tools: tuple) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


def _side(m: ChatMessage) -> str:
    return "assistant" if m.role == "assistant" else "user"


def _groups(history: Sequence[ChatMessage]) -> list[tuple[ChatMessage, ...]]:
    """Runs of messages of one side (the assistant's; the user's, tool results included): the API
    wants them alternating, so each run is one of its messages. A message that makes no block
    (empty: the API refuses empty messages) goes along with the run it stands in."""
    groups: list[tuple[ChatMessage, ...]] = []
    current: list[ChatMessage] = []
    side = None
    for m in history:
        if m.role != "tool" and not m.tool_calls and not m.text.strip() and not m.images:
            current.append(m)
            continue
        if side is not None and _side(m) != side:
            groups.append(tuple(current))
            current = []
        side = _side(m)
        current.append(m)
    if current:
        groups.append(tuple(current))
    return groups


def _message(group: tuple[ChatMessage, ...], *, with_thinking: bool, vision: bool = True) -> list[dict[str, Any]]:
    """One message of the API from a run of one side: tool results first in a user turn (the API
    requires it), then the rest in order; none when no message of the run makes a block."""
    content: list[dict[str, Any]] = []
    for m in group:
        for block in _blocks(m, with_thinking, vision):
            if block["type"] == "tool_result":
                content.insert(sum(b["type"] == "tool_result" for b in content), block)
            else:
                content.append(block)
    side = next((_side(m) for m in group if m.role == "tool" or m.tool_calls or m.text.strip() or m.images), None)
    return [{"role": side, "content": content}] if content else []


def _image(image: ImagePart) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}


def _blocks(m: ChatMessage, with_thinking: bool, vision: bool = True) -> list[dict[str, Any]]:
    if m.role == "tool":
        if not m.images:
            return [{"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.text, "is_error": m.is_error}]
        # a result's images go inside it, after its text (a model without vision: a note instead)
        parts: list[dict[str, Any]] = [{"type": "text", "text": m.text}] if m.text.strip() else []
        parts += [_image(i) for i in m.images] if vision else [{"type": "text", "text": image_note(m.images, "The result")}]
        return [{"type": "tool_result", "tool_use_id": m.tool_call_id, "content": parts, "is_error": m.is_error}]
    blocks: list[dict[str, Any]] = []
    if with_thinking and m.tool_calls and m.state:
        blocks += m.state.get("thinking", [])
    if m.images:  # the images first, then the text about them (Anthropic's advice)
        blocks += [_image(i) for i in m.images] if vision else [{"type": "text", "text": image_note(m.images)}]
    if m.text.strip():
        blocks.append({"type": "text", "text": m.text})
    blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls]
    return blocks


def _thinking_block(b: Any) -> dict[str, Any]:
    if b.type == "thinking":
        return {"type": "thinking", "thinking": b.thinking, "signature": b.signature}
    return {"type": "redacted_thinking", "data": b.data}


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    return Usage(
        usage.input_tokens or 0,
        usage.output_tokens or 0,
        getattr(usage, "cache_read_input_tokens", None) or 0,
        getattr(usage, "cache_creation_input_tokens", None) or 0,
    )
