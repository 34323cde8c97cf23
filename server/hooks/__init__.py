"""Hooks in Claude Code's shape (PROTOCOL.md, "Project files of every peer"): commands the user's
settings run at the events of a session, which may block what is about to happen.

    {"hooks": {"PreToolUse": [{"matcher": "Bash|Write", "hooks": [{"type": "command", "command": "…", "timeout": 60}]}]}}

This package reads that shape (`parse_hooks`), matches a tool by Modus's name and by Claude Code's
(`Bash` is execute_command, so that existing hook scripts work), and runs the commands (runner.py).
Which files the hooks come from, and that a workspace's wait for the user's trust, is the
settings' business; when each event fires is the agent's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..modes.patterns import Pattern, PatternError

#: Claude Code's events, then Modus's own.
EVENTS = (
    "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart", "PreCompact",
    "ModeChange", "PhaseChange", "PlanDecision",
)
#: Events whose matcher is read (against a tool's names); the others run every hook they list.
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0

#: Claude Code's name of each Modus tool that has one (a matcher may use either).
CLAUDE_NAMES: dict[str, tuple[str, ...]] = {
    "execute_command": ("Bash",),
    "write_to_file": ("Write",),
    "apply_diff": ("Edit", "MultiEdit"),
    "insert_content": ("Edit", "MultiEdit"),
    "search_and_replace": ("Edit", "MultiEdit"),
    "read_file": ("Read",),
    "search_files": ("Grep",),
    "list_files": ("Glob",),
}


def claude_name(tool: str, mcp: tuple[str, str] | None = None) -> str:
    """The name Claude Code's hooks know the tool by (`tool_name` on their stdin): its own where it
    has one, `mcp__<server>__<tool>` for an MCP tool, else Modus's."""
    if mcp is not None:
        return f"mcp__{mcp[0]}__{mcp[1]}"
    return CLAUDE_NAMES.get(tool, (tool,))[0]


@dataclass(frozen=True)
class HookCommand:
    command: str
    timeout: float = DEFAULT_TIMEOUT
    #: where it was configured, for the user's messages (a settings file's path)
    origin: str = ""


@dataclass(frozen=True)
class HookMatcher:
    #: over a whole tool name (`Write` is not `WriteFile`); None: every tool (no matcher, "" or "*")
    matcher: Pattern | None
    hooks: tuple[HookCommand, ...]

    def matches(self, tool: str, mcp: tuple[str, str] | None = None) -> bool:
        """Whether the matcher takes the tool, by Modus's name or Claude Code's."""
        if self.matcher is None:
            return True
        names = (tool, *CLAUDE_NAMES.get(tool, ()), *((claude_name(tool, mcp),) if mcp else ()))
        return any(self.matcher.search(name) for name in names)


Hooks = Mapping[str, tuple[HookMatcher, ...]]


def parse_hooks(data: Any, origin: str) -> tuple[dict[str, tuple[HookMatcher, ...]], list[str]]:
    """The hooks of a settings file's `hooks` value, and its problems (each naming where)."""
    found: dict[str, tuple[HookMatcher, ...]] = {}
    problems: list[str] = []
    if data is None:
        return found, problems
    if not isinstance(data, dict):
        return found, [f"{origin}: hooks: must be an object of events, got {type(data).__name__}"]
    for event, entries in data.items():
        where = f"{origin}: hooks.{event}"
        if event not in EVENTS:
            problems.append(f"{where}: unknown event; the events are {', '.join(EVENTS)}")
            continue
        if not isinstance(entries, list):
            problems.append(f"{where}: must be a list of {{matcher, hooks}}")
            continue
        matchers = []
        for i, entry in enumerate(entries):
            matcher, problem = _matcher(entry, f"{where}[{i}]", origin, event)
            if problem:
                problems.append(problem)
            if matcher is not None:
                matchers.append(matcher)
        if matchers:
            found[event] = tuple(matchers)
    return found, problems


def _matcher(entry: Any, where: str, origin: str, event: str) -> tuple[HookMatcher | None, str | None]:
    if not isinstance(entry, dict) or not isinstance(entry.get("hooks"), list):
        return None, f"{where}: must be {{matcher?, hooks: [{{type: command, command, timeout?}}]}}"
    source = entry.get("matcher")
    pattern = None
    if event in TOOL_EVENTS and source not in (None, "", "*"):
        if not isinstance(source, str):
            return None, f"{where}.matcher: must be a string (a regular expression over tool names)"
        try:
            pattern = Pattern.compile(f"^(?:{source})$")
        except PatternError as exc:
            return None, f"{where}.matcher: {exc}"
    commands = []
    for j, hook in enumerate(entry["hooks"]):
        at = f"{where}.hooks[{j}]"
        if not isinstance(hook, dict) or hook.get("type", "command") != "command" or not isinstance(hook.get("command"), str) or not hook["command"].strip():
            return None, f"{at}: must be {{type: command, command: <a shell command>, timeout?: seconds}}"
        timeout = hook.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT:
            return None, f"{at}.timeout: must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, got {timeout!r}"
        commands.append(HookCommand(hook["command"], float(timeout), origin))
    return HookMatcher(pattern, tuple(commands)), None


def for_event(hooks: Hooks, event: str, tool: str | None = None, mcp: tuple[str, str] | None = None) -> list[HookCommand]:
    """The commands to run at `event` (for a tool event, those whose matcher takes the tool), each
    once, in the order configured."""
    commands: dict[str, HookCommand] = {}
    for matcher in hooks.get(event, ()):
        if tool is None or event not in TOOL_EVENTS or matcher.matches(tool, mcp):
            for hook in matcher.hooks:
                commands.setdefault(hook.command, hook)
    return list(commands.values())
