"""Checkpoints: list them, compare one with now, restore files, conversation or both."""

from __future__ import annotations

from protocol import names

from .requests import Routes


def register(routes: Routes) -> None:
    routes.request(names.CHECKPOINTS_LIST, lambda s, p: s.checkpoints.list(p.conversation_id))
    routes.request(names.CHECKPOINTS_DIFF, lambda s, p: s.checkpoints.diff(p.id))
    routes.request(names.CHECKPOINTS_RESTORE, lambda s, p: s.restore_checkpoint(p.id, p.restore))
