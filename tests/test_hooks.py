"""Hooks in Claude Code's shape (server/hooks/): the configuration read and its problems named,
matchers over Modus's and Claude Code's tool names, and a hook run as Claude Code runs one."""

from __future__ import annotations

import json
import time

import pytest

from server.hooks import HookCommand, claude_name, for_event, parse_hooks
from server.hooks.runner import run_hook


def command(text: str, timeout: float = 60) -> dict:
    return {"type": "command", "command": text, "timeout": timeout}


def test_the_configuration_and_what_is_wrong_in_it():
    hooks, problems = parse_hooks({
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [command("check-bash")]},
            {"matcher": "Edit|Write", "hooks": [command("check-edit"), command("check-bash")]},
            {"matcher": "(", "hooks": [command("never")]},
            {"matcher": "*", "hooks": [command("log-all", 5)]},
        ],
        "Stop": [{"hooks": [command("ding")]}],
        "AfterLunch": [{"hooks": [command("nap")]}],
        "PostToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}, {"hooks": [{"type": "prompt", "prompt": "?"}]}],
    }, ".claude/settings.json")
    assert [h.command for h in for_event(hooks, "PreToolUse", "execute_command")] == ["check-bash", "log-all"]
    assert [h.command for h in for_event(hooks, "PreToolUse", "apply_diff")] == ["check-edit", "check-bash", "log-all"]
    assert [h.command for h in for_event(hooks, "PreToolUse", "read_file")] == ["log-all"]
    assert [h.command for h in for_event(hooks, "Stop")] == ["ding"]
    assert for_event(hooks, "PostToolUse", "read_file") == []
    assert for_event(hooks, "PreToolUse", "read_file")[0].timeout == 5
    text = "\n".join(problems)
    assert ".claude/settings.json: hooks.PreToolUse[2].matcher: invalid regular expression '^(?:()$'" in text
    assert "hooks.AfterLunch: unknown event; the events are PreToolUse, PostToolUse" in text
    assert "hooks.PostToolUse[0].hooks[0].timeout: must be a number of seconds above 0" in text
    assert "hooks.PostToolUse[1].hooks[0]: must be {type: command" in text


@pytest.mark.parametrize(
    "matcher, tool, mcp, matches",
    [
        ("Bash", "execute_command", None, True),
        ("execute_command", "execute_command", None, True),
        ("Bas", "execute_command", None, False),  # a whole name
        ("MultiEdit", "search_and_replace", None, True),
        ("Read|Grep", "search_files", None, True),
        ("Glob", "list_files", None, True),
        ("mcp__box__.*", "use_mcp_tool", ("box", "fetch"), True),
        ("mcp__other__.*", "use_mcp_tool", ("box", "fetch"), False),
        ("Write", "read_file", None, False),
    ],
)
def test_a_matcher_takes_modus_s_names_and_claude_code_s(matcher, tool, mcp, matches):
    hooks, problems = parse_hooks({"PreToolUse": [{"matcher": matcher, "hooks": [command("x")]}]}, "here")
    assert problems == [] and bool(for_event(hooks, "PreToolUse", tool, mcp)) is matches


def test_claude_code_s_tool_names():
    assert [claude_name(t) for t in ("execute_command", "write_to_file", "apply_diff", "read_file", "switch_mode")] == [
        "Bash", "Write", "Edit", "Read", "switch_mode",
    ]
    assert claude_name("use_mcp_tool", ("box", "fetch")) == "mcp__box__fetch"


async def test_a_hook_reads_the_event_and_its_exit_decides(tmp_path):
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
    echoed = await run_hook(HookCommand("cat"), payload, tmp_path)
    assert (echoed.outcome, json.loads(echoed.stdout)) == ("ok", payload)
    assert echoed.decision == payload  # a JSON object on stdout is read as a decision
    said = await run_hook(HookCommand("echo Remember the style guide."), {}, tmp_path)
    assert (said.outcome, said.blocks, said.context) == ("ok", False, "Remember the style guide.")
    blocked = await run_hook(HookCommand("echo 'rm is not allowed here' >&2; exit 2"), payload, tmp_path)
    assert (blocked.outcome, blocked.blocks, blocked.reason) == ("blocked", True, "rm is not allowed here")
    failed = await run_hook(HookCommand("echo broken >&2; exit 1"), payload, tmp_path)
    assert (failed.outcome, failed.blocks, failed.exit_code) == ("failed", False, 1)
    where = await run_hook(HookCommand("pwd; echo $CLAUDE_PROJECT_DIR"), {}, tmp_path)
    assert where.stdout.split() == [str(tmp_path), str(tmp_path)]


async def test_a_json_decision_as_claude_code_reads_one(tmp_path):
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "Not on main."}}
    run = await run_hook(HookCommand(f"echo '{json.dumps(deny)}'"), {}, tmp_path)
    assert (run.outcome, run.blocks, run.permission, run.reason) == ("ok", True, "deny", "Not on main.")
    allow = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    run = await run_hook(HookCommand(f"echo '{json.dumps(allow)}'"), {}, tmp_path)
    assert (run.blocks, run.permission) == (False, "allow")
    context = {"hookSpecificOutput": {"additionalContext": "The build is red."}}
    assert (await run_hook(HookCommand(f"echo '{json.dumps(context)}'"), {}, tmp_path)).context == "The build is red."
    stop = {"decision": "block", "reason": "Run the tests first."}
    run = await run_hook(HookCommand(f"echo '{json.dumps(stop)}'"), {}, tmp_path)
    assert (run.blocks, run.reason) == (True, "Run the tests first.")


async def test_a_hook_that_overruns_its_time_is_stopped_with_what_it_started(tmp_path):
    run = await run_hook(HookCommand(f"sleep 30 & echo $! > {tmp_path}/child; sleep 30", timeout=0.3), {}, tmp_path)
    assert run.outcome == "timeout" and not run.blocks
    child = int((tmp_path / "child").read_text())
    for _ in range(50):
        try:
            with open(f"/proc/{child}/stat") as f:
                if f.read().split()[2] == "Z":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.02)
    else:
        pytest.fail("the hook's child outlived it")


# ---------------------------------------------------------------- in the gate


def pre_tool_use(decision: str, matcher: str) -> dict:
    out = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision}})
    return {"PreToolUse": [{"matcher": matcher, "hooks": [command(f"echo '{out}'")]}]}


async def test_a_pre_tool_use_hook_may_allow_without_asking_or_ask_what_is_auto_approved(tmp_path):
    from helpers import call_tool, running
    from memory_host import MemoryHost

    (tmp_path / "a.txt").write_text("a\n")
    host = MemoryHost()
    hooks = {**pre_tool_use("allow", "Write"), **{"PostToolUse": []}}
    hooks["PreToolUse"] += pre_tool_use("ask", "Read")["PreToolUse"]
    async with running(tmp_path, host=host, hooks=hooks) as session:  # reads are auto-approved by default
        written = await call_tool(session, "write_to_file", path="b.txt", content="b")
        read = await call_tool(session, "read_file", path="a.txt")
    assert written.error is None and read.error is None
    assert [a.tool for a in host.approvals] == ["read_file"]  # the write was allowed by the hook; the read asked
    assert (tmp_path / "b.txt").read_text() == "b\n"


async def test_a_plan_decision_tells_its_hooks(tmp_path):
    from helpers import call_tool, running, until
    from memory_host import MemoryHost
    from protocol import ApprovalResponse

    log = tmp_path / "decided.log"
    record = f"python3 -c \"import json,sys; d=json.load(sys.stdin); print(d['decision'], d['feedback'], d['plan']['summary'], file=open('{log}','w'))\""
    host = MemoryHost(approve=lambda r: ApprovalResponse(decision="revise", feedback="Shorter"))
    plan = {"summary": "Greet", "approach": "a", "steps": [{"id": "1", "description": "Write hello.txt", "verification": "v"}]}
    async with running(tmp_path, host=host, hooks={"PlanDecision": [{"hooks": [command(record)]}]}) as session:
        assert (await call_tool(session, "plan_enter", goal="g")).error is None
        assert (await call_tool(session, "plan_exit", plan=plan)).text.startswith("The user wants changes to the plan")
        await until(lambda: host.of_kind("hook"))  # told once the hook has run
    assert log.read_text().split() == ["revise", "Shorter", "Greet"]
    assert [u.event for u in host.of_kind("hook")] == ["PlanDecision"]
