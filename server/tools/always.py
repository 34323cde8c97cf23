"""Auto-approval per mode, and "always allow" on an approval card (PROTOCOL.md "Settings files").

`autoApprove.modes.<slug>` overrides the keys of `autoApprove` for that mode; `command` may be a
list of globs: a command line is approved when each of its simple commands matches one.

An approval of an edit or a command may offer "always allow": approved with `always`, the rule
goes to the workspace's `.modus/settings.json` (its other keys kept): an edit sets
`autoApprove.modes.<slug>.edit: true`, a command adds itself, as globs of its simple commands,
to `autoApprove.modes.<slug>.command`. The user sees the file's diff and approves it before it is
written; the file's trust (server/settings.py) follows, unless other keys of it were already
waiting for the user's trust.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from protocol import ApprovalRequest, AutoApprove

from ..host import FileChange
from .edits import unified_diff, write_atomically

if TYPE_CHECKING:
    from protocol import Settings

    from .base import Params, ToolContext, ToolSpec

#: The approval keys "always allow" is offered for.
OFFERED = ("edit", "command")


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


def rule(ctx: "ToolContext", spec: "ToolSpec", params: "Params") -> tuple[list[str], Any] | None:
    """(the settings keys, the value) "always allow" would write for this call: true for an
    edit, for a command the globs of its simple commands, each matching only itself (a chain
    `a && b` is allowed as `a` and `b`); None: not offered (a command line that cannot be checked)."""
    if spec.approval not in OFFERED:
        return None
    keys = ["autoApprove", "modes", ctx.task.mode.slug, spec.approval]
    if spec.approval == "edit":
        return keys, True
    from .shell import CannotCheck, glob_of, simple_commands

    try:
        commands = simple_commands(getattr(params, "command", ""))
    except CannotCheck:
        return None
    return (keys, [glob_of(c) for c in dict.fromkeys(commands)]) if commands else None


def offered(ctx: "ToolContext", spec: "ToolSpec", params: "Params") -> str | None:
    """The rule as the approval card shows it."""
    found = rule(ctx, spec, params)
    if found is None:
        return None
    keys, value = found
    shown = value[0] if isinstance(value, list) and len(value) == 1 else value
    return f"{'.'.join(keys)}: {json.dumps(shown)}"


async def write_rule(ctx: "ToolContext", spec: "ToolSpec", params: "Params") -> str:
    """Write the call's rule to the workspace's settings file once the user approved its diff;
    returns what happened, for the log and the user."""
    found = rule(ctx, spec, params)
    assert found is not None
    keys, value = found
    layers = ctx.session.layers
    target = ctx.workspace.resolve(".modus/settings.json")
    old = target.path.read_text(encoding="utf-8") if target.path.is_file() else None
    try:
        data = json.loads(old) if old and old.strip() else {}
    except ValueError:
        return f"{target.rel} is not valid JSON: the rule was not written."
    if not isinstance(data, dict):
        return f"{target.rel} does not hold an object: the rule was not written."
    node = data
    for key in keys[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            return f"{target.rel}: {key} is not an object: the rule was not written."
    last = keys[-1]
    if value is True:
        node[last] = True
    else:
        current = node.get(last)
        if current is True:
            return "Already allowed."
        listed = current if isinstance(current, list) else []
        node[last] = [*listed, *(glob for glob in value if glob not in listed)]
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
    was_trusted = not layers.untrusted
    write_atomically(change)
    layers.workspace_file.load()
    if was_trusted:
        layers.trust_workspace()
    ctx.session.update_settings()
    return f"Written to {target.rel}: {offered(ctx, spec, params)}"
