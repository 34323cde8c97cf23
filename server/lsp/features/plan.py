"""Plan mode from the editor: approve or reject the plan (sidebar, palette), and plan a change on
a selection (the code action's command)."""

from __future__ import annotations

from protocol import names
from protocol.names import Command

from ...errors import BadRequest
from .code_actions import excerpt, one_argument
from .requests import Routes, validate


def register(routes: Routes) -> None:
    routes.request(names.PLAN_APPROVE, lambda s, p: s.plan_decision("approve", p.feedback))
    routes.request(names.PLAN_REJECT, lambda s, p: s.plan_decision("deny", p.feedback))
    routes.command(Command.PLAN_APPROVE, lambda s, args: _decision(s, args, "approve", Command.PLAN_APPROVE))
    routes.command(Command.PLAN_REJECT, lambda s, args: _decision(s, args, "deny", Command.PLAN_REJECT))

    async def plan_selection(session, args: tuple):
        from protocol import PlanSelectionArgs

        a = validate(PlanSelectionArgs, one_argument(args, Command.PLAN_SELECTION), Command.PLAN_SELECTION)
        quoted = excerpt(routes.server.workspace, session, a.uri, a.range)
        return (await session.plan_selection(quoted, a.goal)).wire()

    routes.command(Command.PLAN_SELECTION, plan_selection)


async def _decision(session, args: tuple, decision: str, name: str):
    if len(args) > 1 or (args and not isinstance(args[0], (dict, str, type(None)))):
        raise BadRequest(f"{name} takes no argument, or one: the feedback ([] or [feedback])")
    feedback = args[0].get("feedback") if args and isinstance(args[0], dict) else (args[0] if args else None)
    return (await session.plan_decision(decision, feedback)).wire()
