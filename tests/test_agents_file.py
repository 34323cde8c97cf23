"""The workspace's agents file (.modus/agents.yaml): what loads, and each problem as a
diagnostic where it is, the other agents still loading."""

from __future__ import annotations

import pytest

from server.roster.config import WorkspaceAgents, parse_agents

MODES = frozenset({"code", "architect", "ask"})


def test_agents_load_in_file_order_with_their_fields():
    loaded = parse_agents(
        "agents:\n"
        "  - name: architect\n"
        "    mode: architect\n"
        "    instructions: Design first.\n"
        "  - name: code-reviewer\n"
        "    topLevel: false\n"
        "    model: {provider: anthropic, model: claude-sonnet-4-5}\n",
        MODES,
    )
    assert loaded.diagnostics == ()
    architect, reviewer = loaded.agents
    assert (architect.name, architect.mode, architect.instructions, architect.top_level) == ("architect", "architect", "Design first.", True)
    assert (reviewer.name, reviewer.top_level, reviewer.model.model) == ("code-reviewer", False, "claude-sonnet-4-5")


@pytest.mark.parametrize(
    "entry, line, message",
    [
        ("  - name: code reviewer\n", 1, "Agent 'code reviewer' skipped: name: 'code reviewer': a name can be mentioned only if it is made of letters, digits, '_' and '-'"),
        ("  - name: sam@host\n", 1, "Agent 'sam@host' skipped: name: 'sam@host': a name can be mentioned only if it is made of letters, digits, '_' and '-'"),
        ("  - name: ARCHITECT\n", 1, "Agent 'ARCHITECT' skipped: name 'ARCHITECT' is already defined on line 2"),
        ("  - topLevel: true\n", 1, "Agent #2 skipped: name: field required"),
        ("  - name: x\n    topLevel: maybe\n", 2, "Agent 'x' skipped: topLevel: input should be a valid boolean, unable to interpret input"),
        ("  - just a string\n", 1, "Agent #2 skipped: an agent must be a mapping with at least a name"),
        ("  - name: x\n    model: {provider: openai, baseUrl: 'http://evil.example'}\n", 2,
         "Agent 'x' skipped: model.baseUrl: not allowed in the workspace's agents file (set it in the settings)"),
        ("  - name: x\n    model: {provider: openai, apiKeyEnv: AWS_SECRET_ACCESS_KEY}\n", 2,
         "Agent 'x' skipped: model.apiKeyEnv: not allowed in the workspace's agents file (set it in the settings)"),
        ("  - name: x\n    model: {script: ../../etc/passwd}\n", 2, "Agent 'x' skipped: model.script: must be a relative path inside the workspace"),
        ("  - name: x\n    model: {script: /etc/passwd}\n", 2, "Agent 'x' skipped: model.script: must be a relative path inside the workspace"),
        ("  - name: x\n    mode: nosuch\n", 2, "Agent 'x': unknown mode 'nosuch'; it starts in the default mode"),
    ],
)
def test_a_bad_entry_is_a_diagnostic_on_its_line_and_the_others_load(entry, line, message):
    loaded = parse_agents("agents:\n  - name: architect\n" + entry + "  - name: coder\n", MODES)
    [problem] = loaded.diagnostics
    assert (problem.line, problem.message) == (line + 1, message)
    names = [a.name for a in loaded.agents]
    assert names[0] == "architect" and names[-1] == "coder"
    assert ("x" in names) == ("unknown mode" in message)  # an unknown mode still loads the agent


def test_the_file_is_read_as_yaml_1_2_and_may_start_with_a_byte_order_mark():
    """`on`, `no`, `yes` are names here, not booleans (PyYAML's YAML 1.1 made them True and False)."""
    loaded = parse_agents("\ufeffagents:\n  - name: on\n    instructions: no\n  - name: yes\n    topLevel: false\n", MODES)
    assert loaded.diagnostics == ()
    assert [(a.name, a.instructions, a.top_level) for a in loaded.agents] == [("on", "no", True), ("yes", None, False)]


@pytest.mark.parametrize(
    "text, message",
    [
        ("agents: [", "Cannot parse agents file: expected the node content, but found '<stream end>'"),
        ("agents: {name: x}", "An agents file needs an 'agents' list"),
        ("- name: x", "An agents file needs an 'agents' list"),
        ("a: &a [*a]", "Agents file not read: a YAML alias refers to a node that contains it"),
    ],
)
def test_a_file_that_is_not_an_agents_list_is_one_diagnostic(text, message):
    loaded = parse_agents(text, MODES)
    assert loaded.agents == () and [d.message for d in loaded.diagnostics] == [message]


def test_the_file_is_untrusted_input(tmp_path):
    (tmp_path / ".modus").mkdir()
    agents = WorkspaceAgents(tmp_path)
    assert agents.stale() and agents.load(MODES) == ((), ())  # no file: no agents, no problem
    assert not agents.stale()
    (tmp_path / ".modus" / "agents.yaml").write_text("agents:\n" + "  - name: a\n    instructions: " + "x" * 70_000 + "\n")
    assert agents.stale()
    [problem] = agents.load(MODES).diagnostics
    assert problem.message == "Agents file not read: it is larger than 64 KiB"
    (tmp_path / ".modus" / "agents.yaml").unlink()
    (tmp_path / ".modus" / "agents.yaml").symlink_to("/etc/hostname")
    [problem] = agents.load(MODES).diagnostics
    assert problem.message == "Agents file not read: it leads outside the workspace (to /etc/hostname)"
