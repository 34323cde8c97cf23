"""Modes (SPEC §1): built-ins, groups, custom mode files, precedence, validation, reload."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from protocol import GroupOptions
from server.modes import ALWAYS_AVAILABLE, BUILTIN_MODES, GROUP_TOOLS, ModeRegistry, Pattern, global_modes_path, parse_modes
from server.userdirs import state_dir


def registry(root: Path) -> ModeRegistry:
    reg = ModeRegistry(root, root / "global" / "modes.yaml")
    reg.refresh()
    return reg


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    # a later write within the same clock tick must still be seen as a change
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


# ---------------------------------------------------------------- built-ins


def test_builtins_in_order_with_their_groups():
    assert [(m.slug, m.name) for m in BUILTIN_MODES] == [
        ("code", "Code"),
        ("architect", "Architect"),
        ("ask", "Ask"),
        ("debug", "Debug"),
        ("orchestrator", "Orchestrator"),
    ]
    groups = {m.slug: [g.entry() for g in m.groups] for m in BUILTIN_MODES}
    assert groups == {
        "code": ["read", "edit", "browser", "command", "mcp"],  # Roo's built-ins' groups, browser included
        "architect": ["read", ("edit", GroupOptions(file_regex=r"\.md$", description="Markdown files only")), "browser", "mcp"],
        "ask": ["read", "browser", "mcp"],
        "debug": ["read", "edit", "browser", "command", "mcp"],
        "orchestrator": [],
    }


@pytest.mark.parametrize(
    "slug, has, lacks",
    [
        ("code", ["read_file", "write_to_file", "execute_command", "use_mcp_tool", "browser_action"], []),
        ("architect", ["read_file", "apply_diff"], ["execute_command"]),
        ("ask", ["search_files", "list_code_definition_names"], ["write_to_file", "execute_command"]),
        ("orchestrator", ["new_task", "switch_mode"], ["read_file", "write_to_file", "execute_command", "browser_action"]),
    ],
)
def test_tools_of_a_mode(slug, has, lacks):
    tools = next(m for m in BUILTIN_MODES if m.slug == slug).tools()
    assert set(ALWAYS_AVAILABLE) <= tools
    assert set(has) <= tools
    assert not set(lacks) & tools


def test_groups_name_the_tools_of_the_spec():
    assert GROUP_TOOLS["read"] == ("read_file", "list_files", "search_files", "list_code_definition_names")
    assert GROUP_TOOLS["edit"] == ("write_to_file", "apply_diff", "insert_content", "search_and_replace")
    assert GROUP_TOOLS["modes"] == ("switch_mode", "new_task")


# ---------------------------------------------------------------- validation: one row per bad mode

GOOD = "  - slug: docs\n    name: Docs\n    roleDefinition: writes docs\n    groups: [read]\n"

BAD_MODES = [
    # (yaml of one mode, line of the diagnostic (0-based, relative to the mode), text in the message)
    ("  - slug: bad slug\n    name: X\n    roleDefinition: y\n    groups: [read]\n", 0, "slug: 'bad slug' may contain only letters, digits and hyphens"),
    ("  - slug: nameless\n    roleDefinition: y\n    groups: [read]\n", 0, "name: field required"),
    ("  - slug: blank\n    name: '  '\n    roleDefinition: y\n    groups: [read]\n", 1, "name: must not be empty"),
    ("  - slug: norole\n    name: N\n    groups: [read]\n", 0, "roleDefinition: field required"),
    ("  - slug: nogroups\n    name: N\n    roleDefinition: y\n", 0, "groups: field required"),
    ("  - slug: typo\n    name: N\n    roleDefinition: y\n    groups:\n      - read\n      - reed\n", 5, "groups.1: unknown group 'reed'"),
    ("  - slug: twice\n    name: N\n    roleDefinition: y\n    groups: [read, read]\n", 3, "groups.1: group 'read' is listed twice"),
    (
        "  - slug: rx\n    name: N\n    roleDefinition: y\n    groups:\n      - - edit\n        - fileRegex: '([a-z'\n",
        5,
        "groups.0.fileRegex: invalid regular expression '([a-z'",
    ),
    ("  - 42\n", 0, "a mode must be a mapping"),
    (
        "  - slug: rx\n    name: N\n    roleDefinition: y\n    groups:\n      - read\n      - [edit, {fileRegex: null}]\n",
        5,
        "groups.1.fileRegex: must be a string (a regular expression), got null",
    ),
    (
        "  - slug: rx\n    name: N\n    roleDefinition: y\n    groups:\n      - - edit\n        - fileRegex:\n          description: md\n",
        5,
        "groups.0.fileRegex: must be a string (a regular expression), got null",
    ),
    ("  - slug: rx\n    name: N\n    roleDefinition: y\n    groups: [[edit, {fileRegex: 3}]]\n", 3, "groups.0.fileRegex: must be a string (a regular expression), got int"),
    (
        "  - slug: rx\n    name: N\n    roleDefinition: y\n    groups:\n      - [edit, {fileRegx: '\\.md$'}]\n",
        4,
        "groups.0.fileRegx: not an option of group 'edit' (expected fileRegex, description); did you mean fileRegex? "
        "Without it the group would allow more than the file says",
    ),
    ("  - slug: rx\n    name: N\n    roleDefinition: y\n    groups:\n      - [edit, {file_regex: x}]\n", 4, "did you mean fileRegex?"),
    ("  - slug: o\n    name: N\n    roleDefinition: y\n    groups:\n      - [mcp, {Servers: [docs]}]\n", 4, "did you mean servers?"),
    (
        "  - slug: o\n    name: N\n    roleDefinition: y\n    groups:\n      - [command, {allow: 'git log*'}]\n",
        4,
        "groups.0.allow: must be a list of non-empty strings",
    ),
    (
        "  - slug: o\n    name: N\n    roleDefinition: y\n    groups:\n      - [mcp, {servers: [docs, '']}]\n",
        4,
        "groups.0.servers: must be a list of non-empty strings",
    ),
    (
        "  - slug: o\n    name: N\n    roleDefinition: y\n    groups:\n      - [command, {alow: [ls]}]\n",
        4,
        "groups.0.alow: not an option of group 'command' (expected fileRegex, description, allow, deny); did you mean allow?",
    ),
]


def test_the_mcp_and_command_groups_take_their_options():
    text = (
        "customModes:\n  - slug: helper\n    name: Helper\n    roleDefinition: y\n    groups:\n"
        "      - read\n"
        "      - [mcp, {servers: [docs, github]}]\n"
        "      - [command, {allow: ['git log*', 'git diff*', npm test], deny: ['rm -rf *']}]\n"
    )
    [mode] = parse_modes(text, "project").modes
    mcp, command = mode.group("mcp"), mode.group("command")
    assert mcp.servers == ("docs", "github") and command.allow == ("git log*", "git diff*", "npm test") and command.deny == ("rm -rf *",)
    assert [g.entry() if isinstance(g.entry(), str) else (g.entry()[0], g.entry()[1].model_dump(exclude_none=True)) for g in mode.groups] == [
        "read",
        ("mcp", {"servers": ["docs", "github"]}),
        ("command", {"allow": ["git log*", "git diff*", "npm test"], "deny": ["rm -rf *"]}),
    ]


@pytest.mark.parametrize("bad, line, message", BAD_MODES)
def test_a_bad_mode_is_skipped_and_reported_at_its_line(bad, line, message):
    text = "customModes:\n" + GOOD + bad + GOOD.replace("docs", "notes").replace("Docs", "Notes")
    result = parse_modes(text, "project")
    assert [m.slug for m in result.modes] == ["docs", "notes"]  # the rest of the file still loads
    assert len(result.diagnostics) >= 1
    first = result.diagnostics[0]
    assert first.line == 5 + line  # "customModes:" + 4 lines of GOOD come first
    assert message in first.message
    assert first.message.startswith("Mode ")


def test_an_unknown_option_of_a_group_is_a_warning_and_the_mode_loads():
    roomodes = """{
  "customModes": [
    {
      "slug": "writer",
      "name": "Writer",
      "roleDefinition": "You write.",
      "groups": [
        ["read", {"servers": ["docs"]}],
        ["edit", {"fileRegex": "\\\\.md$", "foo": 1}]
      ]
    }
  ]
}"""
    result = parse_modes(roomodes, "project")
    [mode] = result.modes
    assert mode.group("edit").file_regex.search("a.md") and not mode.group("edit").file_regex.search("a.py")  # still bounded
    assert [(d.line, d.severity, d.message) for d in result.diagnostics] == [
        (7, "warning", "Mode 'writer': groups.0.servers: not an option of group 'read' (expected fileRegex, description); ignored"),
        (8, "warning", "Mode 'writer': groups.1.foo: not an option of group 'edit' (expected fileRegex, description); ignored"),
    ]
    foo = result.diagnostics[1]
    assert roomodes.splitlines()[8][foo.column : foo.end_column] == "1"  # on the value of "foo"


def test_file_regex_null_is_never_unrestricted_edit():
    text = '{"customModes": [\n{"slug": "a", "name": "A", "roleDefinition": "r", "groups": [["edit", {"fileRegex": null}]]}\n]}'
    result = parse_modes(text, "project")
    assert result.modes == ()
    [problem] = result.diagnostics
    assert problem.severity == "error" and problem.line == 1
    assert problem.message == "Mode 'a' skipped: groups.0.fileRegex: must be a string (a regular expression), got null"


def test_duplicate_slug_in_one_file_keeps_the_first():
    text = "customModes:\n" + GOOD + GOOD.replace("writes docs", "other")
    result = parse_modes(text, "project")
    assert [m.role_definition for m in result.modes] == ["writes docs"]
    assert "already defined on line 2" in result.diagnostics[0].message
    assert result.diagnostics[0].line == 5


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("customModes: [\n  {slug: a\n", 2, "Cannot parse modes file"),
        ("- just\n- a list\n", 0, "must be a mapping"),
        ("other: 1\n", 0, "needs a 'customModes' list"),
        ("customModes: {slug: a}\n", 0, "'customModes' must be a list"),
    ],
)
def test_file_level_problems(text, line, message):
    result = parse_modes(text, "project")
    assert result.modes == ()
    assert result.diagnostics[0].line == line
    assert message in result.diagnostics[0].message


def test_empty_file_is_no_modes_and_no_problem():
    assert parse_modes("", "project").diagnostics == ()


def test_roo_json_format_is_read_as_is():
    roomodes = {
        "customModes": [
            {
                "slug": "docs-writer",
                "name": "📝 Docs Writer",
                "roleDefinition": "You write documentation.",
                "whenToUse": "For docs.",
                "customInstructions": "Be brief.",
                "groups": ["read", ["edit", {"fileRegex": "\\.(md|mdx)$", "description": "Markdown only"}]],
                "source": "project",
                "iconName": "codicon-book",
            }
        ]
    }
    result = parse_modes(json.dumps(roomodes, indent=2), "project")
    assert result.diagnostics == ()
    mode = result.modes[0]
    assert (mode.slug, mode.name, mode.when_to_use, mode.custom_instructions) == (
        "docs-writer",
        "📝 Docs Writer",
        "For docs.",
        "Be brief.",
    )
    edit = mode.group("edit")
    assert edit.description == "Markdown only"
    assert edit.file_regex.search("guide/intro.mdx") and not edit.file_regex.search("app.py")


def test_json_indented_with_tabs():
    text = '{\n\t"customModes": [\n\t\t{"slug": "a", "name": "A", "roleDefinition": "r", "groups": ["rread"]}\n\t]\n}'
    result = parse_modes(text, "project")
    assert result.modes == ()
    [problem] = result.diagnostics
    assert (problem.line, problem.column) == (2, 63) and "unknown group 'rread'" in problem.message


def test_a_diagnostic_on_a_block_underlines_its_first_line():
    text = "customModes:\n  - slug: nameless\n    roleDefinition: y\n    groups: [read]\n"
    [problem] = parse_modes(text, "project").diagnostics
    assert (problem.line, problem.column, problem.end_line, problem.end_column) == (1, 4, 1, 4 + len("slug: nameless"))


@pytest.mark.parametrize("json_text", [False, True])
def test_a_byte_order_mark_is_not_part_of_the_content(json_text):
    if json_text:  # tab-indented JSON, as some editors write .roomodes
        text = '{\n\t"customModes": [\n\t\t{"slug": "a", "name": "A", "roleDefinition": "r", "groups": ["read"]},\n\t\t{"slug": "b"}\n\t]\n}'
    else:
        text = "customModes:\n  - {slug: a, name: A, roleDefinition: r, groups: [read]}\n  - {slug: b}\n"
    plain = parse_modes(text, "project")
    marked = parse_modes("\ufeff" + text, "project")
    assert [m.slug for m in marked.modes] == ["a"]
    assert marked == plain  # the same modes, the same diagnostics at the same places
    first_line = parse_modes("\ufeffcustomModes: {slug: a}\n", "project").diagnostics[0]
    assert (first_line.line, first_line.column) == (0, len("customModes: "))  # columns as the editor counts them


@pytest.mark.parametrize(
    "written, value",
    [
        # YAML 1.1 (PyYAML's SafeLoader) made these booleans, dates and base-60 numbers
        ("No", "No"), ("no", "no"), ("yes", "yes"), ("Y", "Y"), ("on", "on"), ("off", "off"), ("Off", "Off"),
        ("2025-01-01", "2025-01-01"), ("2025-01-01 10:00:00", "2025-01-01 10:00:00"), ("12:30", "12:30"),
        ("1_000", "1_000"), ("0b101", "0b101"), ("=", "="),
        # YAML 1.2's core schema
        ("true", True), ("False", False), ("TRUE", True), ("null", None), ("~", None), ("", None), ("NULL", None),
        ("12", 12), ("-3", -3), ("012", 12), ("0o17", 15), ("0x1f", 31), ("1.5", 1.5), ("1e3", 1000.0), ("-.inf", float("-inf")),
        ("'no'", "no"), ('"true"', "true"),
    ],
)
def test_scalars_follow_yaml_1_2(written, value):
    from server import yamldoc

    root, problem = yamldoc.parse_root(f"key: {written}\n", "modes file")
    assert problem is None
    data = yamldoc.construct(root)["key"]
    assert data == value and type(data) is type(value)


def test_a_mode_named_no_is_the_string_no():
    text = "customModes:\n  - slug: no\n    name: No\n    roleDefinition: on\n    whenToUse: 2025-01-01\n    groups: [read]\n"
    result = parse_modes(text, "project")
    assert result.diagnostics == ()
    [mode] = result.modes
    assert (mode.slug, mode.name, mode.role_definition, mode.when_to_use) == ("no", "No", "on", "2025-01-01")


def many_modes(kind: str, size: int) -> str:
    """A modes file of about `size` bytes: modes as a team writes them, each with pages of text."""
    role = "You are a meticulous reviewer of pull requests. " * 20
    mode = {
        "slug": "",
        "name": "",
        "roleDefinition": role,
        "whenToUse": "Use this mode when a pull request waits for review.",
        "customInstructions": "- Read the diff first.\n- Name each problem with its file and line.\n" * 8,
        "groups": ["read", ["edit", {"fileRegex": "\\.(md|mdx)$", "description": "Markdown only"}], "command", "mcp"],
    }
    each = len(json.dumps(mode, indent=2)) + 40
    modes = [dict(mode, slug=f"reviewer-{i}", name=f"Reviewer {i}") for i in range(size // each)]
    if kind == "json":
        return json.dumps({"customModes": modes}, indent=2, ensure_ascii=False)
    import yaml

    return yaml.safe_dump({"customModes": modes}, sort_keys=False, allow_unicode=True, width=100)


@pytest.mark.parametrize("kind", ["yaml", "json"])
async def test_a_big_modes_file_of_many_modes_loads_within_the_time_limit(tmp_path, kind):
    text = many_modes(kind, 3 * 512 * 1024)
    assert 1.4 * 1024 * 1024 < len(text.encode()) <= 2 * 1024 * 1024
    write(tmp_path / ".roomodes", text)
    reg = ModeRegistry(tmp_path, tmp_path / "global" / "modes.yaml")
    await reg.refresh_off_loop()  # refused, with a diagnostic, if it takes longer than the time limit
    assert reg.diagnostics(tmp_path / ".roomodes") == ()
    custom = [m for m in reg.modes if m.source == "project"]
    assert len(custom) > 300 and custom[-1].group("edit").file_regex.search("docs/a.mdx")


def test_a_modes_file_over_2_mib_is_refused_naming_the_limit(tmp_path):
    text = many_modes("yaml", 2 * 1024 * 1024)
    write(tmp_path / ".roomodes", text + "#" * (2 * 1024 * 1024 + 1 - len(text.encode())))
    reg = registry(tmp_path)
    [problem] = reg.diagnostics(tmp_path / ".roomodes")
    assert problem.message == "Modes file not read: it is larger than 2 MiB"


# ---------------------------------------------------------------- precedence and merging


def test_precedence_override_in_place_and_appending(tmp_path):
    mode = "  - slug: {slug}\n    name: {name}\n    roleDefinition: r\n    groups: [read]\n"
    write(tmp_path / "global" / "modes.yaml", "customModes:\n" + mode.format(slug="shared", name="Global Shared") + mode.format(slug="g-only", name="G"))
    write(tmp_path / ".roomodes", "customModes:\n" + mode.format(slug="shared", name="Roo Shared") + mode.format(slug="ask", name="Roo Ask") + mode.format(slug="roo-only", name="R"))
    write(tmp_path / ".modus" / "modes.yaml", "customModes:\n" + mode.format(slug="ask", name="Modus Ask") + mode.format(slug="m-only", name="M"))
    reg = registry(tmp_path)
    slugs = [m.slug for m in reg.modes]
    assert slugs == ["code", "architect", "ask", "debug", "orchestrator", "m-only", "shared", "roo-only", "g-only"]
    assert reg.get("ask").name == "Modus Ask"  # .modus/modes.yaml beats .roomodes, in the built-in's place
    assert reg.get("ask").source == "project"
    assert reg.get("shared").name == "Roo Shared"  # .roomodes beats the global file
    assert reg.get("g-only").source == "global"
    assert reg.get("code").source == "builtin"


def test_reload_when_a_file_changes(tmp_path):
    reg = registry(tmp_path)
    changed = []
    reg.on_change = changed.append
    assert reg.get("docs") is None
    write(tmp_path / ".modus" / "modes.yaml", "customModes:\n" + GOOD)
    assert reg.refresh() and reg.get("docs") is not None
    assert [f.path for f in changed[0]] == [tmp_path / ".modus" / "modes.yaml"]
    assert reg.refresh() == []  # nothing changed: nothing re-read
    write(tmp_path / ".modus" / "modes.yaml", "customModes:\n  - slug: docs\n")
    reg.refresh()
    assert reg.get("docs") is None
    assert reg.diagnostics(tmp_path / ".modus" / "modes.yaml")


# ---------------------------------------------------------------- the modes list of the prompt


@pytest.mark.parametrize(
    "role, first",
    [
        ("You review code. You name each problem.", "You review code."),
        ("You are a tester!  Then more.", "You are a tester!"),
        ("Why not? Because.", "Why not?"),
        ("You write Node.js and v1.2 code. Always.", "You write Node.js and v1.2 code."),  # a dot inside a word ends nothing
        ("You fix bugs, e.g. crashes, i.e. the worst ones. Then tests.", "You fix bugs, e.g. crashes, i.e. the worst ones."),
        ("You are the architect.\nYou plan. You design.", "You are the architect."),
        ("A first line without an end\nSecond line.", "A first line without an end"),  # within the first line
        ("\n\n   You start late.  \n", "You start late."),
        ("Ends at the end.", "Ends at the end."),
        ("word " * 60 + ". Done.", ("word " * 40).rstrip() + "…"),  # cut at a word, at most 200 characters
        ("x" * 300, "x" * 199 + "…"),
    ],
)
def test_the_first_sentence_of_a_role_definition(role, first):
    from server.prompt import first_sentence

    assert first_sentence(role) == first
    assert len(first_sentence(role)) <= 200


def test_the_modes_list_shows_when_to_use_else_description_else_the_first_sentence():
    from types import SimpleNamespace

    from server.modes import Mode
    from server.prompt import modes_list

    role = "You are a reviewer with twenty years of practice. You read every line.\nYou never guess."
    modes = [
        Mode("a", "A", role, when_to_use="For reviews.", description="Reviews"),
        Mode("b", "B", role, when_to_use="  ", description="Reviews code"),
        Mode("c", "C", role),
        Mode("d", "D", role, when_to_use="For reviews:\n- of code\n- of docs\n"),
    ]
    assert modes_list(SimpleNamespace(modes=modes)).splitlines()[3:] == [
        '* "A" mode (a): For reviews.',
        '* "B" mode (b): Reviews code',
        '* "C" mode (c): You are a reviewer with twenty years of practice.',
        '* "D" mode (d): For reviews:',
        "  - of code",
        "  - of docs",
    ]


# ---------------------------------------------------------------- patterns cannot hang the server


def test_catastrophic_pattern_runs_on_the_linear_engine():
    p = Pattern.compile(r"^(a+)+$")
    assert p.linear
    assert p.search("a" * 20_000 + "b") is False
    assert p.search("aaa") is True


def test_lookaround_falls_back_to_a_time_bounded_engine():
    p = Pattern.compile(r"^(?!secret/).*\.md$")
    assert not p.linear
    assert p.search("docs/a.md") and not p.search("secret/a.md")
    slow = Pattern.compile(r"^(a|aa)+(?=c)$")
    assert slow.search("a" * 64) is False  # times out or fails: either way, no match and no hang


@pytest.mark.parametrize("home", [None, "", "/tmp/elsewhere"])
@pytest.mark.parametrize("variable, ours, theirs", [
    ("XDG_CONFIG_HOME", lambda: global_modes_path().parent, "user_config_dir"),
    ("XDG_STATE_HOME", lambda: state_dir(), "user_state_dir"),
])
def test_the_users_folders_are_where_platformdirs_puts_them(monkeypatch, home, variable, ours, theirs):
    import platformdirs

    if home is None:
        monkeypatch.delenv(variable, raising=False)
    else:
        monkeypatch.setenv(variable, home)
    assert ours() == Path(getattr(platformdirs, theirs)("modus", appauthor=False))
