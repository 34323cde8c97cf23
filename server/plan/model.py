"""The plan object of plan mode (SPEC §4): what plan_exit submits, and the order of its steps.

`parse_plan` takes what the model sent (an object, or a JSON string of one) and returns a `Plan`,
or raises `PlanInvalid` listing every problem by field path (`steps[1].description: required`)
so that the model can fix them all in one go. Paths count list items from 0. Unknown fields are
ignored. Step ids are strings; integer ids are accepted and become strings ("1"), since models
often number their steps. Strings are stripped of surrounding whitespace, and a null field counts
as left out.

A `Plan` is valid by construction: `Plan.model_validate` runs the same checks, so a plan stored
as `plan.model_dump(mode="json")` reads back with `Plan.model_validate(data)`.

The order helpers take the completed steps as any iterable of ids (a list, or a dict of
verification outputs keyed by id).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Iterable, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

MAX_STEPS = 100
Complexity = Literal["small", "medium", "large"]
COMPLEXITIES = get_args(Complexity)
RETRY = "Fix these and call plan_exit again with the whole corrected plan."


class PlanInvalid(ValueError):
    """A plan the model must fix: `problems` are `path: what is wrong`, the message lists them."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        lines = "\n".join(f"- {p}" for p in problems)
        super().__init__(f"The plan is invalid:\n{lines}\n{RETRY}")


def as_step_id(value: Any) -> str | None:
    """A step id as the plan stores it (an int becomes its decimal string), or None if unusable."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value).strip()
    return text or None


def _step_id(value: Any) -> str:
    key = as_step_id(value)
    if key is None:
        raise ValueError(f"must be a non-empty string or an integer (got {_shown(value)})")
    return key


StepId = Annotated[str, BeforeValidator(_step_id)]
Text = Annotated[str, Field(min_length=1)]  # required and not blank (strings are stripped first)


class _Fields(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_absent(cls, data: Any) -> Any:
        """A null field counts as left out (models with strict schemas send null for those)."""
        return {k: v for k, v in data.items() if v is not None} if isinstance(data, dict) else data


class Step(_Fields):
    id: StepId
    description: Text
    files: list[str] = []
    depends_on: list[StepId] = []
    #: How to check the step (a command, a test); required, so plan_step_complete has something
    #: to report against.
    verification: Text

    @field_validator("depends_on")
    @classmethod
    def _once_each(cls, ids: list[str]) -> list[str]:
        return list(dict.fromkeys(ids))


class Plan(_Fields):
    summary: str = ""
    approach: Text
    alternatives_considered: list[str] = []
    steps: Annotated[list[Step], Field(min_length=1, max_length=MAX_STEPS)]
    risks: list[str] = []
    files_to_create: list[str] = []
    files_to_modify: list[str] = []
    tests_to_write: list[str] = []
    estimated_complexity: Complexity | None = None

    @field_validator("estimated_complexity", mode="before")
    @classmethod
    def _complexity(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str) and value.strip().lower() in COMPLEXITIES:
            return value.strip().lower()
        raise ValueError(f"must be small, medium or large (got {_shown(value)})")

    @model_validator(mode="after")
    def _graph(self) -> "Plan":
        problems = _graph_problems([(i, s.id, s.depends_on) for i, s in enumerate(self.steps)])
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def step(self, step_id: str | int) -> Step | None:
        """The step with this id (an int matches its decimal string), or None."""
        key = as_step_id(step_id)
        return next((s for s in self.steps if s.id == key), None)


def parse_plan(value: Any) -> Plan:
    """The plan from a plan_exit call: a dict, or a JSON string of one. Raises PlanInvalid."""
    data = _as_object(value)
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        # The step graph's own error has no location; it is worked out again from the raw steps,
        # so that it is reported even when other fields are wrong too.
        fields = [_describe(err) for err in exc.errors() if err["loc"]]
        raise PlanInvalid(fields + _graph_problems(*_loose_steps(data))) from None


def _as_object(value: Any) -> dict:
    if value is None:
        raise PlanInvalid(["plan: required"])
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise PlanInvalid([f"plan: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"]) from None
    if not isinstance(value, dict):
        raise PlanInvalid([f"plan: must be an object or a JSON string of one (got {_shown(value)})"])
    return value


_WORDS = {
    "missing": "required",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "string_too_short": "must not be empty",
}


def _describe(err: dict) -> str:
    loc, kind = err["loc"], err["type"]
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    if kind == "missing" and loc[-1] == "verification":
        text = "required (how to check the step: a command to run, a test)"
    elif kind == "value_error":
        text = err["msg"].removeprefix("Value error, ")
    elif kind == "too_short":
        text = "must list at least one step" if loc == ("steps",) else "must not be empty"
    elif kind == "too_long":
        text = f"at most {err['ctx']['max_length']} items (got {err['ctx']['actual_length']})"
    elif kind in _WORDS:
        text = _WORDS[kind]
        if kind.endswith("_type"):
            text += f" (got {_shown(err['input'])})"
    else:
        text = err["msg"]
    return f"{path}: {text}"


def _shown(value: Any) -> str:
    """A short rendering of a value the model sent, for an error message."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------- the step graph

Loose = tuple[int, str, list[str]]  # (index in steps, id, depends_on)


def _loose_steps(data: dict) -> tuple[list[Loose], bool]:
    """The steps' ids and dependencies as far as they are usable before the fields validate, and
    whether every step has a usable id."""
    steps = data.get("steps")
    if not isinstance(steps, list) or len(steps) > MAX_STEPS:
        return [], False
    found: list[Loose] = []
    for i, step in enumerate(steps):
        key = as_step_id(step.get("id")) if isinstance(step, dict) else None
        if key is not None:
            wanted = step.get("depends_on")
            wanted = wanted if isinstance(wanted, list) else []
            found.append((i, key, list(dict.fromkeys(d for d in map(as_step_id, wanted) if d is not None))))
    return found, len(found) == len(steps)


def _graph_problems(steps: list[Loose], all_ids_known: bool = True) -> list[str]:
    """Duplicate ids, dependencies on unknown steps or on the step itself, and cycles. While a
    step's id is unusable, a dependency on it cannot be told from a dependency on nothing: those
    are not reported then."""
    problems: list[str] = []
    first: dict[str, int] = {}
    for i, key, _ in steps:
        if key in first:
            problems.append(f'steps[{i}].id: duplicate id "{key}" (also steps[{first[key]}])')
        else:
            first[key] = i
    edges: dict[str, list[str]] = {}
    for i, key, wanted in steps:
        for dep in wanted:
            if dep == key:
                problems.append(f'steps[{i}].depends_on: step "{key}" depends on itself')
            elif dep not in first and all_ids_known:
                problems.append(f'steps[{i}].depends_on: names unknown step "{dep}"')
        if first[key] == i:
            edges[key] = [d for d in wanted if d != key and d in first]
    problems += [f"steps: depends_on has a cycle: {' → '.join(c)}" for c in _cycles(list(first), edges)]
    return problems


def _topological(ids: list[str], edges: dict[str, list[str]], placed: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(ordered, stuck): repeatedly the first id, in the given order, whose dependencies are all
    placed. Stuck ids are in a cycle or wait on one."""
    placed = set(placed)
    ordered: list[str] = []
    pending = list(ids)
    while True:
        ready = next((key for key in pending if all(d in placed for d in edges[key])), None)
        if ready is None:
            return ordered, pending
        ordered.append(ready)
        placed.add(ready)
        pending.remove(ready)


def _cycles(ids: list[str], edges: dict[str, list[str]]) -> list[list[str]]:
    """One path per cycle, as `a → b → a` reads: a depends on b, which depends on a."""
    cycles: list[list[str]] = []
    ordered, stuck = _topological(ids, edges)
    placed = set(ordered)
    while stuck:
        # Every stuck step waits on another stuck step: walking along those finds a cycle.
        path = [stuck[0]]
        while (nxt := next(d for d in edges[path[-1]] if d in stuck)) not in path:
            path.append(nxt)
        cycle = path[path.index(nxt):] + [nxt]
        cycles.append(cycle)
        placed.update(cycle)  # counted as done, so that what waits on it can go on
        ordered, stuck = _topological([k for k in stuck if k not in placed], edges, placed)
        placed.update(ordered)
    return cycles


# ---------------------------------------------------------------- progress


def step_order(plan: Plan) -> list[str]:
    """The step ids in an order that respects depends_on, otherwise the plan's own order."""
    ordered, stuck = _topological([s.id for s in plan.steps], {s.id: s.depends_on for s in plan.steps})
    return ordered + stuck  # nothing is stuck in a valid plan


def next_step(plan: Plan, completed: Iterable[str]) -> str | None:
    """The first step, in step_order, not completed and whose dependencies all are."""
    done = {as_step_id(c) for c in completed}
    for key in step_order(plan):
        step = plan.step(key)
        if key not in done and all(d in done for d in step.depends_on):
            return key
    return None


def undone(plan: Plan, completed: Iterable[str]) -> list[str]:
    """The steps not completed, in step_order (what plan_complete reports as left undone)."""
    done = {as_step_id(c) for c in completed}
    return [key for key in step_order(plan) if key not in done]
