"""The agent's plan at run time: its state in the store, the phase it puts the agent in, the
plan's markdown on disk (`.modus/plans/<id>.md`), the `plan` updates, and the user's decisions.

Every change is committed to the store before the update that announces it. Approval is the
user's: plan_exit asks with `modus/approval` (kind `plan`); the same decision may come from
`modus/plan/approve|reject` (the sidebar, the palette), which answers a pending question or,
when none is pending (after a restart), moves the plan and wakes the agent.
"""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable

import anyio

from ..errors import BadRequest, InvalidParams
from ..plan import machine
from ..plan.markdown import render
from ..plan.model import Plan, PlanInvalid, as_step_id, next_step, parse_plan, undone

if TYPE_CHECKING:
    from protocol import ApprovalResponse, PlanInfo

    from ..host import Host
    from ..state import StateStore
    from ..workspace import Workspace
    from .configuration import Configuration
    from .conversations import Conversations
    from .switcher import Switcher

    Tell = Callable[[str, str, str], Awaitable[None]]

log = logging.getLogger(__name__)

#: The most characters of a step's verification output kept with the plan.
MAX_VERIFICATION = 4000


@dataclass
class _Question:
    """A plan decision the user is being asked for; answered by the client or a plan request."""

    #: Whether the answer decides a plan waiting for approval (plan_exit, plan_approve/reject).
    decides: bool = False
    answered: anyio.Event = field(default_factory=anyio.Event)
    response: "ApprovalResponse | None" = None
    #: Set when a plan request has already applied the decision: what the model is told.
    applied: str | None = None

    def answer(self, response: "ApprovalResponse") -> None:
        if self.response is None:
            self.response = response
            self.answered.set()


class Planner:
    def __init__(self, store: "StateStore", host: "Host", workspace: "Workspace", config: "Configuration", conversations: "Conversations", switcher: "Switcher", tell: "Tell", told: "Callable[..., None]" = lambda event, **fields: None):
        """`tell`: a decision made outside the chat, told to the agent and its turn started."""
        self.store = store
        self.host = host
        self.workspace = workspace
        self.config = config
        self.conversations = conversations
        self.switcher = switcher
        self.tell = tell
        #: a decision made: the PlanDecision hooks are told (HookBook.soon)
        self.told = told
        self._questions: dict[str, _Question] = {}

    # ------------------------------------------------------------ reading

    def current(self, agent: str) -> tuple[str, dict[str, Any] | None]:
        return self.store.current_plan(agent)

    def info(self, agent: str) -> "PlanInfo":
        return machine.plan_info(*self.current(agent))

    def markdown(self, row: dict[str, Any], state: str | None = None, outcome: str | None = None) -> str | None:
        if row["plan"] is None:
            return None
        return render(
            Plan.model_validate(row["plan"]),
            plan_id=row["id"],
            goal=row["goal"],
            state=state or row["state"],
            completed=row["completed"],
            current=row["current_step"] if (state or row["state"]) == "executing" else None,
            outcome=outcome,
        )

    # ------------------------------------------------------------ announcing

    def _announce(self, agent: str, cid: str, row: dict[str, Any], state: str, shown: str | None = None, outcome: str | None = None) -> str | None:
        """After the store has the change: the markdown file and the `plan` update."""
        from protocol import PlanUpdate

        text = self.markdown(row, shown, outcome)
        if text is not None:
            self._write_file(row["id"], text)
        self.host.publish(
            PlanUpdate(
                conversation_id=cid,
                agent=agent,
                state=state,
                plan=row["plan"],
                markdown=text,
                completed_steps=list(row["completed"]),
                plan_id=row["id"],
                goal=row["goal"],
                scope=row["scope"],
                current_step=row["current_step"] if state == "executing" else None,
            )
        )
        return text

    def _write_file(self, plan_id: str, text: str) -> None:
        """`.modus/plans/<id>.md`, atomically; a folder that leads outside the workspace is refused."""
        try:
            target = self.workspace.resolve(f".modus/plans/{plan_id}.md")
            target.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.path.parent, prefix=f".{plan_id}.", suffix=".modus-tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, target.path)
        except Exception as exc:  # the plan lives in the store; the file is a view of it
            log.warning("could not write the plan file of %s: %s", plan_id, exc)

    def _move(self, agent: str, row: dict[str, Any], event: str, **fields: Any) -> dict[str, Any]:
        """The plan's next state (the machine's table) and fields, committed together."""
        state = machine.next_state(row["state"], event)
        with self.store.transaction():
            if state == "normal":
                row = self.store.plan_update(row["id"], **fields) if fields else row
                self.store.set_plan_state(agent, "normal")
            else:
                if fields:
                    self.store.plan_update(row["id"], **fields)
                self.store.set_plan_state(agent, state, row["id"])
        return self.store.plan_get(row["id"])

    def _phase(self, agent: str, cid: str, state: str, by: str = "model") -> None:
        phase = machine.PHASES.get(state)
        if phase is not None:
            self.switcher.set_phase(phase, by=by, agent=agent, conversation_id=cid)

    # ------------------------------------------------------------ the model's tools

    def enter(self, agent: str, cid: str, goal: str, scope: list[str] | None, by: str = "model") -> str:
        state, _ = self.current(agent)
        machine.next_state(state, "enter")
        with self.store.transaction():
            row = self.store.plan_create(agent, goal, scope, cid)
            self.store.set_plan_state(agent, "planning", row["id"])
        self._phase(agent, cid, "planning", by)
        self._announce(agent, cid, row, "planning")
        where = f" Read only inside: {', '.join(scope)}." if scope else ""
        return (
            f"Plan mode is on (plan {row['id']}): {goal}. The phase is PLAN MODE: explore with read-only tools, "
            f"nothing can be written until the user approves a plan.{where} When you know what to do, call plan_exit "
            "with the plan: summary, approach, steps (each id, description, files, depends_on, verification), "
            "risks, files_to_create, files_to_modify, tests_to_write, estimated_complexity."
        )

    async def exit(self, agent: str, cid: str, value: Any, call_id: str | None) -> str:
        state, row = self.current(agent)
        assert row is not None and state == "planning"
        try:
            plan = parse_plan(value)
        except PlanInvalid as exc:
            raise InvalidParams(str(exc)) from None
        row = self._move(agent, row, "exit", plan=plan.model_dump(mode="json"), feedback=None)
        text = self._announce(agent, cid, row, "awaiting_approval")
        question = await self.ask(agent, f"Approve the plan: {row['goal']}?", text or "", "plan_exit", call_id, decides=True)
        return question.applied or self.decide(agent, cid, question.response)

    def brief(self, agent: str) -> str:
        """The plan for environment_details: goal and scope while planning; the plan's steps and
        the current one while executing; "" without a plan."""
        state, row = self.current(agent)
        if row is None:
            return ""
        lines = [f"State: {machine.describe(state)}", f"Goal: {row['goal']}"]
        if row["scope"]:
            lines.append(f"Scope (reads stay inside): {', '.join(row['scope'])}")
        if state == "executing" and row["plan"] is not None:
            plan = Plan.model_validate(row["plan"])
            for step in plan.steps:
                mark = "x" if step.id in row["completed"] else ("-" if step.id == row["current_step"] else " ")
                lines.append(f"- [{mark}] {step.id}. {step.description}")
            if row["current_step"]:
                lines.append(f"Current step: {row['current_step']} (then call plan_step_complete)")
        return "\n".join(lines)

    def status(self, agent: str) -> str:
        state, row = self.current(agent)
        if row is None:
            return f"No plan is active (state {state}). Call plan_enter(goal, scope?) to start one."
        done = list(row["completed"])
        lines = [f"Plan {row['id']}: {row['goal']}", f"State: {machine.describe(state)}"]
        if row["scope"]:
            lines.append(f"Scope: {', '.join(row['scope'])}")
        if row["plan"] is not None:
            plan = Plan.model_validate(row["plan"])
            lines.append(f"Steps done: {len(done)} of {len(plan.steps)}" + (f" ({', '.join(done)})" if done else ""))
            if state == "executing" and row["current_step"]:
                lines.append(f"Current step: {row['current_step']}: {plan.step(row['current_step']).description}")
        if row["feedback"]:
            lines.append(f"The user's feedback: {row['feedback']}")
        return "\n".join(lines)

    async def relay(self, agent: str, cid: str, decision: str, feedback: str | None, call_id: str | None) -> str:
        """plan_approve / plan_reject: the model relays what the user typed; the user confirms."""
        from protocol import ApprovalResponse

        _, row = self.current(agent)
        assert row is not None
        verb = "approve" if decision == "approve" else "reject"
        question = await self.ask(
            agent, f"{agent} says you want to {verb} the plan “{row['goal']}”. {verb.capitalize()} it?", feedback or "", f"plan_{verb}", call_id, decides=True
        )
        if question.applied:  # the user decided from the sidebar or the palette meanwhile
            return question.applied
        if question.response.decision != "approve":
            return f"The user did not confirm: the plan stays {machine.describe(row['state'])}."
        return self.decide(agent, cid, ApprovalResponse(decision="approve" if verb == "approve" else "deny", feedback=feedback))

    def step_complete(self, agent: str, cid: str, step_id: Any, verification: str) -> str:
        _, row = self.current(agent)
        assert row is not None
        plan = Plan.model_validate(row["plan"])
        sid = as_step_id(step_id)
        if sid is None or plan.step(sid) is None:
            raise InvalidParams(f"step_id: the plan has no step {step_id!r}; its steps are {', '.join(s.id for s in plan.steps)}.")
        completed = {**row["completed"], sid: verification[:MAX_VERIFICATION]}
        following = next_step(plan, completed)
        row = self._move(agent, row, "step_complete", completed=completed, current_step=following)
        self._announce(agent, cid, row, "executing")
        done = f"Step {sid} is done ({len(completed)} of {len(plan.steps)})."
        if following is None:
            return f"{done} Every step is done: call plan_complete(summary, deviations?)."
        return f"{done} Next: step {following}: {plan.step(following).description}"

    def complete(self, agent: str, cid: str, summary: str, deviations: list[str] | None) -> str:
        _, row = self.current(agent)
        assert row is not None
        plan = Plan.model_validate(row["plan"])
        left = undone(plan, row["completed"])
        outcome = summary + "".join(f"\n- Deviation: {d}" for d in deviations or ())
        row = self._move(agent, row, "complete", state="completed", feedback=outcome)
        self._announce(agent, cid, row, "normal", shown="completed", outcome=outcome)
        if left:
            steps = "; ".join(f"{s}: {plan.step(s).description}" for s in left)
            return f"The plan is closed. Steps left undone: {steps}. Tell the user which and why."
        return "The plan is complete: every step is done."

    async def modify(self, agent: str, cid: str, step_id: Any, reason: str, changes: dict[str, Any], call_id: str | None) -> str:
        _, row = self.current(agent)
        assert row is not None
        data = dict(row["plan"])
        sid = as_step_id(step_id)
        steps = [dict(s) for s in data["steps"]]
        found = next((s for s in steps if s["id"] == sid), None)
        if found is None:
            raise InvalidParams(f"step_id: the plan has no step {step_id!r}; its steps are {', '.join(s['id'] for s in steps)}.")
        found.update({k: v for k, v in changes.items() if v is not None})
        try:
            plan = parse_plan({**data, "steps": steps})
        except PlanInvalid as exc:
            raise InvalidParams("The changed plan is invalid: " + "; ".join(exc.problems)) from None
        before = Plan.model_validate(row["plan"]).step(sid)
        detail = f"Reason: {reason}\n\nBefore: {before.description}\nAfter: {found['description']}"
        answer = (await self.ask(agent, f"Change step {sid} of the plan?", detail, "plan_modify", call_id)).response
        if answer.decision != "approve":
            why = f" Their feedback: {answer.feedback}" if answer.feedback else ""
            return f"The user kept step {sid} as it was.{why}"
        row = self._move(agent, row, "modify", plan=plan.model_dump(mode="json"))
        self._announce(agent, cid, row, "executing")
        return f"Step {sid} is changed: {found['description']}"

    # ------------------------------------------------------------ the user's decisions

    async def ask(self, agent: str, title: str, detail: str, tool: str, call_id: str | None, decides: bool = False) -> _Question:
        """The user's answer: to the `modus/approval` request, or from a plan request meanwhile
        (which, for a plan waiting for approval, applies the decision itself: `applied`). With
        yolo everything is approved without asking."""
        from protocol import ApprovalRequest, ApprovalResponse

        question = _Question(decides=decides)
        if self.config.settings.yolo:
            question.answer(ApprovalResponse(decision="approve"))
            return question
        self._questions[agent] = question
        request = ApprovalRequest(kind="plan", title=title, detail=detail, tool=tool, agent=agent, tool_call_id=call_id)
        try:
            async with anyio.create_task_group() as tg:

                async def client() -> None:
                    question.answer(await self.host.request_approval(request))

                tg.start_soon(client)
                await question.answered.wait()
                tg.cancel_scope.cancel()  # answered from a plan request: the client's card is withdrawn
        finally:
            if self._questions.get(agent) is question:
                del self._questions[agent]
        return question

    def decide(self, agent: str, cid: str, answer: "ApprovalResponse") -> str:
        """Apply the user's answer to a plan waiting for approval; the text the model gets."""
        _, row = self.current(agent)
        assert row is not None
        feedback = answer.feedback.strip() if answer.feedback and answer.feedback.strip() else None
        self.told(
            "PlanDecision", conversation_id=cid, agent=agent, mode=self.switcher.mode_of(agent).slug, phase=self.switcher.phase,
            decision=answer.decision, feedback=feedback, plan=row["plan"],
        )
        if answer.decision == "approve":
            plan = Plan.model_validate(row["plan"])
            first = next_step(plan, row["completed"])
            row = self._move(agent, row, "approve", current_step=first, feedback=feedback)
            self._phase(agent, cid, "executing", "user")
            self._announce(agent, cid, row, "executing")
            note = f" The user adds: {feedback}" if feedback else ""
            return (
                f"The user approved the plan; the phase is ACT MODE.{note} Carry it out step by step, calling "
                f"plan_step_complete(step_id, verification_result) after each step. Begin with step {first}: "
                f"{plan.step(first).description}"
            )
        if answer.decision == "revise":
            row = self._move(agent, row, "revise", feedback=feedback)
            self._announce(agent, cid, row, "planning")
            return f"The user wants changes to the plan: {feedback or '(no details)'}. Keep planning, then call plan_exit again."
        row = self._move(agent, row, "reject", state="rejected", feedback=feedback)
        self._announce(agent, cid, row, "normal", shown="rejected", outcome=feedback)
        return "The user rejected the plan." + (f" Their feedback: {feedback}" if feedback else "")

    async def user_decision(self, agent: str, decision: str, feedback: str | None) -> None:
        """`modus/plan/approve|reject`: answers a pending question, else moves a plan waiting for
        approval (no one asking: after a restart) and tells the agent in its conversation."""
        from protocol import ApprovalResponse

        answer = ApprovalResponse(decision=decision, feedback=feedback)
        question = self._questions.get(agent)
        state, row = self.current(agent)
        if question is not None and not question.answered.is_set():
            if question.decides and state == "awaiting_approval":
                assert row is not None
                question.applied = self.decide(agent, row["conversation_id"] or self.conversations.current, answer)
            question.answer(answer)
            return
        if state != "awaiting_approval" and not (decision == "deny" and state == "executing"):
            verb = "approve" if decision == "approve" else "reject"
            raise BadRequest(f"No plan to {verb}: the plan state is {machine.describe(state)}.")
        assert row is not None
        cid = row["conversation_id"] or self.conversations.current
        if state == "executing":  # the user stops a plan being carried out
            row = self._move(agent, row, "reject", state="rejected", feedback=feedback)
            self._announce(agent, cid, row, "normal", shown="rejected", outcome=feedback)
            text = "The user stopped the plan." + (f" Their feedback: {feedback}" if feedback else "")
        else:
            text = self.decide(agent, cid, answer)
        await self.tell(cid, agent, text)
