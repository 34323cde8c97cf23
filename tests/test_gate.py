"""The tool gate as a table: one row per case, mode → tool → params → outcome (SPEC §1)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import anyio
import pytest

from helpers import call_tool, running
from memory_host import MemoryHost
from protocol import ApprovalResponse
from server.providers import ToolCallRequest
from server.tools import STAGES, TOOLS, Prepared, ToolContext, ToolSpec, run_tool

ARCHITECT_MD = (
    "Tool '{tool}' in mode 'Architect' can only edit files matching pattern: \\.md$ (Markdown files only). Got: {path}"
)
CUSTOM = """customModes:
  - slug: docs
    name: Docs Only
    roleDefinition: You write docs.
    groups:
      - read
      - [edit, {fileRegex: "^docs/"}]
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "src" / "app.py").write_text("print('app')\n")
    (root / "docs" / "readme.md").write_text("# Readme\n")
    (root / ".modus").mkdir()
    (root / ".modus" / "modes.yaml").write_text(CUSTOM)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    os.symlink(root / "src" / "app.py", root / "docs" / "alias.md")  # a .md name for a .py file
    os.symlink(outside, root / "docs" / "elsewhere")  # a folder that leads out
    os.symlink(outside / "secret.md", root / "notes.md")
    return root


def diff(path: str) -> dict:
    return {"path": path, "diff": "<<<<<<< SEARCH\nprint('app')\n=======\nprint('changed')\n>>>>>>> REPLACE"}


# mode, tool, params, expected error type (None: success), expected message (exact, or a fragment after "~")
CASES = [
    # the file rules of architect, and every way around them
    ("architect", "write_to_file", {"path": "docs/design.md", "content": "# D"}, None, None),
    ("architect", "write_to_file", {"path": "src/app.py", "content": "x"}, "FileRestrictionError", ARCHITECT_MD.format(tool="write_to_file", path="src/app.py")),
    ("architect", "write_to_file", {"path": "docs/../src/app.py", "content": "x"}, "FileRestrictionError", ARCHITECT_MD.format(tool="write_to_file", path="src/app.py")),
    ("architect", "write_to_file", {"path": "./x.md/../y.py", "content": "x"}, "FileRestrictionError", ARCHITECT_MD.format(tool="write_to_file", path="y.py")),
    ("architect", "write_to_file", {"path": "{root}/src/app.py", "content": "x"}, "FileRestrictionError", ARCHITECT_MD.format(tool="write_to_file", path="src/app.py")),
    ("architect", "write_to_file", {"path": "docs/alias.md", "content": "x"}, "FileRestrictionError", ARCHITECT_MD.format(tool="write_to_file", path="src/app.py")),
    ("architect", "apply_diff", diff("src/app.py"), "FileRestrictionError", ARCHITECT_MD.format(tool="apply_diff", path="src/app.py")),
    ("architect", "insert_content", {"path": "src/app.py", "line": 0, "content": "x"}, "FileRestrictionError", ARCHITECT_MD.format(tool="insert_content", path="src/app.py")),
    ("architect", "search_and_replace", {"path": "src/app.py", "search": "app", "replace": "x"}, "FileRestrictionError", ARCHITECT_MD.format(tool="search_and_replace", path="src/app.py")),
    ("architect", "read_file", {"path": "src/app.py"}, None, None),  # the rule is for edits only
    # a custom mode's rule without a description: no parentheses
    ("docs", "write_to_file", {"path": "README.md", "content": "x"}, "FileRestrictionError", "Tool 'write_to_file' in mode 'Docs Only' can only edit files matching pattern: ^docs/. Got: README.md"),
    ("docs", "write_to_file", {"path": "docs/guide.txt", "content": "x"}, None, None),
    # outside the workspace: refused in every mode, for reads and writes
    ("code", "read_file", {"path": "../outside/secret.md"}, "OutsideWorkspace", "~outside the workspace"),
    ("code", "read_file", {"path": "/etc/hostname"}, "OutsideWorkspace", "~outside the workspace"),
    ("code", "read_file", {"path": "notes.md"}, "OutsideWorkspace", "~outside the workspace"),
    ("code", "read_file", {"path": "docs/elsewhere/secret.md"}, "OutsideWorkspace", "~outside the workspace"),
    ("architect", "write_to_file", {"path": "notes.md", "content": "x"}, "OutsideWorkspace", "~outside the workspace"),
    ("code", "write_to_file", {"path": "../escape.py", "content": "x"}, "OutsideWorkspace", "~outside the workspace"),
    ("code", "list_files", {"path": "docs/elsewhere"}, "OutsideWorkspace", "~outside the workspace"),
    ("code", "execute_command", {"command": "true", "cwd": ".."}, "OutsideWorkspace", "~outside the workspace"),
    # Modus's own state and a repository's internals: never edited by a tool, whatever the approvals
    ("code", "write_to_file", {"path": ".modus/state/modus.sqlite3", "content": "x"}, "ProtectedPath", "Access to '.modus/state/modus.sqlite3' is denied: it is Modus's own state (.modus/state/); the tools do not edit it."),
    ("code", "insert_content", {"path": "src/../.modus/state/x", "line": 0, "content": "x"}, "ProtectedPath", "~it is Modus's own state (.modus/state/)"),
    ("code", "write_to_file", {"path": ".git/config", "content": "[core]\n\tfsmonitor = ./evil\n"}, "ProtectedPath", "~the inside of a git repository (its config, its hooks) decides what git runs"),
    ("code", "write_to_file", {"path": "vendor/lib/.git/hooks/pre-commit", "content": "x"}, "ProtectedPath", "~the inside of a git repository"),
    ("code", "write_to_file", {"path": ".Git/config", "content": "x"}, "ProtectedPath", "~the inside of a git repository"),  # one file on macOS
    ("code", "write_to_file", {"path": ".modus/settings.json", "content": "{{}}"}, None, None),  # the settings: their trust decides
    # tool groups
    ("ask", "write_to_file", {"path": "docs/a.md", "content": "x"}, "ToolNotAllowed", 'Tool "write_to_file" is not allowed in ask mode.'),
    ("ask", "execute_command", {"command": "true"}, "ToolNotAllowed", 'Tool "execute_command" is not allowed in ask mode.'),
    ("architect", "execute_command", {"command": "true"}, "ToolNotAllowed", 'Tool "execute_command" is not allowed in architect mode.'),
    ("orchestrator", "read_file", {"path": "src/app.py"}, "ToolNotAllowed", 'Tool "read_file" is not allowed in orchestrator mode.'),
    ("orchestrator", "browser_action", {"action": "launch", "url": "http://127.0.0.1/"}, "ToolNotAllowed", 'Tool "browser_action" is not allowed in orchestrator mode.'),
    # the browser: what is refused before anything starts (tests/e2e/test_browser.py drives a real one)
    ("code", "browser_action", {"action": "launch"}, "InvalidParams", "~Missing value for required parameter 'url' (action 'launch')."),
    ("code", "browser_action", {"action": "open", "url": "http://127.0.0.1/"}, "InvalidParams", "~Invalid value for parameter 'action'"),
    ("code", "browser_action", {"action": "launch", "url": "https://example.com/"}, "HostNotAllowed", "~The host 'example.com' is not allowed"),
    ("code", "browser_action", {"action": "launch", "url": "file:///etc/passwd"}, "InvalidParams", "~has 'file:': the browser opens only http:// and https:// URLs."),
    ("code", "browser_action", {"action": "click", "coordinate": "10,10"}, "ToolError", "No browser is open in this conversation: start one with action 'launch' and a url."),
    ("code", "browser_action", {"action": "click"}, "InvalidParams", "~Missing value for required parameter 'coordinate' (action 'click')."),
    ("code", "browser_action", {"action": "resize", "size": "big"}, "InvalidParams", "~Invalid value for parameter 'size': expected WIDTHxHEIGHT"),
    ("ask", "browser_action", {"action": "press"}, "InvalidParams", "~Missing value for required parameter 'text' (action 'press')."),
    # unknown tools and bad params
    ("code", "rm_rf", {}, "UnknownTool", 'Unknown tool "rm_rf".'),
    ("code", "read_file", {}, "InvalidParams", "~Missing value for required parameter 'path'."),
    ("code", "read_file", {"path": "src/app.py", "start_line": "first"}, "InvalidParams", "~Invalid value for parameter 'start_line'"),
    ("code", "write_to_file", {"path": "a.py"}, "InvalidParams", "~Missing value for required parameter 'content'."),
    ("code", "apply_diff", {"path": "src/app.py"}, "InvalidParams", "~Missing value for required parameter 'diff'."),
    ("code", "read_file", {"path": ""}, "InvalidParams", "~non-empty"),
    # order: params before groups, groups before paths, paths before approval
    ("ask", "write_to_file", {"path": "src/app.py"}, "InvalidParams", "~'content'"),
    ("ask", "write_to_file", {"path": "/etc/passwd", "content": "x"}, "ToolNotAllowed", "~not allowed in ask mode"),
    # always available in every mode
    ("orchestrator", "attempt_completion", {"result": "done"}, None, None),
    ("ask", "ask_followup_question", {"question": "Which file?"}, None, None),
]


@pytest.mark.parametrize("mode, tool, params, error, message", CASES)
async def test_gate(workspace, mode, tool, params, error, message):
    host = MemoryHost()
    params = {k: v.format(root=workspace) if isinstance(v, str) else v for k, v in params.items()}
    before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file() and ".modus" not in p.parts}
    async with running(workspace, host=host) as session:
        session.switch_mode(mode, by="user")
        result = await call_tool(session, tool, **params)
    if error is None:
        assert result.error is None, result.text
        return
    assert result.error is not None and result.error.type == error, result.text
    if message.startswith("~"):
        assert message[1:] in result.text
    else:
        assert result.text == message
    # a refused call asks nothing and changes nothing
    assert host.approvals == [] and host.edits == []
    after = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file() and ".modus" not in p.parts}
    assert after == before


async def test_multi_file_edit_is_all_or_nothing(workspace):
    host = MemoryHost()
    async with running(workspace, host=host) as session:
        session.switch_mode("architect", by="user")
        files = [
            {"path": "docs/readme.md", "diff": "<<<<<<< SEARCH\n# Readme\n=======\n# Changed\n>>>>>>> REPLACE"},
            {"path": "src/app.py", "diff": diff("src/app.py")["diff"]},
        ]
        result = await call_tool(session, "apply_diff", files=files)
    assert result.error.type == "FileRestrictionError"
    assert result.text == ARCHITECT_MD.format(tool="apply_diff", path="src/app.py")
    assert (workspace / "docs" / "readme.md").read_text() == "# Readme\n"
    assert host.edits == [] and host.approvals == []


async def test_denied_with_feedback(workspace):
    host = MemoryHost(approve=lambda req: ApprovalResponse(decision="deny", feedback="not that file"))
    async with running(workspace, host=host) as session:
        result = await call_tool(session, "write_to_file", path="src/app.py", content="x")
    assert result.error.type == "Denied"
    assert result.text == "The user denied this operation.\n<feedback>\nnot that file\n</feedback>"
    assert host.approvals[0].kind == "tool" and host.approvals[0].tool == "write_to_file"
    assert (workspace / "src" / "app.py").read_text() == "print('app')\n"


@pytest.mark.parametrize(
    "tool, arguments, kind",
    [
        ("write_to_file", {"path": "docs/new.md", "content": "x"}, "tool"),
        ("execute_command", {"command": "true"}, "tool"),
        ("switch_mode", {"mode_slug": "ask"}, "switch_mode"),
        ("new_task", {"mode": "ask", "message": "look"}, "subtask"),
    ],
)
async def test_an_approval_names_the_call_it_gates(workspace, tool, arguments, kind):
    host = MemoryHost(approve=lambda req: ApprovalResponse(decision="deny"))
    async with running(workspace, host=host) as session:
        await call_tool(session, tool, **arguments)
    [asked] = host.approvals
    assert (asked.kind, asked.tool, asked.tool_call_id) == (kind, tool, "call-test")
    assert asked.wire()["toolCallId"] == "call-test"


async def test_denied_without_feedback(workspace):
    host = MemoryHost(approve=lambda req: ApprovalResponse(decision="deny"))
    async with running(workspace, host=host) as session:
        result = await call_tool(session, "execute_command", command="touch made")
    assert result.text == "The user denied this operation."
    assert not (workspace / "made").exists()


@pytest.mark.parametrize(
    "auto, yolo, asked",
    [({}, False, True), ({"edit": True}, False, False), ({}, True, False)],
)
async def test_auto_approval_and_yolo(workspace, auto, yolo, asked):
    host = MemoryHost()
    async with running(workspace, host=host, autoApprove=auto, yolo=yolo) as session:
        result = await call_tool(session, "write_to_file", path="docs/new.md", content="x")
    assert result.error is None
    assert bool(host.approvals) is asked


async def test_reads_are_auto_approved_by_default(workspace):
    host = MemoryHost()
    async with running(workspace, host=host) as session:
        result = await call_tool(session, "read_file", path="src/app.py")
    assert result.error is None and host.approvals == []


async def test_plan_phase_refuses_writes(workspace):
    async with running(workspace) as session:
        session.switcher.phase = "plan"
        refused = await call_tool(session, "write_to_file", path="docs/a.md", content="x")
        allowed = await call_tool(session, "read_file", path="src/app.py")
    assert refused.error.type == "PlanModeBlocked"
    assert "present your plan" in refused.text
    assert allowed.error is None


def test_the_order_of_the_gate_is_data():
    assert [name for name, _ in STAGES] == [
        "settle delay after a mode switch",
        "known tool",
        "valid params",
        "allowed by the mode's groups",
        "allowed by the mode's MCP servers",
        "allowed by the mode's skills",
        "allowed by the phase and plan state",
        "inside the workspace and allowed by the file rules",
        "inside the plan's scope",
        "one edit of a file at a time",
        "allowed by the mode's command rules",
        "tool preconditions",
        "hooks before the call (PreToolUse)",
        "approval",
        "checkpoint of the files",
        "run",
        "hooks after the call (PostToolUse)",
    ]


# ================================================================ agents in parallel: one edit of a file at a time


def counting_edit(seen: list[str]) -> ToolSpec:
    """An edit that reads the file when it is prepared and writes it, one more, when it runs."""

    async def prepare(ctx, params, paths) -> Prepared:
        before = int(paths[0].path.read_text())
        seen.append(f"{ctx.agent} read {before}")

        async def run():
            await anyio.sleep(0.01)  # the other agent's call runs meanwhile, if it may
            paths[0].path.write_text(str(before + 1))
            return "ok"

        return Prepared(run)

    return ToolSpec("write_to_file", "", TOOLS["write_to_file"].params, prepare, group="edit", edits=True)


async def test_two_agents_editing_one_file_wait_for_each_other(workspace):
    (workspace / "count.txt").write_text("0")
    (workspace / "other.txt").write_text("0")
    seen: list[str] = []
    tools = {"write_to_file": counting_edit(seen)}
    async with running(workspace, agents=[{"name": "a"}, {"name": "b"}], autoApprove={"edit": True}) as session:

        async def edit(agent: str, path: str) -> None:
            ctx = ToolContext(session.ports, session.task_for(agent), agent, session.conversation_id, "turn-test", f"call-{agent}")
            result = await run_tool(ctx, ToolCallRequest(f"call-{agent}", "write_to_file", {"path": path, "content": "x"}), tools)
            assert result.error is None, result.text

        async with anyio.create_task_group() as tg:
            tg.start_soon(edit, "a", "count.txt")
            tg.start_soon(edit, "b", "count.txt")
        assert (workspace / "count.txt").read_text() == "2" and seen == ["a read 0", "b read 1"]
        assert len(session.file_locks) == 0  # a lock lives while it is held or waited for
        seen.clear()
        async with anyio.create_task_group() as tg:  # different files: no waiting
            tg.start_soon(edit, "a", "count.txt")
            tg.start_soon(edit, "b", "other.txt")
        assert seen == ["a read 2", "b read 0"]


# ================================================================ a tool's own failure stays that call's result


def raising(where: str, exc: BaseException) -> ToolSpec:
    """read_file as a tool whose preparation or run raises `exc`."""

    async def prepare(ctx, params, paths) -> Prepared:
        if where == "prepare":
            raise exc

        async def run():
            raise exc

        return Prepared(run)

    return ToolSpec("read_file", "", TOOLS["read_file"].params, prepare, group="read")


LONG_NAME = "/ws/" + "a" * 5000

RAISED = [
    (
        "an OSError while preparing: the file name is clipped",
        "prepare",
        OSError(errno.ENAMETOOLONG, "File name too long", LONG_NAME),
        f"read_file failed: File name too long: '{LONG_NAME[:100]}…'",
    ),
    ("an OSError while running", "run", PermissionError(errno.EACCES, "Permission denied", "/ws/x"), "read_file failed: Permission denied: '/ws/x'"),
    ("two file names", "run", OSError(errno.EXDEV, "Invalid cross-device link", "/a", None, "/b"), "read_file failed: Invalid cross-device link: '/a' -> '/b'"),
    ("an OSError without a file name", "run", OSError(errno.EIO, "Input/output error"), "read_file failed: Input/output error"),
    ("an OSError without a reason", "run", OSError("x" * 500), f"read_file failed: {'x' * 100}…"),
    ("any other exception", "run", RuntimeError("boom"), "read_file failed with an unexpected error: RuntimeError: boom"),
    ("any other exception while preparing", "prepare", KeyError("k"), "read_file failed with an unexpected error: KeyError: 'k'"),
]


@pytest.mark.parametrize("where, exc, message", [r[1:] for r in RAISED], ids=[r[0] for r in RAISED])
async def test_a_tool_that_raises_fails_with_a_clear_message(workspace, caplog, where, exc, message):
    async with running(workspace) as session:
        ctx = ToolContext(session.ports, session.task_for("modus"), "modus", session.conversation_id, "turn-test", "call-test")
        result = await run_tool(ctx, ToolCallRequest("call-test", "read_file", {"path": "src/app.py"}), {"read_file": raising(where, exc)})
    assert (result.error.type, result.text) == ("ToolError", message)
    if not isinstance(exc, OSError):  # a bug: logged with its traceback
        [record] = [r for r in caplog.records if r.name == "server.tools.gate"]
        assert record.exc_info is not None and record.exc_info[1] is exc


TOO_LONG = [
    ("a 5,000-character name", "a" * 5000, "InvalidParams", "The path 'aaaa"),
    ("a path longer than the system allows", "/".join(["b" * 200] * 25), "InvalidParams", "The path 'bbbb"),
    ("a long way outside", "../" * 2000 + "etc", "OutsideWorkspace", "Access to '../../"),
]


@pytest.mark.parametrize("tool", ["read_file", "list_files", "list_code_definition_names", "write_to_file"])
@pytest.mark.parametrize("path, error, starts", [r[1:] for r in TOO_LONG], ids=[r[0] for r in TOO_LONG])
async def test_an_absurdly_long_path_is_refused_in_a_few_words(workspace, tool, path, error, starts):
    async with running(workspace) as session:
        result = await call_tool(session, tool, path=path, content="x")
    assert result.error is not None and result.error.type == error, result.text
    assert result.text.startswith(starts) and len(result.text) < 400, result.text


@pytest.mark.parametrize(
    "auto, yolo, approved",
    [
        ({}, False, False),
        ({"browser": True}, False, True),
        ({"modes": {"code": {"browser": True}}}, False, True),  # a mode's own key
        ({"browser": True, "modes": {"code": {"browser": False}}}, False, False),  # which wins over the general one
        ({"modes": {"ask": {"browser": True}}}, False, False),
        ({}, True, True),
    ],
)
async def test_a_browsers_launch_is_approved_by_autoapprove_browser_per_mode(auto, yolo, approved):
    from protocol import Settings

    from server.tools import always
    from server.tools.browser import BrowserActionParams

    settings = Settings.model_validate({"autoApprove": auto, "yolo": yolo})
    params = BrowserActionParams(action="launch", url="http://127.0.0.1/")
    assert await always.auto_approved(settings, "code", "browser", params) is approved


async def test_a_browsers_launch_asks_offering_always_allow_and_its_other_actions_never_ask(workspace):
    host = MemoryHost(approve=lambda req: ApprovalResponse(decision="deny"))
    async with running(workspace, host=host) as session:
        launch = await call_tool(session, "browser_action", action="launch", url="http://127.0.0.1:9/")
        scroll = await call_tool(session, "browser_action", action="scroll_down")
    [asked] = host.approvals
    assert (asked.kind, asked.tool, asked.title) == ("tool", "browser_action", "Open http://127.0.0.1:9/ in a headless browser?")
    assert asked.always_allow == "autoApprove.modes.code.browser: true"
    assert launch.error.type == "Denied" and session.browsers.get(session.conversation_id) is None
    assert scroll.error.type == "ToolError" and scroll.text.startswith("No browser is open")
