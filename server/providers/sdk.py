"""What the two SDK-backed providers share: the API key, the client, and failures as ModelError.

The SDKs take seconds to import, so each is imported on the first request and in a worker
thread: the server starts without them and keeps answering while they load.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import anyio

from protocol import Model

from .base import ModelError

#: Sent to a custom baseUrl when no apiKeyEnv is named: a local server needs no key, and the
#: user's provider key must not go to another host unasked.
PLACEHOLDER_KEY = "modus-no-key"


class SdkModel:
    provider: str  # "anthropic" | "openai": also the SDK's module name
    default_model: str
    default_key_env: str
    client_class: str  # the SDK's async client
    no_key_hint = ""

    def __init__(self, config: Model):
        self.config = config
        self.model = config.model or self.default_model
        self.api_key = self._api_key()
        self._client: Any = None

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
        if self._client is None:
            self._client = await anyio.to_thread.run_sync(self._new_client)
        return self._client

    def _new_client(self) -> Any:
        sdk = importlib.import_module(self.provider)
        # One retry: a dead endpoint must fail the turn quickly, not after minutes of back-off.
        return getattr(sdk, self.client_class)(api_key=self.api_key, base_url=self.config.base_url, max_retries=1)

    def who(self) -> str:
        return f"{self.provider} model {self.model} at {self._client.base_url}"

    def failure(self, exc: Exception) -> ModelError:
        """Whatever the SDK or the stream raised, as one line naming the model; never the key."""
        sdk = importlib.import_module(self.provider)
        if isinstance(exc, sdk.APIStatusError):
            what = self.status(exc.status_code, exc.body, exc.message)
            if exc.status_code == 401 and self.api_key == PLACEHOLDER_KEY:
                what += " (no API key was sent: name its environment variable in apiKeyEnv)"
        elif isinstance(exc, sdk.APITimeoutError):
            what = "the request timed out"
        elif isinstance(exc, sdk.APIConnectionError):
            what = f"cannot connect ({exc.__cause__ or exc})"
        elif isinstance(exc, sdk.APIError):  # an error object inside the stream
            what = f"error in the stream: {exc.message}"
        else:
            what = f"malformed response ({type(exc).__name__}: {exc})" if str(exc) else f"malformed response ({type(exc).__name__})"
        return ModelError(f"{self.who()}: {what}".replace(self.api_key, "***"))

    def status(self, code: int, body: object, fallback: str) -> str:
        """`HTTP 429 (rate_limit_error): <the server's message>`."""
        where = f"HTTP {code}" if code != 200 else "error in the stream"
        body = body.get("error", body) if isinstance(body, dict) else body
        if isinstance(body, dict) and body.get("message"):
            kind = body.get("code") or body.get("type")
            return f"{where}{f' ({kind})' if kind else ''}: {body['message']}"
        return f"{where}: {str(body or fallback)[:300]}"

    def cut_off(self, reason: str | None) -> ModelError:
        """Never run a call whose arguments were cut off."""
        if reason in ("max_tokens", "length"):
            return ModelError(f"{self.who()}: the reply reached max tokens in the middle of a tool call; raise maxTokens.")
        return ModelError(f"{self.who()}: the stream ended in the middle of a tool call.")
