"""The Host of the core, implemented with real requests to the LSP client."""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from lsprotocol import types as lsp
from pydantic import ValidationError
from urllib.parse import unquote

from pygls.uris import from_fs_path, to_fs_path

import protocol
from protocol import names

from ..host import CommandOutcome, EditOutcome, FileChange
from ..modes import Diagnostic

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from protocol import ApprovalRequest, ApprovalResponse

log = logging.getLogger(__name__)

APPROVE, DENY, ALWAYS = "Approve", "Deny", "Always allow"


def _get(obj, *path):
    for name in path:
        obj = getattr(obj, name, None)
        if obj is None:
            return None
    return obj


def past_the_end(text: str) -> lsp.Position:
    """One line past the last line of `text`, its lines as LSP counts them (a break is CRLF, CR or LF).

    A whole-document edit ends there so that the file, once saved, is exactly the new text in
    both editors: VS Code clamps a position past the end to the end of the document, and Neovim
    (vim.lsp.util.apply_text_edits) replaces up to the end of its buffer, then removes the empty
    last line the new text's final newline leaves, since it writes that newline itself (fixeol).
    Ending at the last character instead leaves Neovim a buffer line too many."""
    return lsp.Position(line=len(re.split(r"\r\n|\r|\n", text)), character=0)


class LspHost:
    def __init__(self, server: "LanguageServer"):
        self.server = server

    @property
    def _caps(self) -> lsp.ClientCapabilities:
        return self.server.client_capabilities

    # ---------------------------------------------------------- updates and messages

    def publish(self, update) -> None:
        self.server.protocol.notify(names.UPDATE, update.wire())

    def show_message(self, level: str, text: str) -> None:
        kind = {"error": lsp.MessageType.Error, "warning": lsp.MessageType.Warning}.get(level, lsp.MessageType.Info)
        self.server.window_show_message(lsp.ShowMessageParams(type=kind, message=f"Modus: {text}"))

    def publish_diagnostics(self, path: Path, diagnostics: Sequence[Diagnostic]) -> None:
        self.server.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(
                uri=from_fs_path(str(path)),
                diagnostics=[
                    lsp.Diagnostic(
                        range=lsp.Range(lsp.Position(d.line, d.column), lsp.Position(d.end_line, d.end_column)),
                        message=d.message,
                        severity=lsp.DiagnosticSeverity.Warning if d.severity == "warning" else lsp.DiagnosticSeverity.Error,
                        source="modus",
                    )
                    for d in diagnostics
                ],
            )
        )

    def _declares(self, capability: str) -> bool:
        """`capabilities.experimental.modus.<capability>: true`."""
        experimental = self._caps.experimental
        if isinstance(experimental, dict):
            modus = experimental.get("modus")
            return isinstance(modus, dict) and modus.get(capability) is True
        return False

    @property
    def reports_problems(self) -> bool:
        return self._declares("diagnostics")

    async def problems(self, paths: Sequence[Path]) -> dict[Path, list] | None:
        by_uri = {from_fs_path(str(p)): p for p in paths}
        answer = await self._request(names.CLIENT_DIAGNOSTICS, protocol.ClientDiagnosticsParams(uris=list(by_uri)).wire())
        if answer is None:
            return None
        try:
            result = protocol.ClientDiagnosticsResult.model_validate(answer)
        except ValidationError as exc:
            log.warning("invalid answer to %s: %s", names.CLIENT_DIAGNOSTICS, exc.errors()[0]["msg"])
            return None
        found: dict[Path, list] = {p: [] for p in paths}
        for item in result.items:  # only the files asked for
            path = to_fs_path(item.uri)
            if path is not None and Path(path) in found:
                found[Path(path)].extend(item.diagnostics)
        return found

    # ---------------------------------------------------------- approvals

    @property
    def renders_approvals(self) -> bool:
        return self._declares("approvals")

    async def request_approval(self, request: ApprovalRequest, changes: Sequence[FileChange] = ()) -> ApprovalResponse:
        if self.renders_approvals:
            answer = await self._request(names.APPROVAL, request.wire())
            try:
                return protocol.ApprovalResponse.model_validate(answer)
            except ValidationError as exc:
                log.warning("invalid answer to modus/approval: %s", exc.errors()[0]["msg"])
                return protocol.ApprovalResponse(decision="deny", feedback="The editor's answer to the approval was invalid.")
        text = request.title if not request.detail else f"{request.title}\n\n{request.detail}"
        titles = [APPROVE, *([ALWAYS] if request.always_allow else []), DENY]
        params = lsp.ShowMessageRequestParams(
            type=lsp.MessageType.Info,
            message=f"{text}\n\n{ALWAYS}: {request.always_allow}" if request.always_allow else text,
            actions=[lsp.MessageActionItem(title=t) for t in titles],
        )
        choice = await self._request(lsp.WINDOW_SHOW_MESSAGE_REQUEST, params)
        title = choice.get("title") if isinstance(choice, dict) else getattr(choice, "title", None)
        return protocol.ApprovalResponse(decision="approve" if title in (APPROVE, ALWAYS) else "deny", always=title == ALWAYS)

    async def _request(self, method: str, params):
        """A request to the client; if the turn is cancelled meanwhile, the client is told."""
        msg_id = str(uuid.uuid4())
        future = self.server.protocol.send_request_async(method, params, msg_id=msg_id)
        try:
            return await future
        except asyncio.CancelledError:
            self.server.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
            raise
        except Exception as exc:  # the client answered with an error: nothing is approved
            log.warning("%s failed: %s", method, exc)
            return None

    # ---------------------------------------------------------- edits and documents

    @property
    def can_apply_edits(self) -> bool:
        """The client applies `documentChanges` edits that create files. Neovim declares the
        create operation but not `documentChanges`, which it applies all the same."""
        ws = self._caps.workspace
        if not ws or not ws.apply_edit or not ws.workspace_edit:
            return False
        return lsp.ResourceOperationKind.Create in (ws.workspace_edit.resource_operations or [])

    async def apply_edit(self, changes: Sequence[FileChange], tool_call_id: str | None = None) -> EditOutcome:
        document_changes: list = []
        for change in changes:
            uri = from_fs_path(str(change.target.path))
            if change.old_text is None:
                # Without ignoreIfExists (the file does not exist: old_text is None): with it, Neovim
                # creates neither the file nor its folders, and saving it in a new folder fails.
                document_changes.append(
                    lsp.CreateFile(uri=uri, options=lsp.CreateFileOptions(overwrite=False, ignore_if_exists=False))
                )
            document = self.server.workspace.text_documents.get(unquote(uri))
            whole = lsp.Range(lsp.Position(0, 0), past_the_end(change.old_text or ""))
            document_changes.append(
                lsp.TextDocumentEdit(
                    text_document=lsp.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=document.version if document else None
                    ),
                    edits=[lsp.TextEdit(range=whole, new_text=change.new_text)],
                )
            )
        label = "Modus: " + ", ".join(c.target.rel for c in changes)
        params = lsp.ApplyWorkspaceEditParams(edit=lsp.WorkspaceEdit(document_changes=document_changes), label=label)
        result = await self._request(lsp.WORKSPACE_APPLY_EDIT, params)
        if result is None:
            return EditOutcome(False, "the editor answered workspace/applyEdit with an error")
        applied = result.get("applied") if isinstance(result, dict) else getattr(result, "applied", False)
        reason = result.get("failureReason") if isinstance(result, dict) else getattr(result, "failure_reason", None)
        return EditOutcome(bool(applied), reason)

    async def document_text(self, path: Path) -> str | None:
        document = self.server.workspace.text_documents.get(unquote(from_fs_path(str(path))))
        return document.source if document is not None else None

    # ---------------------------------------------------------- commands: LSP has no terminal

    can_run_commands = False

    async def run_command(self, command: str, cwd: Path, timeout: float, tool_call_id: str | None = None) -> CommandOutcome:
        raise NotImplementedError("an LSP client runs no commands: the server runs them")

    # ---------------------------------------------------------- progress

    @asynccontextmanager
    async def progress(self, title: str, on_cancel: Callable[[], object] | None = None):
        token = None
        if _get(self._caps, "window", "work_done_progress"):
            token = f"modus-{uuid.uuid4().hex[:12]}"
            try:
                await self.server.work_done_progress.create_async(token)
                self.server.work_done_progress.begin(
                    token, lsp.WorkDoneProgressBegin(title=title, cancellable=on_cancel is not None)
                )
                if on_cancel is not None:
                    self.server.work_done_progress.tokens[token].add_done_callback(
                        lambda f: on_cancel() if f.cancelled() else None
                    )
            except Exception as exc:
                log.debug("no work-done progress: %s", exc)
                token = None
        try:
            yield
        finally:
            if token is not None:
                self.server.work_done_progress.end(token, lsp.WorkDoneProgressEnd())
                self.server.work_done_progress.tokens.pop(token, None)
