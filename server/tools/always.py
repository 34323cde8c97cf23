"""Auto-approval per mode, and "always allow" on an approval card (PROTOCOL.md "Settings files").

`autoApprove.modes.<slug>` overrides the keys of `autoApprove` for that mode; `command` may be a
list of globs: a command line is approved when each of its simple commands matches one.

An approval of an edit, a command, an MCP tool or a browser's launch may offer "always allow":
approved with `always`, the rule is written to its file, the file's other keys kept (see `rule`). The user sees
the file's diff and approves it before it is written. Written to the workspace's settings file,
the file's trust (server/settings.py) follows only when the file was trusted as it was read
before the write; written to a workspace's MCP file, the server's approval follows only when the
entry was approved as it was (server/mcp/approvals.py). The agent's own edits of those files are
never trusted along with the user's rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from protocol import ApprovalRequest, AutoApprove

from ..host import FileChange
from ..settings import MAX_FILE_BYTES
from ..untrusted import Refused, read_text
from ..workspace import WorkspacePath
from .edits import unified_diff, write_atomically

if TYPE_CHECKING:
    from protocol import Settings

    from .base import Params, ToolContext, ToolSpec

def setting(auto: AutoApprove, mode: str, key: str) -> Any:
    """The `autoApprove` value of `key` in `mode`: its override, else the general one."""
    override = auto.modes.get(mode)
    value = getattr(override, key, None) if override is not None else None
    return getattr(auto, key) if value is None else value


async def auto_approved(settings: "Settings", mode: str, key: str, params: "Params") -> bool:
    if settings.yolo:
        return True
    value = setting(settings.auto_approve, mode, key)
    if isinstance(value, list):
        import anyio

        from .shell import every_command_matches

        line = getattr(params, "command", "")  # parsed in a worker: a long line takes a while
        return key == "command" and await anyio.to_thread.run_sync(every_command_matches, line, value)
    return bool(value)


class Rule(NamedTuple):
    """Where "always allow" writes what: a JSON file, the keys down to the value, the value
    (a list value is added to the list there)."""

    file: Path
    keys: list[str]
    value: Any

    def shown(self) -> str:
        shown = self.value[0] if isinstance(self.value, list) and len(self.value) == 1 else self.value
        return f"{'.'.join(self.keys)}: {json.dumps(shown)}"


def rule(ctx: "ToolContext", spec: "ToolSpec", params: "Params") -> Rule | None:
    """The rule "always allow" would write for this call, None when not offered:
    - an edit: `autoApprove.modes.<mode>.edit: true` in the workspace's settings file (a
      browser's launch: `autoApprove.modes.<mode>.browser: true`);
    - a command: the globs of its simple commands, each matching only itself (a chain `a && b`
      is allowed as `a` and `b`), in `autoApprove.modes.<mode>.command` (not offered for a
      command line that cannot be checked);
    - an MCP tool (use_mcp_tool): its name in `alwaysAllow` of its server, in the file that
      configures the server (not offered for a server the editor gave)."""
    settings = ctx.workspace.root / ".modus" / "settings.json"
    keys = ["autoApprove", "modes", ctx.task.mode.slug, str(spec.approval)]
    if spec.approval in ("edit", "browser"):  # browser: its launch, the only action that asks
        return Rule(settings, keys, True)
    if spec.approval == "command":
        from .shell import CannotCheck, glob_of, simple_commands

        try:
            commands = simple_commands(getattr(params, "command", ""))
        except CannotCheck:
            return None
        return Rule(settings, keys, [glob_of(c) for c in dict.fromkeys(commands)]) if commands else None
    if spec.approval == "mcp" and spec.name == "use_mcp_tool":
        server = getattr(params, "server_name", "")
        file = ctx.ports.config.mcp.config_file(server)
        if file is None or not file.is_absolute():
            return None
        return Rule(file, ["mcpServers", server, "alwaysAllow"], [getattr(params, "tool_name", "")])
    return None


def offered(ctx: "ToolContext", spec: "ToolSpec", params: "Params") -> str | None:
    """The rule as the approval card shows it."""
    found = rule(ctx, spec, params)
    return found.shown() if found else None


async def write_rule(ctx: "ToolContext", spec: "ToolSpec", params: "Params") -> str:
    """Write the call's rule to its file once the user approved the file's diff; returns what
    happened, for the log and the user."""
    found = rule(ctx, spec, params)
    assert found is not None
    layers = ctx.ports.config.layers
    root = ctx.workspace.root
    inside = found.file.is_relative_to(root)
    target = ctx.workspace.resolve(str(found.file.relative_to(root))) if inside else WorkspacePath(found.file, str(found.file))
    try:  # a repository's file: a regular one, bounded, really in the workspace (never a FIFO to hang on)
        old = read_text(target.path, MAX_FILE_BYTES, inside=root if inside else None)
    except Refused as exc:
        return f"{target.rel} not read ({exc}): the rule was not written."
    try:
        data = json.loads(old) if old and old.strip() else {}
    except ValueError:
        return f"{target.rel} is not valid JSON: the rule was not written."
    if not isinstance(data, dict):
        return f"{target.rel} does not hold an object: the rule was not written."
    node = data
    for key in found.keys[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            return f"{target.rel}: {key} is not an object: the rule was not written."
    last, value = found.keys[-1], found.value
    if value is True:
        node[last] = True
    else:
        current = node.get(last)
        if current is True:
            return "Already allowed."
        listed = current if isinstance(current, list) else []
        node[last] = [*listed, *(item for item in value if item not in listed)]
    new = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    change = FileChange(target, old, new)
    answer = await ctx.host.request_approval(
        ApprovalRequest(
            kind="tool",
            title=f"Always allow: write this rule to {target.rel}?",
            detail=unified_diff([change]),
            tool="write_to_file",
            params={"path": target.rel, "content": new},
            agent=ctx.agent,
            tool_call_id=ctx.call_id,  # shown with the call it came from
        ),
        [change],
    )
    if answer.decision != "approve":
        return "The rule was not written: the user declined the change of the settings file."
    # What the user approved is the rule, not the rest of the file: trusted before, the file stays
    # trusted with the rule; else (the agent may have written yolo into it) nothing more is trusted.
    settings_file = found.file == layers.workspace_file.path
    keeps_trust = settings_file and layers.trusted_text(old)
    write_atomically(change)
    if settings_file:
        if keeps_trust:
            layers.trust_text(new)
        layers.workspace_file.load()
        ctx.ports.config.update_settings()
    elif spec.approval == "mcp" and inside:
        ctx.ports.config.mcp.rule_written(getattr(params, "server_name", ""), found.file, old, new)
    return f"Written to {target.rel}: {found.shown()}"
