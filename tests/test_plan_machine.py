"""The plan's states as data: every transition and every refusal is a row (SPEC §4)."""

from __future__ import annotations

import pytest

from server.plan.machine import (
    ALLOWED_BEFORE_APPROVAL,
    PHASES,
    PLAN_TOOLS,
    STATES,
    TRANSITIONS,
    PlanStateError,
    next_state,
    refusal,
    scope_refusal,
)

EVENTS = sorted({event for (_, event) in TRANSITIONS})

#: (state, event) → the state it leads to; every pair not listed is refused.
ALLOWED_MOVES = {
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


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("event", EVENTS)
def test_every_transition(state, event):
    expected = ALLOWED_MOVES.get((state, event))
    if expected is not None:
        assert next_state(state, event) == expected
        return
    with pytest.raises(PlanStateError) as refused:
        next_state(state, event)
    message = str(refused.value)
    assert f"the state is {state} (" in message  # names the current state
    allowed = [e for (s, e) in ALLOWED_MOVES if s == state]
    assert f"allowed here: {', '.join(allowed)}." in message  # and what it allows


def test_the_phases_follow_the_states():
    assert PHASES == {"normal": None, "planning": "plan", "awaiting_approval": "plan", "executing": "act"}


#: (state, tool, allowed?) for the plan tools in every state.
PLAN_TOOL_ROWS = [
    (state, tool, state in states) for tool, states in PLAN_TOOLS.items() for state in STATES
]


@pytest.mark.parametrize(("state", "tool", "allowed"), PLAN_TOOL_ROWS)
def test_each_plan_tool_in_each_state(state, tool, allowed):
    why = refusal(state, tool)
    if allowed:
        assert why is None
    else:
        assert why is not None and f"the plan state is {state} (" in why
        assert f"it works when the state is {' or '.join(PLAN_TOOLS[tool])}." in why


OTHER_TOOLS = [
    ("read_file", True),
    ("list_files", True),
    ("search_files", True),
    ("list_code_definition_names", True),
    ("todo_write", True),
    ("update_todo_list", True),
    ("ask_followup_question", True),
    ("attempt_completion", True),
    ("plan_mode_respond", True),
    ("write_to_file", False),
    ("apply_diff", False),
    ("insert_content", False),
    ("search_and_replace", False),
    ("execute_command", False),
    ("use_mcp_tool", False),
    ("switch_mode", False),
    ("new_task", False),
    ("a_tool_added_later", False),  # an allow-list: what it does not name is refused
]


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize(("tool", "before_approval"), OTHER_TOOLS)
def test_the_allow_list_from_plan_enter_until_approval(state, tool, before_approval):
    why = refusal(state, tool)
    if state in ("normal", "executing") or before_approval:
        assert why is None
    else:
        assert why is not None
        assert f"the plan state is {state} (" in why
        assert "only these run: " in why and "read_file" in why and "plan_exit" in why


def test_the_allow_list_is_reads_plans_todos_and_talk():
    assert {"read_file", "plan_exit", "todo_write", "ask_followup_question"} <= ALLOWED_BEFORE_APPROVAL
    assert not {"write_to_file", "execute_command", "use_mcp_tool"} & ALLOWED_BEFORE_APPROVAL


@pytest.mark.parametrize(
    ("scope", "paths", "refused"),
    [
        (None, ["anything.py"], None),
        ([], ["anything.py"], None),
        (["src/app.py"], ["src/app.py"], None),
        (["src"], ["src/app.py", "src/lib/x.py"], None),
        (["src/"], ["src"], None),
        (["."], ["README.md"], None),
        (["src"], ["srcfoo/x.py"], "srcfoo/x.py"),  # a prefix of a name is not a folder
        (["src/app.py"], ["src/app.py", "tests/test_app.py"], "tests/test_app.py"),
        (["src", "docs"], ["docs/a.md", "README.md"], "README.md"),
    ],
)
def test_scope_limits_the_reads(scope, paths, refused):
    why = scope_refusal("read_file", scope, paths)
    if refused is None:
        assert why is None
    else:
        assert why == f"Tool 'read_file' cannot read {refused}: the plan's scope is {', '.join(scope)}. Read inside the scope."
