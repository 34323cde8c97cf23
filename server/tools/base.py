"""How a tool is declared: its parameters, its group, what approval it needs, and what it does.

A tool never checks its own permissions: the gate (gate.py) runs every check in one order. A
tool's `prepare` does the work that must happen before the user is asked (compute the new file
text, validate a mode slug) and returns a `Prepared`: what to show in the approval and what to
run once approved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from ..roster import Chain
    from ..host import FileChange, Host
    from ..workspace import Workspace, WorkspacePath
    from .ports import Ports, TaskView


class Params(BaseModel):
    """Base of tool parameters; Roo Code's snake_case names. Unknown parameters are ignored."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    #: Parameters that name files or folders, checked by the gate (workspace, file rules).
    path_fields: ClassVar[tuple[str, ...]] = ()

    def paths(self) -> list[str]:
        found: list[str] = []
        for name in self.path_fields:
            value = getattr(self, name)
            if isinstance(value, str):
                found.append(value)
        return found


#: How a call ends the agent's turn, if it does.
Ending = Literal["completed", "awaiting_user"]


@dataclass(frozen=True)
class Outcome:
    text: str
    ends_turn: Ending | None = None
    #: The result is written when the user answers (plan_mode_respond), so that it can say
    #: what happened meanwhile (the user switched to ACT).
    result_later: bool = False
    #: Kept with the stored result (its `metadata`): what a client may show of it.
    metadata: dict[str, Any] = field(default_factory=dict)
    #: Ids of stored images (ports.Images) the result carries to the model: a vision model gets
    #: them as images with the text, another a note that it cannot see them.
    images: tuple[str, ...] = ()


@dataclass(frozen=True)
class Prepared:
    """What the approval shows and what runs once approved."""

    run: Callable[[], Awaitable[Outcome | str]]
    title: str = ""
    detail: str = ""
    #: Extra fields of the approval request (switch_mode: from, to, reason).
    approval_fields: dict[str, Any] = field(default_factory=dict)
    #: What an edit writes, shown with its approval.
    changes: tuple["FileChange", ...] = ()
    #: Approved in advance by what configures it (an MCP tool its server's alwaysAllow lists).
    preapproved: bool = False
    #: An edit the user may change in review (approval `file`): what runs when they approved
    #: their own text (the answer's `content`) instead of the proposal.
    revise: Callable[[str], "Prepared"] | None = None


@dataclass
class ToolContext:
    """What a running tool may use: the call's ids, its task and the ports (ports.py). Built by
    the agent loop for each call."""

    ports: "Ports"
    task: "TaskView"
    agent: str
    conversation_id: str
    turn_id: str
    call_id: str
    #: The tool called just before this one in the turn, if any.
    previous_tool: str | None = None
    #: What the user message behind the turn started (the hand-off tools wake within it).
    chain: "Chain | None" = None

    @property
    def host(self) -> "Host":
        return self.ports.host

    @property
    def workspace(self) -> "Workspace":
        return self.ports.workspace


Prepare = Callable[[ToolContext, Any, "list[WorkspacePath]"], Awaitable[Prepared]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    params: type[Params]
    prepare: Prepare
    #: The group the tool belongs to (None: available in every mode).
    group: str | None = None
    #: The `autoApprove` key that skips the question; None: the tool never asks.
    approval: str | None = None
    #: The `kind` of the approval request.
    approval_kind: Literal["tool", "switch_mode", "subtask", "plan"] = "tool"
    #: Whether the tool writes to files named by its paths (file rules apply).
    edits: bool = False
