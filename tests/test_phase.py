"""The phase inside the session: the task a flip builds and the tools it has (SPEC §3)."""

from __future__ import annotations

import pytest

from helpers import make_session
from server.errors import BadRequest
from server.tools import TOOLS


def native_names(task) -> set[str]:
    return {schema.name for schema in task.tool_schemas}


def test_a_flip_builds_a_task_whose_prompt_and_native_tools_follow_the_phase(tmp_path):
    session = make_session(tmp_path)
    act = session.task_for("modus")
    plan = session.set_phase("plan", by="user")
    assert plan is not act and plan.phase == "plan" and plan.mode is act.mode
    assert session.task_for("modus") is plan
    assert "plan_mode_respond" in native_names(plan) and "act_mode_respond" not in native_names(plan)
    assert "act_mode_respond" in native_names(act) and "plan_mode_respond" not in native_names(act)
    assert native_names(plan) == set(plan.tools) & set(TOOLS) and "## plan_mode_respond(" in plan.prompt.text
    assert "## act_mode_respond(" not in plan.prompt.text
    assert session.set_phase("plan", by="user") is plan  # the current phase: the same task
    assert session.store.get_meta("phase") == "plan"  # a restarted server comes back in PLAN


def test_a_bad_phase_names_the_allowed_values(tmp_path):
    session = make_session(tmp_path)
    with pytest.raises(BadRequest, match="phase: must be 'plan' or 'act', got 'both'"):
        session.set_phase("both", by="user")
    assert session.phase == "act"
