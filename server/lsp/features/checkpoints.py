"""Checkpoints: list them, compare one with now, restore files, conversation or both."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol import names

from .requests import request

if TYPE_CHECKING:
    from ..server import ModusServer


def register(server: "ModusServer") -> None:
    request(server, names.CHECKPOINTS_LIST, lambda s, p: s.checkpoints.list(p.conversation_id))
    request(server, names.CHECKPOINTS_DIFF, lambda s, p: s.checkpoints.diff(p.id))
    request(server, names.CHECKPOINTS_RESTORE, lambda s, p: s.restore_checkpoint(p.id, p.restore))
