"""The Host of the core for one ACP session: updates as `session/update` notifications,
approvals as `session/request_permission`, files through `fs/*` and commands through
`terminal/*` when the client offers them (else the server's own atomic writes and subprocesses).

One ACP session is one Modus conversation (its id is the session id) of a Modus Session whose
workspace is the session's `cwd`.
"""

from __future__ import annotations

import itertools
import logging
import math
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import anyio
from acp import RequestError
from acp import schema as acp
from pydantic import ValidationError

import protocol

from ..errors import ToolError
from ..host import CommandOutcome, EditOutcome, FileChange
from . import translate as tr

if TYPE_CHECKING:
    from acp.agent.connection import AgentSideConnection

    from ..agent.session import Session
    from ..modes import Diagnostic

log = logging.getLogger(__name__)

#: What a permission option answers to the core.
DECISIONS = {"allow": ("approve", False), "always": ("approve", True), "reject": ("deny", False), "revise": ("revise", False)}
#: Output a command run in the client's terminal may keep (the tool clips it further).
TERMINAL_OUTPUT_BYTES = 1_000_000
#: How long stopping a command in the client's terminal may take once the turn is cancelled.
STOP_GRACE_S = 5
#: A client request that failed: an error answer, an answer of the wrong shape, no connection.
CLIENT_FAILED = (RequestError, ValidationError, ConnectionError)


class Outbox:
    """`session/update` notifications in the order the core published them (publishing is
    synchronous in the core, sending is not); a client request waits for what was published
    before it (`flush`), so that a permission never comes before its tool call."""

    def __init__(self, conn: "AgentSideConnection"):
        self.conn = conn
        self._send, self._receive = anyio.create_memory_object_stream[Any](math.inf)

    def put(self, session_id: str, update: Any) -> None:
        self._send.send_nowait((session_id, update))

    async def flush(self) -> None:
        done = anyio.Event()
        self._send.send_nowait(done)
        await done.wait()

    async def pump(self) -> None:
        async for item in self._receive:
            if isinstance(item, anyio.Event):
                item.set()
                continue
            session_id, update = item
            try:
                await self.conn.session_update(session_id=session_id, update=update)
            except Exception as exc:  # the client went away: the rest is dropped, flushes still return
                log.debug("session/update not sent: %s", exc)


@dataclass
class PromptState:
    """What a running session/prompt learns about its turns."""

    outcomes: list[str] = field(default_factory=list)
    #: the client sent session/cancel
    cancelled: bool = False
    #: the user chose not to go on at maxRequestsPerTurn
    turn_limit: bool = False

    def stop_reason(self) -> str:
        """Modus's turn outcomes as ACP's stop reason. A failed turn ends the prompt normally
        (`end_turn`: why it failed was said in the thread, and its history is kept); `refusal`
        would tell the client that the prompt is dropped from the context, which Modus never does."""
        if self.turn_limit:
            return "max_turn_requests"
        if self.cancelled or "cancelled" in self.outcomes:
            return "cancelled"
        return "end_turn"


class AcpHost:
    def __init__(self, conn: "AgentSideConnection", outbox: Outbox, session_id: str, capabilities: acp.ClientCapabilities):
        self.conn = conn
        self.outbox = outbox
        self.session_id = session_id
        self.capabilities = capabilities
        self.session: Session | None = None  # set once the core's session exists
        #: the client knows the session (its session/new or session/load was answered)
        self.live = False
        self.prompt: PromptState | None = None
        #: messages for the user outside any conversation, told at the start of the next prompt
        self.notices: list[str] = []
        self._told: set[str] = set()
        #: tool calls announced to the client; the content kept in their card (diffs, a terminal)
        self._cards: dict[str, list[Any]] = {}
        self._streaming = False  # deltas of a message are going out
        self._after_text = False  # the last thing shown was text: a new message starts on a new paragraph
        self._steps: list[acp.PlanEntry] = []
        self._todos: dict[str, list[acp.PlanEntry]] = {}
        self._entries: list[acp.PlanEntry] = []
        self._ids = itertools.count(1)

    # ---------------------------------------------------------- sending

    def send(self, update: Any) -> None:
        self.outbox.put(self.session_id, update)

    def say(self, text: str) -> None:
        """Text of the agent; a new message starts on a new paragraph."""
        if not text:
            return
        if self._after_text and not self._streaming:
            text = "\n\n" + text
        self.send(acp.AgentMessageChunk(session_update="agent_message_chunk", content=acp.TextContentBlock(type="text", text=text)))
        self._after_text = True

    def note(self, text: str, who: str = "Modus") -> None:
        """Something Modus (or a colleague of the team space) tells the user, not the model's
        words: a quoted paragraph."""
        self._streaming = False
        self.say("\n".join(f"> {line}" if line else ">" for line in f"**{who}:** {text}".splitlines()))

    def _card(self, update: Any) -> None:
        self._streaming = False
        self._after_text = False
        self.send(update)

    # ---------------------------------------------------------- the core's updates

    def publish(self, update) -> None:
        handler = getattr(self, f"_on_{update.kind}", None)
        if handler is None:
            return
        if update.kind in ("turn_started", "message_delta", "thinking_delta", "message", "tool_call", "turn_ended", "notification") and update.conversation_id != self.session_id:
            return  # not this session's conversation
        handler(update)

    def _on_turn_started(self, u: protocol.TurnStarted) -> None:
        self._streaming = False
        if self.session is not None and len(self.session.agents) > 1:
            self.say(f"**@{u.agent}**" + (f" (woken by @{u.woken_by})" if u.woken_by else ""))
            self._streaming = False

    def _on_message_delta(self, u: protocol.MessageDelta) -> None:
        self.say(u.text)
        self._streaming = True

    def _on_thinking_delta(self, u: protocol.ThinkingDelta) -> None:
        self.send(acp.AgentThoughtChunk(session_update="agent_thought_chunk", content=acp.TextContentBlock(type="text", text=u.text)))

    def _on_hook(self, u: protocol.HookUpdate) -> None:
        """A hook that blocked (but a call's: its card says it), failed or ran out of time: a note."""
        if u.outcome == "ok" or (u.outcome == "blocked" and u.event == "PreToolUse"):
            return
        what = {"timeout": "ran out of time"}.get(u.outcome, u.outcome)
        self.note(f"The {u.event} hook `{u.command}` {what}" + (f": {u.output}" if u.output else "."))

    def _on_message(self, u: protocol.MessageUpdate) -> None:
        if u.role == "assistant":
            if not self._streaming:  # words not streamed (a hand-off, plan_mode_respond's response)
                self.say(u.text)
            self._streaming = False
        elif u.role == "system":
            self.note(u.text)
        elif self.colleague(u.member, u.conversation_id):
            self.note(u.text, u.member)  # through the team space
        # the user's own message: the client shows it

    def _on_notification(self, u: protocol.NotificationUpdate) -> None:
        """A colleague @-mentioned this user in the session's conversation (team space): their
        message is shown already (a note of theirs), this says it was for the user."""
        self.note(f"@{u.from_} mentioned you.")

    def colleague(self, member: str | None, conversation_id: str) -> bool:
        """Whether a user message of the conversation is a colleague's (team space), not this user's."""
        return bool(member) and self.session is not None and member != self.session.space.author(conversation_id)

    def _on_tool_call(self, u: protocol.ToolCallUpdate) -> None:
        call, name = u.tool_call_id, u.name
        if name in tr.TALK and u.status != "failed":
            if u.status == "completed" and name in ("attempt_completion", "ask_followup_question"):
                self._streaming = False
                self.say(tr.talk_text(name, u.params) or "")
            return
        if u.status == "pending" or call not in self._cards:
            self.start_card(call, name, u.params, "pending" if u.status == "pending" else None)
        if u.status == "running":
            self._card(acp.ToolCallProgress(session_update="tool_call_update", tool_call_id=call, status="in_progress"))
        elif u.status == "completed":
            self.end_card(call, name, u.result or "")
        elif u.status == "failed":
            self.end_card(call, name, None, f"{u.error.type}: {u.error.message}" if u.error else "failed")

    def start_card(self, call: str, name: str, params: dict[str, Any], status: str | None = "pending") -> None:
        """A tool call's card: what it does, what kind of thing, the files it touches."""
        workspace = self.session.workspace if self.session is not None else None
        self._cards.setdefault(call, [])
        self._card(
            acp.ToolCallStart(
                session_update="tool_call",
                tool_call_id=call,
                title=tr.title(name, params),
                kind=tr.kind(name),
                status=status,
                locations=tr.locations(workspace, name, params) if workspace else None,
                raw_input=params,
            )
        )

    def end_card(self, call: str, name: str, result: str | None, error: str | None = None) -> None:
        """The card's outcome below what it kept (a diff; a terminal shows the output itself)."""
        kept = self._cards.get(call, [])
        if error is not None:
            shown, status = [*kept, tr.text_content(error)], "failed"
        elif any(isinstance(c, acp.TerminalToolCallContent) for c in kept):
            shown, status = kept, "completed"
        else:
            shown, status = [*kept, tr.result_content(name, result or "")], "completed"
        self._card(acp.ToolCallProgress(session_update="tool_call_update", tool_call_id=call, status=status, content=shown))

    def has_card(self, call: str) -> bool:
        return call in self._cards

    def user_said(self, text: str) -> None:
        self._user(acp.TextContentBlock(type="text", text=text))

    def user_image(self, mime_type: str, data: str) -> None:
        """An image of the user's message (base64), as the prompt brought it."""
        self._user(acp.ImageContentBlock(type="image", mime_type=mime_type, data=data))

    def _user(self, block: Any) -> None:
        self.send(acp.UserMessageChunk(session_update="user_message_chunk", content=block))
        self._streaming = False
        self._after_text = False

    def _on_mode_changed(self, u: protocol.ModeChanged) -> None:
        self.send(acp.CurrentModeUpdate(session_update="current_mode_update", current_mode_id=u.to))
        self._config_changed()

    def _on_phase_changed(self, u: protocol.PhaseChanged) -> None:
        self._config_changed()
        if self.prompt is not None:
            self.note(f"{u.from_.upper()} → {u.to.upper()}")

    def _config_changed(self) -> None:
        if self.session is None or not self.live:
            return
        self.send(acp.ConfigOptionUpdate(session_update="config_option_update", config_options=self.config_options()))

    def modes_changed(self, files: Sequence[Any]) -> None:
        """Mode files were read (again): their problems are told, the options list the modes anew
        (ACP has no update of `availableModes` but the config options)."""
        session = self.session
        if session is None:
            return
        for f in files:
            self.publish_diagnostics(f.path, session.modes.diagnostics(f.path))
        self._config_changed()

    def _on_plan(self, u: protocol.PlanUpdate) -> None:
        self._steps = tr.plan_entries(u.plan, u.state, u.completed_steps, u.current_step)
        self._plan_changed()

    def _on_todos(self, u: protocol.TodosUpdate) -> None:
        self._todos[u.agent] = tr.todo_entries(u.todos)
        self._plan_changed()

    def _plan_changed(self) -> None:
        """The plan's steps, then the todos; a todo that says what a step says is that step."""
        steps = {e.content.split(". ", 1)[-1].strip().lower() for e in self._steps}
        todos = [e for todos in self._todos.values() for e in todos if e.content.strip().lower() not in steps]
        entries = [*self._steps, *todos]
        if entries != self._entries:
            self._entries = entries
            self.send(acp.AgentPlanUpdate(session_update="plan", entries=entries))

    def _on_turn_ended(self, u: protocol.TurnEnded) -> None:
        self._streaming = False
        if self.prompt is not None:
            self.prompt.outcomes.append(u.outcome)

    # ---------------------------------------------------------- the session's state, as ACP shows it

    def config_options(self) -> list[acp.SessionConfigOptionSelect]:
        session = self.session
        assert session is not None
        return tr.config_options(session.modes.modes, self.current_mode(), session.phase)

    def modes(self) -> acp.SessionModeState:
        assert self.session is not None
        return tr.session_modes(self.session.modes.modes, self.current_mode())

    def current_mode(self) -> str:
        session = self.session
        assert session is not None
        return session.mode_of(session.responder(self.session_id)).slug

    def show_plan(self, agents: Sequence[str]) -> None:
        """The agents' plans and todos as they are in the store (a loaded session)."""
        session = self.session
        assert session is not None
        for agent in agents:
            state, row = session.store.current_plan(agent)
            if row is not None:
                self._steps = tr.plan_entries(row["plan"], state, row["completed"], row["current_step"])
            self._todos[agent] = tr.todo_entries(session.todos(agent))
        self._plan_changed()

    # ---------------------------------------------------------- messages outside a conversation

    def show_message(self, level: str, text: str) -> None:
        log.info("told the user (%s): %s", level, text)
        if self.prompt is not None:
            self.note(text)
        else:
            self.notices.append(text)

    def tell_notices(self) -> None:
        for text in self.notices:
            self.note(text)
        self.notices.clear()

    def publish_diagnostics(self, path: Path, diagnostics: Sequence["Diagnostic"]) -> None:
        """ACP has no diagnostics: each new problem of a mode or agents file is told once."""
        for d in diagnostics:
            text = f"{path}:{d.line + 1}: {d.message}"
            if text not in self._told:
                self._told.add(text)
                self.show_message("warning", text)

    #: ACP has no request for the editor's problems
    reports_problems = False

    async def problems(self, paths: Sequence[Path]) -> None:
        return None

    @asynccontextmanager
    async def progress(self, title: str, on_cancel: Callable[[], object] | None = None):
        yield  # the prompt turn is the progress; session/cancel stops it

    # ---------------------------------------------------------- approvals

    async def request_approval(self, request: protocol.ApprovalRequest, changes: Sequence[FileChange] = ()) -> protocol.ApprovalResponse:
        call = request.tool_call_id
        own = call is None or call not in self._cards  # no card of its own yet (a rule to write, a question of the loop)
        if own:
            call = f"modus-approval-{next(self._ids)}"
        kind = tr.kind(request.tool) if request.tool else {"switch_mode": "switch_mode", "plan": "think"}.get(request.kind, "other")
        if changes:
            content: list[Any] = tr.diffs(changes)
            if not own:
                self._cards[call] = list(content)
        else:
            detail = tr.fenced(request.detail) if request.tool == "execute_command" and request.detail else request.detail
            content = [tr.text_content(detail)] if detail else []
        if own:
            self._card(acp.ToolCallStart(session_update="tool_call", tool_call_id=call, title=request.title, kind=kind, status="pending", content=content, raw_input=request.params))
        tool_call = acp.ToolCallUpdate(tool_call_id=call, title=request.title, kind=kind, status="pending", content=content)
        await self.outbox.flush()
        try:
            answer = await self.conn.request_permission(session_id=self.session_id, tool_call=tool_call, options=self._options(request))
        except CLIENT_FAILED as exc:  # nothing is approved without an answer
            log.warning("session/request_permission failed: %s", exc)
            return protocol.ApprovalResponse(decision="deny", feedback="The client did not answer the permission request.")
        outcome = answer.outcome
        chosen = outcome.option_id if isinstance(outcome, acp.AllowedOutcome) else "reject"
        decision, always = DECISIONS.get(chosen, ("deny", False))
        if request.kind == "continue" and decision != "approve" and self.prompt is not None:
            self.prompt.turn_limit = True
        if own:
            status = "completed" if decision == "approve" else "failed"
            self._card(acp.ToolCallProgress(session_update="tool_call_update", tool_call_id=call, status=status))
        return protocol.ApprovalResponse(decision=decision, always=always)

    @staticmethod
    def _options(request: protocol.ApprovalRequest) -> list[acp.PermissionOption]:
        def option(option_id: str, name: str, kind: str) -> acp.PermissionOption:
            return acp.PermissionOption(option_id=option_id, name=name, kind=kind)

        if request.kind == "plan" and request.tool == "plan_exit":
            return [option("allow", "Approve the plan", "allow_once"), option("revise", "Keep planning", "reject_once"),
                    option("reject", "Reject the plan", "reject_once")]
        if request.kind == "continue":
            return [option("allow", "Continue", "allow_once"), option("reject", "Stop here", "reject_once")]
        options = [option("allow", "Allow once", "allow_once")]
        if request.always_allow:
            options.append(option("always", f"Always allow ({request.always_allow})", "allow_always"))
        return [*options, option("reject", "Reject", "reject_once")]

    # ---------------------------------------------------------- edits and documents

    can_apply_edits = True  # through the client's fs/write_text_file, else written here, atomically

    @property
    def _fs(self) -> acp.FileSystemCapabilities:
        return self.capabilities.fs or acp.FileSystemCapabilities()

    async def apply_edit(self, changes: Sequence[FileChange], tool_call_id: str | None = None) -> EditOutcome:
        """After the gate (file rules, approval): each file through the client when it writes
        files (so its buffers and undo follow), else atomically here. The card shows the diff."""
        from ..tools.edits import write_atomically

        if tool_call_id is not None and tool_call_id in self._cards:
            self._cards[tool_call_id] = list(tr.diffs(changes))
            self._card(acp.ToolCallProgress(session_update="tool_call_update", tool_call_id=tool_call_id, content=self._cards[tool_call_id]))
        if not self._fs.write_text_file:
            for change in changes:
                try:
                    write_atomically(change)
                except OSError as exc:
                    return EditOutcome(False, f"cannot write {change.target.rel}: {exc.strerror or exc}")
            return EditOutcome(True)
        await self.outbox.flush()
        for change in changes:
            try:
                await self.conn.write_text_file(session_id=self.session_id, path=str(change.target.path), content=change.new_text)
            except CLIENT_FAILED as exc:
                return EditOutcome(False, f"the client did not write {change.target.rel}: {exc}")
        return EditOutcome(True)

    async def document_text(self, path: Path) -> str | None:
        """The client's text of the file (an unsaved buffer), when it reads files for us; None
        when it does not, or cannot (a missing file): the disk decides."""
        if not self._fs.read_text_file:
            return None
        try:
            answer = await self.conn.read_text_file(session_id=self.session_id, path=str(path))
        except CLIENT_FAILED as exc:
            log.debug("fs/read_text_file %s: %s", path, exc)
            return None
        return answer.content

    # ---------------------------------------------------------- commands in the client's terminal

    @property
    def can_run_commands(self) -> bool:
        return bool(self.capabilities.terminal)

    async def run_command(self, command: str, cwd: Path, timeout: float, tool_call_id: str | None = None) -> CommandOutcome:
        """`/bin/sh -c command` in a terminal of the client, shown live in the call's card;
        killed at the timeout or when the turn is cancelled, released in any case."""
        from ..tools.command import SHELL

        await self.outbox.flush()
        try:
            created = await self.conn.create_terminal(
                session_id=self.session_id, command=SHELL, args=["-c", command], cwd=str(cwd), output_byte_limit=TERMINAL_OUTPUT_BYTES
            )
        except CLIENT_FAILED as exc:
            raise ToolError(f"The client could not start the command in its terminal: {exc}") from None
        terminal = created.terminal_id
        exited: acp.WaitForTerminalExitResponse | None = None
        killed = False
        try:
            if tool_call_id is not None and tool_call_id in self._cards:
                self._cards[tool_call_id] = [acp.TerminalToolCallContent(type="terminal", terminal_id=terminal)]
                self._card(acp.ToolCallProgress(session_update="tool_call_update", tool_call_id=tool_call_id, content=self._cards[tool_call_id]))
            with anyio.move_on_after(timeout):
                exited = await self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=terminal)
            if exited is None:  # the timeout
                killed = True
                await self.conn.kill_terminal(session_id=self.session_id, terminal_id=terminal)
            output = (await self.conn.terminal_output(session_id=self.session_id, terminal_id=terminal)).output
        except CLIENT_FAILED as exc:
            raise ToolError(f"The client's terminal failed: {exc}") from None
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(STOP_GRACE_S):
                try:
                    if exited is None and not killed:  # cancelled: the command must not outlive the turn
                        await self.conn.kill_terminal(session_id=self.session_id, terminal_id=terminal)
                    await self.conn.release_terminal(session_id=self.session_id, terminal_id=terminal)
                except CLIENT_FAILED as exc:
                    log.debug("terminal %s: %s", terminal, exc)
        if exited is None:
            return CommandOutcome(None, output)
        if exited.exit_code is None:
            return CommandOutcome(-1, f"{output}\n[stopped by signal {exited.signal}]" if exited.signal else output)
        return CommandOutcome(exited.exit_code, output)
