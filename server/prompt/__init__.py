"""The system prompt, assembled from named components in a declared order (SPEC §3).

Each component is a pure function of a `PromptContext`; `COMPONENTS` is the order.
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Protocol, Sequence

from ..modes import GROUP_TOOLS, SKILL_TOOL, Mode
from .rules import RuleFile, Rules, load_rules

if TYPE_CHECKING:
    from ..mcp import McpServerView


class ToolDoc(Protocol):
    """A tool as the prompt tells of it (the tools' ToolSpec is one)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def params(self) -> Any:
        """Its parameters' pydantic model."""


class Participant(NamedTuple):
    """A member of the conversations: an agent ("top-level" or "subordinate") or a "human"."""

    name: str
    kind: str
    #: a human's display name
    display: str | None = None


@dataclass(frozen=True)
class PromptContext:
    mode: Mode
    phase: str  # "plan" | "act"
    tools: frozenset[str]  # the names of the tools enabled for this task
    modes: Sequence[Mode]
    workspace: Path
    yolo: bool
    agent: str
    agent_instructions: str | None = None
    #: The agents and the human members, in configuration order (SUMMONS when there are others).
    roster: tuple[Participant, ...] = ()
    #: The workspace's rule files for this mode (read beforehand: see rules.py).
    rules: tuple[RuleFile, ...] = ()
    #: What SYSTEM INFORMATION tells: this machine's by default, pinned by the prompt snapshots.
    os_name: str = field(default_factory=lambda: f"{platform.system()} {platform.release()}")
    #: what execute_command runs commands with (not the user's login shell)
    shell: str = "/bin/sh"
    #: The MCP servers the mode may use, with their tools once they are known (a snapshot).
    mcp: tuple["McpServerView", ...] = ()
    #: The enabled tools as the prompt lists them, in the tool registry's order (tools.specs).
    docs: tuple[ToolDoc, ...] = ()
    #: The skills the mode may use: (name, description), never their bodies (use_skill has them).
    skills: tuple[tuple[str, str], ...] = ()


class Section(NamedTuple):
    id: str
    text: str


@dataclass(frozen=True)
class SystemPrompt:
    sections: tuple[Section, ...]

    @property
    def text(self) -> str:
        return "\n\n====\n\n".join(s.text for s in self.sections if s.text)


def role_definition(ctx: PromptContext) -> str:
    text = ctx.mode.role_definition
    if ctx.agent_instructions:
        text += f"\n\nYou are the agent '{ctx.agent}'. {ctx.agent_instructions}"
    return text


@lru_cache(maxsize=None)
def params_schema(params: type) -> dict:
    return params.model_json_schema()


def _params_line(spec: ToolDoc) -> str:
    """`path, start_line?, end_line?`: the parameters, optional ones marked (no JSON Schema needed)."""
    return ", ".join(f"{name}{'' if field.is_required() else '?'}" for name, field in spec.params.model_fields.items())


def tool_use(ctx: PromptContext) -> str:
    if ctx.yolo:
        approval = "Yolo mode is on: each call runs at once, without asking the user."
    else:
        approval = "Each call runs once the user approves it (some kinds may be approved in advance)."
    lines = [
        "TOOL USE",
        "",
        f"You have tools. {approval} Use one tool at a time and wait for its result before the next step.",
        "Call a tool natively, or write it in XML:",
        "<tool_name>",
        "<param>value</param>",
        "</tool_name>",
        "",
        "# Tools enabled for this task",
    ]
    for spec in ctx.docs:
        lines.append(f"## {spec.name}({_params_line(spec)})\n{spec.description}")
    if ctx.mcp and "use_mcp_tool" in ctx.tools:
        lines += ["", *mcp_servers(ctx)]
    return "\n".join(lines)


#: How each state of an MCP server reads in the prompt.
_MCP_STATES = {
    "connected": "connected",
    "starting": "starting",
    "idle": "not started yet",
    "failed": "not available",
    "disabled": "disabled",
}


def mcp_servers(ctx: PromptContext) -> list[str]:
    """The MCP servers the mode may use, each connected one's tools with their input schemas."""
    import json

    lines = [
        "# MCP servers",
        "Call an MCP server's tool with use_mcp_tool (server_name, tool_name, and arguments: a JSON object that "
        "matches the tool's input schema), or natively by the tool's mcp__ name when you call tools natively; "
        "read a server's resource with access_mcp_resource (server_name, uri).",
    ]
    for server in ctx.mcp:
        state = _MCP_STATES.get(server.state, server.state)
        note = f": {server.note.splitlines()[0][:200]}" if server.note and server.state != "connected" else ""
        lines += ["", f"## {server.name} ({state}{note})"]
        for tool in server.tools:
            lines.append(f"### {tool.name} (natively {tool.native})" + (f"\n{tool.description}" if tool.description else ""))
            lines.append(f"Input schema: {json.dumps(tool.schema, ensure_ascii=False, separators=(',', ':'))}")
        if server.resources:
            lines.append("Resources: " + ", ".join(f"{uri} ({name})" if name else uri for uri, name in server.resources))
    return lines


#: How PLAN MODE ends, without yolo and with it.
TO_ACT = "- When the user agrees with the plan, they switch to ACT MODE, and you carry the plan out."
YOLO_TO_ACT = (
    "- Yolo mode is on: the user has approved everything in advance, so plan_mode_respond moves to "
    "ACT MODE by itself, and you carry the plan out."
)


def act_vs_plan(ctx: PromptContext) -> str:
    """Both phases explained, the current one named; in yolo nothing is asked and PLAN ends by itself."""
    current = "PLAN MODE" if ctx.phase == "plan" else "ACT MODE"
    lines = [
        "ACT MODE V.S. PLAN MODE",
        "",
        "A task is in one of two phases, ACT MODE or PLAN MODE; the environment_details at the end of "
        f"each user message says which. You are in {current} now.",
        "",
        "ACT MODE is for doing the work.",
        "- You may use every tool of your mode except plan_mode_respond.",
        "- To tell the user how the work is going without stopping, send a short note with act_mode_respond "
        "and carry on. Never call it twice in a row.",
        "- When the task is done, present the result with attempt_completion.",
        "",
        "PLAN MODE is for agreeing on the work before it starts.",
    ]
    if ctx.tools & set(GROUP_TOOLS["read"]):
        lines.append("- Gather context with the read-only tools: read, list and search files.")
    if not ctx.yolo:
        lines.append("- When the request is unclear, ask a clarifying question with ask_followup_question.")
    lines += [
        "- Present your plan with plan_mode_respond and talk it through with the user. It waits for the "
        "user's reply, unless you set needs_more_exploration to true because you need to explore "
        "further before you can answer.",
        "- Editing files, running commands and calling MCP tools are refused in PLAN MODE.",
        YOLO_TO_ACT if ctx.yolo else TO_ACT,
    ]
    return "\n".join(lines)


def summons(ctx: PromptContext) -> str:
    """Who else is in the conversation and how mentions and hand-offs work (SPEC §5); nothing
    when the agent is alone. Who summoned it for a turn is said in the turn's input."""
    agents = [p for p in ctx.roster if p.kind != "human"]
    humans = [p for p in ctx.roster if p.kind == "human"]
    if len(agents) < 2 and not humans:
        return ""
    from ..roster.wakes import MAX_CHAIN_WAKES, RATE_LIMIT, RATE_WINDOW_SECONDS
    from ..roster.mentions import MAX_MENTIONS_PER_TURN

    lines = ["SUMMONS", "", f"You are the agent @{ctx.agent}. The conversation's participants:"]
    lines += [f"- @{p.name}{' (you)' if p.name == ctx.agent else ''}: {p.kind} agent" for p in agents]
    lines += [f"- @{p.name}: {p.display}, a human member (a mention only notifies them)" for p in humans]
    lines += [
        "",
        "Top-level agents answer the user's messages that name no agent; subordinate agents work when called in. "
        "Each turn begins with who summoned you: the user's message, or a line naming the agent that woke you. "
        'What the other agents write reaches you quoted as "[name said]".',
        "",
        "Mentions: when your turn ends cleanly, each other agent you name as @name in your text is woken in this "
        "conversation and reads your words.",
        "- Exact names only: no prefixes; a name that fits two agents reaches no one.",
        "- Not a mention: anything inside code blocks or backticks (an unclosed fence hides the rest), an @ glued "
        "to the character before it (sam@host.com, pkg/@scope, node@20), and your own name.",
        f"- At most {MAX_MENTIONS_PER_TURN} agents per turn. A user message leads to at most {MAX_CHAIN_WAKES} wakes "
        "between agents, never back to an agent it already started, and one agent wakes another at most "
        f"{RATE_LIMIT} times in {RATE_WINDOW_SECONDS / 60:g} minutes. Refused mentions are reported in one system message.",
        "- Name an agent with @ only to hand it work; to talk about it, write its name without @.",
    ]
    if len(agents) > 1:
        lines.append(
            "- Hand-offs that must not depend on your wording: send_to_agent (no wait), ask_agent (waits for the "
            "answer) and delegate_task (a subtask whose result comes back to you). The same rules apply."
        )
    return "\n".join(lines)


def modes_list(ctx: PromptContext) -> str:
    lines = ["MODES", "", "Switch with switch_mode when another mode fits the work better:"]
    for m in ctx.modes:
        lines.append(f'* "{m.name}" mode ({m.slug}): {mode_summary(m)}')
    return "\n".join(lines)


def mode_summary(mode: Mode) -> str:
    """What the modes list says of a mode: its whenToUse, else its description, else the first
    sentence of its role definition (the whole definition, in every request, is the mode's own
    prompt's business). A text of several lines keeps them, indented under the mode's line."""
    for text in (mode.when_to_use, mode.description):
        if text and text.strip():
            return "\n  ".join(line.rstrip() for line in text.strip().splitlines())
    return first_sentence(mode.role_definition)


#: A sentence ends at `.`, `!` or `?` followed by a space or the end of the line (not in "e.g. ",
#: "i.e. ": "Node.js" and "v1.2" do not end one either).
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)[.!?](?=\s|$)")
#: The longest first sentence the modes list shows; a longer one is cut at a word, with "…".
FIRST_SENTENCE_CHARS = 200


def first_sentence(text: str, limit: int = FIRST_SENTENCE_CHARS) -> str:
    """The first sentence of `text`'s first non-blank line, its end mark included, at most
    `limit` characters (cut at a word, "…" added)."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    end = _SENTENCE_END.search(line)
    sentence = line[: end.end()] if end else line
    if len(sentence) <= limit:
        return sentence
    cut = sentence.rfind(" ", 0, limit)
    return sentence[: cut if cut > limit // 2 else limit - 1].rstrip() + "…"


def rules(ctx: PromptContext) -> str:
    lines = ["RULES", "", "- Work inside the workspace folder; paths are relative to it."]
    edit = ctx.mode.group("edit")
    if edit is not None and edit.file_regex is not None:
        which = f"{edit.file_regex.source} ({edit.description})" if edit.description else edit.file_regex.source
        lines.append(f"- Your mode may edit only the files matching {which}; any other edit fails with "
                     "FileRestrictionError.")
    lines += [f"\n# Rules from {r.rel}:\n{r.text}" for r in ctx.rules]
    return "\n".join(lines)


def skills(ctx: PromptContext) -> str:
    if not ctx.skills or SKILL_TOOL not in ctx.tools:
        return ""
    lines = [
        "SKILLS",
        "",
        "A skill holds instructions (and sometimes files) for one kind of task. When the task matches a "
        f"skill's description, call {SKILL_TOOL} with its name before you start, then follow it.",
        "",
    ]
    return "\n".join(lines + [f"- {name}: {description}" for name, description in ctx.skills])


def system_information(ctx: PromptContext) -> str:
    return (
        "SYSTEM INFORMATION\n\n"
        f"Operating System: {ctx.os_name}\n"
        f"Default Shell: {ctx.shell}\n"
        f"Workspace Directory: {ctx.workspace}"
    )


def custom_instructions(ctx: PromptContext) -> str:
    if not ctx.mode.custom_instructions:
        return ""
    return f"USER'S CUSTOM INSTRUCTIONS\n\nMode-specific instructions:\n{ctx.mode.custom_instructions}"


COMPONENTS: tuple[tuple[str, Callable[[PromptContext], str]], ...] = (
    ("role_definition", role_definition),
    ("tool_use", tool_use),
    ("act_vs_plan", act_vs_plan),
    ("summons", summons),
    ("modes", modes_list),
    ("skills", skills),
    ("rules", rules),
    ("system_information", system_information),
    ("custom_instructions", custom_instructions),
)


def build_prompt(ctx: PromptContext) -> SystemPrompt:
    return SystemPrompt(tuple(Section(sid, fn(ctx)) for sid, fn in COMPONENTS))


#: What environment_details adds in PLAN MODE, before the mode and the phase.
PLAN_MODE_NOTE = (
    "# Plan Mode Instructions\n"
    "You are in PLAN MODE: gather context without changing anything, then present your plan with "
    "plan_mode_respond.\n"
    "Do not try to edit files, run commands or call MCP tools: they are refused.\n"
    "ACT MODE follows once the plan is agreed; then you carry it out.\n\n"
)


def environment_details(
    mode: Mode, phase: str, workspace: Path, now: datetime | None = None, *, plan: str = "", todos: str = ""
) -> str:
    """The block appended to each user message; it ends with the mode and the phase. `plan`: the
    plan's state (goal and scope while planning, the plan and its current step while executing);
    `todos`: the agent's todo list as a checklist."""
    stamp = (now or datetime.now().astimezone()).isoformat(timespec="seconds")
    return (
        "<environment_details>\n"
        f"# Current Workspace Directory\n{workspace}\n\n"
        f"# Current Time\n{stamp}\n\n"
        f"{PLAN_MODE_NOTE if phase == 'plan' else ''}"
        f"{f'# Plan{chr(10)}{plan}{chr(10)}{chr(10)}' if plan else ''}"
        f"{f'# Todos{chr(10)}{todos}{chr(10)}{chr(10)}' if todos else ''}"
        f"# Current Mode\n<slug>{mode.slug}</slug>\n<name>{mode.name}</name>\n\n"
        f"# Current Phase\n{'PLAN MODE' if phase == 'plan' else 'ACT MODE'}\n"
        "</environment_details>"
    )


__all__ = [
    "COMPONENTS",
    "Participant",
    "PromptContext",
    "RuleFile",
    "Rules",
    "load_rules",
    "Section",
    "SystemPrompt",
    "ToolDoc",
    "build_prompt",
    "environment_details",
    "params_schema",
]
