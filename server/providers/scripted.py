"""The scripted model: the offline default and the test double (PROTOCOL.md "scripted provider").

`script` is a YAML or JSON file `{turns: [{text?, toolCalls?: [{name, arguments}]}]}`. Each model
request takes the next turn; the cursor belongs to the agent, so it survives task rebuilds.
"""

from __future__ import annotations

import uuid

from pathlib import Path
from typing import Any, Callable

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..untrusted import Refused, Signature, load_yaml, off_loop, read_text, signature
from .base import ModelError, ModelReply, ModelRequest, ToolCallRequest, Usage, no_notice

SCRIPT_FINISHED = "Script finished."
NOT_CONFIGURED = (
    "No model is configured, so this is only a note: in VS Code run **Modus: Set Up a Model**; elsewhere set "
    '`modus.models`, e.g. `{"default": {"provider": "anthropic", "model": "claude-sonnet-4-5"}}`.'
)
CHUNK = 16  # characters per streamed delta
MAX_SCRIPT_BYTES = 16 * 1024 * 1024


class _ScriptCall(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class _ScriptUsage(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)
    input_tokens: int = Field(alias="inputTokens", ge=0)
    output_tokens: int = Field(alias="outputTokens", ge=0)
    cache_read_tokens: int = Field(default=0, alias="cacheReadTokens", ge=0)
    cache_write_tokens: int = Field(default=0, alias="cacheWriteTokens", ge=0)


class _ScriptTurn(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)
    text: str = ""
    #: streamed as the model's thinking before the text
    thinking: str = ""
    tool_calls: list[_ScriptCall] = Field(default_factory=list, alias="toolCalls")
    #: reported as if the provider had sent it
    usage: _ScriptUsage | None = None
    #: the number of images the request must carry (the user's and the tool results'): another
    #: number fails the turn
    expect_images: int | None = Field(default=None, alias="expectImages", ge=0)


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    turns: list[_ScriptTurn]

    @classmethod
    def load(cls, path: Path) -> "Script":
        """Read and check a script (blocking): a regular file, bounded in size and nodes."""
        try:
            text = read_text(path, MAX_SCRIPT_BYTES)
        except Refused as exc:
            raise ModelError(f"Cannot read script '{path}': {exc}") from None
        if text is None:
            raise ModelError(f"Cannot read script '{path}': there is no such file")
        try:
            data = load_yaml(text)
        except ValueError as exc:
            raise ModelError(f"Cannot parse script '{path}': {exc}") from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "script"
            raise ModelError(f"Invalid script '{path}': {where}: {err['msg']}") from None


class ScriptCursor:
    """Position in a script; one per agent, kept by the session."""

    def __init__(self) -> None:
        self.position = 0

    @staticmethod
    def next_id() -> str:
        """Unique across restarts too: a conversation outlives the process that started it."""
        return f"call_{uuid.uuid4().hex[:16]}"


class _ScriptCache:
    """Scripts parsed once per file version; a new version is read off the event loop."""

    def __init__(self) -> None:
        self._cache: dict[Path, tuple[Signature, Script]] = {}

    async def get(self, path: Path) -> Script:
        sig = signature(path)
        if sig is None:
            raise ModelError(f"Cannot read script '{path}': there is no such file")
        hit = self._cache.get(path)
        if hit and hit[0] == sig:
            return hit[1]
        try:
            script = await off_loop(Script.load, path)
        except Refused as exc:
            raise ModelError(f"Cannot read script '{path}': {exc}") from None
        self._cache[path] = (sig, script)
        return script


SCRIPTS = _ScriptCache()


class ScriptedModel:
    def __init__(self, script: Path | None, cursor: ScriptCursor, vision: bool = True):
        """`script`: the file (read when the model is first asked), None without one; `vision`:
        whether it sees the images of a request (without, it counts none)."""
        self.script = script
        self.cursor = cursor
        self.vision = vision

    async def complete(
        self,
        request: ModelRequest,
        on_text: Callable[[str], None],
        on_notice: Callable[[str], None] = no_notice,
        on_thinking: Callable[[str], None] = no_notice,
    ) -> ModelReply:
        if self.script is None:
            await _stream(NOT_CONFIGURED, on_text)
            return ModelReply(NOT_CONFIGURED)
        script = await SCRIPTS.get(self.script)
        if self.cursor.position >= len(script.turns):
            await _stream(SCRIPT_FINISHED, on_text)
            return ModelReply(SCRIPT_FINISHED)
        turn = script.turns[self.cursor.position]
        self.cursor.position += 1
        if turn.expect_images is not None:
            carried = sum(len(m.images) for m in request.messages) if self.vision else 0
            if carried != turn.expect_images:
                raise ModelError(
                    f"The script's turn {self.cursor.position} expects {turn.expect_images} image(s); the request carried {carried}."
                )
        await _stream(turn.thinking, on_thinking)
        await _stream(turn.text, on_text)
        calls = tuple(ToolCallRequest(self.cursor.next_id(), c.name, dict(c.arguments)) for c in turn.tool_calls)
        usage = Usage(**turn.usage.model_dump()) if turn.usage else None
        return ModelReply(turn.text, calls, usage=usage)


async def _stream(text: str, on_text: Callable[[str], None]) -> None:
    for i in range(0, len(text), CHUNK):
        on_text(text[i : i + CHUNK])
        await anyio.sleep(0)  # a real model yields between chunks; so do we (and cancellation lands)
