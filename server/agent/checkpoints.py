"""Checkpoints of a session (SPEC of issue 13, PROTOCOL.md "Checkpoints"): the workspace's files
before each tool call that edits files or runs a command, and at each turn's start, kept by the
engine in server/checkpoints (a shadow git repository in the user's own state folder,
`$XDG_STATE_HOME/modus/checkpoints/`, whatever the stateDir setting: never in the workspace,
where a repository could ship one with its own config or hooks); listed, compared
with now, and restored: the files (through the editor when it applies edits, else on disk), the
conversation (cut back to that point: a new task; the later messages stay in the store, marked),
or both. A restore first takes a checkpoint of its own, so it can be undone.

Each checkpoint carries, in its commit, the conversation, the tool call it came before (none for
a turn's start), and the number of the conversation's last message then. Without git, or with
the `checkpoints` setting off, there are none, and the user is told why once.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from functools import cached_property
from typing import TYPE_CHECKING, Callable

import anyio

import protocol

from .. import userdirs
from ..errors import BadRequest
from ..host import FileChange

if TYPE_CHECKING:
    from ..checkpoints import ShadowRepo
    from ..host import Host
    from ..state import StateStore
    from ..workspace import Workspace
    from .configuration import Configuration
    from .conversations import Conversations

log = logging.getLogger(__name__)


class Checkpoints:
    def __init__(self, workspace: "Workspace", host: "Host", store: "StateStore", config: "Configuration", conversations: "Conversations", cut: Callable[[str, int], None]):
        """`cut`: the conversation back to a message (Session.cut_conversation)."""
        self.workspace = workspace
        self.host = host
        self.store = store
        self.config = config
        self.conversations = conversations
        self.cut = cut
        self._told = False

    @cached_property
    def repo(self) -> "ShadowRepo":
        """The workspace's shadow repository, in the user's state folder; the session's own
        state folder (stateDir) is never held, wherever it is."""
        from ..checkpoints import ShadowRepo

        return ShadowRepo(self.workspace.root, userdirs.state_dir(), keep_out=[self.config.state_dir])

    async def _available(self) -> bool:
        if not self.config.settings.checkpoints:
            return False
        if await anyio.to_thread.run_sync(self.repo.available):
            if self.repo.recovered and not self._told:
                self._told = True
                self.host.show_message("warning", self.repo.recovered)
            return True
        if not self._told:
            self._told = True
            self.host.show_message("warning", self.repo.reason or "Checkpoints are off.")
        return False

    def disabled(self) -> str | None:
        if not self.config.settings.checkpoints:
            return "Checkpoints are off: the checkpoints setting is false."
        return None if self.repo.available() else (self.repo.reason or "Checkpoints are off.")

    async def take(self, label: str, conversation_id: str, tool_call_id: str | None = None) -> str | None:
        """A checkpoint of the files now (in a worker thread); its id, None when they are off.
        A failure is logged and told: the work goes on without this checkpoint."""
        if not await self._available():
            return None
        meta = {"conversationId": conversation_id, "seq": str(self.store.last_seq(conversation_id))}
        if tool_call_id:
            meta["toolCallId"] = tool_call_id
        try:
            checkpoint = await anyio.to_thread.run_sync(self.repo.take, label, meta)
        except Exception as exc:  # noqa: BLE001 - a checkpoint lost must not fail the edit
            log.warning("checkpoint %r failed: %s", label, exc)
            self.host.show_message("warning", f"No checkpoint was taken ({label}): {exc}")
            return None
        return checkpoint.id

    async def list(self, conversation_id: str | None) -> protocol.CheckpointsListResult:
        """The checkpoints (of a conversation), oldest first; git runs in a worker thread."""
        why = await anyio.to_thread.run_sync(self.disabled)
        if why is not None:
            return protocol.CheckpointsListResult(checkpoints=[], disabled=why)
        meta = {"conversationId": conversation_id} if conversation_id else None
        found = await anyio.to_thread.run_sync(lambda: self.repo.list(meta=meta))
        return protocol.CheckpointsListResult(
            checkpoints=[
                protocol.CheckpointInfo(
                    id=c.id,
                    conversation_id=c.meta.get("conversationId", ""),
                    tool_call_id=c.meta.get("toolCallId"),
                    created_at=datetime.fromtimestamp(c.time, timezone.utc).isoformat(timespec="seconds"),
                    label=c.message,
                )
                for c in reversed(found)
            ]
        )

    async def taken_since(self, conversation_id: str, seq: int) -> tuple[str | None, str | None]:
        """The files as they were when the conversation had its message `seq`: the first of its
        checkpoints taken since (at the start of the turn that answered it, or before the first
        call that changed files after it: nothing of the agent's had changed them yet). (Its id,
        None), or (None, why there is none)."""
        why = await anyio.to_thread.run_sync(self.disabled)
        if why is not None:
            return None, why
        found = await anyio.to_thread.run_sync(lambda: self.repo.list(meta={"conversationId": conversation_id}))
        for checkpoint in reversed(found):  # oldest first
            if int(checkpoint.meta.get("seq", "0")) >= seq:
                return checkpoint.id, None
        return None, "No checkpoint was taken after this message: no tool call has changed files since."

    async def _checkpoint(self, checkpoint_id: str):
        from ..checkpoints import CheckpointError, CheckpointsUnavailable

        why = await anyio.to_thread.run_sync(self.disabled)
        if why is not None:
            raise BadRequest(why)
        try:
            return await anyio.to_thread.run_sync(self.repo.get, checkpoint_id)
        except (CheckpointError, CheckpointsUnavailable) as exc:
            raise BadRequest(f"id: {exc}") from None

    async def diff(self, checkpoint_id: str) -> protocol.CheckpointsDiffResult:
        await self._checkpoint(checkpoint_id)
        files = await anyio.to_thread.run_sync(self.repo.diff, checkpoint_id)
        return protocol.CheckpointsDiffResult(
            files=[protocol.CheckpointFile(path=f.path, status=f.status, diff=f.text) for f in files]
        )

    async def restore(self, checkpoint_id: str, what: str) -> protocol.CheckpointsRestoreResult:
        """Back to the checkpoint: "files", "conversation" or "both". A checkpoint of now comes first."""
        checkpoint = await self._checkpoint(checkpoint_id)
        cid = checkpoint.meta.get("conversationId") or self.conversations.current
        before = await self.take(f"before restoring {checkpoint_id[:12]}", cid)
        if before is None:  # the take failed (and said why): a restore that could not be undone is not made
            raise BadRequest("restore: no checkpoint of the files now could be taken, so nothing was restored")
        restored: list[str] = []
        if what in ("files", "both"):
            restored = await self._files(checkpoint_id)
        if what in ("conversation", "both"):
            self.cut(cid, int(checkpoint.meta.get("seq", "0")))
        return protocol.CheckpointsRestoreResult(restored=restored, checkpoint=before, conversation_id=cid)

    async def _files(self, checkpoint_id: str) -> list[str]:
        """The files as they were: text creates and changes through the editor when it applies
        edits (its buffers and undo stay right), the rest (deletes, binaries, kinds) on disk."""
        repo = self.repo
        changes = await anyio.to_thread.run_sync(repo.restore, checkpoint_id)
        editable = [c for c in changes if c.via_editor and c.action != "delete"] if self.host.can_apply_edits else []
        if editable:
            outcome = await self.host.apply_edit(
                [FileChange(self.workspace.resolve(c.path), c.old_text, c.new_text or "") for c in editable]
            )
            if not outcome.applied:
                log.warning("the editor did not apply the restore (%s): on disk instead", outcome.reason)
                editable = []
        on_disk = [c.path for c in changes if c not in editable]
        failed = []
        if on_disk:
            done = await anyio.to_thread.run_sync(repo.restore_on_disk, checkpoint_id, on_disk)
            failed = [c for c in done if c.error]
        if failed:
            self.host.show_message("warning", "Not restored: " + "; ".join(f"{c.path}: {c.error}" for c in failed))
        return [c.path for c in changes if c.path not in {f.path for f in failed}]
