"""Benchmark of the project files of every peer (issue 22, item 7): what a workspace with 64 rule
files (every format, some conditional), 20 skills and 50 slash commands adds to a request's
preparation, against the baseline of the same run: the same session on an empty workspace.

A request's preparation, as a turn does it before each model request: `session.stale()` (the
stat calls that find out whether anything must be read again) and `session.task_for(agent, cid)`
(the task, its rules checked against the conversation's touched files). Median of many rounds,
each workspace alternately. Also shown: the first read of everything, and that a changed rule
file makes the next refresh read the rules again and nothing else.

Target: at most 20 ms added per request; exit status 1 when missed.

Usage: python bench/projectfiles.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this tree's server, not an installed copy
sys.path.insert(0, str(HERE.parent / "tests"))  # the in-memory host the tests use

from helpers import make_session  # noqa: E402

from server.prompt.commands import load_commands  # noqa: E402
from server.prompt.rules import load_rules  # noqa: E402
from server.prompt.skills import load_skills  # noqa: E402

TARGET_MS = 20.0
RULE = "Keep functions short; name things for what they do. " * 8


def project(root: Path) -> None:
    """64 rule files of every format (a third conditional), 20 skills, 50 commands."""
    files: dict[str, str] = {"AGENTS.md": RULE, "CLAUDE.md": "@AGENTS.md", ".cursorrules": RULE, ".github/copilot-instructions.md": RULE}
    for i in range(12):
        files[f".roo/rules/{i:02}.md"] = RULE
        files[f".clinerules/{i:02}.md"] = RULE if i % 3 else f"---\npaths: ['src/m{i}/**']\n---\n{RULE}"
        files[f".cursor/rules/{i:02}.mdc"] = f"---\nglobs: src/c{i}/**\n---\n{RULE}" if i % 2 else f"---\nalwaysApply: true\n---\n{RULE}"
        files[f".modus/rules/{i:02}.md"] = RULE
        files[f".github/instructions/{i:02}.instructions.md"] = f"---\napplyTo: 'src/g{i}/**'\n---\n{RULE}"
    for i in range(20):
        files[f".claude/skills/skill-{i:02}/SKILL.md"] = f"---\nname: skill-{i:02}\ndescription: Does task {i}.\n---\nSteps for task {i}."
        files[f".claude/skills/skill-{i:02}/notes.md"] = "Notes."
    for i in range(50):
        folder = ".claude/commands" if i % 2 else ".roo/commands"
        files[f"{folder}/cmd-{i:02}.md"] = f"---\ndescription: Command {i}\n---\nDo $ARGUMENTS for command {i}."
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def rule_files(root: Path) -> int:
    return len(load_rules(root.resolve()).files)


def preparation(session, rounds: int) -> list[float]:
    agent, cid = "modus", session.conversation_id
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        session.stale()
        session.task_for(agent, cid)
        times.append(time.perf_counter() - t0)
    return times


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test of the harness)")
    rounds = 50 if parser.parse_args().quick else 2000
    with tempfile.TemporaryDirectory() as tmp:
        empty, full = Path(tmp) / "empty", Path(tmp) / "full"
        empty.mkdir()
        full.mkdir()
        project(full)
        t0 = time.perf_counter()
        root = full.resolve()
        load_rules(root), load_commands(root), load_skills(root)
        first_read = time.perf_counter() - t0
        sessions = {name: make_session(path) for name, path in (("empty", empty), ("full", full))}
        try:
            for session in sessions.values():
                await session.refresh()
            config = sessions["full"].config
            counts = (len(config.rules.files), len(config.skills.found), len(config.commands.found))
            base, ours = [], []
            for _ in range(5):  # alternately, so that the machine's state weighs on both alike
                base += preparation(sessions["empty"], rounds // 5)
                ours += preparation(sessions["full"], rounds // 5)
            commands, skills = config.commands, config.skills
            changed = full / ".roo" / "rules" / "00.md"
            changed.write_text(RULE + "One more line.\n", encoding="utf-8")
            os.utime(changed, (time.time() + 5, time.time() + 5))
            t0 = time.perf_counter()
            await sessions["full"].refresh()
            reread = time.perf_counter() - t0
            only_rules = config.commands is commands and config.skills is skills
        finally:
            for session in sessions.values():
                session.close()
    b, o = statistics.median(base) * 1000, statistics.median(ours) * 1000
    added = o - b
    passed = added <= TARGET_MS
    print(f"project files of every peer: {counts[0]} rule files, {counts[1]} skills, {counts[2]} commands; median of {rounds} requests each")
    print("| measure | empty workspace | with the files | added | target |")
    print("|---|---:|---:|---:|---|")
    print(f"| a request's preparation (stale check + task) | {b:.3f} ms | {o:.3f} ms | {added:+.3f} ms | ≤ {TARGET_MS:g} ms {'ok' if passed else 'MISSED'} |")
    print(f"| the first read of every file (rules, skills, commands) | | {first_read * 1000:.1f} ms | | |")
    print(f"| a rule file changed: the next refresh | | {reread * 1000:.1f} ms | | reads the rules only: {'yes' if only_rules else 'NO'} |")
    return 0 if passed and only_rules else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
