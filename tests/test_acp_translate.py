"""The ACP side's pure parts, as tables: tool kinds and titles, slash commands, the prompt's
text and attachments, plan entries, stop reasons, and how bad messages are named."""

from __future__ import annotations

import pytest
from acp import schema as acp

from protocol import Todo
from server.acp import translate as tr
from server.acp.agent import Attachment, message, read_prompt
from server.acp.host import PromptState
from server.acp.run import _named, _not_a_message
from server.tools import TOOLS
from server.workspace import Workspace

KINDS = [
    ("read_file", "read"), ("list_files", "read"), ("list_code_definition_names", "read"), ("search_files", "search"),
    ("write_to_file", "edit"), ("apply_diff", "edit"), ("insert_content", "edit"), ("search_and_replace", "edit"),
    ("execute_command", "execute"), ("switch_mode", "switch_mode"), ("access_mcp_resource", "fetch"),
    ("todo_write", "think"), ("plan_exit", "think"), ("use_mcp_tool", "other"), ("new_task", "other"), ("nosuch", "other"),
]


@pytest.mark.parametrize("tool, kind", KINDS)
def test_kinds(tool, kind):
    assert tr.kind(tool) == kind


def test_every_tool_has_a_title_of_its_own_or_its_name():
    for name in TOOLS:
        assert tr.title(name, {}).strip()


TITLES = [
    ("read_file", {"path": "a.py"}, "Read a.py"),
    ("read_file", {"path": "a.py", "start_line": 3}, "Read a.py (lines 3–end)"),
    ("apply_diff", {"files": [{"path": "a"}, {"path": "b"}]}, "Edit a, b"),
    ("execute_command", {"command": "npm test\nmore"}, "`npm test`"),
    ("search_files", {"path": ".", "regex": "def "}, "Search /def / in ."),
    ("switch_mode", {"mode_slug": "code"}, "Switch to code mode"),
    ("plan_status", {}, "Plan status"),
]


@pytest.mark.parametrize("tool, params, title", TITLES)
def test_titles(tool, params, title):
    assert tr.title(tool, params) == title


def test_locations_are_absolute_and_what_is_outside_is_left_out(tmp_path):
    ws = Workspace(tmp_path)
    found = tr.locations(ws, "read_file", {"path": "src/a.py", "start_line": 4})
    assert [(loc.path, loc.line) for loc in found] == [(str(ws.root / "src" / "a.py"), 4)]
    assert tr.locations(ws, "write_to_file", {"path": "../elsewhere"}) == []
    assert [loc.path for loc in tr.locations(ws, "apply_diff", {"files": [{"path": "a"}, {"path": "b"}]})] == [
        str(ws.root / "a"), str(ws.root / "b")]
    assert tr.locations(ws, "switch_mode", {"mode_slug": "code"}) == []


COMMANDS = [
    ("/plan", ("plan", "")),
    ("/plan add a cache", ("plan", "add a cache")),
    ("/act\nnow", ("act", "now")),
    ("/mode architect design it", ("mode", "architect design it")),
    ("/plan-change use a dict", ("plan-change", "use a dict")),
    ("/trust", ("trust", "")),
    ("/path/to/file is broken", None),
    ("/planning", None),
    ("please /plan", None),
    ("/nosuch", None),
]


@pytest.mark.parametrize("text, parsed", COMMANDS)
def test_slash_commands(text, parsed):
    assert tr.parse_command(text) == parsed


def test_the_prompt_s_text_and_its_attachments():
    blocks = [
        acp.TextContentBlock(type="text", text="Look at this "),
        acp.EmbeddedResourceContentBlock(type="resource", resource=acp.TextResourceContents(uri="file:///w/a%20b.py#L4:5", text="x = 1\ny = 2")),
        acp.ResourceContentBlock(type="resource_link", uri="file:///w/c.py", name="c.py"),
    ]
    typed, attached, images = read_prompt(blocks)
    assert typed == "Look at this"
    assert [(a.path, a.first_line) for a in attached] == [("/w/a b.py", 4), ("/w/c.py", 1)]
    assert message(typed, attached) == "Look at this\n\n@/w/a b.py:\n```\nx = 1\ny = 2\n```\n\n@/w/c.py" and images == []
    _, _, [image] = read_prompt([acp.ImageContentBlock(type="image", data="AA", mime_type="image/png")])
    assert (image.mime_type, image.data) == ("image/png", "AA")
    with pytest.raises(Exception, match="audio content is not supported"):
        read_prompt([acp.AudioContentBlock(type="audio", data="AA", mime_type="audio/wav")])


def test_a_fence_is_longer_than_the_backticks_inside():
    assert tr.fenced("a ```` b") == "`````\na ```` b\n`````"
    assert Attachment("https://example.com/x").shown() == "https://example.com/x"


def test_plan_entries_show_an_approved_plan_s_steps_in_order():
    plan = {"approach": "x", "steps": [
        {"id": "2", "description": "second", "depends_on": ["1"], "verification": "v"},
        {"id": "1", "description": "first", "verification": "v"},
    ]}
    shown = lambda state, done, current: [(e.content, e.status) for e in tr.plan_entries(plan, state, done, current)]  # noqa: E731
    assert shown("executing", [], "1") == [("1. first", "in_progress"), ("2. second", "pending")]
    assert shown("executing", ["1"], "2") == [("1. first", "completed"), ("2. second", "in_progress")]
    assert shown("normal", ["1", "2"], None) == [("1. first", "completed"), ("2. second", "completed")]
    assert shown("normal", ["1"], None) == []  # rejected, or closed with steps undone
    assert shown("awaiting_approval", [], None) == []  # the approval shows it
    assert tr.plan_entries(None, "executing", [], None) == []
    todo = Todo(id="1", content="write", status="in_progress", priority="high")
    assert [(e.content, e.status, e.priority) for e in tr.todo_entries([todo])] == [("write", "in_progress", "high")]


STOPS = [
    (PromptState(outcomes=["completed"]), "end_turn"),
    (PromptState(outcomes=["awaiting_user"]), "end_turn"),
    (PromptState(outcomes=["failed"]), "end_turn"),
    (PromptState(outcomes=["completed", "cancelled"]), "cancelled"),
    (PromptState(outcomes=[], cancelled=True), "cancelled"),
    (PromptState(outcomes=["cancelled"], turn_limit=True), "max_turn_requests"),
]


@pytest.mark.parametrize("state, reason", STOPS)
def test_stop_reasons(state, reason):
    assert state.stop_reason() == reason


NOT_MESSAGES = [
    ([1], "expected a JSON object, got list"),
    ({"id": 1, "method": "x"}, "'jsonrpc' must be \"2.0\""),
    ({"jsonrpc": "2.0", "id": 1, "method": 5}, "'method' must be a string"),
    ({"jsonrpc": "2.0"}, "neither a request, a notification nor a response"),
    ({"jsonrpc": "2.0", "id": 1, "method": "x", "params": "p"}, "'params' must be an object"),
    ({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {}}, None),
    ({"jsonrpc": "2.0", "id": 1, "result": None}, None),
]


@pytest.mark.parametrize("message, why", NOT_MESSAGES)
def test_what_is_not_a_json_rpc_message(message, why):
    assert _not_a_message(message) == why


def test_invalid_params_name_the_fields_and_send_no_input_back():
    error = {"code": -32602, "message": "Invalid params", "data": {"errors": [
        {"loc": ["cwd"], "msg": "Field required", "type": "missing", "input": {"secret": 1}},
        {"loc": ["prompt", 0, "text"], "msg": "Input should be a valid string", "type": "string_type", "input": 5},
    ]}}
    assert _named(error) == {"code": -32602, "message": "Invalid params: cwd: Field required; prompt.0.text: Input should be a valid string",
                             "data": {"errors": [{"loc": ["cwd"], "msg": "Field required", "type": "missing"},
                                                 {"loc": ["prompt", 0, "text"], "msg": "Input should be a valid string", "type": "string_type"}]}}
    assert _named({"code": -32602, "message": "modeId: Invalid mode: x", "data": None})["message"] == "modeId: Invalid mode: x"


def test_the_clients_mcp_servers_in_the_shape_of_mcp_json():
    servers = [
        acp.McpServerStdio(name="files", command="mcp-files", args=["--root", "."], env=[acp.EnvVariable(name="K", value="v")]),
        acp.HttpMcpServer(type="http", name="web", url="https://mcp.example/", headers=[acp.HttpHeader(name="Authorization", value="x")]),
        acp.SseMcpServer(type="sse", name="old", url="https://sse.example/", headers=[]),
    ]
    assert tr.mcp_servers(servers) == {
        "files": {"command": "mcp-files", "args": ["--root", "."], "env": {"K": "v"}},
        "web": {"type": "streamable-http", "url": "https://mcp.example/", "headers": {"Authorization": "x"}},
        "old": {"type": "sse", "url": "https://sse.example/", "headers": {}},
    }


def test_initialize_is_answered_early_with_what_the_package_would_send():
    """`modus acp` answers `initialize` before the ACP package has loaded (server/acp/hello.py):
    the same answer the package's schema makes of the agent's own."""
    import asyncio

    from acp import PROTOCOL_VERSION
    from acp import schema as acp

    from server.acp.agent import ModusAgent
    from server.acp.hello import PROTOCOL_VERSION as OURS, early, initialize_result

    class NoTasks:
        def start_soon(self, *args):
            pass

    assert OURS == PROTOCOL_VERSION
    answer = asyncio.run(ModusAgent(NoTasks()).initialize(protocol_version=7))
    assert answer.model_dump(mode="json", by_alias=True, exclude_none=True) == initialize_result(7)
    assert acp.InitializeResponse.model_validate(initialize_result(1)).protocol_version == 1
    # what is answered early, and what is left to the package's checks
    assert early({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}) == 1
    assert early({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}) == 1
    for not_early in (
        {"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": 1}},  # a notification
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1"}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": True}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": []}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize"},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"protocolVersion": 1}},
    ):
        assert early(not_early) is None, not_early
