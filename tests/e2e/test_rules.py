"""Rules of every format over the wire (PROTOCOL.md, "Project files of every peer"): each peer's
rule file in `modus/prompt/get`, a conditional rule turning active after a read_file, the shape of
`modus/rules/list`, and `rulesDisabled` (initialization options, then a change of configuration)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from protocol import methods

from .conftest import script
from .editor import Editor

#: A workspace written the way each peer writes its rules: path → text.
FILES = {
    "AGENTS.md": "Rule from AGENTS.",
    "CLAUDE.md": "@AGENTS.md\n",  # Claude Code's import: the same rule, told once
    ".claude/CLAUDE.md": "Rule from Claude.",
    ".clinerules/style.md": "Rule from Cline.",
    ".clinerules/workflows/release.md": "A Cline workflow, which is a command.",
    ".clinerules/python.md": "---\npaths:\n  - 'src/**/*.py'\n---\nRule for Python, from Cline.",
    ".roorules": "Rule from .roorules.",
    ".roo/rules/a.md": "Rule from Roo.",
    ".roo/rules-code/a.md": "Rule from Roo for code mode.",
    ".roo/rules-ask/a.md": "Rule from Roo for ask mode.",
    ".cursorrules": "Rule from .cursorrules.",
    ".cursor/rules/always.mdc": "---\ndescription: x\nalwaysApply: true\n---\nRule from Cursor, always.",
    ".cursor/rules/web.mdc": "---\nglobs: web/**\n---\nRule for the web, from Cursor.",
    ".cursor/rules/manual.mdc": "---\ndescription: only when asked\n---\nRule from Cursor, never applied.",
    ".github/copilot-instructions.md": "Rule from Copilot.",
    ".github/instructions/py.instructions.md": "---\napplyTo: '**/*.py'\n---\nRule for Python, from Copilot.",
    ".modus/rules/a.md": "Rule from Modus.",
    "src/AGENTS.md": "Rule for src, from a nested AGENTS.",
    "src/pkg/a.py": "x = 1\n",
}
ALWAYS = [
    "Rule from AGENTS.", "Rule from Claude.", "Rule from Cline.", "Rule from .roorules.", "Rule from Roo.",
    "Rule from .cursorrules.", "Rule from Cursor, always.", "Rule from Copilot.", "Rule from Modus.", "Rule from Roo for code mode.",
]
CONDITIONAL = ["Rule for src, from a nested AGENTS.", "Rule for Python, from Cline.", "Rule for Python, from Copilot."]


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def positions(text: str, rules: list[str]) -> list[int]:
    return [text.find(r) for r in rules]


async def test_every_format_in_the_prompt_and_a_conditional_rule_after_a_read(workspace: Path, tmp_path: Path):
    write(workspace, FILES)
    write(tmp_path / "config" / "modus", {"rules/mine.md": "Rule of the user's own."})
    read = {"toolCalls": [{"name": "read_file", "arguments": {"path": "src/pkg/a.py"}}]}
    editor = Editor(workspace, tmp_path / "config")
    await editor.start(script(workspace, read, {"text": "Read."}))
    try:
        before = (await editor.request(methods.PROMPT_GET, {}))["text"]
        listed_before = (await editor.request(methods.RULES_LIST, {}))["rules"]
        assert (await editor.chat("read a.py"))["outcome"] == "completed"
        after = (await editor.request(methods.PROMPT_GET, {}))["text"]
        listed_after = (await editor.request(methods.RULES_LIST, {}))["rules"]
        ask = (await editor.request(methods.RULES_LIST, {"agent": "modus", "conversationId": (await editor.request(methods.STATE))["conversationId"]}))
        with pytest.raises(JsonRpcException) as refused:
            await editor.request(methods.RULES_LIST, {"agent": "nobody"})
    finally:
        await editor.stop()

    # before: the user's rule, then the workspace's always rules and the mode's; in that order, each once
    global_rule = str((tmp_path / "config" / "modus" / "rules" / "mine.md").resolve())
    assert f"# Rules from {global_rule}:\nRule of the user's own." in before
    found = positions(before, ["Rule of the user's own.", *ALWAYS])
    assert -1 not in found and found == sorted(found)
    assert before.count("Rule from AGENTS.") == 1 and "@AGENTS.md" not in before
    for absent in [*CONDITIONAL, "Rule for the web", "never applied", "for ask mode", "A Cline workflow", "paths:", "alwaysApply", "applyTo"]:
        assert absent not in before
    # after the read: the rules for src/pkg/a.py, after the others
    found = positions(after, [*ALWAYS, *CONDITIONAL])
    assert -1 not in found and found == sorted(found)
    assert "Rule for the web" not in after

    shape = {r["path"]: {k: v for k, v in r.items() if k != "tokens"} for r in listed_after}
    assert shape[global_rule] == {"path": global_rule, "format": "modus", "scope": "always", "active": True}
    assert shape["CLAUDE.md"] == {"path": "CLAUDE.md", "format": "claude", "scope": "always", "active": False}  # told as AGENTS.md
    assert shape[".roo/rules-ask/a.md"] == {"path": ".roo/rules-ask/a.md", "format": "roo", "scope": "mode", "modes": ["ask"], "active": False}
    assert shape[".cursor/rules/manual.mdc"] == {"path": ".cursor/rules/manual.mdc", "format": "cursor", "scope": "paths", "paths": [], "active": False}
    assert shape["src/AGENTS.md"] == {"path": "src/AGENTS.md", "format": "agents", "scope": "paths", "paths": ["src/**"], "active": True}
    assert shape[".github/instructions/py.instructions.md"]["active"] is True
    assert {r["path"]: r["active"] for r in listed_before}["src/AGENTS.md"] is False
    assert [r["format"] for r in listed_after] == [
        "modus", "agents", "claude", "claude", "cline", "roo", "roo", "cursor", "cursor", "copilot", "modus",
        "roo", "roo", "agents", "cline", "cursor", "cursor", "copilot",
    ]
    assert all(isinstance(r["tokens"], int) and r["tokens"] > 0 for r in listed_after)
    assert ".clinerules/workflows/release.md" not in shape
    assert ask["rules"] == listed_after
    assert refused.value.code == -32602 and refused.value.message == "agent: unknown agent: nobody"


async def test_rules_disabled(workspace: Path, tmp_path: Path):
    write(workspace, {"AGENTS.md": "Rule from AGENTS.", ".roo/rules/a.md": "Rule from Roo.", ".roo/rules/b.md": "Another from Roo."})
    editor = Editor(workspace, tmp_path / "config")
    await editor.start({"rulesDisabled": [".roo/**"]})
    try:
        first = (await editor.request(methods.PROMPT_GET, {}))["text"]
        listed = (await editor.request(methods.RULES_LIST, {}))["rules"]
        editor.client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"modus": {"modeSwitchDelayMs": 0, "rulesDisabled": ["AGENTS.md"]}})
        )
        second = (await editor.request(methods.PROMPT_GET, {}))["text"]  # handled after the notification
    finally:
        await editor.stop()
    assert "Rule from AGENTS." in first and "Rule from Roo." not in first and "Another from Roo." not in first
    assert [(r["path"], r["active"]) for r in listed] == [("AGENTS.md", True), (".roo/rules/a.md", False), (".roo/rules/b.md", False)]
    assert second is not None and "Rule from AGENTS." not in second and "Rule from Roo." in second and "Another from Roo." in second


async def test_the_selection_a_code_action_sends_touches_its_file(workspace: Path, tmp_path: Path):
    write(workspace, {
        ".modus/rules/app.md": "---\npaths: [src/app/**]\n---\nRule for the app.",
        ".modus/rules/lib.md": "---\npaths: [src/lib/**]\n---\nRule for the lib.",
        "src/app/main.py": "def main():\n    pass\n",
        "src/lib/util.py": "def util():\n    pass\n",
    })
    editor = Editor(workspace, tmp_path / "config")
    await editor.start(script(workspace, {"text": "It does nothing."}, {"text": "Planning."}))
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 8}}
    try:
        await editor.command("modus.startInMode", {"mode": "ask", "uri": (workspace / "src/app/main.py").as_uri(), "range": rng, "prompt": "Explain this."})
        await editor.wait_for(lambda: editor.of_kind("turn_ended"))
        explained = (await editor.request(methods.PROMPT_GET, {}))["text"]
        await editor.command("modus.planSelection", {"uri": (workspace / "src/lib/util.py").as_uri(), "range": rng})
        await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
        planned = (await editor.request(methods.PROMPT_GET, {}))["text"]
    finally:
        await editor.stop()
    assert "Rule for the app." in explained and "Rule for the lib." not in explained
    assert "Rule for the app." in planned and "Rule for the lib." in planned
