"""An in-memory Host for tests of the core: records updates, answers approvals by a policy,
applies edits to disk like an editor that saves."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import Callable, Sequence

from protocol import ApprovalRequest, ApprovalResponse

from server.host import CommandOutcome, EditOutcome, FileChange
from server.tools.edits import write_atomically


class MemoryHost:
    def __init__(
        self,
        approve: Callable[[ApprovalRequest], ApprovalResponse] | None = None,
        applies_edits: bool = True,
        accept_edits: bool = True,
    ):
        self.updates: list = []
        self.approvals: list[ApprovalRequest] = []
        self.edits: list[list[FileChange]] = []
        self.diagnostics: dict[Path, list] = {}
        self.buffers: dict[Path, str] = {}
        self.progress_titles: list[str] = []
        self.messages: list[tuple[str, str]] = []
        self.approval_changes: list[list[FileChange]] = []
        self.edit_calls: list[str | None] = []
        #: commands run "in the editor's terminal": (command, cwd) → (exit code, output); None: the server runs them
        self.terminal: Callable[[str, Path], CommandOutcome] | None = None
        self.commands: list[tuple[str, Path, str | None]] = []
        #: what the editor's language servers find, by file (None: the editor cannot say)
        self.problem_source: Callable[[Path], list] | None = None
        self.problem_requests: list[list[Path]] = []
        self._approve = approve or (lambda r: ApprovalResponse(decision="approve"))
        self._applies = applies_edits
        self._accept = accept_edits

    def publish(self, update) -> None:
        self.updates.append(update)

    def show_message(self, level: str, text: str) -> None:
        self.messages.append((level, text))

    def kinds(self) -> list[str]:
        return [u.kind for u in self.updates]

    def of_kind(self, kind: str) -> list:
        return [u for u in self.updates if u.kind == kind]

    async def request_approval(self, request: ApprovalRequest, changes: Sequence[FileChange] = ()) -> ApprovalResponse:
        self.approvals.append(request)
        self.approval_changes.append(list(changes))
        return self._approve(request)

    @property
    def can_apply_edits(self) -> bool:
        return self._applies

    async def apply_edit(self, changes: Sequence[FileChange], tool_call_id: str | None = None) -> EditOutcome:
        self.edits.append(list(changes))
        self.edit_calls.append(tool_call_id)
        if not self._accept:
            return EditOutcome(False, "the user rejected the edit")
        for change in changes:
            write_atomically(change)
        return EditOutcome(True)

    async def document_text(self, path: Path) -> str | None:
        return self.buffers.get(path)

    @property
    def can_run_commands(self) -> bool:
        return self.terminal is not None

    async def run_command(self, command: str, cwd: Path, timeout: float, tool_call_id: str | None = None) -> CommandOutcome:
        assert self.terminal is not None
        self.commands.append((command, cwd, tool_call_id))
        return self.terminal(command, cwd)

    @asynccontextmanager
    async def progress(self, title: str, on_cancel=None):
        self.progress_titles.append(title)
        self.cancel_progress = on_cancel
        yield

    def publish_diagnostics(self, path: Path, diagnostics) -> None:
        self.diagnostics[path] = list(diagnostics)

    @property
    def reports_problems(self) -> bool:
        return self.problem_source is not None

    async def problems(self, paths: Sequence[Path]) -> dict[Path, list] | None:
        assert self.problem_source is not None
        self.problem_requests.append(list(paths))
        return {p: self.problem_source(p) for p in paths}
