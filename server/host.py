"""The one narrow interface through which the core reaches the editor.

The LSP layer implements it with real client requests; tests implement it in memory.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Literal, NamedTuple, Protocol, Sequence

from .modes import Diagnostic
from .workspace import WorkspacePath

if TYPE_CHECKING:
    from protocol import ApprovalRequest, ApprovalResponse
    from protocol import Diagnostic as EditorProblem


class FileChange(NamedTuple):
    """The whole new text of one file; `old_text` None means the file is created."""

    target: WorkspacePath
    old_text: str | None
    new_text: str


class EditOutcome(NamedTuple):
    applied: bool
    reason: str | None = None


class CommandOutcome(NamedTuple):
    """How a command the editor ran ended: its exit code (None: stopped at the timeout) and its
    output, stdout and stderr together."""

    exit_code: int | None
    output: str


class Host(Protocol):
    def publish(self, update) -> None:
        """Send one `modus/update` (a protocol Update model)."""

    def show_message(self, level: Literal["error", "warning", "info"], text: str) -> None:
        """Tell the user something that is not part of a conversation (a notification)."""

    async def request_approval(self, request: ApprovalRequest, changes: Sequence[FileChange] = ()) -> ApprovalResponse:
        """Ask the user; `modus/approval` or a fallback the client understands. `changes`: what
        an edit would write (the request's detail shows it as a unified diff; a client may show
        it as its own diff)."""

    @property
    def can_apply_edits(self) -> bool:
        """True when the editor applies edits itself (`workspace/applyEdit`)."""

    async def apply_edit(self, changes: Sequence[FileChange], tool_call_id: str | None = None) -> EditOutcome:
        """Apply all changes as one workspace edit (for the tool call `tool_call_id`)."""

    async def document_text(self, path: Path) -> str | None:
        """The text of an open editor buffer, None when the editor has no buffer for the file
        (the file is then read from disk)."""

    @property
    def can_run_commands(self) -> bool:
        """True when the editor runs commands itself (in its own terminal)."""

    async def run_command(self, command: str, cwd: Path, timeout: float, tool_call_id: str | None = None) -> CommandOutcome:
        """Run `/bin/sh -c command` in `cwd` in the editor's terminal, stopped after `timeout`
        seconds; cancelling stops it. Only called when `can_run_commands`."""

    def progress(self, title: str, on_cancel: Callable[[], object] | None = None) -> AbstractAsyncContextManager[None]:
        """Work-done progress shown by the editor while the body runs; the user may cancel it."""

    def publish_diagnostics(self, path: Path, diagnostics: Sequence[Diagnostic]) -> None:
        """Problems in a file (custom-mode files), an empty list clears them."""

    @property
    def reports_problems(self) -> bool:
        """True when the editor tells what its language servers find in a file
        (`modus/client/diagnostics`)."""

    async def problems(self, paths: Sequence[Path]) -> dict[Path, list[EditorProblem]] | None:
        """The problems the editor knows in these files (a file it says nothing of: none); None
        when it answered with an error. Cancelling withdraws the request."""
