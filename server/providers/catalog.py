"""What Modus knows of the models it talks to: each one's context window and price.

A Model setting's own `contextWindow` and `pricing` come first. Without them the list below
answers for the models we know (list prices in USD per million tokens, cache writes at the
5-minute rate); any other model gets DEFAULT_WINDOW and no price: tokens only, never a guess.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from protocol import ContextInfo, Model, Pricing

from .base import Usage

#: The model a provider talks to when the setting names none.
DEFAULT_MODEL = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-5.5"}

#: The window of a model not in the list (the scripted one included): small enough for most
#: models a local server runs at full size; set `contextWindow` for one with less.
DEFAULT_WINDOW = 128_000


class Known(NamedTuple):
    window: int
    #: USD per million tokens: input, output, cache read, cache write (None: the input price)
    price: tuple[float, float, float | None, float | None]


_SONNET = (3.0, 15.0, 0.30, 3.75)

#: model id → what we know; a dated id (`claude-sonnet-4-5-20250929`, `gpt-5-2025-08-07`) has its model's.
KNOWN: dict[str, Known] = {
    "claude-sonnet-4-6": Known(1_000_000, _SONNET),
    "claude-sonnet-4-5": Known(200_000, _SONNET),
    "claude-sonnet-4": Known(200_000, _SONNET),
    "claude-opus-4-1": Known(200_000, (15.0, 75.0, 1.50, 18.75)),
    "claude-haiku-4-5": Known(200_000, (1.0, 5.0, 0.10, 1.25)),
    "gpt-5.5": Known(1_050_000, (5.0, 30.0, None, None)),
    "gpt-5": Known(400_000, (1.25, 10.0, 0.125, None)),
    "gpt-5-mini": Known(400_000, (0.25, 2.0, 0.025, None)),
    "gpt-4.1": Known(1_047_576, (2.0, 8.0, 0.50, None)),
}

_DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


def model_id(config: Model) -> str | None:
    """The model the provider is asked for: the setting's, else the provider's default."""
    return config.model or DEFAULT_MODEL.get(config.provider)


def _known(config: Model) -> Known | None:
    if config.provider == "scripted":
        return None
    return KNOWN.get(_DATED.sub("", model_id(config) or ""))


#: Models known to see images, by their id (dated ids and suffixes included): Claude 3 and later
#: (claude-3-*, claude-3-5-*, claude-sonnet-4*, claude-opus-4*, claude-haiku-4*…), GPT-4o, GPT-4.1,
#: GPT-4.5, GPT-4 Turbo, GPT-5 and the o-series (o1, o3, o4-mini; not o1-mini, o3-mini).
_VISION = re.compile(
    r"^(claude-(3|[a-z]+-[4-9])|gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-4-turbo|gpt-5|o1(?!-mini)|o3(?!-mini)|o4)",
)


def vision_of(config: Model) -> bool:
    """Whether the model sees images: its `vision` setting, else what Modus knows of it. The
    scripted model does (the test double); a model Modus does not know does not (a model of a
    local server, say): set `vision: true` for one that does."""
    if config.vision is not None:
        return config.vision
    if config.provider == "scripted":
        return True
    return bool(_VISION.match((model_id(config) or "").lower().rpartition("/")[2]))


def price_of(config: Model) -> Pricing | None:
    if config.pricing is not None:
        return config.pricing
    known = _known(config)
    if known is None:
        return None
    given, output, read, write = known.price
    return Pricing(input=given, output=output, cache_read=read, cache_write=write)


def window_of(config: Model) -> int:
    """The tokens the model takes in one request, its reply included."""
    if config.context_window is not None:
        return config.context_window
    known = _known(config)
    return known.window if known else DEFAULT_WINDOW


def context_info(config: Model, percent: int, used: int | None) -> ContextInfo:
    """The model's window, where a conversation is condensed (`percent` of it: the
    condenseThreshold setting), and what a request took (`used`)."""
    window = window_of(config)
    return ContextInfo(used=used, window=window, threshold=window * percent // 100)


def cost(usage: Usage, price: Pricing | None) -> float | None:
    """USD, or None when the price is not known. A cache price not given is the input price."""
    if price is None:
        return None
    read = price.cache_read if price.cache_read is not None else price.input
    write = price.cache_write if price.cache_write is not None else price.input
    total = usage.input_tokens * price.input + usage.output_tokens * price.output
    total += usage.cache_read_tokens * read + usage.cache_write_tokens * write
    return total / 1_000_000
