"""What goes into an MCP call and what comes out of it, as the model reads it.

Arguments are checked against the tool's input schema before the call (a refusal names the
field). A result becomes text: text blocks joined, an image or audio block as a one-line note,
a linked resource as its URI, an embedded resource as its text; cut at MAX_RESULT_CHARS with a
marker saying how much was left out.
"""

from __future__ import annotations

import json
from typing import Any

#: The most characters of a result the model gets.
MAX_RESULT_CHARS = 100_000


def check_arguments(schema: dict[str, Any] | None, arguments: dict[str, Any]) -> str | None:
    """Why `arguments` do not fit the tool's input schema (the field named), None when they do.
    A schema that is itself broken checks nothing: the server has the last word."""
    if not schema:
        return None
    from jsonschema import SchemaError, validators
    from jsonschema.exceptions import best_match

    try:
        cls = validators.validator_for(schema)
        cls.check_schema(schema)
    except SchemaError:
        return None
    try:
        error = best_match(cls(schema).iter_errors(arguments))
    except Exception:  # a $ref it cannot resolve, say: the server checks them itself
        return None
    if error is None:
        return None
    where = "arguments" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"{where}: {_short(error.message)}"


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _size(data: str) -> str:
    """The size of base64 data once decoded."""
    n = len(data) * 3 // 4 - data[-2:].count("=") if data else 0
    return f"{n / 1024:.0f} KiB" if n >= 1024 else f"{n} bytes"


def _block(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {_size(block.data)}]"
    if kind == "resource_link":
        return f"[resource: {block.uri}{f' ({block.name})' if block.name else ''}]"
    if kind == "resource":
        return contents_text(block.resource)
    return f"[{kind or type(block).__name__} content]"


def contents_text(contents: Any) -> str:
    """One resource's contents: its text, or a note for binary data."""
    text = getattr(contents, "text", None)
    if text is not None:
        return text
    blob = getattr(contents, "blob", "") or ""
    return f"[resource {contents.uri}: {contents.mime_type or 'binary data'}, {_size(blob)}]"


def result_text(result: Any) -> str:
    """A tools/call result as text; structured content when there is nothing else."""
    parts = [_block(b) for b in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return capped("\n\n".join(p for p in parts if p) or "(no output)")


def resource_text(result: Any) -> str:
    """A resources/read result as text."""
    return capped("\n\n".join(contents_text(c) for c in result.contents) or "(empty resource)")


def capped(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... the result was cut here: {len(text) - limit:,} more characters not shown ...]"
