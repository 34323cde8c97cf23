"""The user's hooks fired at a session's events (server/hooks/: their shape and how one runs):
each command of the event (for a tool event, those whose matcher takes the tool) in the order
configured, with Claude Code's fields on its stdin and Modus's under `modus`; each run told to
the client as a `hook` update."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

import protocol

from ..hooks import claude_name, for_event
from ..hooks.runner import HookRun, run_hook
from ..host import Host
from ..workspace import clip
from .configuration import Configuration

if TYPE_CHECKING:
    from ..tools.ports import TaskView  # the tool registry loads with the first turn, not at start-up

log = logging.getLogger(__name__)

#: what of a hook's output the `hook` update shows
SHOWN = 2000


class HookBook:
    def __init__(self, config: Configuration, host: Host):
        self.config = config
        self.host = host
        self.task_group: TaskGroup | None = None
        #: what SessionStart hooks printed, added to the next user message (once)
        self.context = ""
        #: set when the SessionStart hooks are done (None: none run)
        self.starting: anyio.Event | None = None

    def soon(self, event: str, **fields: Any) -> None:
        """Fire the event's hooks in the background (what happened has happened: they are told,
        they decide nothing), when the session runs and one is configured."""
        if self.task_group is not None and self.config.hooks.get(event):
            self.task_group.start_soon(self.told, event, fields)

    async def told(self, event: str, fields: dict[str, Any]) -> None:
        """A hook run in the background: whatever goes wrong is logged, never takes the session down."""
        try:
            await self.fire(event, **fields)
        except Exception:  # noqa: BLE001 - a bug here must not end the session's task group
            log.exception("the %s hooks failed", event)

    def attach(self, task_group: TaskGroup | None, first: TaskView | None = None) -> None:
        """The session runs in `task_group` (None: it stopped); SessionStart hooks run at once,
        for the task that answers first in the current conversation."""
        self.task_group = task_group
        if task_group is not None and first is not None and self.config.hooks.get("SessionStart"):
            self.starting = anyio.Event()
            task_group.start_soon(self.session_start, first)

    async def session_start(self, task: TaskView) -> None:
        try:
            runs = await self.fire("SessionStart", conversation_id=self.config.current(), agent=task.agent, mode=task.mode.slug,
                                   phase=task.phase, source="startup")
            self.context = "\n\n".join(c for done in runs if (c := done.context))
        except Exception:  # noqa: BLE001 - as told(): logged, the session goes on
            log.exception("the SessionStart hooks failed")
        finally:
            if self.starting is not None:
                self.starting.set()

    async def take_context(self) -> str:
        """What the SessionStart hooks said, once: the first message waits for them."""
        if self.starting is not None:
            await self.starting.wait()
            self.starting = None
        context, self.context = self.context, ""
        return context

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
