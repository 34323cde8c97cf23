"""The agent loop: ask the model, run its tool calls through the gate, repeat until the turn ends.

A turn ends on attempt_completion, ask_followup_question, plan_mode_respond, a reply without a
tool call, cancellation, or too many consecutive failed tool calls.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from protocol import (
    ApprovalRequest, ContextUpdate, MessageDelta, MessageUpdate, RefusedMention, ThinkingDelta, ToolCallUpdate, ToolError, TurnEnded, TurnError,
    TurnStarted,
)

from ..errors import Denied, RequestFailed, TurnBusy
from ..modes import GROUP_TOOLS
from ..providers import ChatMessage, ModelError, ModelRequest, ToolCallRequest
from ..providers.xmlcalls import XmlCallParser
from ..state import StoredMessage
from ..state.records import new_id
from ..tools import TOOLS, ToolContext, run_tool
from . import context
from .history import IMAGES, tool_result, turn_ended
from .touched import KEY as TOUCHED
from ..roster.summons import Summons, mentioned
from .task import Task

if TYPE_CHECKING:
    from .session import Session

log = logging.getLogger(__name__)

#: The tools that change files (edits, and commands, which may change any).
CHANGING_TOOLS = frozenset({*GROUP_TOOLS["edit"], *GROUP_TOOLS["command"]})

CANCELLED = "Cancelled by the user."
NOT_RUN_FAILED = "Not run: the turn failed before this call ran."
SKIPPED_AFTER_DENIAL = "Skipped: the user denied an earlier tool call of this reply."
SKIPPED_AFTER_END = "Skipped: an earlier tool call of this reply ended the turn."


@dataclass
class Turn:
    session: "Session"
    #: Updates go to this conversation (what the user is looking at).
    conversation_id: str
    #: Messages are stored in this one (a subtask has its own history).
    history_id: str
    agent: str
    turn_id: str
    #: Calls of the current reply that have no result yet.
    open_calls: list[ToolCallRequest] = field(default_factory=list)
    #: The tool called last in this turn (act_mode_respond may not follow itself).
    last_tool: str | None = None
    #: What the agent wrote in this turn (its mentions wake other agents when it completes).
    said: list[str] = field(default_factory=list)
    #: Why the turn runs; its note goes into the model's input where the turn began.
    summons: Summons = field(default_factory=Summons)
    summons_at: int = 0
    #: why the turn failed or was cancelled (`turn_ended.error`)
    error: TurnError | None = None

    def publish(self, update_cls, **fields) -> None:
        task = self.session.tasks.get(self.agent)
        self.session.host.publish(
            update_cls(conversation_id=self.conversation_id, agent=self.agent, task_id=task.id if task else None, **fields)
        )

    def record(self, role: str, text: str, **metadata) -> StoredMessage:
        """A message of this turn: its metadata names the turn (and who woke it), so that a
        client showing the history again groups it as it was shown live."""
        metadata["turnId"] = self.turn_id
        if self.summons.woken_by:
            metadata["wokenBy"] = self.summons.woken_by
        return self.session.add_message(
            StoredMessage(new_id("msg-"), self.history_id, role, text, self.agent if role != "tool" else None, metadata)
        )

    def system(self, text: str, *, publish: bool = True, **metadata) -> None:
        stored = self.record("system", text, **metadata)
        if publish:
            self.publish(
                MessageUpdate, turn_id=self.turn_id, role="system", text=text, mentions_refused=metadata.get("mentionsRefused"), message_id=stored.id
            )

    def ends(self, outcome: str, error_type: str, text: str, *, publish: bool = True) -> None:
        """The turn ends `outcome` (failed or cancelled) for this reason: its last message says
        why (history.turn_ended), and `turn_ended` carries it as its `error`."""
        self.error = TurnError(type=error_type, message=text)
        self.system(text, publish=publish, **turn_ended(outcome, error_type, text))


async def run_turn(
    session: "Session", conversation_id: str, agent: str, summons: Summons | None = None, history_id: str | None = None
) -> tuple[str, str | None]:
    """One agent turn in a conversation: (its outcome, also sent as `turn_ended`; what it
    answers: the attempt_completion result, else what it wrote). A turn that completes wakes
    the agents its text names, within the guards of its chain. `history_id`: a subtask's own
    conversation (delegate_task), whose turn wakes no one: its answer goes to the delegator."""
    from ..roster import Chain, wakes_after

    summons = summons or Summons()
    chain = summons.chain = summons.chain or Chain.start([agent])
    turn = Turn(session, conversation_id, history_id or conversation_id, agent, new_id("turn-"), summons=summons)
    turn.summons_at = len(session.histories.get(turn.history_id, agent).messages)
    while True:  # one turn per agent per conversation across a team space
        await session.space.turn_free(conversation_id, agent)
        try:
            session.store.start_turn(turn.turn_id, conversation_id, agent)
            break
        except TurnBusy:  # its turn there ended a moment ago, or its server died: not closed yet
            await anyio.sleep(0.5)
    turn.publish(TurnStarted, turn_id=turn.turn_id, woken_by=summons.woken_by)
    outcome, answer = "failed", None
    wakes = []
    try:
        if session.task_for(agent, conversation_id).tools & CHANGING_TOOLS:  # a turn that can change files
            await session.checkpoints.take(f"{agent}'s turn starts", conversation_id)
        stop = lambda: session.cancel(conversation_id)  # noqa: E731 - the user cancels from the progress UI
        async with session.host.progress(f"Modus: {agent} is working", on_cancel=stop):
            outcome, answer = await _work(turn)
            for _ in range(session.settings.max_hook_continuations):
                words = await _stop_hooks(turn, outcome)
                if not words:
                    break
                with session.store.transaction():  # the turn goes on: a stop from here on interrupts it
                    session.store.reopen_turn(turn.turn_id)
                    said = turn.record("user", words, source="hook")  # a Stop hook's exit 2: its words, as the user's
                turn.publish(MessageUpdate, turn_id=turn.turn_id, role="user", text=words, message_id=said.id)
                outcome, answer = await _work(turn)
        answer = answer if answer is not None else "\n\n".join(turn.said)
        if history_id is None:
            after = wakes_after(outcome, "\n\n".join(turn.said), agents=session.agents, self_name=agent, chain=chain, policy=session.wake_policy)
            if after.message:
                refused = [RefusedMention(mention=r.mention, reason=r.reason).wire() for r in after.refusals]
                turn.system(after.message, mentionsRefused=refused)
            wakes = after.wakes
    except anyio.get_cancelled_exc_class():
        outcome = "cancelled"
        _close_open_calls(turn, CANCELLED)
        turn.ends("cancelled", "Cancelled", CANCELLED, publish=False)  # `turn_ended` says it
        raise
    except ModelError as exc:
        _close_open_calls(turn, NOT_RUN_FAILED, "TurnFailed")
        turn.ends("failed", "ModelError", f"The model request failed: {exc}")
    except RequestFailed as exc:  # the store refused (a team space out of reach): said, and stored where it can be
        log.warning("turn %s failed: %s", turn.turn_id, exc)
        _close_open_calls(turn, NOT_RUN_FAILED, "TurnFailed")
        turn.error = TurnError(type="RequestFailed", message=str(exc))
        _unstored(lambda: turn.ends("failed", "RequestFailed", str(exc), publish=False))
    except Exception as exc:  # a bug must not take the server down; the user sees what happened
        log.exception("turn %s failed", turn.turn_id)
        _close_open_calls(turn, NOT_RUN_FAILED, "TurnFailed")
        turn.ends("failed", "InternalError", f"Internal error in the agent loop: {type(exc).__name__}: {exc}")
    finally:
        await session.browsers.turn_ended(turn.turn_id)  # shielded: a cancelled turn closes its browser too
        _unstored(lambda: session.store.end_turn(turn.turn_id, outcome))
        error = turn.error if outcome in ("failed", "cancelled") else None
        turn.publish(TurnEnded, turn_id=turn.turn_id, outcome=outcome, error=error)
        summons.answer(outcome, answer or "")
    for wake in wakes:
        await session.runtimes.wake(conversation_id, wake.to, Summons(chain, wake.by, mentioned(wake.by)))
    return outcome, answer


async def _work(turn: Turn) -> tuple[str, str | None]:
    """The model's work of the turn (run_loop), its end stored as soon as the work ends: a server
    that stops during what follows (the Stop hooks, the wakes) interrupted no turn, and the next
    start does not report it. The final reply stores it with itself (_ask_model)."""
    outcome, answer = await run_loop(turn)
    turn.session.store.end_turn(turn.turn_id, outcome)
    return outcome, answer


async def _stop_hooks(turn: Turn, outcome: str) -> str:
    """The Stop hooks of a turn that completed: what those that block say (the turn goes on)."""
    if outcome != "completed":
        return ""
    task = turn.session.task_for(turn.agent, turn.conversation_id)
    runs = await turn.session.hookbook.fire(
        "Stop", conversation_id=turn.conversation_id, agent=turn.agent, mode=task.mode.slug, phase=task.phase, stop_hook_active=True,
    )
    return "\n\n".join(r.reason for r in runs if r.blocks and r.reason)


async def run_loop(turn: Turn) -> tuple[str, str | None]:
    """(outcome, attempt_completion result if any)."""
    settings = turn.session.settings
    mistakes = 0
    requests = 0
    while True:
        if requests == settings.max_requests_per_turn:
            if not await _may_go_on(turn, requests):
                text = f"Stopped after {requests} model requests in one turn (maxRequestsPerTurn): the user chose not to continue."
                turn.ends("cancelled", "RequestLimit", text)
                return "cancelled", None
            requests = 0
        requests += 1
        if turn.session.stale():
            await turn.session.refresh()
        await turn.session.config.mcp_ready(turn.session.mode_of(turn.agent))
        task = turn.session.task_for(turn.agent, turn.conversation_id)
        calls = await _ask_model(turn, task)
        if not calls:
            return "completed", None
        ending, result, denied = None, None, False
        turn.open_calls = list(calls)
        for call in calls:
            if ending or denied:
                _record_result(turn, call, SKIPPED_AFTER_END if ending else SKIPPED_AFTER_DENIAL, error_type="Skipped")
                continue
            outcome = await _run_call(turn, call)
            if outcome.error is None:
                mistakes = 0
                if outcome.ends_turn:
                    ending, result = outcome.ends_turn, outcome.text
            elif isinstance(outcome.error, Denied):
                denied = True
            else:
                mistakes += 1
        if ending:
            return ending, result
        if mistakes >= settings.max_consecutive_mistakes:
            text = f"Stopped: {mistakes} tool calls in a row failed. Tell the agent how to go on, or rephrase the request."
            turn.ends("failed", "MistakeLimit", text)
            return "failed", None


async def _may_go_on(turn: Turn, requests: int) -> bool:
    """At maxRequestsPerTurn the user decides whether the turn goes on (yolo: it does)."""
    if turn.session.settings.yolo:
        return True
    answer = await turn.session.host.request_approval(
        ApprovalRequest(
            kind="continue",
            title=f"{turn.agent} has made {requests} model requests in this turn. Continue?",
            detail=f"Approve to allow {requests} more (the maxRequestsPerTurn setting); deny to stop the turn here.",
            agent=turn.agent,
        )
    )
    return answer.decision == "approve"


async def _ask_model(turn: Turn, task: Task) -> list[ToolCallRequest]:
    parser = XmlCallParser(TOOLS, lambda: new_id("xml-"))
    shown: list[str] = []

    def on_text(chunk: str) -> None:
        visible = parser.feed(chunk)
        if visible:
            shown.append(visible)
            turn.publish(MessageDelta, turn_id=turn.turn_id, text=visible)

    def on_thinking(chunk: str) -> None:
        turn.publish(ThinkingDelta, turn_id=turn.turn_id, text=chunk)

    session = turn.session
    note = [ChatMessage("user", turn.summons.note)] if turn.summons.note else []
    messages, condensed = await context.room_for(session, task, turn.history_id, turn.agent, note, turn.conversation_id)
    if condensed:  # the note stays where the turn began, or follows the summary that took its place
        turn.summons_at = max(1, turn.summons_at - condensed + 1)
    if note:
        messages = [*messages[: turn.summons_at], *note, *messages[turn.summons_at :]]
    request = ModelRequest(system=task.prompt.text, messages=tuple(messages), tools=task.tool_schemas)
    reply = await task.model.complete(request, on_text, turn.system, on_thinking)  # a retry's wait: a system message
    if reply.usage is not None:
        session.usage_book.record(turn.conversation_id, task, reply.usage)
    rest = parser.finish()
    if rest:
        shown.append(rest)
        turn.publish(MessageDelta, turn_id=turn.turn_id, text=rest)
    calls = [*parser.calls, *reply.tool_calls]
    native = {c.id for c in reply.tool_calls}
    visible = "".join(shown).strip()
    metadata: dict = {"taskId": task.id, "mode": task.mode.slug, "phase": task.phase}
    if calls:
        metadata["toolCalls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments, "native": c.id in native} for c in calls
        ]
    if reply.text.strip() != visible:
        metadata["raw"] = reply.text
    if reply.state:
        metadata["providerState"] = reply.state
    if reply.usage is not None:  # what the request took of the window, for the context bar after a restart
        metadata["contextUsed"] = context.provider_count(reply.usage)
    with session.store.transaction():
        stored = turn.record("assistant", visible, **metadata)
        if not calls:  # the final reply ends the turn (run_loop): stored with it, the turn is over
            session.store.end_turn(turn.turn_id, "completed")  # before the context's measure, which may load the tokenizer
    if visible:
        turn.said.append(visible)
        turn.publish(MessageUpdate, turn_id=turn.turn_id, role="assistant", text=visible, message_id=stored.id)
    room = await context.measured(session, task, session.histories.get(turn.history_id, turn.agent), request, note, reply.usage)
    turn.publish(ContextUpdate, **room.model_dump())
    return calls


async def _run_call(turn: Turn, call: ToolCallRequest):
    session = turn.session
    routed = session.config.mcp_route(call.name) if call.name not in TOOLS else None
    if routed is not None:  # a native call of an MCP tool (mcp__<server>__<tool>) is use_mcp_tool
        native, call = call, ToolCallRequest(call.id, "use_mcp_tool", {"server_name": routed[0], "tool_name": routed[1], "arguments": call.arguments})
        turn.open_calls = [call if c is native else c for c in turn.open_calls]
    base = dict(turn_id=turn.turn_id, tool_call_id=call.id, name=call.name, params=call.arguments)
    turn.publish(ToolCallUpdate, status="pending", **base)
    task = session.task_for(turn.agent, turn.conversation_id)
    ctx = ToolContext(session.ports, task, turn.agent, turn.conversation_id, turn.turn_id, call.id, turn.last_tool, turn.summons.chain)
    turn.last_tool = call.name
    outcome = await run_tool(ctx, call, TOOLS, on_running=lambda: turn.publish(ToolCallUpdate, status="running", **base))
    images = _image_refs(session, outcome.images)
    if outcome.result_later and turn.history_id == turn.conversation_id:
        turn.open_calls.remove(call)  # its result is written with the user's answer (Session.answer_waiting_call)
    else:
        _record_result(turn, call, outcome.text, error_type=outcome.error.type if outcome.error else None, touched=outcome.touched,
                       images=images, metadata=outcome.metadata)
    if outcome.error is None:
        turn.publish(ToolCallUpdate, status="completed", result=outcome.text, images=images or None, **base)
    else:
        error = ToolError(type=outcome.error.type, message=outcome.error.message)
        turn.publish(ToolCallUpdate, status="failed", error=error, **base)
    return outcome


def _image_refs(session: "Session", ids: tuple[str, ...]) -> list[dict]:
    """`[{id, mimeType}]` of the stored images of a tool's result (unknown ids left out)."""
    refs = []
    for image_id in dict.fromkeys(ids):
        found = session.store.image(image_id)
        if found is not None:
            refs.append({"id": image_id, "mimeType": found[0]})
    return refs


def _record_result(
    turn: Turn, call: ToolCallRequest, text: str, *, error_type: str | None, touched: tuple[str, ...] = (),
    images: list[dict] | None = None, metadata: dict | None = None,
) -> None:
    """The call's result, with the files it touched (agent/touched.py: they wake conditional rules),
    the images it carries to the model (`images`: [{id, mimeType}]) and what the tool keeps with
    it (Outcome.metadata)."""
    extra = {**(metadata or {}), **({TOUCHED: list(touched)} if touched else {})}
    if images:
        extra[IMAGES] = images
    turn.record("tool", text, **tool_result(call.id, call.name, error_type), **extra)
    if call in turn.open_calls:
        turn.open_calls.remove(call)


def _unstored(write) -> None:
    """A write at a turn's end that may find the store refusing (a team space gone out of reach
    during the turn): the turn still ends, and `turn_ended` still goes out."""
    try:
        write()
    except RequestFailed as exc:
        log.warning("not stored: %s", exc)


def _close_open_calls(turn: Turn, text: str, error_type: str = "Cancelled") -> None:
    """After a cancel or a failure, every call of the reply gets a result, so the history stays
    well formed (and a retry can send it as it is)."""
    for call in list(turn.open_calls):
        _unstored(lambda: _record_result(turn, call, text, error_type=error_type))  # noqa: B023 - called at once
        turn.publish(
            ToolCallUpdate,
            turn_id=turn.turn_id,
            tool_call_id=call.id,
            name=call.name,
            params=call.arguments,
            status="failed",
            error=ToolError(type=error_type, message=text),
        )
