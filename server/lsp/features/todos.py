"""The agent's todo list: `modus/todos/get` (the list, its ANSI box and its HTML)."""

from __future__ import annotations

from protocol import names

from .requests import Routes


def register(routes: Routes) -> None:
    routes.request(names.TODOS_GET, lambda s, p: s.todos_result(p.agent))
