"""Skills over the wire (PROTOCOL.md, "Project files of every peer"): listed by name and
description in the prompt (never the body), the body and the skill's files through `use_skill`,
a global skill's file read by read_file outside the workspace (and nothing else there), a mode's
`skills`, and `modus/skills/list`."""

from __future__ import annotations

from pathlib import Path

from protocol import methods

from .conftest import script
from .editor import Editor
from .test_rules import write

SKILL = "---\nname: release-notes\ndescription: Write release notes from the git log.\n---\nRead the log, then write NOTES.md."


async def test_a_skill_listed_used_and_its_global_file_read(workspace: Path, tmp_path: Path):
    config = tmp_path / "config"
    write(workspace, {
        ".claude/skills/release-notes/SKILL.md": SKILL,
        ".claude/skills/release-notes/template.md": "# Notes for {version}",
        ".modus/skills/broken/SKILL.md": "---\nname: Broken Name\ndescription: x\n---\nNever listed.",
        ".modus/modes.yaml": "customModes:\n  - slug: plain\n    name: Plain\n    roleDefinition: You read.\n    groups: [read]\n    skills: []\n",
    })
    write(config / "modus", {
        "skills/house-style/SKILL.md": "---\nname: house-style\ndescription: The house's style of writing.\n---\nShort sentences.",
        "skills/house-style/words.txt": "Prefer plain words.",
        "private.txt": "Not a skill's file.",
    })
    words = (config / "modus" / "skills" / "house-style" / "words.txt").resolve()
    editor = Editor(workspace, config)
    await editor.start(script(
        workspace,
        {"toolCalls": [{"name": "use_skill", "arguments": {"name": "house-style"}}]},
        {"toolCalls": [{"name": "read_file", "arguments": {"path": str(words)}}]},
        {"toolCalls": [{"name": "read_file", "arguments": {"path": str((config / "modus" / "private.txt").resolve())}}]},
        {"toolCalls": [{"name": "use_skill", "arguments": {"name": "release-notes"}}]},
        {"text": "Done."},
    ))
    try:
        prompt = (await editor.request(methods.PROMPT_GET, {}))
        plain = (await editor.request(methods.PROMPT_GET, {"mode": "plain"}))
        listed = (await editor.request(methods.SKILLS_LIST, {}))["skills"]
        assert (await editor.chat("write the notes"))["outcome"] == "completed"
        results = [u for u in editor.of_kind("tool_call") if u.get("status") in ("completed", "failed")]
    finally:
        await editor.stop()

    assert "- release-notes: Write release notes from the git log." in prompt["text"]
    assert "- house-style: The house's style of writing." in prompt["text"]
    assert "Read the log, then write NOTES.md." not in prompt["text"] and "Short sentences." not in prompt["text"]
    assert "use_skill" in prompt["tools"]
    assert "SKILLS" not in plain["text"] and "use_skill" not in plain["tools"]  # `skills: []`: none
    assert listed == [
        {"name": "release-notes", "description": "Write release notes from the git log.", "path": ".claude/skills/release-notes/SKILL.md", "source": "workspace"},
        {"name": "house-style", "description": "The house's style of writing.", "path": str((config / "modus" / "skills" / "house-style" / "SKILL.md").resolve()), "source": "global"},
    ]
    used, read, refused, local = results
    assert used["status"] == "completed" and "Short sentences." in used["result"] and f"- {words}" in used["result"]
    assert read["status"] == "completed" and "Prefer plain words." in read["result"]
    assert refused["status"] == "failed" and refused["error"]["type"] == "OutsideWorkspace"
    assert "Read the log, then write NOTES.md." in local["result"] and "- .claude/skills/release-notes/template.md" in local["result"]
