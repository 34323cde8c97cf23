"""A cloned repository is untrusted input: what it holds is read bounded in kind, size and time,
and a refused file is reported while everything else still loads."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import anyio
import pytest

from helpers import call_tool, make_session, running
from memory_host import MemoryHost
from server.modes import ModeRegistry, parse_modes
from server.modes.registry import MAX_FILE_BYTES
from server.prompt import load_rules
from server.prompt.rules import MAX_FILES
from server.untrusted import MAX_NODES, Refused, off_loop, read_text, walk, yaml_too_big

MODE = "customModes:\n  - slug: {slug}\n    name: {slug}\n    roleDefinition: r\n    groups: [read]\n"


def alias_bomb(levels: int = 12) -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + f"\ncustomModes: [{{slug: x, name: X, roleDefinition: [*l{levels - 1}], groups: []}}]\n"


def make(kind: str, path: Path, outside: Path) -> None:
    """A file of the given kind at `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()
    elif kind == "huge":
        path.write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    elif kind == "binary":
        path.write_bytes(b"\xff\xfe\x00 not utf-8")
    elif kind == "outside":
        secret = outside / "secret.md"
        secret.write_text("the key is 42\n")
        path.symlink_to(secret)
    else:
        raise ValueError(kind)


OUTSIDE = "it leads outside the workspace"


@pytest.mark.parametrize(
    "kind, anywhere, in_workspace",
    [
        ("fifo", "it is a FIFO, not a regular file", "it is a FIFO, not a regular file"),
        ("dev-zero", "it is a character device, not a regular file", OUTSIDE),
        ("directory", "it is a directory, not a regular file", "it is a directory, not a regular file"),
        ("socket", "it is a socket, not a regular file", "it is a socket, not a regular file"),
        ("huge", "it is larger than 2 MiB", "it is larger than 2 MiB"),
        ("binary", "it is not UTF-8 text", "it is not UTF-8 text"),
        ("outside", None, OUTSIDE),
    ],
)
def test_read_text_refuses_what_is_not_a_small_regular_file_inside(tmp_path, kind, anywhere, in_workspace):
    """`anywhere`: read as a file that may be anywhere (the global modes file); `in_workspace`: as a
    project file, which must really be inside the workspace. None: it is read."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    make(kind, root / "f", outside)
    for inside, reason in ((None, anywhere), (root, in_workspace)):
        if reason is None:
            assert read_text(root / "f", MAX_FILE_BYTES, inside=inside) == "the key is 42\n"
            continue
        with pytest.raises(Refused) as refused:
            read_text(root / "f", MAX_FILE_BYTES, inside=inside)
        assert str(refused.value).startswith(reason)


def test_read_text_reads_a_regular_file_and_says_none_for_a_missing_one(tmp_path):
    (tmp_path / "a.md").write_text("héllo\n")
    (tmp_path / "link.md").symlink_to(tmp_path / "a.md")
    assert read_text(tmp_path / "a.md", 100, inside=tmp_path) == "héllo\n"
    assert read_text(tmp_path / "link.md", 100, inside=tmp_path) == "héllo\n"
    assert read_text(tmp_path / "missing.md", 100, inside=tmp_path) is None
    assert read_text(tmp_path / "missing" / "deeper.md", 100) is None


@pytest.mark.parametrize("levels", [6, 9, 30])
def test_an_alias_bomb_is_refused_at_once(levels):
    result = parse_modes(alias_bomb(levels), "project")  # it used to take minutes and gigabytes
    assert result.modes == ()
    [problem] = result.diagnostics
    assert problem.message == f"Modes file not read: its YAML aliases add more than {MAX_NODES:,} nodes"


def test_the_node_limit_counts_what_aliases_add_not_what_the_text_holds():
    """A big file without aliases holds many nodes, each written in it: only what aliases add
    beyond the text is limited (a 2 MiB modes file may hold far more than MAX_NODES nodes)."""
    import yaml

    plain = yaml.compose("items: [" + "a, " * (MAX_NODES + 10) + "a]\n")
    assert yaml_too_big(plain) is None
    shared = yaml.compose("one: &one [" + "a, " * 100 + "a]\ntwice: [" + ", ".join(["*one"] * (MAX_NODES // 110)) + "]\n")
    assert yaml_too_big(shared) is None  # aliases that add fewer than MAX_NODES nodes
    more = yaml.compose("one: &one [" + "a, " * 100 + "a]\ntwice: [" + ", ".join(["*one"] * (MAX_NODES // 100 + 2)) + "]\n")
    assert yaml_too_big(more) == f"its YAML aliases add more than {MAX_NODES:,} nodes"


def test_a_recursive_alias_is_refused_and_shared_anchors_still_work():
    recursive = parse_modes("customModes: &x [{slug: x, name: X, roleDefinition: r, groups: *x}]\n", "project")
    assert recursive.diagnostics[0].message == "Modes file not read: a YAML alias refers to a node that contains it"
    shared = "groups: &g [read, edit]\ncustomModes:\n" + "".join(
        f"  - {{slug: {s}, name: {s}, roleDefinition: r, groups: *g}}\n" for s in ("a", "b")
    )
    result = parse_modes(shared, "project")
    assert [m.slug for m in result.modes] == ["a", "b"] and result.diagnostics == ()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge", "outside"])
def test_a_refused_modes_file_is_a_diagnostic_and_the_others_load(tmp_path, kind):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    make(kind, root / ".roomodes", outside)
    (root / ".modus").mkdir()
    (root / ".modus" / "modes.yaml").write_text(MODE.format(slug="good"))
    registry = ModeRegistry(root, tmp_path / "global.yaml")
    registry.refresh()
    assert registry.get("good") is not None
    [problem] = registry.diagnostics(root / ".roomodes")
    assert problem.message.startswith("Modes file not read: it ")


async def test_off_loop_gives_up_after_its_time_limit():
    with anyio.fail_after(5):
        with pytest.raises(Refused, match="took longer than 0.2 s"):
            await off_loop(time.sleep, 2, seconds=0.2)


async def test_a_modes_file_that_takes_too_long_is_reported_and_the_others_load(tmp_path, monkeypatch):
    (tmp_path / ".roomodes").write_text(MODE.format(slug="slow"))
    (tmp_path / ".modus").mkdir()
    (tmp_path / ".modus" / "modes.yaml").write_text(MODE.format(slug="quick"))
    registry = ModeRegistry(tmp_path, tmp_path / "global.yaml")
    load = registry.load
    monkeypatch.setattr(registry, "load", lambda f: time.sleep(1) or load(f) if f.path.name == ".roomodes" else load(f))
    monkeypatch.setattr("server.modes.registry.off_loop", lambda fn, *a: off_loop(fn, *a, seconds=0.2))
    await registry.refresh_off_loop()
    assert registry.get("quick") is not None and registry.get("slow") is None
    assert registry.diagnostics(tmp_path / ".roomodes")[0].message == "Modes file not read: reading it took longer than 0.2 s"


def test_rules_skip_what_is_refused_and_keep_the_rest(tmp_path):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    make("dev-zero", root / "AGENTS.md", outside)
    rules = root / ".modus" / "rules"
    make("fifo", rules / "a-fifo.md", outside)
    make("outside", rules / "b-secret.md", outside)
    (rules / "c-good.md").write_text("Use tabs.\n")
    (root / ".roo" / "rules-code").mkdir(parents=True)
    (root / ".roo" / "rules-code" / "style.md").write_text("Code rule.\n")
    (root / ".roo" / "rules-ask").mkdir(parents=True)
    (root / ".roo" / "rules-ask" / "style.md").write_text("Ask rule.\n")
    loaded = load_rules(root)
    assert [(r.rel, r.text) for r in loaded.for_mode("code")] == [
        (".modus/rules/c-good.md", "Use tabs."),
        (".roo/rules-code/style.md", "Code rule."),
    ]
    assert [r.rel for r in loaded.for_mode("ask")] == [".modus/rules/c-good.md", ".roo/rules-ask/style.md"]
    skipped = "\n".join(loaded.skipped)
    assert "AGENTS.md: it leads outside the workspace (to /dev/zero)" in skipped
    assert ".modus/rules/a-fifo.md: it is a FIFO" in skipped
    assert ".modus/rules/b-secret.md: it leads outside the workspace" in skipped
    assert "the key is 42" not in repr(loaded)


def test_rules_are_bounded_in_number_and_depth(tmp_path):
    rules = tmp_path / ".modus" / "rules"
    deep = rules.joinpath(*"abcdefgh")
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("too deep\n")
    for n in range(MAX_FILES + 5):
        (rules / f"r{n:03}.md").write_text(f"rule {n}\n")
    loaded = load_rules(tmp_path)
    assert len(loaded.for_mode("code")) == MAX_FILES
    assert not any("too deep" in r.text for r in loaded.for_mode("code"))
    assert any("deeper than 5 levels" in s for s in loaded.skipped)
    assert any(f"more than {MAX_FILES} files" in s for s in loaded.skipped)


def test_rules_know_when_they_changed(tmp_path):
    loaded = load_rules(tmp_path)
    assert not loaded.changed()
    (tmp_path / ".roo" / "rules-code").mkdir(parents=True)
    assert loaded.changed()  # a new rule folder
    (tmp_path / ".roo" / "rules-code" / "a.md").write_text("one\n")
    loaded = load_rules(tmp_path)
    assert not loaded.changed()
    (tmp_path / ".roo" / "rules-code" / "a.md").write_text("two, longer\n")
    assert loaded.changed()


def test_walk_does_not_follow_symlinked_folders(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.md").write_text("x")
    folder = tmp_path / "ws" / "rules"
    folder.mkdir(parents=True)
    (folder / "loop").symlink_to(folder)
    (folder / "away").symlink_to(tmp_path / "outside")
    files, folders, skipped = walk(folder, inside=tmp_path / "ws", max_files=10, max_depth=5)
    assert files == [] and folders == [folder]
    assert [s.removeprefix(f"{folder}/") for s in skipped] == [
        "away: it leads outside the workspace (to " + str(tmp_path / "outside") + ")",
        "loop: it is a symlinked folder, which is not followed",
    ]


async def test_a_hostile_repository_does_not_stop_the_session(tmp_path):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    make("fifo", root / ".roomodes", outside)
    (root / ".modus").mkdir()
    (root / ".modus" / "modes.yaml").write_text(alias_bomb())
    make("dev-zero", root / "AGENTS.md", outside)
    make("fifo", root / ".modus" / "rules" / "wait.md", outside)
    (root / ".modus" / "rules" / "ok.md").write_text("Be brief.\n")
    (root / ".global-modes.yaml").write_text(MODE.format(slug="mine"))  # the global modes file of make_session
    host = MemoryHost()
    session = make_session(root, host)
    try:
        with anyio.fail_after(10):
            async with session.running():
                assert session.modes.get("mine") is not None  # everything else still loads
                assert "Rules from .modus/rules/ok.md:\nBe brief." in session.task_for("modus").prompt.text
    finally:
        session.close()
    [(level, text)] = host.messages
    assert level == "warning" and "AGENTS.md: it leads outside the workspace (to /dev/zero)" in text and ".modus/rules/wait.md: it is a FIFO" in text
    assert session.modes.diagnostics(root / ".roomodes")[0].message == "Modes file not read: it is a FIFO, not a regular file"
    assert "YAML aliases" in session.modes.diagnostics(root / ".modus" / "modes.yaml")[0].message


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("read_file", {}),
        ("write_to_file", {"content": "x"}),
        ("apply_diff", {"diff": "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE"}),
    ],
)
async def test_tools_do_not_wait_on_a_fifo_in_the_workspace(tmp_path, tool, arguments):
    os.mkfifo(tmp_path / "pipe")
    async with running(tmp_path, autoApprove={"edit": True}) as session:
        with anyio.fail_after(5):
            result = await call_tool(session, tool, path="pipe", **arguments)
    assert result.error is not None and result.error.type == "ToolError"
    assert result.text == "Cannot read 'pipe': it is a FIFO, not a regular file."
