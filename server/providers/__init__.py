"""Model providers: the scripted model (offline default), Anthropic and OpenAI-compatible servers."""

from __future__ import annotations

import importlib
import logging
import threading
from pathlib import Path
from typing import Iterator, Sequence

import anyio

from protocol import Model, Settings

from .base import (
    ChatMessage, ImagePart, ModelClient, ModelError, ModelLimits, ModelReply, ModelRequest, ToolCallRequest, ToolSchema, no_notice,
)
from .scripted import Script, ScriptCursor, ScriptedModel


class _DeferredError:
    """A model that could not be opened: every request fails with the reason (the turn reports it)."""

    def __init__(self, error: ModelError):
        self.error = error

    async def complete(self, request, on_text, on_notice=no_notice, on_thinking=no_notice):
        raise self.error


log = logging.getLogger(__name__)

#: The modules of each provider's SDK that a request uses.
SDK_MODULES = {"openai": ("openai",), "anthropic": ("anthropic", "anthropic.lib.streaming")}
_preloading: set[str] = set()
#: Seconds from the settings being known to loading ahead (see preload).
PRELOAD_AFTER = 0.5


def preload(settings: Settings, then: Sequence[str] = (), after: float = PRELOAD_AFTER) -> None:
    """Load ahead, in a background thread: the modules `then` names (what the first turn runs;
    `module:function` also calls the function, which builds what the module would build then),
    then the SDK of each provider the settings name, with what its first request needs (its
    HTTP transport and TLS, loaded by making a client). An SDK takes a second or so to import
    (hundreds of types), which the first request would wait for; started as soon as the
    settings are known, it is done by the time a user has typed their first message. Nothing
    waits for it: a request that comes first imports what is left. It starts `after` seconds: the
    first answers to the editor (the burst of requests at start-up) do not share the interpreter
    with it, and a user's first message comes later than that."""
    providers = sorted({m.provider for m in _models(settings)} & SDK_MODULES.keys() - _preloading)
    _preloading.update(providers)
    modules = [m for m in then if m not in _preloading]
    _preloading.update(modules)
    if providers or modules:
        timer = threading.Timer(after, _load, args=(modules, providers, settings))
        timer.name, timer.daemon = "modus-preload", True
        timer.start()


def _load(modules: list[str], providers: list[str], settings: Settings) -> None:
    try:
        for name in modules:
            module, _, function = name.partition(":")
            loaded = importlib.import_module(module)
            if function:
                getattr(loaded, function)()
        for provider in providers:
            for name in SDK_MODULES[provider]:
                importlib.import_module(name)
            config = next(m for m in _models(settings) if m.provider == provider)
            model = open_model(config, workspace=Path("."), cursor=ScriptCursor(), limits=ModelLimits.of(settings))
            if hasattr(model, "new_client"):  # not a model that failed to open (no key: it will say so)
                model.new_client()  # the HTTP transport and TLS load; the client itself is let go
    except Exception as exc:  # noqa: BLE001 - whatever needs it will say why
        log.info("loading ahead failed: %s", exc)


def _models(settings: Settings) -> Iterator[Model]:
    models = settings.models
    yield models.default
    yield from (m for m in (models.phases.plan, models.phases.act) if m is not None)
    for mode in models.modes.values():
        if mode.provider is not None:
            yield Model(provider=mode.provider)
        yield from (m for m in (mode.plan, mode.act) if m is not None)
    yield from (a.model for a in settings.agents if a.model is not None)


def open_model(config: Model, *, workspace: Path, cursor: ScriptCursor, limits: ModelLimits = ModelLimits()) -> ModelClient:
    """A client for the configured model. Problems surface when the model is asked, never here."""
    try:
        if config.provider == "scripted":
            from .catalog import vision_of

            return ScriptedModel(workspace / config.script if config.script else None, cursor, vision_of(config))
        if config.provider == "anthropic":
            from .anthropic import AnthropicModel

            return AnthropicModel(config, limits)
        if config.provider == "openai":
            from .openai import OpenAIModel

            return OpenAIModel(config, limits)
        raise ModelError(f"Unknown provider: {config.provider}")
    except ModelError as exc:
        return _DeferredError(exc)


async def check_model(config: Model, workspace: Path) -> tuple[bool, str, list[str]]:
    """`modus/models/check`: (whether the model's server answered, what was found or went wrong,
    the models it lists). The scripted model needs no server; its script must be readable."""
    if config.provider == "scripted":
        if not config.script:
            return True, "The scripted model answers offline with a note; choose a provider to talk to a real model.", []
        try:
            await anyio.to_thread.run_sync(Script.load, workspace / config.script)
        except ModelError as exc:
            return False, str(exc), []
        return True, f"The script {config.script} is readable.", []
    model = open_model(config, workspace=workspace, cursor=ScriptCursor(), limits=ModelLimits(first_byte=10.0))
    if isinstance(model, _DeferredError):
        return False, str(model.error), []
    try:
        listed = await model.listed()  # type: ignore[attr-defined]
    except ModelError as exc:
        return False, str(exc), []
    found = f"; {model.model} is not among them" if listed and model.model not in listed else ""
    return True, f"Connected: {model.who()} answered with {len(listed)} models{found}.", listed


__all__ = [
    "ChatMessage",
    "ImagePart",
    "ModelClient",
    "ModelError",
    "ModelLimits",
    "ModelReply",
    "ModelRequest",
    "Script",
    "ScriptCursor",
    "ToolCallRequest",
    "ToolSchema",
    "check_model",
    "open_model",
    "preload",
]
