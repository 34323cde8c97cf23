"""The files each conversation touched: what its tool calls read, wrote or listed, what the
user's messages mention (`@/src/a.py`, `@README.md`), and the editor's selection a code action
sent. They decide its conditional rules (prompt/rules.py): a rule applies once a matching file
was touched, and from then on.

A touch is kept with the message that made it, in its metadata (`touched`: workspace-relative
paths), so it is stored before anything announces it, a restarted server finds it, and a
conversation cut back to a checkpoint forgets the touches of the messages it cut. A subtask's
messages count for the conversation it belongs to.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ..errors import ToolFailure

if TYPE_CHECKING:
    from ..state import StateStore, StoredMessage
    from ..workspace import Workspace

#: The metadata key of a message's touched files.
KEY = "touched"
#: `@` then a path (with a `/` or a `.`), not glued to a word before it (sam@host.com).
_MENTION = re.compile(r"(?<![\w@])@((?:/|\.{1,2}/|[\w.-]+[/.])[^\s`'\"<>()\[\]{},;]*)")
MAX_MENTIONS = 20


class TouchedFiles:
    def __init__(self, store: StateStore):
        self.store = store
        #: conversation → the files it touched (loaded from the store when first asked)
        self.known: dict[str, frozenset[str]] = {}
        self.parents: dict[str, str | None] = {}
        #: counts every change, so that what is derived from touches knows when to look again
        self.version = 0

    def of(self, cid: str) -> frozenset[str]:
        found = self.known.get(cid)
        if found is None:
            values = self.store.metadata_values(self.store.subconversations(cid), KEY)
            found = self.known[cid] = frozenset(p for v in values if isinstance(v, list) for p in v if isinstance(p, str))
        return found

    def written(self, message: StoredMessage) -> None:
        """A message was stored: its touches count from now on (Conversations.add_message)."""
        paths = message.metadata.get(KEY)
        if not paths:
            return
        cid = self.root(message.conversation_id)
        known = self.known.get(cid)
        if known is not None and not known.issuperset(paths):
            self.known[cid] = known | frozenset(paths)
            self.version += 1
        elif known is None:
            self.version += 1  # loaded from the store, with this one, when next asked

    def forget(self, cid: str) -> None:
        """The conversation was cut back: its touches are read again when next asked."""
        self.known.pop(cid, None)
        self.version += 1

    def root(self, cid: str) -> str:
        """The conversation a subtask's conversation belongs to (itself if it is none's)."""
        seen = {cid}
        while True:
            if cid not in self.parents:
                self.parents[cid] = self.store.conversation_parent(cid)
            parent = self.parents[cid]
            if parent is None or parent in seen:
                return cid
            seen.add(parent)
            cid = parent


def mentioned_files(text: str, workspace: Workspace) -> list[str]:
    """The workspace's files and folders a user's message names as `@path` (`@/src/a.py`: from
    the workspace's root, or an absolute path inside it; `@src/a.py`, `@README.md`), those that
    exist, workspace-relative."""
    found: list[str] = []
    for m in _MENTION.finditer(text):
        raw = m[1].rstrip(".:!?")
        candidates = [raw, raw.lstrip("/")] if raw.startswith("/") else [raw]
        for candidate in candidates:
            try:
                target = workspace.resolve(candidate)
            except ToolFailure:
                continue
            if target.rel != "." and os.path.exists(target.path):
                if target.rel not in found:
                    found.append(target.rel)
                break
        if len(found) == MAX_MENTIONS:
            break
    return found
