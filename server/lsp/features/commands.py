"""Slash commands (prompt/commands.py): `modus/commands/list`; `modus/chat/send` expands them."""

from __future__ import annotations

from protocol import names

from .requests import Routes


def register(routes: Routes) -> None:
    routes.request(names.COMMANDS_LIST, lambda s, p: s.commands_list())
