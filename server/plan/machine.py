"""The plan's states and what each allows, as data (SPEC §4).

normal → planning (plan_enter; phase PLAN) → awaiting_approval (plan_exit) → executing (the user
approves; phase ACT) → normal (plan_complete, or the user rejects). From plan_enter until the user
approves, only an allow-list of tools runs: writes are refused because they are not on it, not
because they are on a deny-list. Every refusal names the state and what would be allowed.
"""

from __future__ import annotations

from typing import Literal

State = Literal["normal", "planning", "awaiting_approval", "executing"]
STATES: tuple[State, ...] = ("normal", "planning", "awaiting_approval", "executing")

#: The events that move a plan, and where they lead from where they may happen.
TRANSITIONS: dict[tuple[str, str], State] = {
    ("normal", "enter"): "planning",
    ("planning", "exit"): "awaiting_approval",
    ("awaiting_approval", "approve"): "executing",
    ("awaiting_approval", "reject"): "normal",
    ("awaiting_approval", "revise"): "planning",
    ("executing", "step_complete"): "executing",
    ("executing", "modify"): "executing",
    ("executing", "complete"): "normal",
    ("executing", "reject"): "normal",
}

#: plan_mode_respond's result, written when the user answers (a message, or a switch to ACT).
PLAN_REPLY_FOLLOWS = "Your response was shown to the user. Their reply is the next user message."
PLAN_SWITCHED_TO_ACT = "[The user switched to ACT MODE, so you may now proceed with the task.]"

#: The phase each state puts the agent in (None: the state leaves the phase as it is).
PHASES: dict[str, str | None] = {"normal": None, "planning": "plan", "awaiting_approval": "plan", "executing": "act"}

#: The plan tools, and the states in which each may be called.
PLAN_TOOLS: dict[str, tuple[State, ...]] = {
    "plan_enter": ("normal",),
    "plan_exit": ("planning",),
    "plan_status": STATES,
    "plan_approve": ("awaiting_approval",),
    "plan_reject": ("awaiting_approval",),
    "plan_step_complete": ("executing",),
    "plan_complete": ("executing",),
    "plan_modify": ("executing",),
}

#: Read tools: while planning they are limited to the plan's scope, if it has one.
READ_TOOLS = frozenset({"read_file", "list_files", "search_files", "list_code_definition_names"})
TODO_TOOLS = frozenset({"todo_read", "todo_write", "update_todo_list"})
#: Tools that talk with the user or end the turn.
TALK_TOOLS = frozenset({"ask_followup_question", "attempt_completion", "plan_mode_respond", "act_mode_respond"})

#: What runs from plan_enter until the user approves: nothing that writes.
ALLOWED_BEFORE_APPROVAL = READ_TOOLS | TODO_TOOLS | TALK_TOOLS | frozenset(PLAN_TOOLS) | {"use_skill"}  # a skill's instructions: read only

_STATE_WORDS = {
    "normal": "no plan is active",
    "planning": "a plan is being drafted",
    "awaiting_approval": "the plan waits for the user's approval",
    "executing": "the approved plan is being carried out",
}


class PlanStateError(ValueError):
    """An event or a plan tool that the current state does not allow; the message says why."""


def describe(state: str) -> str:
    return f"{state} ({_STATE_WORDS[state]})"


def next_state(state: str, event: str) -> State:
    """Where `event` leads from `state`, or PlanStateError naming the events `state` allows."""
    target = TRANSITIONS.get((state, event))
    if target is None:
        allowed = [e for (s, e) in TRANSITIONS if s == state]
        raise PlanStateError(
            f"Cannot {event.replace('_', ' ')} the plan: the state is {describe(state)}; "
            f"allowed here: {', '.join(allowed) or 'nothing'}."
        )
    return target


def refusal(state: str, tool: str) -> str | None:
    """Why `tool` may not run in `state`, or None when it may."""
    if tool in PLAN_TOOLS:
        states = PLAN_TOOLS[tool]
        if state in states:
            return None
        return (
            f"Tool '{tool}' cannot be used now: the plan state is {describe(state)}; "
            f"it works when the state is {' or '.join(states)}."
        )
    if state in ("planning", "awaiting_approval") and tool not in ALLOWED_BEFORE_APPROVAL:
        return (
            f"Tool '{tool}' cannot be used now: the plan state is {describe(state)}, and until the user "
            f"approves the plan only these run: {', '.join(sorted(ALLOWED_BEFORE_APPROVAL))}."
        )
    return None


def plan_info(state: str, row: dict | None):
    """The plan as `State.plan` shows it: the state, and the plan's goal, scope, object and steps done."""
    from protocol import PlanInfo

    if row is None:
        return PlanInfo(state=state)
    return PlanInfo(
        state=state, goal=row["goal"], scope=row["scope"], plan_id=row["id"], plan=row["plan"], completed_steps=list(row["completed"])
    )


def out_of_scope(scope: list[str] | None, paths: list[str]) -> str | None:
    """The first path outside the plan's scope (workspace-relative, '/' separated), or None.
    A scope entry is a file or a folder; an empty or absent scope allows everything."""
    if not scope:
        return None
    roots = [s.strip("/") for s in scope]
    for path in paths:
        rel = path.strip("/")
        if not any(root in ("", ".") or rel == root or rel.startswith(root + "/") for root in roots):
            return path
    return None


def scope_refusal(tool: str, scope: list[str] | None, paths: list[str]) -> str | None:
    """Why a read tool may not read these paths while planning with this scope, or None."""
    outside = out_of_scope(scope, paths)
    if outside is None:
        return None
    return f"Tool '{tool}' cannot read {outside}: the plan's scope is {', '.join(scope or [])}. Read inside the scope."
