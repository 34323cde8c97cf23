"""The wire contract of Modus (PROTOCOL.md): pydantic models and method names.

Names (`protocol.names`, also `PROTOCOL_VERSION` and `Command` here) import nothing; the models
are loaded the first time one is asked for, so a process can answer `initialize` before paying
for pydantic: first `models` (settings and state), `messages` (the rest) when one of them is.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .names import PROTOCOL_VERSION, Command

_LAZY_MODULES = {"messages", "methods", "models", "schema"}
#: Where the models are: what a session starts with first, then the rest (loaded on first use).
_SHAPES = (".models", ".messages")


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return import_module(f".{name}", __name__)
    if name == "REQUESTS":
        return import_module(".methods", __name__).REQUESTS
    if name == "json_schema":
        return import_module(".schema", __name__).json_schema
    for module in _SHAPES:
        found = getattr(import_module(module, __name__), name, None)
        if found is not None:
            return found
    raise AttributeError(f"module 'protocol' has no attribute {name!r}")


__all__ = ["PROTOCOL_VERSION", "Command", "REQUESTS", "json_schema", "messages", "methods", "models", "schema"]
