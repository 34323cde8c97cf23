"""Reading custom modes from a file: `customModes: [...]`, YAML or JSON (Roo's `.roomodes` as is).

Each mode is validated on its own: a bad mode becomes a diagnostic at the line where it goes
wrong and is skipped, and the other modes of the file still load. What Roo ignores silently
and does no harm — a key that is no option of its group — is a warning, and the mode loads.
Nothing is read as "no restriction" unless the file says none: `fileRegex: null` is an error.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from .. import yamldoc
from ..yamldoc import Problem
from .model import GROUP_OPTIONS, GROUP_TOOLS, RESTRICTING, Group, LoadResult, Mode
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
    #: the skills the mode may use (absent: all)
    skills: list[str] | None = None

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


def _groups(data: dict) -> tuple[list[Group], list[Problem]]:
    if "groups" not in data:
        return [], [Problem((), "groups: field required (a list of tool groups, may be empty)")]
    raw = data["groups"]
    if not isinstance(raw, list):
        return [], [Problem(("groups",), "groups: must be a list")]
    groups: list[Group] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        where = ("groups", i)
        options: Any = {}
        if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], dict):
            entry, options = entry
        if not isinstance(entry, str):
            problems.append(Problem(where, f"groups.{i}: expected a group name or [name, {{options}}]"))
            continue
        if entry not in GROUP_TOOLS:
            problems.append(Problem(where, f"groups.{i}: unknown group {entry!r} (expected one of {', '.join(GROUP_TOOLS)})"))
            continue
        if entry in seen:
            problems.append(Problem(where, f"groups.{i}: group {entry!r} is listed twice"))
            continue
        seen.add(entry)
        group, found = _group(entry, options, where, i)
        problems += found
        if group is not None:
            groups.append(group)
    return groups, problems


def _group(name: str, options: dict, where: tuple, i: int) -> tuple[Group | None, list[Problem]]:
    """One group with its options; None when one of them is wrong. A key that is no option of
    the group is a warning and ignored (Roo ignores it silently) — unless it looks like one
    that narrows the group (`fileRegx` for `fileRegex`): ignoring it would allow more than the
    file says, so the mode does not load."""
    problems: list[Problem] = []
    pattern = description = None
    lists: dict[str, tuple[str, ...]] = {}
    own = GROUP_OPTIONS.get(name, ())
    for key, value in options.items():
        loc = where + (1, key)
        if key == "fileRegex":
            if not isinstance(value, str):
                # null included: no pattern would be an edit without bounds, which the file did not ask for
                kind = "null" if value is None else type(value).__name__
                problems.append(Problem(loc, f"groups.{i}.fileRegex: must be a string (a regular expression), got {kind}"))
                continue
            try:
                pattern = Pattern.compile(value)
            except PatternError as exc:
                problems.append(Problem(loc, f"groups.{i}.fileRegex: {exc}"))
        elif key == "description":
            if value is not None and not isinstance(value, str):
                problems.append(Problem(loc, f"groups.{i}.description: must be a string"))
            description = value
        elif key in own:
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                problems.append(Problem(loc, f"groups.{i}.{key}: must be a list of non-empty strings"))
                continue
            lists[key] = tuple(v.strip() for v in value)
        else:
            expected = ", ".join(("fileRegex", "description", *own))
            unknown = f"groups.{i}.{key}: not an option of group {name!r} (expected {expected})"
            meant = _meant(str(key), RESTRICTING.get(name, ()))
            if meant is not None:
                problems.append(Problem(loc, f"{unknown}; did you mean {meant}? Without it the group would allow more than the file says"))
            else:
                problems.append(Problem(loc, f"{unknown}; ignored", warning=True))
    if any(not p.warning for p in problems):
        return None, problems
    return Group(name, pattern, description, **lists), problems


def _meant(key: str, options: tuple[str, ...]) -> str | None:
    """The option `key` is probably a misspelling of (case, `_`, a letter or two), if any."""
    folded = key.casefold().replace("_", "").replace("-", "")
    for option in options:
        if folded == option.casefold():
            return option
    close = difflib.get_close_matches(key, options, n=1, cutoff=0.8)
    return close[0] if close else None


def _validate(data: Any, source: str, origin: str) -> tuple[Mode | None, list[Problem]]:
    if not isinstance(data, dict):
        return None, [Problem((), "a mode must be a mapping with slug, name, roleDefinition and groups")]
    problems: list[Problem] = []
    fields = None
    try:
        fields = _ModeFields.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            name = ".".join(str(p) for p in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            problems.append(Problem(err["loc"] if err["type"] != "missing" else (), f"{name}: {msg[:1].lower()}{msg[1:]}"))
    groups, group_problems = _groups(data)
    problems += group_problems
    if fields is None or any(not p.warning for p in problems):
        return None, problems
    mode = Mode(
        slug=fields.slug,
        name=fields.name,
        role_definition=fields.roleDefinition,
        groups=tuple(groups),
        when_to_use=fields.whenToUse,
        description=fields.description,
        custom_instructions=fields.customInstructions,
        skills=tuple(fields.skills) if fields.skills is not None else None,
        source=source,
        origin=origin,
    )
    return mode, problems  # warnings only


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
