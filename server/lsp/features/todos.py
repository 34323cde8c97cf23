"""The agent's todo list: `modus/todos/get` (the list, its ANSI box and its HTML)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol import names

from .requests import request

if TYPE_CHECKING:
    from ..server import ModusServer


def register(server: "ModusServer") -> None:
    request(server, names.TODOS_GET, lambda s, p: s.todos_result(p.agent))
