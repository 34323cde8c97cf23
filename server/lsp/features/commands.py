"""Slash commands and skills (prompt/commands.py, prompt/skills.py): `modus/commands/list`
(`modus/chat/send` expands a command) and `modus/skills/list`."""

from __future__ import annotations

from protocol import names

from .requests import Routes


def register(routes: Routes) -> None:
    routes.request(names.COMMANDS_LIST, lambda s, p: s.commands_list())
    routes.request(names.SKILLS_LIST, lambda s, p: s.skills_list())
