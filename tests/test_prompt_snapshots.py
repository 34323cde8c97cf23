"""Prompt snapshots: for each built-in mode × phase × yolo, the system prompt a real task gets and
the environment_details of its user messages, compared exactly with tests/snapshots/prompts/;
and one of an agent among others (code, ACT), with its SUMMONS block and the hand-off tools.

After a deliberate change, regenerate them with `make snapshots` and read the diff.
"""

from __future__ import annotations

import dataclasses
import difflib
from datetime import datetime, timezone
from pathlib import Path

import pytest

from helpers import make_session
from server.modes import BUILTIN_MODES, Mode
from server.prompt import build_prompt, environment_details

SNAPSHOTS = Path(__file__).parent / "snapshots" / "prompts"
REGENERATE = "make snapshots"
#: What would otherwise depend on the machine and the moment.
WORKSPACE = Path("/workspace")
NOW = datetime(2025, 1, 1, 12, 0, tzinfo=timezone.utc)
PINNED = {"workspace": WORKSPACE, "os_name": "Linux", "shell": "/bin/sh"}
SEPARATOR = "\n\n~~~~~~~~ environment_details, appended to each user message ~~~~~~~~\n\n"

CASES = [(mode, phase, yolo, False) for mode in BUILTIN_MODES for phase in ("plan", "act") for yolo in (False, True)]
CASES.append((BUILTIN_MODES[0], "act", False, True))
#: The conversation of the agents case: the snapshot is coder's prompt.
AGENTS = {
    "agents": [{"name": "architect"}, {"name": "coder", "topLevel": False}, {"name": "code-reviewer", "topLevel": False}],
    "members": [{"handle": "sam", "name": "Sam Jones"}],
}


def snapshot_name(mode: Mode, phase: str, yolo: bool, agents: bool) -> str:
    return f"{mode.slug}-{phase}{'-yolo' if yolo else ''}{'-agents' if agents else ''}.md"


def render(root: Path, mode: Mode, phase: str, yolo: bool, agents: bool) -> str:
    """The snapshot text, built the way a session builds a task's prompt (on an empty workspace)."""
    session = make_session(root, yolo=yolo, **(AGENTS if agents else {}))
    try:
        agent = "coder" if agents else "modus"
        context = dataclasses.replace(session.switcher.prompt_context(mode, phase, agent), **PINNED)
    finally:
        session.close()
    return build_prompt(context).text + SEPARATOR + environment_details(mode, phase, WORKSPACE, NOW) + "\n"


@pytest.mark.parametrize("mode, phase, yolo, agents", CASES, ids=[snapshot_name(*case)[:-3] for case in CASES])
def test_the_prompt_matches_its_snapshot(tmp_path, request, mode, phase, yolo, agents):
    compare(request, SNAPSHOTS / snapshot_name(mode, phase, yolo, agents), render(tmp_path, mode, phase, yolo, agents))


CODE = BUILTIN_MODES[0]
#: The MCP case: code, ACT, with a connected server (two tools, a resource) and one the user refused.
MCP_SNAPSHOT = "code-act-mcp.md"


def test_the_prompt_with_mcp_servers_matches_its_snapshot(tmp_path, request):
    from server.mcp import McpServerView, McpToolView

    schema = {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}
    servers = (
        McpServerView(
            "docs",
            "connected",
            None,
            (McpToolView("search", "Search the documentation.", schema, "mcp__docs__search"), McpToolView("version", "", {"type": "object"}, "mcp__docs__version")),
            (("docs://index", "index"), ("docs://changelog", None)),
        ),
        McpServerView("repo", "disabled", "Not started: the user did not allow it (/workspace/.modus/mcp.json).", (), ()),
    )
    session = make_session(tmp_path)
    try:
        context = dataclasses.replace(session.switcher.prompt_context(CODE, "act", "modus"), mcp=servers, **PINNED)
    finally:
        session.close()
    compare(request, SNAPSHOTS / MCP_SNAPSHOT, build_prompt(context).text + "\n")


def compare(request, path: Path, actual: str) -> None:
    if request.config.getoption("--update-snapshots"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8") if path.exists() else ""
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True), str(path), "the prompt now"
        )
        hint = f"If the change is meant, regenerate the snapshots with `{REGENERATE}`."
        pytest.fail(f"{path.name} differs from the prompt:\n{''.join(diff)}\n{hint}", pytrace=False)


def test_there_is_one_snapshot_per_case(request):
    expected = {snapshot_name(*case) for case in CASES} | {MCP_SNAPSHOT}
    stray = {p.name for p in SNAPSHOTS.glob("*.md")} - expected
    if request.config.getoption("--update-snapshots"):
        for name in stray:
            (SNAPSHOTS / name).unlink()
        return
    assert not stray, f"snapshots of no case: {sorted(stray)}; `{REGENERATE}` removes them"
    assert len(expected) == 22


def sections(root: Path, mode: Mode, phase: str, yolo: bool) -> list[str]:
    """[system prompt, environment_details]"""
    return render(root, mode, phase, yolo, False).split(SEPARATOR)


@pytest.mark.parametrize("phase", ["plan", "act"])
def test_clarifying_questions_are_invited_unless_yolo(tmp_path, phase):
    asked, _ = sections(tmp_path / "asked", CODE, phase, yolo=False)
    yolo, _ = sections(tmp_path / "yolo", CODE, phase, yolo=True)
    assert "ask a clarifying question with ask_followup_question" in asked
    assert "ask_followup_question" not in yolo  # neither the sentence nor the tool
    assert "plan_mode_respond moves to ACT MODE by itself" in yolo
    assert "by itself" not in asked and "they switch to ACT MODE" in asked


def test_act_vs_plan_names_the_current_phase(tmp_path):
    plan, _ = sections(tmp_path / "plan", CODE, "plan", yolo=False)
    act, _ = sections(tmp_path / "act", CODE, "act", yolo=False)
    assert "You are in PLAN MODE now." in plan and "You are in ACT MODE now." in act


def test_environment_details_in_plan_carry_the_plan_instructions_then_end_with_mode_and_phase():
    plan = environment_details(CODE, "plan", WORKSPACE, NOW)
    act = environment_details(CODE, "act", WORKSPACE, NOW)
    ending = "# Current Mode\n<slug>code</slug>\n<name>Code</name>\n\n# Current Phase\n{}\n</environment_details>"
    assert plan.endswith(ending.format("PLAN MODE")) and act.endswith(ending.format("ACT MODE"))
    assert "plan_mode_respond" in plan and plan.index("plan_mode_respond") < plan.index("# Current Mode")
    assert "plan_mode_respond" not in act


def test_system_information_tells_the_context_values(tmp_path):
    prompt, _ = sections(tmp_path, CODE, "act", yolo=False)
    assert "Operating System: Linux\nDefault Shell: /bin/sh\nWorkspace Directory: /workspace" in prompt
