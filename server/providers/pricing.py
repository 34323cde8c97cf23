"""What a model request cost: the model's price (its `pricing` setting, else the list below) times
the tokens the provider reported. A model whose price is not known costs None: tokens only,
never a guess.

The list holds the list prices (USD per million tokens; cache writes at the 5-minute rate) of
models whose prices we know; add `pricing` to a Model setting for any other.
"""

from __future__ import annotations

import re

from protocol import Model, Pricing

from .base import Usage

#: model id → price; a dated id (`claude-sonnet-4-5-20250929`, `gpt-5-2025-08-07`) has its model's.
KNOWN: dict[str, Pricing] = {
    "claude-sonnet-4-5": Pricing(input=3.0, output=15.0, cache_read=0.30, cache_write=3.75),
    "claude-sonnet-4": Pricing(input=3.0, output=15.0, cache_read=0.30, cache_write=3.75),
    "claude-opus-4-1": Pricing(input=15.0, output=75.0, cache_read=1.50, cache_write=18.75),
    "claude-haiku-4-5": Pricing(input=1.0, output=5.0, cache_read=0.10, cache_write=1.25),
    "gpt-5": Pricing(input=1.25, output=10.0, cache_read=0.125),
    "gpt-5-mini": Pricing(input=0.25, output=2.0, cache_read=0.025),
    "gpt-4.1": Pricing(input=2.0, output=8.0, cache_read=0.50),
}

_DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


def price_of(config: Model) -> Pricing | None:
    if config.pricing is not None:
        return config.pricing
    return KNOWN.get(_DATED.sub("", config.model or "")) if config.provider != "scripted" else None


def cost(usage: Usage, price: Pricing | None) -> float | None:
    """USD, or None when the price is not known. A cache price not given is the input price."""
    if price is None:
        return None
    read = price.cache_read if price.cache_read is not None else price.input
    write = price.cache_write if price.cache_write is not None else price.input
    total = usage.input_tokens * price.input + usage.output_tokens * price.output
    total += usage.cache_read_tokens * read + usage.cache_write_tokens * write
    return total / 1_000_000
