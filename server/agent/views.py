"""What the requests read: the state a client shows, the agents and the modes as listed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import protocol
from protocol import ModeRef, State

from ..modes import Mode
from ..plan import machine as plan_machine
from ..prompt.commands import PromptCommand
from ..prompt.skills import Skill
from .configuration import Configuration

if TYPE_CHECKING:
    from .session import Session


def state(session: Session) -> State:
    """The current conversation as its responder sees it: mode, phase, task, plan, usage, context."""
    from ..providers.catalog import context_info

    cid = session.conversation_id
    agent = session.responder(cid)
    task = session.task_for(agent)
    history = session.histories.get(cid, agent)
    return State(
        mode=ModeRef(slug=task.mode.slug, name=task.mode.name),
        phase=task.phase,
        conversation_id=cid,
        yolo=session.settings.yolo,
        task=task.info(),
        plan=plan_machine.plan_info(*session.store.current_plan(task.agent)),
        usage=session.usage_book.total(cid),
        context=context_info(task.model_config, session.settings.condense_threshold, history.used),
        space=session.space.info,
    )


def agents(config: Configuration, mode_of: Callable[[str], Mode], humans: Sequence[Any]) -> protocol.AgentsListResult:
    """The agents in configuration order (the order prefixes are matched in) and the members
    (`humans`: the configured ones, then the team space's)."""
    return protocol.AgentsListResult(
        agents=[
            protocol.AgentInfo(
                name=a.name,
                top_level=a.top_level,
                mode=mode_of(a.name).slug,
                source=config.agent_source(a.name),
                model=(a.model.model or a.model.provider) if a.model else None,
                instructions=a.instructions,
            )
            for a in config.agents
        ],
        members=[protocol.MemberInfo(handle=m.handle, name=m.name) for m in humans],
    )


def modes(modes: Sequence[Mode], current: str) -> protocol.ModesListResult:
    return protocol.ModesListResult(
        current=current,
        modes=[
            protocol.ModeInfo(
                slug=m.slug,
                name=m.name,
                description=m.description,
                when_to_use=m.when_to_use,
                source=m.source,
                groups=[g.entry() for g in m.groups],
            )
            for m in modes
        ],
    )


def commands(found: Sequence[PromptCommand]) -> protocol.CommandsListResult:
    """Modus's own slash commands, then those of the workspace and the user's, each once (the
    first of its name: a prompt file named like one of Modus's is not reached)."""
    from .own_commands import NAMES, listed

    return protocol.CommandsListResult(
        commands=[
            *listed(),
            *(
                protocol.CommandInfo(
                    name=c.name, description=c.description, argument_hint=c.argument_hint, mode=c.mode, phase=c.phase,
                    source=c.source, path=c.path,
                )
                for c in found
                if c.name not in NAMES
            ),
        ]
    )


def skills(found: Sequence[Skill]) -> protocol.SkillsListResult:
    """The skills of the workspace and the user's, each once (the first of its name)."""
    return protocol.SkillsListResult(skills=[protocol.SkillInfo(name=s.name, description=s.description, path=s.path, source=s.source) for s in found])
