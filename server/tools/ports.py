"""What a tool may ask of the agent around it: small ports, one per concern.

The tools never see the session. `ToolContext` carries the call's ids, its task (as `TaskView`)
and these ports; `server/agent/` implements them (agent/ports.py). A tool's unit test gives it a
fake with the two or three methods it uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncContextManager, ContextManager, Protocol, Sequence

if TYPE_CHECKING:
    from protocol import Settings, Todo

    from ..browser import Browser
    from ..roster import Chain, Refusal
    from ..roster.summons import Summons
    from ..hooks.runner import HookRun
    from ..host import Host
    from ..mcp import McpHub
    from ..modes import Mode
    from ..prompt.skills import Skills
    from ..settings import LayeredSettings
    from ..state import StoredMessage
    from ..workspace import Workspace
    from .base import ToolContext


class TaskView(Protocol):
    """The task a call runs in, as tools read it."""

    @property
    def id(self) -> str: ...
    @property
    def agent(self) -> str: ...
    @property
    def mode(self) -> Mode: ...
    @property
    def phase(self) -> str: ...
    @property
    def tools(self) -> frozenset[str]: ...


class Config(Protocol):
    """The settings that apply now, the files they come from, and the MCP servers."""

    @property
    def settings(self) -> Settings: ...
    @property
    def layers(self) -> LayeredSettings: ...
    @property
    def mcp(self) -> McpHub: ...
    @property
    def skills(self) -> Skills: ...
    def update_settings(self) -> None:
        """A settings file changed (a rule written to it): apply it now."""


class Chat(Protocol):
    """The conversation's agents, its messages and whom a hand-off wakes."""

    def agent_names(self) -> list[str]: ...
    def add_message(self, message: StoredMessage) -> StoredMessage: ...
    async def wake(self, conversation_id: str, agent: str, summons: Summons | None = None) -> None: ...
    def admit(self, chain: Chain, agent: str, to: str) -> Refusal | None:
        """The wake guards for `agent` waking `to` (the wake recorded when admitted)."""
    def waiting_for(self, conversation_id: str, agent: str) -> str | None:
        """The agent `agent` waits for an answer from (ask_agent), if any."""
    def asking(self, conversation_id: str, asker: str, to: str) -> ContextManager[None]:
        """While `asker` waits for `to`'s answer."""


class Switches(Protocol):
    """Modes and phases: look one up, switch the agent's task."""

    def mode(self, slug: str) -> Mode | None: ...
    def switch_mode(self, slug: str, *, by: str, reason: str | None = None, agent: str | None = None, conversation_id: str | None = None) -> Any: ...
    def set_phase(self, phase: str, *, by: str, agent: str | None = None, conversation_id: str | None = None) -> Any: ...


class Plans(Protocol):
    """The agent's structured plan (agent/planner.py), as the plan tools move it."""

    def enter(self, agent: str, cid: str, goal: str, scope: list[str] | None) -> str: ...
    async def exit(self, agent: str, cid: str, value: Any, call_id: str | None) -> str: ...
    def status(self, agent: str) -> str: ...
    async def relay(self, agent: str, cid: str, decision: str, feedback: str | None, call_id: str | None) -> str: ...
    def step_complete(self, agent: str, cid: str, step_id: Any, verification: str) -> str: ...
    def complete(self, agent: str, cid: str, summary: str, deviations: list[str] | None) -> str: ...
    async def modify(self, agent: str, cid: str, step_id: Any, reason: str, changes: dict[str, Any], call_id: str | None) -> str: ...


class Todos(Protocol):
    """The agent's todo list, across its conversations."""

    def todos(self, agent: str) -> list[Todo]: ...
    def write_todos(self, agent: str, todos: list[Todo], conversation_id: str) -> None: ...


class Subtasks(Protocol):
    """Work run to completion in a conversation under the caller's; the result is the call's."""

    async def run_subtask(self, ctx: ToolContext, mode: str, message: str) -> str: ...
    async def run_delegated(self, ctx: ToolContext, to: str, title: str, description: str) -> tuple[str, str | None]: ...


class Guards(Protocol):
    """What the gate holds a call to: a settled mode switch, the plan's state, file locks, checkpoints."""

    async def settled(self) -> None: ...
    def plan_state(self, agent: str) -> tuple[str, dict[str, Any] | None]: ...
    def hold(self, path: Path) -> AsyncContextManager[None]: ...
    async def checkpoint(self, label: str, conversation_id: str, tool_call_id: str | None) -> str | None: ...


class Hooks(Protocol):
    """The user's hooks (server/hooks/): the commands of an event run, what each answered."""

    async def fire(self, event: str, *, conversation_id: str, agent: str, mode: str, phase: str, tool: str | None = None,
                   mcp: tuple[str, str] | None = None, **fields: Any) -> list[HookRun]: ...


class Images(Protocol):
    """Images stored with the conversation (the state store's), each once: a tool's result
    carries their ids (`Outcome.images`), `modus/chat/image` fetches them."""

    def put(self, conversation_id: str, mime_type: str, data: bytes) -> str:
        """Store the image; its id (the same bytes: the same stored row, the same id)."""
        ...

    def get(self, image_id: str) -> tuple[str, bytes] | None:
        """(its MIME type, its bytes); None for an unknown id."""
        ...


class Browsers(Protocol):
    """The conversations' browsers (server/browser/): at most one open in each; the turn that
    launched it closes it when it ends."""

    def get(self, conversation_id: str) -> Browser | None: ...
    async def launch(self, conversation_id: str, turn_id: str, viewport: tuple[int, int], allowed_hosts: Sequence[str], timeout: float) -> Browser:
        """A started browser for the conversation, the one open before closed."""
    async def close(self, conversation_id: str) -> bool: ...


@dataclass(frozen=True)
class Ports:
    """Everything around a tool call, built once per session by the agent layer."""

    host: Host
    workspace: Workspace
    config: Config
    chat: Chat
    switches: Switches
    plans: Plans
    todos: Todos
    subtasks: Subtasks
    guards: Guards
    hooks: Hooks
    images: Images
    browsers: Browsers
