"""OpenAI and every OpenAI-compatible server (Ollama, vLLM, LM Studio through `baseUrl`), with
the official SDK's Chat Completions API, streamed. The body is built here from what came since the
last request (wire.py) and sent with the SDK's low-level request, which does not walk it again."""

from __future__ import annotations

import json
import uuid
from functools import partial
from typing import Any, Callable, Sequence

from .base import ChatMessage, ImagePart, ModelReply, ModelRequest, ToolCallRequest, Usage, image_note, no_notice
from .catalog import DEFAULT_MODEL
from .sdk import SdkModel
from .wire import body, split

#: Arguments that are not a JSON object are kept under this key: the gate then reports the
#: missing parameters to the model (InvalidParams) instead of the turn crashing.
RAW_ARGUMENTS = "unparsed_arguments"


class OpenAIModel(SdkModel):
    provider = "openai"
    default_model = DEFAULT_MODEL["openai"]
    default_key_env = "OPENAI_API_KEY"
    client_class = "AsyncOpenAI"
    no_key_hint = "; a local server needs none: set baseUrl"

    async def ask_once(
        self, request: ModelRequest, on_text: Callable[[str], None], on_thinking: Callable[[str], None] = no_notice
    ) -> ModelReply:
        client = await self.client()
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}  # by index: id, name, argument fragments joined
        finish = None  # the reply is whole once a finish reason came
        usage = None  # in a last chunk without choices (stream_options.include_usage)
        from openai import AsyncStream  # loaded with the client
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        opening = client.post(
            "/chat/completions", cast_to=ChatCompletion, content=self._body(request), stream=True,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )
        async with self.streaming(opening) as events:
            async for chunk in events:
                usage = _usage(getattr(chunk, "usage", None)) or usage
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish = choice.finish_reason or finish
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    on_text(delta.content)
                reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
                if isinstance(reasoning, str) and reasoning:  # compatible servers' field (vLLM, Ollama, …)
                    on_thinking(reasoning)
                for part in delta.tool_calls or ():
                    call = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                    call["id"] = part.id or call["id"]
                    if part.function:
                        call["name"] = part.function.name or call["name"]
                        call["arguments"] += part.function.arguments or ""
        if finish is None:
            raise self.cut(events)
        if calls and finish == "length":
            raise self.max_tokens_in_call()
        return ModelReply(
            "".join(text),
            tuple(
                # some compatible servers send no id; the loop pairs every result with one
                ToolCallRequest(c["id"] or f"call_{uuid.uuid4().hex[:12]}", c["name"], _arguments(c["arguments"]))
                for _, c in sorted(calls.items())
            ),
            usage=usage,
        )

    def _body(self, request: ModelRequest) -> bytes:
        """The request as the API takes it (JSON): the system prompt, then the conversation's groups
        (each assistant reply with what follows it), serialised once each (wire.py)."""
        fields: dict[str, Any] = {"model": self.model, "stream": True, "stream_options": {"include_usage": True}}
        if self.config.reasoning_effort:
            fields["reasoning_effort"] = self.config.reasoning_effort
        if self.config.max_tokens:
            # OpenAI itself refuses max_tokens for its reasoning models; compatible servers know max_tokens.
            fields["max_tokens" if self.config.base_url else "max_completion_tokens"] = self.config.max_tokens
        messages = [
            self.wire.once("system", request.system, lambda text: [{"role": "system", "content": text}] if text else []),
            *self.wire.groups(request.messages, _groups, partial(_messages, vision=self.vision)),
        ]
        raw: dict[str, Any] = {"messages": messages}
        if request.tools:
            raw["tools"] = [self.wire.once("tools", request.tools, _tools)]
        return body(fields, raw)


def _tools(tools: tuple) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}} for t in tools]


def _usage(usage: Any) -> Usage | None:
    """OpenAI counts cached prompt tokens inside its prompt tokens: they are taken out."""
    if usage is None:
        return None
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    return Usage(max((usage.prompt_tokens or 0) - cached, 0), usage.completion_tokens or 0, cached, 0)


def _arguments(raw: str) -> dict[str, Any]:
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except ValueError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {RAW_ARGUMENTS: raw}


def _groups(messages: Sequence[ChatMessage]) -> list[tuple[ChatMessage, ...]]:
    """Each assistant reply with what follows it until the next one (the results of its calls)."""
    return split(messages, lambda before, m: m.role == "assistant")


def _messages(group: tuple[ChatMessage, ...], vision: bool = True) -> list[dict[str, Any]]:
    """One group's messages: an assistant reply and what follows it until the next one. A tool
    message holds text only (Chat Completions): the images of a result follow the results, in a
    user message that says whose they are."""
    out: list[dict[str, Any]] = []
    for m in group:
        out.append(_message(m, vision))
        if m.role != "tool":
            continue
        # A result belongs right after its call, ahead of user text that came in between (the
        # results of calls the same reply wrote as XML): the API refuses anything else.
        at = len(out) - 1
        while at and out[at - 1]["role"] == "user":
            at -= 1
        out.insert(at, out.pop())
        if m.images and vision:
            said = f"[The images of the result of {m.tool_name} ({m.tool_call_id}):]"
            out.append({"role": "user", "content": [{"type": "text", "text": said}, *map(_image_url, m.images)]})
        elif m.images:
            out[at]["content"] = f"{m.text}\n\n{image_note(m.images, 'The result')}"
    return out


def _image_url(image: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}


def _message(m: ChatMessage, vision: bool = True) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.text}
    if m.role == "user" and m.images:
        if not vision:
            return {"role": "user", "content": f"{image_note(m.images)}\n\n{m.text}"}
        parts: list[dict[str, Any]] = [{"type": "text", "text": m.text}] if m.text.strip() else []
        return {"role": "user", "content": [*parts, *map(_image_url, m.images)]}
    if m.role == "user" or not m.tool_calls:
        return {"role": m.role, "content": m.text}
    calls = [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
        for c in m.tool_calls
    ]
    return {"role": "assistant", "content": m.text, "tool_calls": calls}
