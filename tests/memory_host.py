"""An in-memory Host for tests of the core: records updates, answers approvals by a policy,
applies edits to disk like an editor that saves."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import Callable, Sequence

from protocol import ApprovalRequest, ApprovalResponse

from server.host import EditOutcome, FileChange
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

    async def request_approval(self, request: ApprovalRequest) -> ApprovalResponse:
        self.approvals.append(request)
        return self._approve(request)

    @property
    def can_apply_edits(self) -> bool:
        return self._applies

    async def apply_edit(self, changes: Sequence[FileChange]) -> EditOutcome:
        self.edits.append(list(changes))
        if not self._accept:
            return EditOutcome(False, "the user rejected the edit")
        for change in changes:
            write_atomically(change)
        return EditOutcome(True)

    def document_text(self, path: Path) -> str | None:
        return self.buffers.get(path)

    @asynccontextmanager
    async def progress(self, title: str, on_cancel=None):
        self.progress_titles.append(title)
        self.cancel_progress = on_cancel
        yield

    def publish_diagnostics(self, path: Path, diagnostics) -> None:
        self.diagnostics[path] = list(diagnostics)
