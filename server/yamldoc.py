"""A YAML (or JSON) file of the repository read as nodes, so that each problem becomes a
diagnostic at the line and column where it is (mode files, the agents file).

Scalars follow YAML 1.2's core schema, as Roo Code's parser does: only `true`/`false` (any of
their three spellings) are booleans, only `null`/`~`/nothing is null, numbers are 1.2's — so
`name: No`, `on`, `off`, `yes` and `2025-01-01` stay strings (PyYAML's SafeLoader is YAML 1.1,
where they are booleans and dates). libyaml composes the nodes when PyYAML has it (a 2 MiB file
in a fraction of a second); when it refuses the text, PyYAML's own parser decides: it reads
JSON's escaped surrogate pairs (`\\ud83d\\udcdd`), which libyaml refuses, and words the errors.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Hashable, Literal, NamedTuple

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import BaseResolver
from yaml.scanner import Scanner

from .modes.model import Diagnostic
from .untrusted import yaml_too_big


class CoreResolver(BaseResolver):
    """YAML 1.2 core schema's implicit tags (https://yaml.org/spec/1.2.2/#1032-tag-resolution);
    anything else plain is a string. The merge key `<<` stays, as before."""

    yaml_implicit_resolvers: dict = {}


for tag, pattern, first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    ("float", r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", "-+.0123456789"),
    ("merge", r"^(?:<<)$", "<"),
):  # int before float: a plain `12` is both, and the first that matches decides
    CoreResolver.add_implicit_resolver(f"tag:yaml.org,2002:{tag}", re.compile(pattern), list(first))


class CoreConstructor(SafeConstructor):
    """SafeConstructor, with YAML 1.2's integers (`012` is twelve; `0o17` octal, `0x1f` hex)."""

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        text = self.construct_scalar(node)
        if text.startswith("0o"):
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text)


CoreConstructor.add_constructor("tag:yaml.org,2002:int", CoreConstructor.construct_yaml_int)


class CoreLoader(Reader, Scanner, Parser, Composer, CoreConstructor, CoreResolver):
    """SafeLoader with YAML 1.2's core schema (PyYAML's pure-Python parser)."""

    def __init__(self, stream: str):
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)
        CoreConstructor.__init__(self)
        CoreResolver.__init__(self)


if yaml.__with_libyaml__:
    from yaml._yaml import CParser

    class CoreCLoader(CParser, CoreConstructor, CoreResolver):
        """The same schema over libyaml's parser."""

        def __init__(self, stream: str):
            CParser.__init__(self, stream)
            CoreConstructor.__init__(self)
            CoreResolver.__init__(self)

    LOADERS: tuple[type, ...] = (CoreCLoader, CoreLoader)
else:  # pragma: no cover - PyYAML built without libyaml
    LOADERS = (CoreLoader,)


BOM = "\ufeff"


def parse_root(text: str, what: str) -> tuple[yaml.Node | None, Diagnostic | None]:
    """The document's root node (None for an empty file), or the diagnostic saying why the
    `what` ("modes file") cannot be read: a syntax error where it is, or too many nodes.
    A byte order mark before the content is not part of it (an editor does not show it)."""
    text = text.removeprefix(BOM)
    if "\t" in text and _is_json(text):
        # YAML refuses tabs where JSON allows them (Roo's .roomodes is JSON). In valid JSON a tab
        # can only be whitespace between tokens, so spaces keep every line and column.
        text = text.replace("\t", " ")
    try:
        root = _compose(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line, mark.column) if mark else (0, 0)
        problem = exc.problem or exc.context or "syntax error"
        return None, Diagnostic(line, col, line, col + 1, f"Cannot parse {what}: {problem}")
    except yaml.YAMLError as exc:
        return None, Diagnostic(0, 0, 0, 1, f"Cannot parse {what}: {exc}")
    if root is None:
        return None, None
    if root.start_mark.buffer is None:
        _keep_text(root, text)
    if (problem := yaml_too_big(root)) is not None:
        return None, at(root, f"{what[:1].upper()}{what[1:]} not read: {problem}")
    return root, None


def _compose(text: str) -> yaml.Node | None:
    """The root node, by the first loader that reads the text (the last one's error otherwise)."""
    for i, kind in enumerate(LOADERS):
        loader = kind(text)
        try:
            return loader.get_single_node()
        except yaml.YAMLError:
            if i == len(LOADERS) - 1:
                raise
        finally:
            loader.dispose()
    return None


def _keep_text(root: yaml.Node, text: str) -> None:
    """libyaml's marks know where a node starts, not the text: a block that spans lines gets it,
    for `at()` to underline its first line."""
    seen: set[int] = set()
    stack = [root] if isinstance(root.value, list) else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.end_mark.line != node.start_mark.line:
            m = node.start_mark
            node.start_mark = yaml.Mark(m.name, m.index, m.line, m.column, text, m.index)
        pairs = node.value and isinstance(node.value[0], tuple)  # a mapping's (key, value) pairs
        children = [n for pair in node.value for n in pair] if pairs else node.value
        stack.extend(n for n in children if isinstance(n.value, list))


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def construct(node: yaml.Node) -> Any:
    """The node's data (None if it cannot be built)."""
    try:
        return _join_surrogates(CoreConstructor().construct_object(node, deep=True))
    except yaml.YAMLError:
        return None


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


class Problem(NamedTuple):
    """What is wrong in an entry: where (a location inside it) and why. A warning does not keep
    the entry from loading; a plain (loc, message) pair is an error."""

    loc: tuple
    message: str
    warning: bool = False


def entries(
    listed: yaml.SequenceNode,
    validate: Callable[[Any], tuple[Any, list[tuple]]],
    *,
    what: str,
    name: str,
    key: Callable[[Any], Hashable],
) -> tuple[list[tuple[Any, yaml.Node]], list[Diagnostic]]:
    """Each entry of a list checked on its own (a mode, an agent): `validate(data)` gives the
    item or None and its problems (`Problem`s or (location in the entry, message) pairs). A bad
    entry is a diagnostic where it goes wrong, "<What> <label> skipped: <message>", and the
    others load; a warning is "<What> <label>: <message>" and the entry loads; an entry whose
    `key` an earlier one has is skipped too. The items come with their nodes."""
    items: list[tuple[Any, yaml.Node]] = []
    diagnostics: list[Diagnostic] = []
    seen: dict[Hashable, int] = {}
    for index, node in enumerate(listed.value):
        data = construct(node)
        label = repr(data[name]) if isinstance(data, dict) and isinstance(data.get(name), str) else f"#{index + 1}"
        item, problems = validate(data)
        if item is not None and key(item) in seen:
            problems = [((name,), f"{name} {data[name]!r} is already defined on line {seen[key(item)] + 1}")]
        failed = item is None
        for problem in problems:
            loc, message = problem[0], problem[1]
            if getattr(problem, "warning", False):
                diagnostics.append(at(node_at(node, loc), f"{what} {label}: {message}", "warning"))
            else:
                failed = True
                diagnostics.append(at(node_at(node, loc), f"{what} {label} skipped: {message}"))
        if failed:
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


def at(node: yaml.Node, message: str, severity: Literal["error", "warning"] = "error") -> Diagnostic:
    """A diagnostic on the node (a block: on its first line)."""
    start, end = node.start_mark, node.end_mark
    if end.line != start.line:
        width = max(1, len(_first_line(node)))
        return Diagnostic(start.line, start.column, start.line, start.column + width, message, severity)
    return Diagnostic(start.line, start.column, end.line, max(end.column, start.column + 1), message, severity)


def _first_line(node: yaml.Node) -> str:
    buffer = node.start_mark.buffer
    if not buffer:
        return ""
    rest = buffer[node.start_mark.pointer :]
    return rest.split("\n", 1)[0].rstrip("\0")
