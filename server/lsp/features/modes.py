"""Modes and the phase: list and switch (the user's own switch: no approval), PLAN ⇄ ACT; and a
model's settings tried before they are saved (`modus/models/check`, the chat's set-up)."""

from __future__ import annotations

from protocol import names
from protocol.names import Command

from ...errors import BadRequest
from .requests import Routes


def register(routes: Routes) -> None:
    routes.request(names.MODES_LIST, lambda s, p: s.list_modes())
    routes.request(names.MODES_SWITCH, lambda s, p: _switch(s, p.slug))
    routes.request(names.PHASE_SET, lambda s, p: s.user_set_phase(p.phase))
    routes.request(names.MODELS_CHECK, _check_model)
    routes.command(Command.SWITCH_MODE, _switch_command)
    routes.command(Command.SET_PHASE, _set_phase_command)
    routes.command(Command.TOGGLE_PHASE, _toggle_phase_command)


async def _check_model(session, params):
    import protocol
    from ...providers import check_model

    ok, message, models = await check_model(params.model, session.workspace.root)
    return protocol.ModelCheckResult(ok=ok, message=message, models=models)


def _switch(session, slug: str):
    session.switch_mode(slug, by="user")
    return session.state()


def _switch_command(session, args: tuple):
    if len(args) != 1 or not isinstance(args[0], str):
        raise BadRequest(f"{Command.SWITCH_MODE} takes one argument, a mode slug: [slug]")
    return _switch(session, args[0]).wire()


async def _set_phase_command(session, args: tuple):
    if len(args) != 1 or args[0] not in ("plan", "act"):
        raise BadRequest(f'{Command.SET_PHASE} takes one argument, the phase: ["plan"] or ["act"]')
    return (await session.user_set_phase(args[0])).wire()


async def _toggle_phase_command(session, args: tuple):
    if args:
        raise BadRequest(f"{Command.TOGGLE_PHASE} takes no arguments: []")
    return (await session.user_set_phase("act" if session.phase == "plan" else "plan")).wire()
