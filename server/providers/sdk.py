"""What the two SDK-backed providers share: the API key, the client, the time limits of a streamed
request, retries, and failures as ModelError.

A request the server refuses for now (429 rate limited, 529 overloaded, another 5xx) before any
event of its stream came is sent again, here and nowhere else (the SDKs' own retries are off):
each wait is told through `on_notice` before it starts, and it is an anyio sleep, so cancelling
the turn ends it at once.

The SDKs take seconds to import, so each is imported on the first request and in a worker
thread: the server starts without them and keeps answering while they load.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import math
import os
import random
import weakref
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, AsyncIterator, Callable, Mapping

import anyio

from protocol import Model

from .base import ModelError, ModelLimits, ModelReply, ModelRequest, no_notice
from .catalog import vision_of
from .wire import WireCache

#: Sent to a custom baseUrl when no apiKeyEnv is named: a local server needs no key, and the
#: user's provider key must not go to another host unasked.
PLACEHOLDER_KEY = "modus-no-key"

#: The SDK clients by event loop (a client's connections belong to the loop that opened them),
#: then by provider, endpoint, key and time limits.
_CLIENTS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, Any]]" = weakref.WeakKeyDictionary()

#: Without a `retry-after` from the server, the first wait before a retry, in seconds; each next
#: one is twice as long, up to BACKOFF_LONGEST.
BACKOFF_FIRST = 1.0
BACKOFF_LONGEST = 30.0


class NotNow(ModelError):
    """The server refused the request for now (HTTP 429, 529 or another 5xx) before any event of
    its stream came: asked again later, it may answer."""

    def __init__(self, text: str, status: int, what: str, retry_after: float | None):
        super().__init__(text)
        self.status = status
        self.what = what  # `HTTP 429 (rate_limit_error): <the server's message>`
        self.retry_after = retry_after  # the seconds the server asked to wait, if it did

    @property
    def kind(self) -> str:
        return {429: "Rate limited", 529: "Overloaded"}.get(self.status, "Server error")


def retryable(status: int) -> bool:
    return status == 429 or 500 <= status <= 599


def backoff(attempt: int, jitter: float) -> float:
    """The wait after failed attempt number `attempt` when the server named none: 1, 2, 4 … up to
    30 seconds, shortened by up to half (`jitter` from 0 to 1) so that clients do not all come back at once."""
    return min(BACKOFF_FIRST * 2 ** (attempt - 1), BACKOFF_LONGEST) * (1 - jitter / 2)


def retry_after(headers: Mapping[str, str], now: datetime) -> float | None:
    """The seconds the server asks to wait: `retry-after-ms`, or `retry-after` as seconds or as an
    HTTP date; None when it names no wait it makes sense to honour."""
    for name, scale in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            seconds = _seconds_until(value, now) if scale == 1 else math.nan
        if math.isfinite(seconds):
            return max(seconds, 0.0)
    return None


def _seconds_until(date: str, now: datetime) -> float:
    try:
        when = parsedate_to_datetime(date)
    except (TypeError, ValueError):
        return math.nan
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp() - now.timestamp()


class Events:
    """The events of one streamed request, each within its time limit: the first `first_byte`
    seconds after the request was sent, every next one `idle` seconds after the one before."""

    def __init__(self, limits: ModelLimits, derived: frozenset[str]):
        self.limits = limits
        self.derived = derived
        self.scope = anyio.CancelScope(deadline=anyio.current_time() + limits.first_byte)
        self.stream: AsyncIterator[Any] | None = None  # set once the response has come
        self.count = 0  # the server's events received

    def __aiter__(self) -> Events:
        return self

    async def __anext__(self) -> Any:
        assert self.stream is not None
        event = await anext(self.stream)
        self.scope.deadline = anyio.current_time() + self.limits.idle
        if getattr(event, "type", None) not in self.derived:
            self.count += 1
        return event


#: What `listed` keeps of a server's model list (the set-up card's suggestions).
MAX_MODELS_LISTED = 500
MAX_MODEL_ID = 200


class SdkModel:
    provider: str  # "anthropic" | "openai": also the SDK's module name
    default_model: str
    default_key_env: str
    client_class: str  # the SDK's async client
    no_key_hint = ""
    #: Events the SDK makes up beside the server's own: not counted as received.
    derived_events: frozenset[str] = frozenset()

    def __init__(self, config: Model, limits: ModelLimits):
        self.config = config
        self.limits = limits
        self.model = config.model or self.default_model
        #: whether the model sees images (else they are a note: base.image_note)
        self.vision = vision_of(config)
        self.api_key = self._api_key()
        self._client: Any = None
        #: the conversation's groups, serialised once (wire.py)
        self.wire = WireCache()

    async def complete(
        self,
        request: ModelRequest,
        on_text: Callable[[str], None],
        on_notice: Callable[[str], None] = no_notice,
        on_thinking: Callable[[str], None] = no_notice,
    ) -> ModelReply:
        """Ask, and ask again while the server refuses for now (see NotNow): at most `retries`
        times, waiting at most `retry_wait` seconds in all; every wait is told through `on_notice`."""
        attempt, waited = 1, 0.0
        while True:
            try:
                return await self.ask_once(request, on_text, on_thinking)
            except NotNow as refused:
                if attempt > self.limits.retries:
                    raise self.error(self._gave_up(attempt, f"(maxRetries {self.limits.retries})", refused)) from None
                delay = refused.retry_after
                if delay is None:
                    delay = backoff(attempt, random.random())
                if waited + delay > self.limits.retry_wait:
                    cap = _seconds(self.limits.retry_wait)
                    why = f"(waiting {_seconds(delay)} more would pass maxRetryWaitSeconds, {cap} in all)"
                    raise self.error(self._gave_up(attempt, why, refused)) from None
                on_notice(self.scrub(
                    f"{refused.kind}: {self.provider} model {self.model} answered {refused.what.rstrip('.')}. "
                    f"Retrying in {_seconds(delay)} (attempt {attempt + 1} of {self.limits.retries + 1})."
                ))
                await anyio.sleep(delay)
                attempt, waited = attempt + 1, waited + delay

    async def ask_once(
        self, request: ModelRequest, on_text: Callable[[str], None], on_thinking: Callable[[str], None] = no_notice
    ) -> ModelReply:
        """One request, streamed (each provider's own): the visible text to `on_text`, the
        model's thinking to `on_thinking`."""
        raise NotImplementedError

    @staticmethod
    def _gave_up(attempts: int, why: str, refused: NotNow) -> str:
        return f"gave up after {attempts} attempt{'s' if attempts > 1 else ''} {why}; the last answer: {refused.what}"

    def _api_key(self) -> str:
        env = self.config.api_key_env or (None if self.config.base_url else self.default_key_env)
        if env is None:
            return PLACEHOLDER_KEY
        key = os.environ.get(env, "").strip()
        if not key:
            raise ModelError(
                f"{self.provider}: no API key: the environment variable {env} is not set "
                f"(apiKeyEnv names the variable to read{self.no_key_hint})."
            )
        return key

    async def client(self) -> Any:
        """The SDK's client for this model's endpoint and key: one per event loop, shared by every
        task of that model (a mode switch builds a new task, not a new connection pool, and making
        a client, its TLS context with it, takes tens of milliseconds)."""
        if self._client is None:
            shared = _CLIENTS.setdefault(asyncio.get_running_loop(), {})
            key = (self.provider, self.config.base_url, self.api_key, self.limits.first_byte, self.limits.idle)
            if key not in shared:
                shared[key] = await anyio.to_thread.run_sync(self.new_client)
            self._client = shared[key]
        return self._client

    def new_client(self) -> Any:
        """A client of the SDK (loaded now if it is not yet: this blocks)."""
        sdk = importlib.import_module(self.provider)
        # Our limits (see streaming) apply first: the SDK's timeout, as long as the longer one, only
        # backs them up, so its 10-minute default never applies; it keeps its short connect timeout.
        # No retries of its own: ours (complete) are told to the user and end with the turn.
        timeout = sdk.Timeout(max(self.limits.first_byte, self.limits.idle), connect=sdk.DEFAULT_TIMEOUT.connect)
        return getattr(sdk, self.client_class)(
            api_key=self.api_key, base_url=self.config.base_url, timeout=timeout, max_retries=0
        )

    @asynccontextmanager
    async def streaming(self, opening: Any) -> AsyncIterator[Events]:
        """One streamed request within the limits: `opening` is the SDK's stream manager, or what to
        await for its stream. Whatever the SDK or the stream raises comes out as one ModelError;
        cancellation is no Exception and goes through."""
        events = Events(self.limits, self.derived_events)
        with events.scope:
            try:
                async with (await opening if inspect.isawaitable(opening) else opening) as stream:
                    events.stream = aiter(stream)
                    yield events
            except Exception as exc:
                raise self.failure(exc, events) from None
        if events.scope.cancelled_caught:
            raise self.timed_out(events)

    async def listed(self) -> list[str]:
        """The ids of the models the server lists (`GET /models`): the check of the chat's
        set-up that the endpoint answers and takes the key. A failure is a ModelError."""
        client = await self.client()
        events = Events(self.limits, self.derived_events)
        try:
            with anyio.fail_after(self.limits.first_byte):
                page = await client.models.list()
        except TimeoutError:
            raise self.timed_out(events) from None
        except Exception as exc:
            raise self.failure(exc, events) from None
        # a server of the user's choosing: its list is shown, not kept; bounded all the same
        return [str(m.id)[:MAX_MODEL_ID] for m in page.data[:MAX_MODELS_LISTED]]

    def who(self) -> str:
        return f"{self.provider} model {self.model} at {self._client.base_url}"

    def error(self, what: str) -> ModelError:
        return ModelError(self.scrub(f"{self.who()}: {what}"))

    def scrub(self, text: str) -> str:
        """Never the key in what the user sees (a server may quote it back)."""
        return text.replace(self.api_key, "***")

    def failure(self, exc: Exception, events: Events) -> ModelError:
        """Whatever the SDK or the stream raised, as one line naming the model; never the key."""
        sdk = importlib.import_module(self.provider)
        http = importlib.import_module("httpx2")  # the SDKs' HTTP client: Anthropic's stream raises its errors as they are
        if isinstance(exc, sdk.APIStatusError):
            what = self.status(exc.status_code, exc.body, exc.message)
            if retryable(exc.status_code) and events.count == 0:  # never once the stream started
                wait = retry_after(exc.response.headers, datetime.now(timezone.utc))
                return NotNow(str(self.error(what)), exc.status_code, self.scrub(what), wait)
            if exc.status_code == 401 and self.api_key == PLACEHOLDER_KEY:
                what += " (no API key was sent: name its environment variable in apiKeyEnv)"
        elif isinstance(exc, (sdk.APITimeoutError, http.TimeoutException)):
            what = "the request timed out"
        elif isinstance(exc, (sdk.APIConnectionError, http.TransportError)):
            if events.stream is not None:  # the response had come: the connection broke while streaming
                return self.cut(events, _deepest_reason(exc))
            what = f"cannot connect ({_connect_reason(exc)})"
        elif isinstance(exc, sdk.APIError):  # an error object inside the stream
            what = f"error in the stream: {exc.message}"
        else:
            what = f"malformed response ({type(exc).__name__}: {exc})" if str(exc) else f"malformed response ({type(exc).__name__})"
        return self.error(what)

    def timed_out(self, events: Events) -> ModelError:
        if events.count:
            return self.error(f"the stream stalled: nothing received for {self.limits.idle:g} s (modelIdleTimeoutSeconds)")
        return self.error(f"no response within {self.limits.first_byte:g} s (modelFirstByteTimeoutSeconds)")

    def cut(self, events: Events, reason: str = "it ended before the reply was complete") -> ModelError:
        """The stream broke, or ended without its final event: what came is not the whole reply."""
        return self.error(f"the stream was cut off after {events.count} events: {reason}")

    def status(self, code: int, body: object, fallback: str) -> str:
        """`HTTP 429 (rate_limit_error): <the server's message>`."""
        where = f"HTTP {code}" if code != 200 else "error in the stream"
        body = body.get("error", body) if isinstance(body, dict) else body
        if isinstance(body, dict) and body.get("message"):
            kind = body.get("code") or body.get("type")
            return f"{where}{f' ({kind})' if kind else ''}: {body['message']}"
        return f"{where}: {str(body or fallback)[:300]}"

    def max_tokens_in_call(self) -> ModelError:
        """Never run a call whose arguments were cut off."""
        return self.error("the reply reached max tokens in the middle of a tool call; raise maxTokens.")


def _seconds(value: float) -> str:
    """`8 s`, `0.5 s`, `1.7 s`: to a tenth, as the user reads it."""
    return f"{round(value, 1):g} s"


def _connect_reason(exc: BaseException) -> str:
    """'connection refused', else the innermost reason ('[Errno -2] Name or service not known')."""
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in chain:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    if any(isinstance(c, ConnectionRefusedError) for c in chain):
        return "connection refused"
    return str(chain[-1]) or type(chain[-1]).__name__


def _deepest_reason(exc: BaseException) -> str:
    """The innermost cause that says something: 'peer closed connection without sending complete
    message body (incomplete chunked read)', '[Errno 104] Connection reset by peer'."""
    reason = type(exc).__name__
    cause: BaseException | None = exc
    while cause is not None:
        reason = str(cause) or reason
        cause = cause.__cause__
    return reason
