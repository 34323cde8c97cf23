"""Anthropic models through the official SDK's Messages API, streamed."""

from __future__ import annotations

from typing import Any, Callable

from .base import ChatMessage, ModelReply, ModelRequest, ToolCallRequest, Usage, no_notice
from .catalog import DEFAULT_MODEL
from .sdk import SdkModel

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
        message = None
        async with self.streaming(client.messages.stream(**self._params(request))) as events:
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

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        budget = self.config.thinking_budget_tokens
        params: dict[str, Any] = {
            "model": self.model,
            # Without maxTokens, room for the answer comes on top of the thinking budget.
            "max_tokens": self.config.max_tokens or DEFAULT_MAX_TOKENS + (budget or 0),
            "messages": _messages(request.messages, with_thinking=bool(budget)),
        }
        if request.system:
            params["system"] = request.system
        if request.tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools
            ]
        if budget:
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        return params


def _messages(history: tuple[ChatMessage, ...], *, with_thinking: bool) -> list[dict[str, Any]]:
    """Alternating user/assistant turns: same-role neighbours merge into one message with several
    blocks, tool results go into the user turn, ahead of its text (the API requires it)."""
    out: list[dict[str, Any]] = []
    for m in history:
        role = "assistant" if m.role == "assistant" else "user"
        blocks = _blocks(m, with_thinking)
        if not blocks:  # the API refuses empty messages
            continue
        if not out or out[-1]["role"] != role:
            out.append({"role": role, "content": []})
        content = out[-1]["content"]
        for block in blocks:
            if block["type"] == "tool_result":
                content.insert(sum(b["type"] == "tool_result" for b in content), block)
            else:
                content.append(block)
    return out


def _blocks(m: ChatMessage, with_thinking: bool) -> list[dict[str, Any]]:
    if m.role == "tool":
        return [{"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.text, "is_error": m.is_error}]
    blocks: list[dict[str, Any]] = []
    if with_thinking and m.tool_calls and m.state:
        blocks += m.state.get("thinking", [])
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
