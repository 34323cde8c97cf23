"""The planner through the gate: the plan tools' effects, the user's confirmations, the texts the
model gets (SPEC §4). The states and refusals themselves are rows in test_plan_machine.py."""

from __future__ import annotations

import sqlite3

import pytest

from helpers import call_tool, running
from memory_host import MemoryHost
from protocol import ApprovalResponse

PLAN = {
    "summary": "s",
    "approach": "a",
    "steps": [
        {"id": "1", "description": "first", "verification": "v1"},
        {"id": "2", "description": "second", "depends_on": ["1"], "verification": "v2"},
        {"id": "3", "description": "third", "verification": "v3"},
    ],
}


def answering(**by_tool: str):
    """A host whose answers depend on the plan tool asking (approve by default)."""
    return MemoryHost(approve=lambda r: ApprovalResponse(decision=by_tool.get(r.tool or "", "approve"), feedback="because"))


async def executing(session) -> None:
    assert (await call_tool(session, "plan_enter", goal="g")).error is None
    result = await call_tool(session, "plan_exit", plan=PLAN)
    assert result.error is None and result.text.startswith("The user approved the plan")


async def test_step_complete_names_the_next_step_and_unknown_steps(tmp_path):
    async with running(tmp_path, host=answering()) as session:
        await executing(session)
        unknown = await call_tool(session, "plan_step_complete", step_id="9", verification_result="x")
        first = await call_tool(session, "plan_step_complete", step_id=1, verification_result="ok " * 3000)
        state, row = session.planner.current("modus")
    assert unknown.error.type == "InvalidParams" and unknown.text == "step_id: the plan has no step '9'; its steps are 1, 2, 3."
    assert first.text == "Step 1 is done (1 of 3). Next: step 2: second"
    assert state == "executing" and row["current_step"] == "2" and len(row["completed"]["1"]) == 4000  # output kept clipped


async def test_complete_reports_the_steps_left_undone(tmp_path):
    async with running(tmp_path, host=answering()) as session:
        await executing(session)
        await call_tool(session, "plan_step_complete", step_id="1", verification_result="ok")
        done = await call_tool(session, "plan_complete", summary="Enough for now", deviations=["skipped the docs"])
        state, _ = session.planner.current("modus")
        files = list((tmp_path / ".modus" / "plans").glob("*.md"))
    assert done.text == "The plan is closed. Steps left undone: 2: second; 3: third. Tell the user which and why."
    assert state == "normal"
    text = files[0].read_text()
    assert "Status: completed" in text and "Enough for now" in text and "Deviation: skipped the docs" in text


@pytest.mark.parametrize(
    ("answer", "result", "description"),
    [
        ("approve", "Step 2 is changed: second, smaller", "second, smaller"),
        ("deny", "The user kept step 2 as it was. Their feedback: because", "second"),
    ],
)
async def test_modify_needs_the_users_approval(tmp_path, answer, result, description):
    host = answering(plan_modify=answer)
    async with running(tmp_path, host=host) as session:
        await executing(session)
        modified = await call_tool(session, "plan_modify", step_id="2", reason="simpler", new_description="second, smaller")
        _, row = session.planner.current("modus")
    assert modified.text == result
    assert [s["description"] for s in row["plan"]["steps"]][1] == description
    asked = host.approvals[-1]
    assert (asked.kind, asked.title) == ("plan", "Change step 2 of the plan?") and "Before: second" in asked.detail


@pytest.mark.parametrize(
    ("tool", "confirm", "result", "state"),
    [
        ("plan_approve", "approve", "The user approved the plan", "executing"),
        ("plan_approve", "deny", "The user did not confirm: the plan stays awaiting_approval", "awaiting_approval"),
        ("plan_reject", "approve", "The user rejected the plan. Their feedback: wrong file", "normal"),
        ("plan_reject", "deny", "The user did not confirm", "awaiting_approval"),
    ],
)
async def test_the_models_relay_is_confirmed_by_the_user(tmp_path, tool, confirm, result, state):
    # plan_exit's question went unanswered (the turn was cancelled, say): the plan waits
    host = answering(plan_exit="revise", plan_approve=confirm, plan_reject=confirm)
    async with running(tmp_path, host=host) as session:
        await call_tool(session, "plan_enter", goal="g")
        planner = session.planner
        _, row = planner.current("modus")
        with session.store.transaction():
            session.store.plan_update(row["id"], plan=PLAN)
            session.store.set_plan_state("modus", "awaiting_approval", row["id"])
        args = {"feedback": "wrong file"} if tool == "plan_reject" else {}
        relayed = await call_tool(session, tool, **args)
        now, _ = planner.current("modus")
    assert relayed.text.startswith(result)
    assert now == state
    assert host.approvals[-1].tool == tool and "says you want to" in host.approvals[-1].title


async def test_status_tells_the_state_goal_scope_and_progress(tmp_path):
    (tmp_path / "src").mkdir()
    async with running(tmp_path, host=answering()) as session:
        none = await call_tool(session, "plan_status")
        await call_tool(session, "plan_enter", goal="g", scope="src")
        planning = await call_tool(session, "plan_status")
    assert none.text == "No plan is active (state normal). Call plan_enter(goal, scope?) to start one."
    assert planning.text.splitlines()[1:] == ["State: planning (a plan is being drafted)", "Scope: src"]


async def test_a_scope_outside_the_workspace_is_refused(tmp_path):
    async with running(tmp_path, host=answering()) as session:
        refused = await call_tool(session, "plan_enter", goal="g", scope=["../elsewhere"])
        state, _ = session.planner.current("modus")
    assert refused.error is not None and "outside" in refused.text
    assert state == "normal"


async def test_yolo_approves_the_plan_without_asking(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host, yolo=True) as session:
        await executing(session)
    assert host.approvals == []


async def test_each_plan_update_goes_out_after_its_change_is_committed(tmp_path):
    seen = []

    class Watching(MemoryHost):
        def publish(self, update) -> None:
            if update.kind == "plan":  # what a second connection to the database reads right then
                db = sqlite3.connect(tmp_path / ".modus" / "state" / "modus.sqlite3")
                seen.append((update.state, db.execute("SELECT state FROM plan_state").fetchone()[0]))
                db.close()
            super().publish(update)

    async with running(tmp_path, host=Watching()) as session:
        await executing(session)
        await call_tool(session, "plan_step_complete", step_id="1", verification_result="ok")
    assert seen == [("planning", "planning"), ("awaiting_approval", "awaiting_approval"), ("executing", "executing"), ("executing", "executing")]
