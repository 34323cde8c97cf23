"""What a mode is: slug, persona, tool groups and file rules. The built-ins, in order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from protocol import GroupEntry, GroupOptions

from .patterns import Pattern

#: Tool groups and the tools they enable (SPEC §1).
GROUP_TOOLS: dict[str, tuple[str, ...]] = {
    "read": ("read_file", "list_files", "search_files", "list_code_definition_names"),
    "edit": ("write_to_file", "apply_diff", "insert_content", "search_and_replace"),
    "command": ("execute_command",),
    "mcp": ("use_mcp_tool", "access_mcp_resource"),
    "browser": ("browser_action",),
    "modes": ("switch_mode", "new_task"),
}

#: Tools every mode has, whatever its groups.
ALWAYS_AVAILABLE: tuple[str, ...] = (
    "switch_mode",
    "new_task",
    "ask_followup_question",
    "attempt_completion",
    "plan_mode_respond",
    "act_mode_respond",
    "update_todo_list",
    "todo_read",
    "todo_write",
    "plan_enter",
    "plan_exit",
    "plan_status",
    "plan_approve",
    "plan_reject",
    "plan_step_complete",
    "plan_complete",
    "plan_modify",
)

#: The tool that opens a skill: a task has it when its mode may use one (group read).
SKILL_TOOL = "use_skill"

#: Tools for hand-offs between agents: a task has them when its conversation has other agents.
HANDOFF_TOOLS = frozenset({"send_to_agent", "ask_agent", "delegate_task"})

#: Tools of one phase only (the others are in both).
PHASE_ONLY: dict[str, str] = {"plan_mode_respond": "plan", "act_mode_respond": "act"}


class Diagnostic(NamedTuple):
    """A problem in a mode file. Lines and columns are 0-based, as in LSP. An error left something
    out (the file, a mode); a warning is about something that loaded."""

    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    severity: Literal["error", "warning"] = "error"


class LoadResult(NamedTuple):
    modes: tuple[Mode, ...]
    diagnostics: tuple[Diagnostic, ...]


#: The options each group takes beyond fileRegex and description (which any group takes).
GROUP_OPTIONS: dict[str, tuple[str, ...]] = {"mcp": ("servers",), "command": ("allow", "deny")}

#: The options that narrow what a group allows (fileRegex only narrows edit).
RESTRICTING: dict[str, tuple[str, ...]] = {"edit": ("fileRegex",), "mcp": ("servers",), "command": ("allow", "deny")}


@dataclass(frozen=True)
class Group:
    name: str
    file_regex: Pattern | None = None
    description: str | None = None
    #: mcp: the servers the mode reaches (None: every server)
    servers: tuple[str, ...] | None = None
    #: command: globs every simple command must match (None: any command)
    allow: tuple[str, ...] | None = None
    #: command: globs no simple command may match
    deny: tuple[str, ...] = ()

    def entry(self) -> GroupEntry:
        """The group as the protocol lists it: a name, or [name, {its options}]."""
        options = GroupOptions(
            file_regex=self.file_regex.source if self.file_regex is not None else None,
            description=self.description,
            servers=list(self.servers) if self.servers is not None else None,
            allow=list(self.allow) if self.allow is not None else None,
            deny=list(self.deny) or None,
        )
        return (self.name, options) if options.model_dump(exclude_none=True) else self.name


@dataclass(frozen=True)
class Mode:
    slug: str
    name: str
    role_definition: str
    groups: tuple[Group, ...] = ()
    when_to_use: str | None = None
    description: str | None = None
    custom_instructions: str | None = None
    #: the skills it may use, by name (None: all)
    skills: tuple[str, ...] | None = None
    source: str = "builtin"
    #: Where the mode was defined (a file path), for messages; None for built-ins.
    origin: str | None = field(default=None, compare=False)

    def group(self, name: str) -> Group | None:
        return next((g for g in self.groups if g.name == name), None)

    def tools(self) -> frozenset[str]:
        """Every tool this mode may call."""
        names = set(ALWAYS_AVAILABLE)
        for g in self.groups:
            names.update(GROUP_TOOLS.get(g.name, ()))
        return frozenset(names)


def _builtin(slug, name, role, groups, when, description):
    return Mode(slug=slug, name=name, role_definition=role, groups=groups, when_to_use=when, description=description)


BUILTIN_MODES: tuple[Mode, ...] = (
    _builtin(
        "code",
        "Code",
        "You are Modus, a highly skilled software engineer with extensive knowledge in many "
        "programming languages, frameworks, design patterns, and best practices.",
        (Group("read"), Group("edit"), Group("browser"), Group("command"), Group("mcp")),
        "Use this mode when you need to write, modify, or refactor code.",
        "Write, modify, and refactor code",
    ),
    _builtin(
        "architect",
        "Architect",
        "You are Modus, an experienced technical leader who is inquisitive and an excellent "
        "planner. You gather context and write plans and designs, in Markdown, before anything "
        "is built.",
        (
            Group("read"),
            Group("edit", Pattern(r"\.md$"), "Markdown files only"),
            Group("browser"),
            Group("mcp"),
        ),
        "Use this mode when you need to plan, design, or strategize before implementation.",
        "Plan and design before implementation",
    ),
    _builtin(
        "ask",
        "Ask",
        "You are Modus, a knowledgeable technical assistant focused on answering questions "
        "about software development, technology, and related topics.",
        (Group("read"), Group("browser"), Group("mcp")),
        "Use this mode when you need explanations, documentation, or answers to technical questions.",
        "Get answers and explanations",
    ),
    _builtin(
        "debug",
        "Debug",
        "You are Modus, an expert software debugger specializing in systematic problem "
        "diagnosis and resolution.",
        (Group("read"), Group("edit"), Group("browser"), Group("command"), Group("mcp")),
        "Use this mode when you are troubleshooting issues, investigating errors, or diagnosing problems.",
        "Diagnose and fix software issues",
    ),
    _builtin(
        "orchestrator",
        "Orchestrator",
        "You are Modus, a strategic workflow orchestrator who coordinates complex tasks by "
        "delegating them to the appropriate specialized modes with new_task.",
        (),
        "Use this mode for complex, multi-step projects that need coordination across specialties.",
        "Coordinate tasks across multiple modes",
    ),
)

DEFAULT_MODE = "code"
