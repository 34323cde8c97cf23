"""Skills' folders (server/prompt/skills.py): which are read and which win, what is refused."""

from __future__ import annotations

import os
from pathlib import Path

from server.prompt.skills import load_skills


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def skill(name: str, description: str = "Does a thing.", body: str = "Do it.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def test_the_workspace_s_come_first_then_the_user_s(tmp_path):
    root, mine = tmp_path / "ws", tmp_path / "mine"
    write(root, {
        ".modus/skills/a/SKILL.md": skill("a", body="Modus's a."), ".claude/skills/a/SKILL.md": skill("a", body="Claude's a."),
        ".claude/skills/b/SKILL.md": skill("b"), ".claude/skills/b/ref/notes.md": "Notes.",
    })
    write(mine, {"a/SKILL.md": skill("a", body="The user's a."), "c/SKILL.md": skill("c")})
    skills = load_skills(root, (mine, tmp_path / "nowhere"))
    assert [(s.name, s.source) for s in skills.found] == [("a", "workspace"), ("b", "workspace"), ("c", "global")]
    assert skills.get("a").body == "Modus's a."
    assert skills.get("b").files == ((root / ".claude/skills/b/ref/notes.md").resolve(),)
    assert skills.owner(root / ".claude/skills/b/ref/notes.md") is skills.get("b")
    assert skills.owner(root / ".claude/skills/b/SKILL.md") is None  # the body comes through use_skill
    assert [s.name for s in skills.for_mode(("c",))] == ["c"] and skills.for_mode(None) == skills.found


def test_what_is_left_out_and_why(tmp_path):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    write(outside, {"SKILL.md": skill("leak")})
    write(root, {
        ".claude/skills/no-description/SKILL.md": "---\nname: no-description\n---\nBody.",
        ".claude/skills/Bad/SKILL.md": skill("Bad Name"),
        ".claude/skills/named-by-folder/SKILL.md": "---\ndescription: Its folder names it.\n---\nBody.",
    })
    (root / ".claude/skills/linked").mkdir()
    os.symlink(outside / "SKILL.md", root / ".claude/skills/linked/SKILL.md")
    skills = load_skills(root)
    assert [s.name for s in skills.found] == ["named-by-folder"]
    skipped = "\n".join(skills.skipped)
    assert "no-description/SKILL.md: description: a skill needs one" in skipped
    assert "Bad/SKILL.md: name: 'Bad Name' must be 1 to 64 lowercase letters" in skipped
    assert "linked/SKILL.md" in skipped


async def test_the_gate_keeps_a_mode_to_its_skills(tmp_path):
    from helpers import running
    from server.providers import ToolCallRequest
    from server.tools import TOOLS, ToolContext, run_tool

    write(tmp_path, {
        ".claude/skills/a/SKILL.md": skill("a", body="A's steps."), ".claude/skills/b/SKILL.md": skill("b"),
        ".modus/modes.yaml": "customModes:\n  - slug: only-a\n    name: Only A\n    roleDefinition: You read.\n    groups: [read]\n    skills: [a]\n",
    })
    async with running(tmp_path) as session:
        session.switch_mode("only-a", by="user")

        async def use(name: str):  # the tool's parameter is `name`, as call_tool's own: the call made here
            ctx = ToolContext(session.ports, session.task_for("modus"), "modus", session.conversation_id, "turn", "call")
            return await run_tool(ctx, ToolCallRequest("call", "use_skill", {"name": name}), TOOLS)

        used, refused, unknown = await use("a"), await use("b"), await use("nosuch")
    assert used.error is None and "A's steps." in used.text
    assert (refused.error.type, refused.text) == ("ToolNotAllowed", "No skill named 'b' in Only A mode. Its skills: a.")
    assert unknown.error.type == "ToolNotAllowed" and unknown.text.startswith("No skill named 'nosuch'")


def test_the_skills_together_are_bounded(tmp_path):
    from server.prompt.skills import MAX_SKILL_BYTES, MAX_TOTAL_BYTES

    body = "x" * (MAX_SKILL_BYTES - 1024)
    count = MAX_TOTAL_BYTES // len(body) + 2
    write(tmp_path, {f".claude/skills/s{i:02}/SKILL.md": skill(f"s{i:02}", body=body) for i in range(count)})
    skills = load_skills(tmp_path)
    assert 0 < len(skills.found) < count
    assert any("the skills together would be larger than 1 MiB" in s for s in skills.skipped)
