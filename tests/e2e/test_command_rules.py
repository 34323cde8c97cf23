"""A mode's command rules over the wire: a mode of the workspace's .modus/modes.yaml allows some
commands and denies others; what it refuses fails with ToolNotAllowed before any approval."""

from __future__ import annotations

from pathlib import Path

from protocol import methods

from .conftest import script

MODES = """customModes:
  - slug: review
    name: Review
    roleDefinition: You review the work and run the checks.
    groups:
      - read
      - [command, {allow: ["touch checked*", "echo *"], deny: ["rm -rf *"]}]
"""


def run(command: str) -> dict:
    return {"toolCalls": [{"name": "execute_command", "arguments": {"command": command}}]}


async def test_a_mode_runs_the_commands_it_allows_and_refuses_the_others_before_any_approval(editor, workspace: Path):
    (workspace / ".modus").mkdir()
    (workspace / ".modus" / "modes.yaml").write_text(MODES)
    (workspace / "build").mkdir()
    turns = [
        run("touch checked.txt"),  # allowed: asks, then runs
        run("rm -rf build"),  # denied
        run("echo start && rm -rf build"),  # the second part is denied: the whole line is refused
        run("echo start; touch other.txt"),  # the second part is not allowed
        {"text": "Done."},
    ]
    await editor.start({**script(workspace, *turns), "maxConsecutiveMistakes": 5})  # three refusals in a row
    await editor.request(methods.MODES_SWITCH, {"slug": "review"})
    ended = await editor.chat("run the checks")

    assert ended["outcome"] == "completed"
    done = [u for u in editor.of_kind("tool_call") if u["status"] in ("completed", "failed")]
    assert [(u["params"]["command"], u["status"]) for u in done] == [
        ("touch checked.txt", "completed"),
        ("rm -rf build", "failed"),
        ("echo start && rm -rf build", "failed"),
        ("echo start; touch other.txt", "failed"),
    ]
    assert [(u["error"]["type"], u["error"]["message"]) for u in done[1:]] == [
        ("ToolNotAllowed", "Command refused by mode 'review': 'rm -rf build' matches deny rule 'rm -rf *'."),
        ("ToolNotAllowed", "Command refused by mode 'review': 'rm -rf build' matches deny rule 'rm -rf *'."),
        (
            "ToolNotAllowed",
            "Command refused by mode 'review': 'touch other.txt' matches none of the allowed commands: 'touch checked*', 'echo *'.",
        ),
    ]
    # only the allowed command asked; the refused ones never reached the user
    assert [(a["tool"], a["params"]["command"]) for a in editor.approvals] == [("execute_command", "touch checked.txt")]
    assert (workspace / "checked.txt").exists()
    assert (workspace / "build").is_dir() and not (workspace / "other.txt").exists()


async def test_a_built_in_mode_has_no_rules(editor, workspace: Path):
    (workspace / "build").mkdir()
    await editor.start(script(workspace, run("rm -rf build; f() { :; }"), {"text": "Done."}))
    ended = await editor.chat("clean up")
    assert ended["outcome"] == "completed"
    assert [a["params"]["command"] for a in editor.approvals] == ["rm -rf build; f() { :; }"]
    assert not (workspace / "build").exists()


GUARDED = """customModes:
  - slug: guarded
    name: Guarded
    roleDefinition: You run the checks.
    groups:
      - read
      - [command, {allow: ["echo *", "env *"], deny: ["rm *"]}]
"""


async def test_shell_split_a_command_hidden_from_the_checker_is_refused_not_auto_approved(editor, workspace: Path):
    """A no-break space before `#` is a word's character to /bin/sh, not a blank, so no comment
    starts there; env -S splits its string by rules of its own. Both once ran `rm x` in a mode
    that denies `rm *`, auto-approved or asked. (`env *` lets env's command reach the checker.)"""
    (workspace / ".modus").mkdir()
    (workspace / ".modus" / "modes.yaml").write_text(GUARDED)
    (workspace / "x").write_text("keep me\n")
    turns = [run("\xa0#; rm x"), run("env -S'rm x'"), run("env -u X echo checked"), {"text": "Done."}]
    auto = {"autoApprove": {"modes": {"guarded": {"command": ["echo *", "env *"]}}}}
    await editor.start({**script(workspace, *turns), **auto, "maxConsecutiveMistakes": 5})
    await editor.request(methods.MODES_SWITCH, {"slug": "guarded"})
    ended = await editor.chat("run the checks")

    assert ended["outcome"] == "completed"
    assert (workspace / "x").read_text() == "keep me\n"
    done = [u for u in editor.of_kind("tool_call") if u["status"] in ("completed", "failed")]
    assert [(u["params"]["command"], u["status"]) for u in done] == [
        ("\xa0#; rm x", "failed"),
        ("env -S'rm x'", "failed"),
        ("env -u X echo checked", "completed"),
    ]
    assert [(u["error"]["type"], u["error"]["message"]) for u in done[:2]] == [
        ("ToolNotAllowed", "Command refused by mode 'guarded': 'rm x' matches deny rule 'rm *'."),
        (
            "ToolNotAllowed",
            "Command refused by mode 'guarded': cannot check the command line (env -S splits its string by rules of "
            "its own, which the checker does not read); only commands that can be checked may run.",
        ),
    ]
    assert done[2]["result"].endswith("checked")
    assert editor.approvals == []  # the refused lines asked nothing; the covered one was auto-approved
