"""Hand-offs between the agents of a conversation that must not depend on prose (SPEC §5):
send_to_agent, ask_agent and delegate_task. Names are resolved exactly (case aside, a leading
`@` allowed); the guards of mentions apply (not yourself, the chain's depth and no revisits, the
rate limit per pair), and ask_agent refuses a question that would wait in a circle."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
from pydantic import Field

from protocol import Handoff, MessageUpdate

from ..roster import summons as why
from ..errors import InvalidParams, ToolError, ToolNotAllowed
from ..state import StoredMessage
from ..state.records import new_id
from .base import Params, Prepared, ToolContext, ToolSpec
from .flow import Required

if TYPE_CHECKING:
    from ..workspace import WorkspacePath

ASK_TIMEOUT_SECONDS = 600.0
ASK_TIMEOUT_MAX_SECONDS = 1800.0


def target(ctx: ToolContext, to: str) -> str:
    """The agent `to` names, or InvalidParams listing the agents it could have named."""
    names = ctx.ports.chat.agent_names()
    key = to.removeprefix("@")
    found = [n for n in names if n == key] or [n for n in names if n.casefold() == key.casefold()]
    others = [n for n in names if n != ctx.agent]
    if len(found) != 1:
        problem = "names several agents" if found else "is not an agent of this conversation"
        raise InvalidParams(f"to: '{to}' {problem}. The agents you can reach: {', '.join(others) or 'none'}.")
    if found[0] == ctx.agent:
        raise InvalidParams(f"to: '{to}' is you. The agents you can reach: {', '.join(others) or 'none'}.")
    return found[0]


def admitted(ctx: ToolContext, to: str) -> None:
    """The wake guards of the turn's chain (this records the wake), or ToolNotAllowed."""
    from ..roster import Chain

    ctx.chain = ctx.chain or Chain.start([ctx.agent])
    refusal = ctx.ports.chat.admit(ctx.chain, ctx.agent, to)
    if refusal is not None:
        raise ToolNotAllowed(f"Not delivered to {to}: {refusal.reason}.")


def say_to(ctx: ToolContext, to: str, text: str, kind: str) -> None:
    """The hand-off's words, in the conversation: the other agents read them quoted "[X to Y]"."""
    handoff = Handoff(kind=kind, to=to, tool_call_id=ctx.call_id).wire()
    ctx.ports.chat.add_message(StoredMessage(new_id("msg-"), ctx.conversation_id, "assistant", text, ctx.agent, {"handoff": handoff}))
    ctx.host.publish(MessageUpdate(conversation_id=ctx.conversation_id, agent=ctx.agent, turn_id=ctx.turn_id, role="assistant", text=text))


# ---------------------------------------------------------------- send_to_agent


class SendToAgentParams(Params):
    to: Required
    message: Required


async def _send_to_agent(ctx: ToolContext, p: SendToAgentParams, paths: list[WorkspacePath]) -> Prepared:
    to = target(ctx, p.to)

    async def run() -> str:
        admitted(ctx, to)
        say_to(ctx, to, p.message, "send")
        await ctx.ports.chat.wake(ctx.conversation_id, to, why.Summons(ctx.chain, ctx.agent, why.sent(ctx.agent)))
        return f"Sent to {to}: its turn starts now, or when its current turn ends. You do not wait for an answer."

    return Prepared(run)


# ---------------------------------------------------------------- ask_agent


class AskAgentParams(Params):
    to: Required
    question: Required
    timeout_seconds: float = Field(default=ASK_TIMEOUT_SECONDS, gt=0, le=ASK_TIMEOUT_MAX_SECONDS)


async def _ask_agent(ctx: ToolContext, p: AskAgentParams, paths: list[WorkspacePath]) -> Prepared:
    to = target(ctx, p.to)
    chat = ctx.ports.chat
    waits = [to]  # whom `to` waits for, whom that one waits for, ...
    while (waited := chat.waiting_for(ctx.conversation_id, waits[-1])) is not None and ctx.agent not in waits:
        waits.append(waited)
    if waits[-1] == ctx.agent:
        raise ToolNotAllowed(
            f"Not asked: {to} is waiting for your answer ({' → '.join(waits)}); asking it would wait in a circle. "
            "Answer in this turn instead."
        )

    async def run() -> str:
        admitted(ctx, to)
        say_to(ctx, to, p.question, "ask")
        reply = why.Reply()
        with chat.asking(ctx.conversation_id, ctx.agent, to):
            await chat.wake(ctx.conversation_id, to, why.Summons(ctx.chain, ctx.agent, why.asked(ctx.agent), [reply]))
            with anyio.move_on_after(p.timeout_seconds):
                await reply.done.wait()
        if not reply.done.is_set():
            raise ToolError(f"No answer from {to} within {p.timeout_seconds:g} seconds. Its turn goes on; what it writes stays in the conversation.")
        if reply.outcome != "completed":
            raise ToolError(f"{to}'s turn ended without an answer (outcome: {reply.outcome}).")
        return f"{to} answered:\n{reply.text}"

    return Prepared(run)


# ---------------------------------------------------------------- delegate_task


class DelegateTaskParams(Params):
    to: Required
    title: Required
    description: Required


async def _delegate_task(ctx: ToolContext, p: DelegateTaskParams, paths: list[WorkspacePath]) -> Prepared:
    to = target(ctx, p.to)

    async def run() -> str:
        admitted(ctx, to)
        outcome, answer = await ctx.ports.subtasks.run_delegated(ctx, to, p.title, p.description)
        if outcome != "completed":
            raise ToolError(f"The task '{p.title}' delegated to {to} ended without a result (outcome: {outcome}).")
        return f"{to} completed the task '{p.title}':\n{answer}"

    return Prepared(run, f"Delegate '{p.title}' to {to}?", p.description, {"to": to})


TOOLS = (
    ToolSpec(
        "send_to_agent",
        "Send a message to another agent of the conversation (`to`: its exact name) and go on without "
        "waiting: its turn starts with your message.",
        SendToAgentParams,
        _send_to_agent,
    ),
    ToolSpec(
        "ask_agent",
        "Ask another agent (`to`: its exact name) a question and wait for its answer, which is this "
        f"tool's result; timeout_seconds: how long to wait (default {ASK_TIMEOUT_SECONDS:g}, at most {ASK_TIMEOUT_MAX_SECONDS:g}).",
        AskAgentParams,
        _ask_agent,
    ),
    ToolSpec(
        "delegate_task",
        "Give another agent (`to`: its exact name) a task of its own, tracked as a subtask: it works "
        "on it in a conversation of its own, and its attempt_completion result is this tool's result.",
        DelegateTaskParams,
        _delegate_task,
        approval="subtasks",
        approval_kind="subtask",
    ),
)
