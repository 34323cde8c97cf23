"""Model providers: the scripted model (offline default), Anthropic and OpenAI-compatible servers."""

from __future__ import annotations

from pathlib import Path

from protocol import Model

from .base import (
    ChatMessage, ModelClient, ModelError, ModelLimits, ModelReply, ModelRequest, ToolCallRequest, ToolSchema, no_notice,
)
from .scripted import Script, ScriptCursor, ScriptedModel


class _DeferredError:
    """A model that could not be opened: every request fails with the reason (the turn reports it)."""

    def __init__(self, error: ModelError):
        self.error = error

    async def complete(self, request, on_text, on_notice=no_notice, on_thinking=no_notice):
        raise self.error


def open_model(config: Model, *, workspace: Path, cursor: ScriptCursor, limits: ModelLimits = ModelLimits()) -> ModelClient:
    """A client for the configured model. Problems surface when the model is asked, never here."""
    try:
        if config.provider == "scripted":
            return ScriptedModel(workspace / config.script if config.script else None, cursor)
        if config.provider == "anthropic":
            from .anthropic import AnthropicModel

            return AnthropicModel(config, limits)
        if config.provider == "openai":
            from .openai import OpenAIModel

            return OpenAIModel(config, limits)
        raise ModelError(f"Unknown provider: {config.provider}")
    except ModelError as exc:
        return _DeferredError(exc)


__all__ = [
    "ChatMessage",
    "ModelClient",
    "ModelError",
    "ModelLimits",
    "ModelReply",
    "ModelRequest",
    "Script",
    "ScriptCursor",
    "ToolCallRequest",
    "ToolSchema",
    "open_model",
]
