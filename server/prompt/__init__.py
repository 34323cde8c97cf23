"""The system prompt, assembled from named components in a declared order (SPEC §3).

Each component is a pure function of a `PromptContext`; `COMPONENTS` is the order.
"""

from __future__ import annotations

import os
from functools import lru_cache
import platform
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Callable, NamedTuple, Sequence

from ..modes import Mode
from .rules import RuleFile, Rules, load_rules

if TYPE_CHECKING:
    from ..tools import ToolSpec


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
    #: The workspace's rule files for this mode (read beforehand: see rules.py).
    rules: tuple[RuleFile, ...] = ()


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


def ordered_tools(names: frozenset[str]) -> list[ToolSpec]:
    """The tools of these names, in the order of the tool registry (loaded here, on first use)."""
    from ..tools import TOOLS

    return [spec for name, spec in TOOLS.items() if name in names]


def _params_line(spec: ToolSpec) -> str:
    """`path, start_line?, end_line?`: the parameters, optional ones marked (no JSON Schema needed)."""
    return ", ".join(f"{name}{'' if field.is_required() else '?'}" for name, field in spec.params.model_fields.items())


def tool_use(ctx: PromptContext) -> str:
    lines = [
        "TOOL USE",
        "",
        "You have tools, executed once the user approves them. Use one tool at a time and wait for",
        "its result before the next step. Call a tool natively, or write it in XML:",
        "<tool_name>",
        "<param>value</param>",
        "</tool_name>",
        "",
        "# Tools enabled for this task",
    ]
    for spec in ordered_tools(ctx.tools):
        lines.append(f"## {spec.name}({_params_line(spec)})\n{spec.description}")
    return "\n".join(lines)


def act_vs_plan(ctx: PromptContext) -> str:
    current = "PLAN MODE" if ctx.phase == "plan" else "ACT MODE"
    text = [
        "ACT MODE V.S. PLAN MODE",
        "",
        f"You are in {current} now; environment_details of each user message names the current one.",
        "- ACT MODE: you use the tools of your mode to do the task, and finish with attempt_completion.",
        "- PLAN MODE: you gather information with read-only tools and talk with the user about a plan "
        "with plan_mode_respond. Tools that write files, run commands or call MCP servers are refused "
        "in PLAN MODE. When the user agrees with the plan, they switch to ACT MODE and you carry it out.",
    ]
    if not ctx.yolo:
        text.append(
            "- In PLAN MODE, ask clarifying questions with ask_followup_question when the request is ambiguous."
        )
    return "\n".join(text)


def modes_list(ctx: PromptContext) -> str:
    lines = ["MODES", "", "Switch with switch_mode when another mode fits the work better:"]
    for m in ctx.modes:
        lines.append(f'* "{m.name}" mode ({m.slug}): {m.when_to_use or m.description or m.role_definition.splitlines()[0]}')
    return "\n".join(lines)


def rules(ctx: PromptContext) -> str:
    found = "\n\n".join(f"# Rules from {r.rel}:\n{r.text}" for r in ctx.rules)
    return "RULES\n\n- Work inside the workspace folder; paths are relative to it.\n" \
        "- Edit only files your mode allows; a refused edit returns FileRestrictionError.\n" \
        + (f"\n{found}" if found else "")


def system_information(ctx: PromptContext) -> str:
    return (
        "SYSTEM INFORMATION\n\n"
        f"Operating System: {platform.system()} {platform.release()}\n"
        f"Default Shell: {os.environ.get('SHELL', '/bin/sh')}\n"
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
    ("modes", modes_list),
    ("rules", rules),
    ("system_information", system_information),
    ("custom_instructions", custom_instructions),
)


def build_prompt(ctx: PromptContext) -> SystemPrompt:
    return SystemPrompt(tuple(Section(sid, fn(ctx)) for sid, fn in COMPONENTS))


def environment_details(mode: Mode, phase: str, workspace: Path, now: datetime | None = None) -> str:
    """The block appended to each user message; it ends with the mode and the phase."""
    stamp = (now or datetime.now().astimezone()).isoformat(timespec="seconds")
    return (
        "<environment_details>\n"
        f"# Current Workspace Directory\n{workspace}\n\n"
        f"# Current Time\n{stamp}\n\n"
        f"# Current Mode\n<slug>{mode.slug}</slug>\n<name>{mode.name}</name>\n\n"
        f"# Current Phase\n{'PLAN MODE' if phase == 'plan' else 'ACT MODE'}\n"
        "</environment_details>"
    )




__all__ = [
    "COMPONENTS",
    "PromptContext",
    "RuleFile",
    "Rules",
    "load_rules",
    "ordered_tools",
    "Section",
    "SystemPrompt",
    "build_prompt",
    "environment_details",
    "params_schema",
]
