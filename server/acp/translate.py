"""What Modus says, in ACP's words: tool calls (kind, title, locations, content), plan entries,
modes and the PLAN/ACT option, slash commands. Pure functions of the core's data; the host
(host.py) decides when each goes out.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from acp import schema as acp

from ..errors import ToolFailure

if TYPE_CHECKING:
    import protocol
    from protocol import Todo

    from ..host import FileChange
    from ..modes import Mode
    from ..workspace import Workspace

#: The ACP tool kind of each tool (others: `other`).
KINDS: dict[str, str] = {
    "read_file": "read",
    "list_files": "read",
    "list_code_definition_names": "read",
    "search_files": "search",
    "write_to_file": "edit",
    "apply_diff": "edit",
    "insert_content": "edit",
    "search_and_replace": "edit",
    "execute_command": "execute",
    "switch_mode": "switch_mode",
    "access_mcp_resource": "fetch",
    "browser_action": "fetch",
    **{name: "think" for name in (
        "plan_enter", "plan_exit", "plan_status", "plan_approve", "plan_reject", "plan_step_complete",
        "plan_complete", "plan_modify", "todo_read", "todo_write", "update_todo_list",
    )},
}

#: Tools that talk to the user: no tool card, their words come as the agent's message.
TALK = frozenset({"ask_followup_question", "attempt_completion", "plan_mode_respond", "act_mode_respond"})

#: The option of the phase (PLAN/ACT), beside the mode's (see the README: why not paired modes).
PHASE_OPTION = "phase"
MODE_OPTION = "mode"
PHASES = (("plan", "Plan", "Explore read-only and agree on a plan: writes, commands and MCP calls are refused"),
          ("act", "Act", "Do the work with the mode's tools"))

#: The slash command of ACP alone (the LSP side's code action), listed after Modus's own.
PLAN_CHANGE = ("plan-change", "Plan a change in the code you attach: plan mode, scoped to its file; nothing is written until "
               "you approve a plan", "the change to plan")

MAX_SHOWN = 20_000  # characters of a tool result shown in its card (the model gets it all)


def kind(tool: str) -> str:
    return KINDS.get(tool, "other")


def _short(text: Any, limit: int = 60, strip: bool = True) -> str:
    """The first line of `text`, at most `limit` characters."""
    text = str(text).strip() if strip else str(text)
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def title(tool: str, params: dict[str, Any]) -> str:
    """What the card says the call does."""
    p = params if isinstance(params, dict) else {}
    path = p.get("path")
    lines = ""
    if tool == "read_file" and (p.get("start_line") or p.get("end_line")):
        lines = f" (lines {p.get('start_line') or 1}–{p.get('end_line') or 'end'})"
    files = [f.get("path") for f in p.get("files") or () if isinstance(f, dict)] if tool == "apply_diff" else []
    named = {
        "read_file": f"Read {path}{lines}",
        "list_files": f"List {path}" + (" (recursive)" if p.get("recursive") else ""),
        "search_files": f"Search /{_short(p.get('regex'), strip=False)}/ in {path}",
        "list_code_definition_names": f"List definitions in {path}",
        "write_to_file": f"Write {path}",
        "apply_diff": f"Edit {', '.join(str(f) for f in files) if files else path}",
        "insert_content": f"Insert into {path}",
        "search_and_replace": f"Replace in {path}",
        "execute_command": f"`{_short(p.get('command'), 120)}`",
        "switch_mode": f"Switch to {p.get('mode_slug')} mode",
        "new_task": f"Subtask in {p.get('mode')} mode",
        "plan_enter": f"Plan: {_short(p.get('goal'))}",
        "plan_exit": "Present the plan",
        "plan_step_complete": f"Step {p.get('step_id')} done",
        "plan_complete": "Plan complete",
        "plan_modify": f"Change step {p.get('step_id')}",
        "todo_write": "Update the todo list",
        "update_todo_list": "Update the todo list",
        "todo_read": "Read the todo list",
        "use_mcp_tool": f"{p.get('server_name')}: {p.get('tool_name')}",
        "access_mcp_resource": f"{p.get('server_name')}: {p.get('uri')}",
        "send_to_agent": f"Message to {p.get('to')}",
        "ask_agent": f"Ask {p.get('to')}",
        "delegate_task": f"Delegate to {p.get('to')}: {_short(p.get('title'))}",
    }
    return named.get(tool) or tool.replace("_", " ").capitalize()


def locations(workspace: "Workspace", tool: str, params: dict[str, Any]) -> list[acp.ToolCallLocation]:
    """The files a call touches, as absolute paths (with the first line read, for read_file);
    what is not a valid path inside the workspace is left out (the gate says why)."""
    from ..tools import TOOLS

    spec = TOOLS.get(tool)
    if spec is None or not isinstance(params, dict):
        return []
    raw: list[str] = [params[name] for name in spec.params.path_fields if isinstance(params.get(name), str)]
    if tool == "apply_diff":
        raw += [f["path"] for f in params.get("files") or () if isinstance(f, dict) and isinstance(f.get("path"), str)]
        if isinstance(params.get("path"), str):
            raw.append(params["path"])
    found = []
    for text in dict.fromkeys(raw):
        try:
            target = workspace.resolve(text)
        except ToolFailure:
            continue
        line = params.get("start_line") if tool == "read_file" and isinstance(params.get("start_line"), int) else None
        found.append(acp.ToolCallLocation(path=str(target.path), line=line))
    return found


def fenced(text: str, info: str = "") -> str:
    """`text` in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def text_content(text: str) -> acp.ContentToolCallContent:
    return acp.ContentToolCallContent(type="content", content=acp.TextContentBlock(type="text", text=text))


def result_content(tool: str, text: str) -> acp.ContentToolCallContent:
    """A tool's result in its card: clipped; what has lines of its own (files, output) fenced."""
    if len(text) > MAX_SHOWN:
        text = text[:MAX_SHOWN] + f"\n[… {len(text) - MAX_SHOWN} more characters]"
    return text_content(fenced(text) if kind(tool) in ("read", "search", "execute") else text)


def diffs(changes: Sequence["FileChange"]) -> list[acp.FileEditToolCallContent]:
    return [
        acp.FileEditToolCallContent(type="diff", path=str(c.target.path), old_text=c.old_text, new_text=c.new_text)
        for c in changes
    ]


def talk_text(tool: str, params: dict[str, Any]) -> str | None:
    """What a talking tool says to the user (from its arguments; None: nothing)."""
    p = params if isinstance(params, dict) else {}
    if tool == "attempt_completion":
        return str(p.get("result") or "") or None
    if tool == "ask_followup_question":
        question = str(p.get("question") or "")
        follow = p.get("follow_up")
        if isinstance(follow, list) and follow:
            question += "\n\n" + "\n".join(f"- {s}" for s in follow)
        return question or None
    if tool in ("plan_mode_respond", "act_mode_respond"):
        response = str(p.get("response") or "")
        progress = p.get("task_progress")
        return f"{response}\n\n{progress}" if progress else (response or None)
    return None


# ---------------------------------------------------------------- plan entries


def plan_entries(plan: dict[str, Any] | None, state: str | None, completed: Iterable[str], current: str | None) -> list[acp.PlanEntry]:
    """The steps of an approved plan, in order: done, the one under way, the rest. Shown while it
    is carried out, and after it completed with every step done; not before approval (the plan
    is then shown in its approval) and not once rejected."""
    if plan is None:
        return []
    from ..plan.model import Plan, PlanInvalid, step_order

    try:
        parsed = Plan.model_validate(plan)
    except (PlanInvalid, ValueError):
        return []
    done = set(completed)
    order = step_order(parsed)
    if state == "executing":
        pass
    elif state == "normal" and done >= set(order):
        pass
    else:
        return []
    entries = []
    for sid in order:
        status = "completed" if sid in done else "in_progress" if sid == current and state == "executing" else "pending"
        entries.append(acp.PlanEntry(content=f"{sid}. {parsed.step(sid).description}", priority="high", status=status))
    return entries


def todo_entries(todos: Iterable["Todo"]) -> list[acp.PlanEntry]:
    return [acp.PlanEntry(content=t.content, priority=t.priority, status=t.status) for t in todos]


# ---------------------------------------------------------------- modes, the phase, commands


def session_modes(modes: Sequence["Mode"], current: str) -> acp.SessionModeState:
    return acp.SessionModeState(
        current_mode_id=current,
        available_modes=[acp.SessionMode(id=m.slug, name=m.name, description=describe(m)) for m in modes],
    )


def describe(mode: "Mode") -> str | None:
    return mode.description or mode.when_to_use or (mode.role_definition.splitlines()[0] if mode.role_definition else None)


def config_options(modes: Sequence["Mode"], current: str, phase: str) -> list[acp.SessionConfigOptionSelect]:
    """The mode (category `mode`, in step with `modes`) and the phase, as selectors."""
    return [
        acp.SessionConfigOptionSelect(
            id=MODE_OPTION,
            name="Mode",
            description="The agent's persona: its tools and the files it may edit",
            category="mode",
            type="select",
            current_value=current,
            options=[acp.SessionConfigSelectOption(value=m.slug, name=m.name, description=describe(m)) for m in modes],
        ),
        acp.SessionConfigOptionSelect(
            id=PHASE_OPTION,
            name="Plan/Act",
            description="PLAN explores read-only and talks the plan through; ACT does the work",
            category="_phase",
            type="select",
            current_value=phase,
            options=[acp.SessionConfigSelectOption(value=v, name=n, description=d) for v, n, d in PHASES],
        ),
    ]


def available_commands(listed: Sequence[protocol.CommandInfo]) -> list[acp.AvailableCommand]:
    """The commands as `modus/commands/list` gives them (Modus's own, then the prompt files'),
    with `/plan-change` beside `/mode`."""
    own = [(c.name, c.description, c.argument_hint) for c in listed if c.source == "modus"]
    at = next((i + 1 for i, (name, _, _) in enumerate(own) if name == "mode"), len(own))
    files = [(c.name, c.description or f"Send {c.path}", c.argument_hint) for c in listed if c.source != "modus" and c.name != PLAN_CHANGE[0]]
    return [
        acp.AvailableCommand(
            name=name,
            description=description or "",
            input=acp.AvailableCommandInput(root=acp.UnstructuredCommandInput(hint=hint)) if hint else None,
        )
        for name, description, hint in [*own[:at], PLAN_CHANGE, *own[at:], *files]
    ]


def parse_command(text: str) -> tuple[str, str] | None:
    """(the command's name, the rest) when the prompt starts with one of Modus's commands or
    `/plan-change`; any other text (even `/path/to/file is broken`) is a message."""
    from ..agent.own_commands import TYPED, parse

    match = TYPED.match(text)
    if match is not None and match[1] == PLAN_CHANGE[0]:
        return match[1], text[match.end():].strip()
    return parse(text)


def absolute(workspace: "Workspace", rel: str) -> str:
    return str(Path(workspace.root) / rel)


# ---------------------------------------------------------------- MCP servers the client gives


def mcp_servers(servers: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """The client's MCP servers in the shape of `mcpServers` in `.modus/mcp.json` (PROTOCOL.md):
    `{name: {command, args, env}}`, or `{name: {type, url, headers}}` for HTTP and SSE."""
    config: dict[str, dict[str, Any]] = {}
    for server in servers:
        if isinstance(server, acp.McpServerStdio):
            config[server.name] = {"command": server.command, "args": list(server.args), "env": {e.name: e.value for e in server.env}}
        elif isinstance(server, (acp.HttpMcpServer, acp.SseMcpServer)):
            kind = "streamable-http" if isinstance(server, acp.HttpMcpServer) else "sse"
            config[server.name] = {"type": kind, "url": server.url, "headers": {h.name: h.value for h in server.headers}}
    return config
