"""Subtasks: new_task runs a mode to completion in a conversation under the caller's, and
delegate_task has another agent do the same; the result is the calling tool's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..roster.summons import Summons, delegated
from ..errors import ToolError
from ..state.records import new_id

if TYPE_CHECKING:
    from ..tools import ToolContext
    from .session import Session


class Subtasks:
    def __init__(self, session: Session):
        self.session = session

    async def run_subtask(self, ctx: ToolContext, mode: str, message: str) -> str:
        """Run a subtask in `mode` to completion; its result is the parent's tool result."""
        from .loop import Turn, run_loop

        session = self.session
        switcher = session.switcher
        parent_mode = switcher.mode_of(ctx.agent).slug
        child = new_id("conv-")
        session.store.ensure_conversation(child, ctx.agent, parent_id=ctx.conversation_id)
        task = switcher.switch_mode(
            mode, by="model", reason=f"Subtask: {message.splitlines()[0][:80]}", agent=ctx.agent, conversation_id=ctx.conversation_id
        )
        session.intake.add_user_message(child, message, task, parentConversation=ctx.conversation_id)
        try:
            outcome, result = await run_loop(Turn(session, ctx.conversation_id, child, ctx.agent, ctx.turn_id))
        finally:
            switcher.switch_mode(parent_mode, by="model", reason="Subtask finished", agent=ctx.agent, conversation_id=ctx.conversation_id)
        name = task.mode.name
        if outcome == "completed" and result is not None:
            return f"Subtask in {name} mode completed:\n{result}"
        raise ToolError(f"The subtask in {name} mode ended without attempt_completion (outcome: {outcome}).")

    async def run_delegated(self, ctx: ToolContext, to: str, title: str, description: str) -> tuple[str, str | None]:
        """delegate_task: `to` works on the task in a conversation of its own under the
        delegator's (tracked like new_task's subtasks); its turn reports in the delegator's."""
        from .loop import run_turn

        session = self.session
        child = new_id("conv-")
        session.store.ensure_conversation(child, to, parent_id=ctx.conversation_id)
        task = session.switcher.task_for(to, ctx.conversation_id)
        session.intake.add_user_message(child, f"{title}\n\n{description}", task, parentConversation=ctx.conversation_id, delegatedBy=ctx.agent)
        return await run_turn(session, ctx.conversation_id, to, Summons(ctx.chain, ctx.agent, delegated(ctx.agent)), history_id=child)
