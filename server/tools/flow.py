"""Tools that steer the conversation: questions, completion, mode switches and subtasks."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from ..plan.machine import PLAN_REPLY_FOLLOWS
from ..errors import InvalidParams, ToolError
from .base import Outcome, Params, Prepared, ToolContext, ToolSpec

if TYPE_CHECKING:
    from ..workspace import WorkspacePath


def _required(value: Any, info: ValidationInfo) -> Any:
    """A blank string counts as a missing parameter."""
    if isinstance(value, str):
        value = value.strip()
        if not value:
            name = info.field_name
            raise PydanticCustomError("missing_param", "Missing value for required parameter '{name}'", {"name": name})
    return value


def _trimmed_or_none(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip() or None
    return value


#: A text parameter that must say something (surrounding blanks trimmed).
Required = Annotated[str, BeforeValidator(_required)]
#: An optional text parameter: blanks trimmed, empty counts as not given.
Trimmed = Annotated[str | None, BeforeValidator(_trimmed_or_none)]


# ---------------------------------------------------------------- switch_mode


class SwitchModeParams(Params):
    mode_slug: Required
    reason: Trimmed = None


async def _switch_mode(ctx: ToolContext, p: SwitchModeParams, paths: list[WorkspacePath]) -> Prepared:
    target = ctx.ports.switches.mode(p.mode_slug)
    if target is None:
        raise InvalidParams(f"Invalid mode: {p.mode_slug}")
    current = ctx.task.mode
    if target.slug == current.slug:
        raise ToolError(f"Already in {current.name} mode.")

    async def run() -> str:
        ctx.ports.switches.switch_mode(target.slug, by="model", reason=p.reason, agent=ctx.agent, conversation_id=ctx.conversation_id)
        because = f" because: {p.reason}" if p.reason else ""
        return f"Successfully switched from {current.name} mode to {target.name} mode{because}."

    return Prepared(
        run,
        title=f"Switch from {current.name} mode to {target.name} mode?",
        detail=p.reason or "",
        approval_fields={"from_": current.slug, "to": target.slug, "reason": p.reason},
    )


# ---------------------------------------------------------------- new_task


class NewTaskParams(Params):
    mode: Required
    message: str
    todos: str | list[str] | None = None


async def _new_task(ctx: ToolContext, p: NewTaskParams, paths: list[WorkspacePath]) -> Prepared:
    mode = ctx.ports.switches.mode(p.mode)
    if mode is None:
        raise InvalidParams(f"Invalid mode: {p.mode}")

    async def run() -> str:
        return await ctx.ports.subtasks.run_subtask(ctx, mode.slug, p.message)

    return Prepared(run, f"Start a subtask in {mode.name} mode?", p.message, {"to": mode.slug})


# ---------------------------------------------------------------- ask_followup_question, attempt_completion


class AskFollowupParams(Params):
    question: str
    follow_up: list[str] | None = None

    @field_validator("follow_up", mode="before")
    @classmethod
    def _suggestions(cls, value: Any) -> Any:
        """XML form: `<suggest>one</suggest><suggest>two</suggest>`."""
        if isinstance(value, str):
            found = re.findall(r"<suggest(?:\s[^>]*)?>(.*?)</suggest>", value, re.DOTALL)
            return [s.strip() for s in found] if found else [value.strip()] if value.strip() else None
        return value


async def _ask_followup(ctx: ToolContext, p: AskFollowupParams, paths: list[WorkspacePath]) -> Prepared:
    async def run() -> Outcome:
        return Outcome("The question was shown to the user. Their answer arrives as the next user message.", "awaiting_user")

    return Prepared(run)


class AttemptCompletionParams(Params):
    result: str


async def _attempt_completion(ctx: ToolContext, p: AttemptCompletionParams, paths: list[WorkspacePath]) -> Prepared:
    async def run() -> Outcome:
        return Outcome(p.result, "completed")

    return Prepared(run)


# ---------------------------------------------------------------- plan_mode_respond, act_mode_respond

PLAN_EXPLORE_MORE = (
    "Your response was shown to the user. Go on exploring with read-only tools (you said more "
    "exploration is needed), then answer with plan_mode_respond again."
)
PLAN_YOLO_TO_ACT = "[Yolo mode: the plan is approved in advance and the phase is now ACT MODE. Proceed with the task.]"
ACT_RESPOND_SHOWN = "Your message was shown to the user. Go on with the task."
ACT_RESPOND_BLOCKED = (
    "[BLOCKED] act_mode_respond cannot be called twice in a row. Do the work now with the other "
    "tools (read, edit, run commands), or finish with attempt_completion."
)


class PlanModeRespondParams(Params):
    response: Required
    needs_more_exploration: bool = False
    task_progress: Trimmed = None


class ActModeRespondParams(Params):
    response: Required
    task_progress: Trimmed = None


def _say(ctx: ToolContext, response: str, task_progress: str | None) -> None:
    """The response is the assistant's message to the user (its progress checklist below it)."""
    from protocol import MessageUpdate

    text = f"{response}\n\n{task_progress}" if task_progress else response
    ctx.host.publish(
        MessageUpdate(conversation_id=ctx.conversation_id, agent=ctx.agent, task_id=ctx.task.id, turn_id=ctx.turn_id, role="assistant", text=text)
    )


async def _plan_mode_respond(ctx: ToolContext, p: PlanModeRespondParams, paths: list[WorkspacePath]) -> Prepared:
    async def run() -> Outcome:
        _say(ctx, p.response, p.task_progress)
        if p.needs_more_exploration:
            return Outcome(PLAN_EXPLORE_MORE)
        if ctx.ports.config.settings.yolo:
            ctx.ports.switches.set_phase("act", by="model", agent=ctx.agent, conversation_id=ctx.conversation_id)
            return Outcome(PLAN_YOLO_TO_ACT)
        return Outcome(PLAN_REPLY_FOLLOWS, "awaiting_user", result_later=True)

    return Prepared(run)


async def _act_mode_respond(ctx: ToolContext, p: ActModeRespondParams, paths: list[WorkspacePath]) -> Prepared:
    async def run() -> Outcome:
        if ctx.previous_tool == "act_mode_respond":
            return Outcome(ACT_RESPOND_BLOCKED)
        _say(ctx, p.response, p.task_progress)
        return Outcome(ACT_RESPOND_SHOWN)

    return Prepared(run)


TOOLS = (
    ToolSpec(
        "switch_mode",
        "Ask the user to switch to another mode (mode_slug), with a reason. The switch happens once the user approves.",
        SwitchModeParams,
        _switch_mode,
        approval="mode_switch",
        approval_kind="switch_mode",
    ),
    ToolSpec(
        "new_task",
        "Start a subtask in a mode with a message; its attempt_completion result comes back as this tool's result.",
        NewTaskParams,
        _new_task,
        approval="subtasks",
        approval_kind="subtask",
    ),
    ToolSpec(
        "ask_followup_question",
        "Ask the user a question when you need information to go on; optional follow_up suggestions.",
        AskFollowupParams,
        _ask_followup,
    ),
    ToolSpec(
        "attempt_completion",
        "Present the result of the task to the user once it is done. This ends your turn.",
        AttemptCompletionParams,
        _attempt_completion,
    ),
    ToolSpec(
        "plan_mode_respond",
        "PLAN MODE only. Talk with the user about the plan: `response` is shown to them and your "
        "turn ends until they reply. Set needs_more_exploration to true when you must read more "
        "before you can answer; then the turn goes on. task_progress: an optional checklist.",
        PlanModeRespondParams,
        _plan_mode_respond,
    ),
    ToolSpec(
        "act_mode_respond",
        "ACT MODE only. Tell the user how the work is going without stopping (`response`, and an "
        "optional task_progress checklist). Never call it twice in a row: the second call is blocked.",
        ActModeRespondParams,
        _act_mode_respond,
    ),
)
