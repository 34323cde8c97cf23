"""The plan as a markdown document: the file `.modus/plans/<id>.md` and the sidebar card.

`render` is deterministic: the same plan and progress give the same text (no clock). The status
line follows the plan's state; completed steps are ticked and show the verification output that
plan_step_complete recorded, in a fence longer than any run of backticks inside it, so that the
output cannot close it early. Nothing else is escaped: the plan's texts are the model's markdown.
"""

from __future__ import annotations

import re
from typing import Iterable, Literal, Mapping, get_args

from .model import Plan, Step, as_step_id, next_step, step_order

#: The states a plan document can show: the live ones, and how a plan ended.
DocState = Literal["planning", "awaiting_approval", "executing", "completed", "rejected"]
STATES: tuple[str, ...] = get_args(DocState)

Completed = Mapping[str, str] | Iterable[str]


def status_line(plan: Plan, state: DocState, completed: Completed = (), current: str | None = None) -> str:
    if state == "planning":
        return "Status: drafting"
    if state == "awaiting_approval":
        return "Status: pending approval"
    if state == "completed":
        return "Status: completed"
    if state == "rejected":
        return "Status: rejected"
    if state != "executing":
        raise ValueError(f"state: must be one of {', '.join(STATES)} (got {state!r})")
    done = _outputs(completed)
    order = step_order(plan)
    if not done.keys() & set(order):
        return "Status: approved"
    step = _current(plan, done, current)
    if step is None:
        return f"Status: all {len(order)} steps done"
    return f"Status: step {order.index(step) + 1} of {len(order)}"


def render(
    plan: Plan,
    *,
    plan_id: str,
    goal: str,
    state: DocState,
    completed: Completed = (),
    current: str | None = None,
    outcome: str | None = None,
) -> str:
    """The plan document. `completed`: the completed step ids, or a dict of them to the
    verification output recorded for each. `current`: the step being worked on (executing only;
    by default the next step). `outcome`: what the plan ended with (plan_complete's summary and
    deviations, or the user's feedback on a rejection), shown under the status."""
    done = _outputs(completed)
    focus = _current(plan, done, current) if state == "executing" else None
    out = [f"# Plan: {_one_line(goal)}", "", status_line(plan, state, done, current), ""]
    meta = f"Plan id: {_one_line(plan_id)}"
    if plan.estimated_complexity:
        meta += f" · Estimated complexity: {plan.estimated_complexity}"
    out += [meta, ""]
    if outcome and outcome.strip():
        out += _section("Outcome", [outcome.strip()])
    if plan.summary:
        out += _section("Summary", [plan.summary])
    out += _section("Approach", [plan.approach])
    out += _section("Alternatives considered", _bullets(plan.alternatives_considered))
    steps: list[str] = []
    for key in step_order(plan):
        steps += _step(plan.step(key), done, focus)
    out += _section("Steps", steps)
    out += _section("Risks", _bullets(plan.risks))
    out += _section("Files to create", _bullets(map(_code, plan.files_to_create)))
    out += _section("Files to modify", _bullets(map(_code, plan.files_to_modify)))
    out += _section("Tests to write", _bullets(plan.tests_to_write))
    return "\n".join(out).rstrip("\n") + "\n"


def _outputs(completed: Completed) -> dict[str, str | None]:
    if isinstance(completed, Mapping):
        return {as_step_id(k): v for k, v in completed.items()}
    return {as_step_id(k): None for k in completed}


def _current(plan: Plan, done: Mapping[str, str | None], current: str | None) -> str | None:
    if current is None:
        return next_step(plan, done)
    if plan.step(current) is None:
        raise ValueError(f"current: no step {current!r} in the plan")
    return as_step_id(current)


def _section(title: str, body: list[str]) -> list[str]:
    return [f"## {title}", "", *body, ""] if body else []


def _bullets(items: Iterable[str]) -> list[str]:
    return [_indented(f"- {item}", "  ") for item in items]


def _step(step: Step, done: Mapping[str, str | None], focus: str | None) -> list[str]:
    ticked = step.id in done
    first, _, rest = step.description.partition("\n")
    mark = " (current)" if step.id == focus else ""
    lines = [_indented(f"- [{'x' if ticked else ' '}] {step.id}. {first}{mark}\n{rest}", "  ")]
    if step.files:
        lines.append("  - Files: " + ", ".join(_code(f) for f in step.files))
    if step.depends_on:
        lines.append("  - Depends on: " + ", ".join(step.depends_on))
    lines.append(_indented(f"  - Verification: {step.verification}", "    "))
    output = done.get(step.id)
    if ticked and output is not None:
        if output.strip():
            lines += ["  - Result:", *_fenced(output, "    ")]
        else:
            lines.append("  - Result: (no output)")
    return lines


def _fenced(text: str, indent: str) -> list[str]:
    """A fenced block longer than any backtick run in `text`, so nothing inside can close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = indent + "`" * max(3, longest + 1)
    body = [indent + line if line.strip() else "" for line in text.splitlines()]
    return [fence + "text", *body, fence]


def _code(text: str) -> str:
    """An inline code span that holds any text (CommonMark: a longer backtick string, padded)."""
    text = _one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _indented(text: str, indent: str) -> str:
    """Continuation lines indented, so that a multi-line text stays inside its list item."""
    return "\n".join(line if i == 0 or not line.strip() else indent + line for i, line in enumerate(text.splitlines()))


def _one_line(text: str) -> str:
    return " ".join(text.split())
