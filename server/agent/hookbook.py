"""The user's hooks fired at a session's events (server/hooks/: their shape and how one runs):
each command of the event (for a tool event, those whose matcher takes the tool) in the order
configured, with Claude Code's fields on its stdin and Modus's under `modus`; each run told to
the client as a `hook` update."""

from __future__ import annotations

from typing import Any

import protocol

from ..hooks import claude_name, for_event
from ..hooks.runner import HookRun, run_hook
from ..host import Host
from ..workspace import clip
from .configuration import Configuration

#: what of a hook's output the `hook` update shows
SHOWN = 2000


class HookBook:
    def __init__(self, config: Configuration, host: Host):
        self.config = config
        self.host = host

    async def fire(self, event: str, *, conversation_id: str, agent: str, mode: str, phase: str, tool: str | None = None,
                   mcp: tuple[str, str] | None = None, **fields: Any) -> list[HookRun]:
        commands = for_event(self.config.hooks, event, tool, mcp)
        if not commands:
            return []
        root = self.config.workspace.root
        payload = {
            "session_id": conversation_id,
            "cwd": str(root),
            "hook_event_name": event,
            **({"tool_name": claude_name(tool, mcp)} if tool else {}),
            **fields,
            "modus": {"mode": mode, "phase": phase, "agent": agent, "tool": tool},
        }
        runs = []
        for hook in commands:
            done = await run_hook(hook, payload, root)
            runs.append(done)
            said = (done.stderr if done.outcome != "ok" else done.stdout).strip()
            self.host.publish(protocol.HookUpdate(
                conversation_id=conversation_id, agent=agent, event=event, command=hook.command, outcome=done.outcome,
                output=clip(said, SHOWN) if said else None,
            ))
        return runs
