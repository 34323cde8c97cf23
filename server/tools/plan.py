"""The plan tools (SPEC §4). The plan's rules are the planner's (server/plan); the states in which
each tool may run are checked by the gate from the plan machine's table."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable

from pydantic import field_validator

from ..errors import InvalidParams
from .base import Outcome, Params, Prepared, ToolContext, ToolSpec
from .flow import Required, Trimmed

if TYPE_CHECKING:
    from ..workspace import WorkspacePath


def _listed(value: Any) -> Any:
    """A list given as a JSON string, or as text with one item a line (or comma-separated)."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if text.startswith("["):
            try:
                return json.loads(text)
            except ValueError:
                pass
        return [part.strip() for part in text.replace(",", "\n").splitlines() if part.strip()]
    return value


class PlanEnterParams(Params):
    goal: Required
    scope: list[str] | None = None

    _scope = field_validator("scope", mode="before")(lambda cls, v: _listed(v))


class PlanExitParams(Params):
    plan: Any


class NoParams(Params):
    pass


class PlanRejectParams(Params):
    feedback: Trimmed = None


class PlanStepCompleteParams(Params):
    step_id: str | int
    verification_result: Required


class PlanCompleteParams(Params):
    summary: Required
    deviations: list[str] | None = None

    _deviations = field_validator("deviations", mode="before")(lambda cls, v: _listed(v))


class PlanModifyParams(Params):
    step_id: str | int
    reason: Required
    new_description: Required
    new_files: list[str] | None = None
    new_verification: Trimmed = None

    _files = field_validator("new_files", mode="before")(lambda cls, v: _listed(v))


def _later(act: Callable[[], str]) -> Prepared:
    """A plan change made when the call runs (past every stage of the gate), not while it is checked."""

    async def run() -> Outcome:
        return Outcome(act())

    return Prepared(run)


async def _enter(ctx: ToolContext, p: PlanEnterParams, paths: list[WorkspacePath]) -> Prepared:
    scope = [ctx.workspace.resolve(s).rel for s in p.scope or ()] or None  # outside the workspace: refused here
    return _later(lambda: ctx.ports.plans.enter(ctx.agent, ctx.conversation_id, p.goal, scope))


async def _exit(ctx: ToolContext, p: PlanExitParams, paths: list[WorkspacePath]) -> Prepared:
    if p.plan is None:
        raise InvalidParams("Missing value for required parameter 'plan'.")

    async def run() -> Outcome:
        return Outcome(await ctx.ports.plans.exit(ctx.agent, ctx.conversation_id, p.plan, ctx.call_id))

    return Prepared(run)


async def _status(ctx: ToolContext, p: NoParams, paths: list[WorkspacePath]) -> Prepared:
    return _later(lambda: ctx.ports.plans.status(ctx.agent))


def _relay(decision: str):
    async def prepare(ctx: ToolContext, p: Params, paths: list[WorkspacePath]) -> Prepared:
        async def run() -> Outcome:
            feedback = getattr(p, "feedback", None)
            return Outcome(await ctx.ports.plans.relay(ctx.agent, ctx.conversation_id, decision, feedback, ctx.call_id))

        return Prepared(run)

    return prepare


async def _step_complete(ctx: ToolContext, p: PlanStepCompleteParams, paths: list[WorkspacePath]) -> Prepared:
    return _later(lambda: ctx.ports.plans.step_complete(ctx.agent, ctx.conversation_id, p.step_id, p.verification_result))


async def _complete(ctx: ToolContext, p: PlanCompleteParams, paths: list[WorkspacePath]) -> Prepared:
    return _later(lambda: ctx.ports.plans.complete(ctx.agent, ctx.conversation_id, p.summary, p.deviations))


async def _modify(ctx: ToolContext, p: PlanModifyParams, paths: list[WorkspacePath]) -> Prepared:
    changes = {"description": p.new_description, "files": p.new_files, "verification": p.new_verification}

    async def run() -> Outcome:
        return Outcome(await ctx.ports.plans.modify(ctx.agent, ctx.conversation_id, p.step_id, p.reason, changes, ctx.call_id))

    return Prepared(run)


TOOLS = (
    ToolSpec(
        "plan_enter",
        "Start plan mode for work that pays for a plan (a new feature, a refactor, changes across several files; "
        "not a typo or a rename): goal, and optionally scope (paths the exploration stays in). Until the user "
        "approves a plan only read, plan, todo and talk tools run.",
        PlanEnterParams,
        _enter,
    ),
    ToolSpec(
        "plan_exit",
        "Present the plan for the user's approval: plan = {summary, approach, alternatives_considered, steps: "
        "[{id, description, files, depends_on, verification}], risks, files_to_create, files_to_modify, "
        "tests_to_write, estimated_complexity: small|medium|large}. The user approves, rejects or asks for changes.",
        PlanExitParams,
        _exit,
    ),
    ToolSpec("plan_status", "The plan's state, goal, scope and progress.", NoParams, _status),
    ToolSpec(
        "plan_approve",
        "Only when the user has typed that they approve the waiting plan: relay it (the user confirms).",
        NoParams,
        _relay("approve"),
    ),
    ToolSpec(
        "plan_reject",
        "Only when the user has typed that they reject the waiting plan: relay it, with their feedback (the user confirms).",
        PlanRejectParams,
        _relay("reject"),
    ),
    ToolSpec(
        "plan_step_complete",
        "Mark a step of the approved plan done, with the output of its verification.",
        PlanStepCompleteParams,
        _step_complete,
    ),
    ToolSpec(
        "plan_complete",
        "Close the approved plan: what was done (summary) and deviations from the plan; steps left undone are reported.",
        PlanCompleteParams,
        _complete,
    ),
    ToolSpec(
        "plan_modify",
        "Ask the user to change a step of the approved plan: step_id, reason, new_description, new_files?, new_verification?",
        PlanModifyParams,
        _modify,
    ),
)
