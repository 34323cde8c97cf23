"""Reading custom modes from a file: `customModes: [...]`, YAML or JSON (Roo's `.roomodes` as is).

Each mode is validated on its own: a bad mode becomes a diagnostic at the line where it goes
wrong and is skipped, and the other modes of the file still load.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ..untrusted import yaml_too_big
from .model import GROUP_TOOLS, Diagnostic, Group, LoadResult, Mode
from .patterns import Pattern, PatternError


class _ModeFields(BaseModel):
    """The scalar fields of a custom mode; `groups` is checked by `_groups` for exact locations."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    slug: str
    name: str
    roleDefinition: str
    whenToUse: str | None = None
    description: str | None = None
    customInstructions: str | None = None

    @field_validator("slug")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not SLUG.fullmatch(value):
            raise ValueError(f"{value!r} may contain only letters, digits and hyphens")
        return value

    @field_validator("name", "roleDefinition")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value


SLUG = re.compile(r"[a-zA-Z0-9-]+")

Problem = tuple[tuple, str]  # (location inside the mode, message)


def _groups(data: dict) -> tuple[list[Group], list[Problem]]:
    if "groups" not in data:
        return [], [((), "groups: field required (a list of tool groups, may be empty)")]
    raw = data["groups"]
    if not isinstance(raw, list):
        return [], [(("groups",), "groups: must be a list")]
    groups: list[Group] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        where = ("groups", i)
        options: Any = {}
        if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], dict):
            entry, options = entry
        if not isinstance(entry, str):
            problems.append((where, f"groups.{i}: expected a group name or [name, {{fileRegex, description}}]"))
            continue
        if entry not in GROUP_TOOLS:
            problems.append((where, f"groups.{i}: unknown group {entry!r} (expected one of {', '.join(GROUP_TOOLS)})"))
            continue
        if entry in seen:
            problems.append((where, f"groups.{i}: group {entry!r} is listed twice"))
            continue
        seen.add(entry)
        regex, description = options.get("fileRegex"), options.get("description")
        pattern = None
        if regex is not None:
            try:
                pattern = Pattern.compile(regex) if isinstance(regex, str) else None
                if pattern is None:
                    raise PatternError("fileRegex must be a string")
            except PatternError as exc:
                problems.append((where + (1, "fileRegex"), f"groups.{i}.fileRegex: {exc}"))
                continue
        if description is not None and not isinstance(description, str):
            problems.append((where + (1, "description"), f"groups.{i}.description: must be a string"))
            continue
        groups.append(Group(entry, pattern, description))
    return groups, problems


def _validate(data: Any, source: str, origin: str) -> tuple[Mode | None, list[Problem]]:
    if not isinstance(data, dict):
        return None, [((), "a mode must be a mapping with slug, name, roleDefinition and groups")]
    problems: list[Problem] = []
    fields = None
    try:
        fields = _ModeFields.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            name = ".".join(str(p) for p in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            problems.append((err["loc"] if err["type"] != "missing" else (), f"{name}: {msg[:1].lower()}{msg[1:]}"))
    groups, group_problems = _groups(data)
    problems += group_problems
    if problems or fields is None:
        return None, problems
    mode = Mode(
        slug=fields.slug,
        name=fields.name,
        role_definition=fields.roleDefinition,
        groups=tuple(groups),
        when_to_use=fields.whenToUse,
        description=fields.description,
        custom_instructions=fields.customInstructions,
        source=source,
        origin=origin,
    )
    return mode, []


def parse_modes(text: str, source: str, origin: str = "<memory>") -> LoadResult:
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
        return LoadResult((), (Diagnostic(line, col, line, col + 1, f"Cannot parse modes file: {problem}"),))
    except yaml.YAMLError as exc:
        return LoadResult((), (Diagnostic(0, 0, 0, 1, f"Cannot parse modes file: {exc}"),))
    finally:
        loader.dispose()
    if root is None:
        return LoadResult((), ())
    if (problem := yaml_too_big(root)) is not None:
        return LoadResult((), (_at(root, f"Modes file not read: {problem}"),))
    if not isinstance(root, yaml.MappingNode):
        return LoadResult((), (_at(root, "A modes file must be a mapping with a 'customModes' list"),))
    modes_node = _child(root, "customModes")
    if modes_node is None:
        return LoadResult((), (_at(root, "A modes file needs a 'customModes' list"),))
    if not isinstance(modes_node, yaml.SequenceNode):
        return LoadResult((), (_at(modes_node, "'customModes' must be a list of modes"),))

    modes: list[Mode] = []
    diagnostics: list[Diagnostic] = []
    seen: dict[str, int] = {}
    for index, node in enumerate(modes_node.value):
        data = _construct(node)
        label = _label(data, index)
        mode, problems = _validate(data, source, origin)
        if mode is not None and mode.slug in seen:
            problems = [(("slug",), f"slug {mode.slug!r} is already defined on line {seen[mode.slug] + 1}")]
        for loc, message in problems:
            diagnostics.append(_at(_node_at(node, loc), f"Mode {label} skipped: {message}"))
        if problems or mode is None:
            continue
        seen[mode.slug] = node.start_mark.line
        modes.append(mode)
    return LoadResult(tuple(modes), tuple(diagnostics))


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _construct(node: yaml.Node) -> Any:
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


def _label(data: Any, index: int) -> str:
    if isinstance(data, dict) and isinstance(data.get("slug"), str):
        return repr(data["slug"])
    return f"#{index + 1}"


def _child(node: yaml.MappingNode, key: str) -> yaml.Node | None:
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v
    return None


def _node_at(node: yaml.Node, loc: tuple) -> yaml.Node:
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


def _at(node: yaml.Node, message: str) -> Diagnostic:
    start, end = node.start_mark, node.end_mark
    if end.line != start.line:  # a block: underline its first line only
        width = max(1, len(_first_line(node)))
        return Diagnostic(start.line, start.column, start.line, start.column + width, message)
    return Diagnostic(start.line, start.column, end.line, max(end.column, start.column + 1), message)


def _first_line(node: yaml.Node) -> str:
    buffer = node.start_mark.buffer
    if not buffer:
        return ""
    rest = buffer[node.start_mark.pointer :]
    return rest.split("\n", 1)[0].rstrip("\0")
