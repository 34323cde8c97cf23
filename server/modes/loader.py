"""Reading custom modes from a file: `customModes: [...]`, YAML or JSON (Roo's `.roomodes` as is).

Each mode is validated on its own: a bad mode becomes a diagnostic at the line where it goes
wrong and is skipped, and the other modes of the file still load.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from .. import yamldoc
from .model import GROUP_OPTIONS, GROUP_TOOLS, Group, LoadResult, Mode
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
            problems.append((where, f"groups.{i}: expected a group name or [name, {{options}}]"))
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
        lists, problem = _list_options(entry, options, where, i)
        if problem is not None:
            problems.append(problem)
            continue
        groups.append(Group(entry, pattern, description, **lists))
    return groups, problems


def _list_options(group: str, options: dict, where: tuple, i: int) -> tuple[dict, Problem | None]:
    """The group's own options (mcp: servers; command: allow, deny), each a list of strings."""
    own = GROUP_OPTIONS.get(group, ())
    lists: dict[str, tuple[str, ...]] = {}
    for key, value in options.items():
        if key in ("fileRegex", "description"):
            continue
        if key not in own:
            expected = ", ".join(("fileRegex", "description", *own))
            return {}, (where + (1, key), f"groups.{i}.{key}: not an option of group {group!r} (expected {expected})")
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            return {}, (where + (1, key), f"groups.{i}.{key}: must be a list of non-empty strings")
        lists[key] = tuple(v.strip() for v in value)
    return lists, None


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
    root, problem = yamldoc.parse_root(text, "modes file")
    if problem is not None:
        return LoadResult((), (problem,))
    if root is None:
        return LoadResult((), ())
    if not isinstance(root, yaml.MappingNode):
        return LoadResult((), (yamldoc.at(root, "A modes file must be a mapping with a 'customModes' list"),))
    modes_node = yamldoc.child(root, "customModes")
    if modes_node is None:
        return LoadResult((), (yamldoc.at(root, "A modes file needs a 'customModes' list"),))
    if not isinstance(modes_node, yaml.SequenceNode):
        return LoadResult((), (yamldoc.at(modes_node, "'customModes' must be a list of modes"),))

    found, diagnostics = yamldoc.entries(
        modes_node, lambda data: _validate(data, source, origin), what="Mode", name="slug", key=lambda m: m.slug
    )
    return LoadResult(tuple(mode for mode, _ in found), tuple(diagnostics))
