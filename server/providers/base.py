"""What every model provider speaks: provider-neutral messages in, streamed text and tool calls out."""

from __future__ import annotations

from typing import Any, Callable, Literal, NamedTuple, Protocol

from protocol import Settings


class ToolCallRequest(NamedTuple):
    id: str
    name: str
    arguments: dict[str, Any]


class ImagePart(NamedTuple):
    """A stored image a message carries to the model: its id, type and bytes in base64."""

    id: str
    mime_type: str
    data: str


def image_note(images: tuple[ImagePart, ...], whose: str = "This message") -> str:
    """What a model without vision gets in place of images."""
    n = len(images)
    kinds = ", ".join(dict.fromkeys(i.mime_type for i in images))
    return f"[{whose} carries {n} image{'s' if n > 1 else ''} ({kinds}), left out: this model cannot see images (no vision).]"


class ChatMessage(NamedTuple):
    role: Literal["user", "assistant", "tool"]
    text: str
    tool_calls: tuple[ToolCallRequest, ...] = ()
    #: For role "tool": the call this message answers.
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    #: For role "assistant": what the provider asked to get back with this reply (ModelReply.state).
    state: dict[str, Any] | None = None
    #: For roles "user" and "tool": the images it carries (a vision model sees them, another a note).
    images: tuple[ImagePart, ...] = ()


class ToolSchema(NamedTuple):
    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments


class ModelRequest(NamedTuple):
    system: str
    messages: tuple[ChatMessage, ...]
    tools: tuple[ToolSchema, ...] = ()


class Usage(NamedTuple):
    """The tokens of one model request as the provider counted them. `input_tokens` leaves out
    what was read from the prompt cache (`cache_read_tokens`) and written to it
    (`cache_write_tokens`), as Anthropic counts; OpenAI's cached prompt tokens are taken out of
    its prompt tokens to match."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class ModelReply(NamedTuple):
    text: str
    tool_calls: tuple[ToolCallRequest, ...] = ()
    #: Provider data to send back with this reply in later requests (Anthropic's thinking
    #: blocks); stored with the message, so it survives task rebuilds and restarts.
    state: dict[str, Any] | None = None
    #: What the request cost in tokens, when the provider said.
    usage: Usage | None = None


class ModelLimits(NamedTuple):
    """How long a streamed model request may wait, in seconds: for its first event (from sending
    the request), then between two events (settings modelFirstByteTimeoutSeconds, modelIdleTimeoutSeconds);
    how often a request the server refused for now is sent again, and how long it may wait for
    that in all (maxRetries, maxRetryWaitSeconds)."""

    first_byte: float = Settings.model_fields["model_first_byte_timeout_seconds"].default
    idle: float = Settings.model_fields["model_idle_timeout_seconds"].default
    retries: int = Settings.model_fields["max_retries"].default
    retry_wait: float = Settings.model_fields["max_retry_wait_seconds"].default

    @classmethod
    def of(cls, settings: Settings) -> ModelLimits:
        return cls(
            settings.model_first_byte_timeout_seconds,
            settings.model_idle_timeout_seconds,
            settings.max_retries,
            settings.max_retry_wait_seconds,
        )


class ModelError(Exception):
    """The provider could not answer (configuration, network, refusal). The turn fails with this text."""


def no_notice(text: str) -> None:
    """The default `on_notice`: nobody is told."""


class ModelClient(Protocol):
    async def complete(
        self,
        request: ModelRequest,
        on_text: Callable[[str], None],
        on_notice: Callable[[str], None] = no_notice,
        on_thinking: Callable[[str], None] = no_notice,
    ) -> ModelReply:
        """Answer the request, streaming visible text through `on_text` as it arrives. What the user
        should know meanwhile but is not the model's text (a wait before a retry) goes to `on_notice`."""
