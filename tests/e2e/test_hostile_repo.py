"""A cloned repository with traps in it, opened by the real server: it starts, answers, says
what it did not read and why, and loads everything else."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from protocol import methods
from pygls.uris import from_fs_path

from .editor import Editor


def bomb() -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 12)]
    return "\n".join(lines) + "\ncustomModes: [{slug: x, name: X, roleDefinition: [*l11], groups: []}]\n"


async def test_traps_in_mode_and_rule_files(workspace: Path, tmp_path: Path):
    os.mkfifo(workspace / ".roomodes")
    (workspace / ".modus" / "rules").mkdir(parents=True)
    (workspace / ".modus" / "modes.yaml").write_text(bomb())
    (workspace / "AGENTS.md").symlink_to("/dev/zero")
    os.mkfifo(workspace / ".modus" / "rules" / "wait.md")
    (workspace / ".modus" / "rules" / "ok.md").write_text("Be brief.\n")
    config = tmp_path / "config"
    (config / "modus").mkdir(parents=True)
    (config / "modus" / "modes.yaml").write_text("customModes:\n  - {slug: mine, name: Mine, roleDefinition: r, groups: [read]}\n")
    editor = Editor(workspace, config)
    await editor.start()
    try:
        async with asyncio.timeout(15):
            listed = await editor.request(methods.MODES_LIST)
            prompt = await editor.request(methods.PROMPT_GET, {})
        assert "mine" in [m["slug"] for m in listed["modes"]]
        assert "# Rules from .modus/rules/ok.md:\nBe brief." in prompt["text"]
        diagnostics = await editor.wait_for(
            lambda: len(editor.client.diagnostics) == 2 and editor.client.diagnostics
        )
        fifo = diagnostics[from_fs_path(str(workspace / ".roomodes"))][0].message
        aliases = diagnostics[from_fs_path(str(workspace / ".modus" / "modes.yaml"))][0].message
        assert fifo == "Modes file not read: it is a FIFO, not a regular file"
        assert aliases == "Modes file not read: its YAML aliases add more than 100,000 nodes"
        [shown] = [m.message for m in editor.client.messages if "Rule files" in m.message]
        assert "AGENTS.md: it leads outside the workspace (to /dev/zero)" in shown
        assert ".modus/rules/wait.md: it is a FIFO, not a regular file" in shown
    finally:
        await editor.stop()
