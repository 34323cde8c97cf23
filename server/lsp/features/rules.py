"""The rules of every format (prompt/rules.py): `modus/rules/list` (each file, its scope, whether
the prompt has it now, its tokens)."""

from __future__ import annotations

from protocol import names

from .requests import Routes


def register(routes: Routes) -> None:
    routes.request(names.RULES_LIST, lambda s, p: s.rules_list(p))
