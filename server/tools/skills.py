"""use_skill (group read): a skill's instructions, and the files of its folder, which read_file
may then read (a global skill's lie outside the workspace: gate.py lets read_file reach them).
The prompt lists the skills by name and description only (prompt/__init__.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..modes import SKILL_TOOL
from .base import Params, Prepared, ToolContext, ToolSpec
from .flow import Required

if TYPE_CHECKING:
    from ..workspace import WorkspacePath


class UseSkillParams(Params):
    name: Required


async def _use_skill(ctx: ToolContext, p: UseSkillParams, paths: list[WorkspacePath]) -> Prepared:
    skill = ctx.ports.config.skills.get(p.name.strip())  # one the mode may use: the gate checked it
    assert skill is not None

    async def run() -> str:
        text = f"Skill {skill.name} ({skill.path}):\n\n{skill.body}"
        if skill.files:
            shown = [entry.rel if (entry := ctx.workspace.entry(f)) else str(f) for f in skill.files]
            text += "\n\nIts files (read one with read_file when the skill says so):\n" + "\n".join(f"- {f}" for f in shown)
        return text

    return Prepared(run, f"Use the skill {skill.name}?", skill.description)


TOOLS = (
    ToolSpec(
        SKILL_TOOL,
        "Open a skill listed under SKILLS (`name`: its name): its instructions, and the paths of its "
        "files, which read_file can read.",
        UseSkillParams,
        _use_skill,
        group="read",
        approval="read",
    ),
)
