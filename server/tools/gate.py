"""The one tool gate: every call, from XML text or native tool calls, passes the same stages.

The order is the table `STAGES`; each stage either lets the call through or raises a typed
`ToolFailure` whose message is what the model and the user see.
"""

from __future__ import annotations

import logging
import os
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
from pydantic import ValidationError

from protocol import ApprovalRequest

from ..hooks.runner import HookRun
from ..modes import HANDOFF_TOOLS, PHASE_ONLY, SKILL_TOOL
from ..plan import machine
from ..providers.base import ToolCallRequest
from ..workspace import WorkspacePath, clip
from . import always
from .base import Outcome, Params, Prepared, ToolContext, ToolSpec
from .command import ExecuteCommandParams
from .shell import check_command
from ..errors import (
    FileRestrictionError,
    HookBlocked,
    InvalidParams,
    OutsideWorkspace,
    PlanModeBlocked,
    ToolFailure,
    ToolError,
    ToolNotAllowed,
    UnknownTool,
    denied,
)

log = logging.getLogger(__name__)


@dataclass
class GateRun:
    """One call on its way through the gate."""

    ctx: ToolContext
    call: ToolCallRequest
    tools: dict[str, ToolSpec]
    on_running: Callable[[], None] = lambda: None
    spec: ToolSpec | None = None
    params: Params | None = None
    paths: list[WorkspacePath] = field(default_factory=list)
    prepared: Prepared | None = None
    outcome: Outcome | None = None
    #: While planning: the paths the plan's reads stay in (None: anywhere).
    plan_scope: list[str] | None = None
    #: What the call holds until it is done (the locks of the files it edits).
    exits: AsyncExitStack = field(default_factory=AsyncExitStack)
    #: A PreToolUse hook's `permissionDecision`: "allow" skips the question, "ask" asks anyway.
    permission: str | None = None

    async def hooks(self, event: str, **fields: Any) -> list[HookRun]:
        assert self.spec is not None
        server, tool = getattr(self.params, "server_name", None), getattr(self.params, "tool_name", None)
        mcp = (server, tool) if self.spec.group == "mcp" and isinstance(server, str) and isinstance(tool, str) else None
        return await self.ctx.ports.hooks.fire(
            event, conversation_id=self.ctx.conversation_id, agent=self.ctx.agent, mode=self.ctx.task.mode.slug,
            phase=self.ctx.task.phase, tool=self.spec.name, mcp=mcp, tool_input=self.call.arguments, **fields,
        )


async def settle(run: GateRun) -> None:
    """After a mode switch by the model, the next call waits for the settle delay."""
    await run.ctx.ports.guards.settled()


async def known_tool(run: GateRun) -> None:
    spec = run.tools.get(run.call.name)
    if spec is None:
        raise UnknownTool(f'Unknown tool "{run.call.name}".')
    run.spec = spec


async def valid_params(run: GateRun) -> None:
    assert run.spec is not None
    try:
        run.params = run.spec.params.model_validate(run.call.arguments)
    except ValidationError as exc:
        raise InvalidParams(_describe(exc)) from None


async def mode_groups(run: GateRun) -> None:
    task = run.ctx.task
    if run.call.name in task.tools:
        return
    if run.call.name in HANDOFF_TOOLS:
        raise ToolNotAllowed(f'Tool "{run.call.name}" hands work to another agent, and {run.ctx.agent} is the only agent configured.')
    only = PHASE_ONLY.get(run.call.name)
    if only is not None and only != task.phase:
        raise ToolNotAllowed(f'Tool "{run.call.name}" is only available in {only.upper()} MODE; the phase is {task.phase.upper()} MODE.')
    raise ToolNotAllowed(f'Tool "{run.call.name}" is not allowed in {task.mode.slug} mode.')


async def mcp_servers(run: GateRun) -> None:
    """An `[mcp, {servers: [...]}]` group limits the MCP servers the mode reaches."""
    assert run.spec is not None
    server = getattr(run.params, "server_name", None)
    group = run.ctx.task.mode.group("mcp")
    if run.spec.group != "mcp" or server is None or group is None or group.servers is None or server in group.servers:
        return
    allowed = ", ".join(group.servers) or "none"
    raise ToolNotAllowed(f"The MCP server '{server}' is not allowed in {run.ctx.task.mode.slug} mode. Its MCP servers: {allowed}.")


#: Tools that change the workspace or the world; refused while the phase is PLAN.
def _writes(spec: ToolSpec) -> bool:
    return spec.edits or spec.group in ("command", "mcp", "browser")


async def mode_skills(run: GateRun) -> None:
    """use_skill opens a skill the mode may use (its `skills`, all when it names none)."""
    if run.call.name != SKILL_TOOL:
        return
    name = str(getattr(run.params, "name", "")).strip()
    allowed = run.ctx.ports.config.skills.for_mode(run.ctx.task.mode.skills)
    if not any(s.name == name for s in allowed):
        names = ", ".join(s.name for s in allowed) or "none"
        raise ToolNotAllowed(f"No skill named '{name}' in {run.ctx.task.mode.name} mode. Its skills: {names}.")


async def phase_and_plan(run: GateRun) -> None:
    """The plan's state first (an allow-list from plan_enter until approval; each plan tool in its
    states), then the phase: PLAN writes nothing, plan or no plan."""
    assert run.spec is not None
    state, plan = run.ctx.ports.guards.plan_state(run.ctx.agent)
    run.plan_scope = plan["scope"] if state == "planning" and plan else None
    why = machine.refusal(state, run.spec.name)
    if why is not None:
        raise PlanModeBlocked(why)
    if run.ctx.task.phase == "plan" and _writes(run.spec):
        raise PlanModeBlocked(
            f"Tool '{run.spec.name}' cannot be used in PLAN MODE: explore with read-only tools, "
            "present your plan to the user first, and make changes once the phase is ACT."
        )


def resolve(run: GateRun, raw: str) -> WorkspacePath:
    """Where a path of the call points, inside the workspace; read_file may also read the files
    of a skill (use_skill lists them: a global skill's are outside)."""
    try:
        return run.ctx.workspace.resolve(raw)
    except OutsideWorkspace:
        skill = run.ctx.ports.config.skills.owner(Path(raw).expanduser()) if run.spec.name == "read_file" else None
        if skill is None:
            raise
        real = Path(os.path.realpath(Path(raw).expanduser()))
        return WorkspacePath(real, str(real))


async def workspace_and_file_rules(run: GateRun) -> None:
    assert run.spec is not None and run.params is not None
    run.paths = [resolve(run, raw) for raw in run.params.paths()]
    if not run.spec.edits:
        return
    for target in run.paths:
        run.ctx.workspace.editable(target)
    mode = run.ctx.task.mode
    edit = mode.group("edit")
    if edit is None or edit.file_regex is None:
        return
    for target in run.paths:  # every path of a multi-file edit, before anything is applied
        if not edit.file_regex.search(target.rel):
            described = f" ({edit.description})" if edit.description else ""
            raise FileRestrictionError(
                f"Tool '{run.spec.name}' in mode '{mode.name}' can only edit files matching pattern: "
                f"{edit.file_regex.source}{described}. Got: {target.rel}"
            )


async def plan_scope(run: GateRun) -> None:
    """While planning, the read tools stay inside the plan's scope (when it has one)."""
    assert run.spec is not None
    if run.plan_scope and run.spec.name in machine.READ_TOOLS:
        why = machine.scope_refusal(run.spec.name, run.plan_scope, [p.rel for p in run.paths])
        if why is not None:
            raise PlanModeBlocked(why)


async def one_writer_per_file(run: GateRun) -> None:
    """Agents run in parallel: an edit holds its files from reading them (to prepare the change)
    to writing them, approval included, so two edits of one file never start from the same text.
    Locks are taken in path order, so two multi-file edits cannot wait for each other."""
    assert run.spec is not None
    if run.spec.edits:
        for path in sorted({p.path for p in run.paths}):
            await run.exits.enter_async_context(run.ctx.ports.guards.hold(path))


async def command_rules(run: GateRun) -> None:
    """A mode's command rules (`[command, {allow, deny}]`): every simple command of the line must
    match no deny glob and, when there is an allow list, one allow glob. Read in a worker thread:
    a long line takes bashlex a while (up to ~0.3 s at the 10,000 characters it reads)."""
    if not isinstance(run.params, ExecuteCommandParams):
        return
    rules = run.ctx.task.mode.group("command")
    if rules is None or (rules.allow is None and not rules.deny):
        return
    refusal = await anyio.to_thread.run_sync(check_command, run.params.command, rules.allow, rules.deny)
    if refusal is not None:
        raise ToolNotAllowed(refusal.message(run.ctx.task.mode.slug))


async def preconditions(run: GateRun) -> None:
    assert run.spec is not None
    run.prepared = await run.spec.prepare(run.ctx, run.params, run.paths)


async def hooks_before(run: GateRun) -> None:
    """PreToolUse hooks: one that exits 2 (or denies) fails the call with its words; one may also
    allow it without asking, or have it asked."""
    for done in await run.hooks("PreToolUse"):
        if done.blocks:
            raise HookBlocked(done.reason or f"Blocked by the PreToolUse hook `{clip(done.command)}`.")
        run.permission = "ask" if "ask" in (run.permission, done.permission) else done.permission or run.permission


async def approval(run: GateRun) -> None:
    assert run.spec is not None and run.prepared is not None and run.params is not None
    spec, ctx = run.spec, run.ctx
    if run.permission == "allow" or (spec.approval is None and run.permission != "ask"):
        return
    if run.permission != "ask" and (
        run.prepared.preapproved or await always.auto_approved(ctx.ports.config.settings, ctx.task.mode.slug, spec.approval, run.params)
    ):
        return
    offered = always.offered(ctx, spec, run.params)
    request = ApprovalRequest(
        kind=spec.approval_kind,
        title=run.prepared.title or f"Allow {spec.name}?",
        detail=run.prepared.detail,
        tool=spec.name,
        params=run.params.model_dump(mode="json", exclude_none=True),
        agent=run.ctx.agent,
        tool_call_id=run.call.id,
        always_allow=offered,
        **run.prepared.approval_fields,
    )
    answer = await run.ctx.host.request_approval(request, run.prepared.changes)
    if answer.decision != "approve":
        raise denied(answer.feedback)
    if answer.content is not None and run.prepared.revise is not None:
        run.prepared = run.prepared.revise(answer.content)
    if offered and answer.always:
        written = await always.write_rule(ctx, spec, run.params)
        log.info("always allow: %s", written)
        if not written.startswith("Written"):
            ctx.host.show_message("warning", written)


async def checkpoint(run: GateRun) -> None:
    """What the files were before a call that edits them or runs a command (it may change any)."""
    assert run.spec is not None
    if run.spec.edits or run.spec.group == "command":
        label = f"before {run.spec.name}" + (f" {', '.join(p.rel for p in run.paths)}" if run.paths else "")
        await run.ctx.ports.guards.checkpoint(label, run.ctx.conversation_id, run.call.id)


async def execute(run: GateRun) -> None:
    assert run.prepared is not None
    run.on_running()
    result = await run.prepared.run()
    run.outcome = result if isinstance(result, Outcome) else Outcome(result)


async def hooks_after(run: GateRun) -> None:
    """PostToolUse hooks: the call has run; what one says (exit 2, a block's reason, added
    context) follows its result, for the model."""
    assert run.outcome is not None
    said = [d.reason if d.blocks else d.context for d in await run.hooks("PostToolUse", tool_response=run.outcome.text)]
    said = [s for s in said if s]
    if said:
        run.outcome = replace(run.outcome, text="\n\n".join([run.outcome.text, *(f"[PostToolUse hook] {s}" for s in said)]))


Stage = Callable[[GateRun], Awaitable[None]]

#: The order every call goes through. Read it top to bottom.
STAGES: tuple[tuple[str, Stage], ...] = (
    ("settle delay after a mode switch", settle),
    ("known tool", known_tool),
    ("valid params", valid_params),
    ("allowed by the mode's groups", mode_groups),
    ("allowed by the mode's MCP servers", mcp_servers),
    ("allowed by the mode's skills", mode_skills),
    ("allowed by the phase and plan state", phase_and_plan),
    ("inside the workspace and allowed by the file rules", workspace_and_file_rules),
    ("inside the plan's scope", plan_scope),
    ("one edit of a file at a time", one_writer_per_file),
    ("allowed by the mode's command rules", command_rules),
    ("tool preconditions", preconditions),
    ("hooks before the call (PreToolUse)", hooks_before),
    ("approval", approval),
    ("checkpoint of the files", checkpoint),
    ("run", execute),
    ("hooks after the call (PostToolUse)", hooks_after),
)


@dataclass(frozen=True)
class ToolResult:
    text: str
    error: ToolFailure | None = None
    ends_turn: str | None = None
    result_later: bool = False
    #: The workspace files and folders a call that ran named (read, written, listed): the
    #: conversation touched them (its conditional rules apply to them).
    touched: tuple[str, ...] = ()
    #: Kept with the stored result (Outcome.metadata).
    metadata: dict[str, Any] = field(default_factory=dict)
    #: Ids of the stored images the result carries (Outcome.images).
    images: tuple[str, ...] = ()


async def run_tool(
    ctx: ToolContext,
    call: ToolCallRequest,
    tools: dict[str, ToolSpec],
    on_running: Callable[[], None] = lambda: None,
) -> ToolResult:
    """The call through every stage. Whatever a stage raises (but a cancellation) ends as this
    call's failed result: the agent loop goes on."""
    run = GateRun(ctx, call, tools, on_running)
    try:
        async with run.exits:
            for _, stage in STAGES:
                await stage(run)
    except ToolFailure as exc:
        failure = exc
    except OSError as exc:  # the file system said no where no tool expected it
        failure = ToolError(f"{call.name} failed: {_os_reason(exc)}")
    except Exception as exc:  # a bug: the call fails, the log keeps the traceback
        log.exception("tool %s failed", call.name)
        failure = ToolError(f"{call.name} failed with an unexpected error: {type(exc).__name__}: {clip(str(exc))}")
    else:
        assert run.outcome is not None
        touched = tuple(dict.fromkeys(p.rel for p in run.paths if p.rel != "."))
        o = run.outcome
        return ToolResult(o.text, None, o.ends_turn, o.result_later, touched, o.metadata, o.images)
    return ToolResult(failure.message, failure)


def _os_reason(exc: OSError) -> str:
    """The OS's reason and the file names involved, clipped."""
    if not exc.strerror:
        return clip(str(exc))
    names = [f"'{clip(str(name))}'" for name in (exc.filename, exc.filename2) if name is not None]
    return exc.strerror + (": " + " -> ".join(names) if names else "")


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        name = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing_param":
            parts.append(err["msg"] + ".")
        elif err["type"] == "missing":
            parts.append(f"Missing value for required parameter '{name}'.")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            parts.append(f"Invalid value for parameter '{name}': {msg}.")
    return " ".join(parts) + " Please retry with a complete and valid tool call."
