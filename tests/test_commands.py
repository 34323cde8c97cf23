"""Slash commands' prompt files (server/prompt/commands.py): where they are found and which wins,
what is refused, how a typed command is recognised and its body filled in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from server.prompt.commands import MAX_FILE_BYTES, PromptCommand, load_commands


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    "arguments, expected",
    [
        ("a.py speed", "Review a.py for speed (a.py speed); third: ."),
        ("", "Review  for  (); third: ."),
        ("one two three four", "Review one for two (one two three four); third: three."),
    ],
)
def test_the_body_gets_its_arguments(arguments, expected):
    command = PromptCommand("review", "Review $1 for $2 ($ARGUMENTS); third: $3.", ".claude/commands/review.md", "workspace")
    assert command.expand(arguments) == expected


def test_a_command_is_its_name_at_the_start_and_nothing_else_is(tmp_path):
    write(tmp_path, {".claude/commands/review.md": "Review $ARGUMENTS.", ".claude/commands/git/commit.md": "Commit."})
    commands = load_commands(tmp_path)
    found, arguments = commands.typed("/review  src/a.py\nand b.py ")
    assert (found.name, arguments) == ("review", "src/a.py\nand b.py")
    assert commands.typed("/git:commit")[0].name == "git:commit"
    for text in ("/usr/bin is empty", "review /review", "/reviewing", "/git", " /review"):
        assert commands.typed(text) is None


def test_the_first_folder_wins_and_the_user_s_own_come_last(tmp_path):
    root, mine = tmp_path / "ws", tmp_path / "mine"
    write(root, {
        ".modus/commands/a.md": "Modus's a.", ".roo/commands/a.md": "Roo's a.", ".roo/commands/b.md": "Roo's b.",
        ".roo/commands/sub/c.md": "Roo reads no subfolder.", ".claude/commands/b.md": "Claude's b.",
        ".clinerules/workflows/d.md": "Cline's d.", ".claude/commands/notes.txt": "Not a prompt file.",
    })
    write(mine, {"a.md": "The user's a.", "e.md": "The user's e."})
    commands = load_commands(root, mine)
    assert [(c.name, c.body, c.source) for c in commands.found] == [
        ("a", "Modus's a.", "workspace"), ("b", "Roo's b.", "workspace"), ("d", "Cline's d.", "workspace"), ("e", "The user's e.", "global"),
    ]


def test_what_a_repository_may_not_slip_in(tmp_path):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    write(outside, {"secret.md": "A file outside the workspace."})
    write(root, {
        ".claude/commands/big.md": "x" * (MAX_FILE_BYTES + 1),
        ".claude/commands/bad name.md": "A name with a space.",
        ".claude/commands/phased.md": "---\nphase: soon\n---\nA phase that is none.",
        ".claude/commands/ok.md": "---\nphase: plan\nmode: architect\n---\nFine.",
    })
    os.symlink(outside / "secret.md", root / ".claude/commands/leak.md")
    os.mkfifo(root / ".claude/commands/fifo.md")
    commands = load_commands(root)
    assert [(c.name, c.phase, c.mode) for c in commands.found] == [("ok", "plan", "architect")]
    skipped = "\n".join(commands.skipped)
    for name in ("big.md", "bad name.md", "phased.md", "leak.md", "fifo.md"):
        assert f".claude/commands/{name}" in skipped
    assert "phase: must be 'plan' or 'act', got 'soon'" in skipped


def test_a_change_is_seen(tmp_path):
    write(tmp_path, {".claude/commands/a.md": "A."})
    commands = load_commands(tmp_path)
    assert not commands.changed()
    write(tmp_path, {".claude/commands/b.md": "B."})
    assert commands.changed()


def test_the_command_files_together_are_bounded(tmp_path):
    from server.prompt.commands import MAX_TOTAL_BYTES

    size = MAX_FILE_BYTES - 1024
    count = MAX_TOTAL_BYTES // size + 2
    write(tmp_path, {f".claude/commands/c{i:02}.md": "x" * size for i in range(count)})
    commands = load_commands(tmp_path)
    assert len(commands.found) == MAX_TOTAL_BYTES // size
    assert any("the command files together would be larger than 1 MiB" in s for s in commands.skipped)
