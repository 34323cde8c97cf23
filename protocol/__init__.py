"""The wire contract of Modus (PROTOCOL.md): pydantic models and method names.

Names (`protocol.names`, also `PROTOCOL_VERSION` and `Command` here) import nothing; the models
are loaded the first time one is asked for, so a process can answer `initialize` before paying
for pydantic.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .names import PROTOCOL_VERSION, Command

_LAZY_MODULES = {"methods", "models", "schema"}


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return import_module(f".{name}", __name__)
    if name == "REQUESTS":
        return import_module(".methods", __name__).REQUESTS
    if name == "json_schema":
        return import_module(".schema", __name__).json_schema
    models = import_module(".models", __name__)
    try:
        return getattr(models, name)
    except AttributeError:
        raise AttributeError(f"module 'protocol' has no attribute {name!r}") from None


__all__ = ["PROTOCOL_VERSION", "Command", "REQUESTS", "json_schema", "methods", "models", "schema"]
