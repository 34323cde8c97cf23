"""A YAML (or JSON) file of the repository read as nodes, so that each problem becomes a
diagnostic at the line and column where it is (mode files, the agents file)."""

from __future__ import annotations

import json
from typing import Any, Callable, Hashable

import yaml

from .modes.model import Diagnostic
from .untrusted import yaml_too_big


def parse_root(text: str, what: str) -> tuple[yaml.Node | None, Diagnostic | None]:
    """The document's root node (None for an empty file), or the diagnostic saying why the
    `what` ("modes file") cannot be read: a syntax error where it is, or too many nodes."""
    if "\t" in text and _is_json(text):
        # YAML refuses tabs where JSON allows them (Roo's .roomodes is JSON). In valid JSON a tab
        # can only be whitespace between tokens, so spaces keep every line and column.
        text = text.replace("\t", " ")
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line, mark.column) if mark else (0, 0)
        problem = exc.problem or exc.context or "syntax error"
        return None, Diagnostic(line, col, line, col + 1, f"Cannot parse {what}: {problem}")
    except yaml.YAMLError as exc:
        return None, Diagnostic(0, 0, 0, 1, f"Cannot parse {what}: {exc}")
    finally:
        loader.dispose()
    if root is not None and (problem := yaml_too_big(root)) is not None:
        return None, at(root, f"{what[:1].upper()}{what[1:]} not read: {problem}")
    return root, None


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def construct(node: yaml.Node) -> Any:
    """The node's data (None if it cannot be built)."""
    loader = yaml.SafeLoader("")
    try:
        return _join_surrogates(loader.construct_object(node, deep=True))
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def _join_surrogates(value: Any) -> Any:
    """JSON escapes an emoji as a surrogate pair (\\ud83d\\udcdd), which YAML keeps apart; join them."""
    if isinstance(value, str):
        try:
            return value.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            return value
    if isinstance(value, list):
        return [_join_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {k: _join_surrogates(v) for k, v in value.items()}
    return value


def entries(
    listed: yaml.SequenceNode,
    validate: Callable[[Any], tuple[Any, list[tuple[tuple, str]]]],
    *,
    what: str,
    name: str,
    key: Callable[[Any], Hashable],
) -> tuple[list[tuple[Any, yaml.Node]], list[Diagnostic]]:
    """Each entry of a list checked on its own (a mode, an agent): `validate(data)` gives the
    item or None and its problems, each (location in the entry, message). A bad entry is a
    diagnostic where it goes wrong, "<What> <label> skipped: <message>", and the others load;
    an entry whose `key` an earlier one has is skipped too. The items come with their nodes."""
    items: list[tuple[Any, yaml.Node]] = []
    diagnostics: list[Diagnostic] = []
    seen: dict[Hashable, int] = {}
    for index, node in enumerate(listed.value):
        data = construct(node)
        label = repr(data[name]) if isinstance(data, dict) and isinstance(data.get(name), str) else f"#{index + 1}"
        item, problems = validate(data)
        if item is not None and key(item) in seen:
            problems = [((name,), f"{name} {data[name]!r} is already defined on line {seen[key(item)] + 1}")]
        for loc, message in problems:
            diagnostics.append(at(node_at(node, loc), f"{what} {label} skipped: {message}"))
        if problems or item is None:
            continue
        seen[key(item)] = node.start_mark.line
        items.append((item, node))
    return items, diagnostics


def child(node: yaml.MappingNode, key: str) -> yaml.Node | None:
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v
    return None


def node_at(node: yaml.Node, loc: tuple) -> yaml.Node:
    """The deepest node along a pydantic error location (the key's line for a missing field)."""
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            match = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None)
            if match is None:
                return node
            node = match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return node
    return node


def at(node: yaml.Node, message: str) -> Diagnostic:
    """A diagnostic on the node (a block: on its first line)."""
    start, end = node.start_mark, node.end_mark
    if end.line != start.line:
        width = max(1, len(_first_line(node)))
        return Diagnostic(start.line, start.column, start.line, start.column + width, message)
    return Diagnostic(start.line, start.column, end.line, max(end.column, start.column + 1), message)


def _first_line(node: yaml.Node) -> str:
    buffer = node.start_mark.buffer
    if not buffer:
        return ""
    rest = buffer[node.start_mark.pointer :]
    return rest.split("\n", 1)[0].rstrip("\0")
