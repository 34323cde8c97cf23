"""Rules of every format (PROTOCOL.md, "Project files of every peer"): where each is read from,
its front matter's conditions, the prompt's order, each text once, `rulesDisabled`, and the
conditional rules a conversation's touched files wake (agent/touched.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import call_tool, chat, make_session, running
from memory_host import MemoryHost
from protocol import ChatSendParams, RulesListParams
from server.prompt.rules import FrontMatter, globs, load_rules
from server.providers import ToolCallRequest
from server.providers.scripted import ScriptedModel


def put(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def table(rules) -> list[tuple[str, str, str, tuple, tuple]]:
    return [(r.rel, r.format, r.scope, r.modes, r.paths) for r in rules.files]


def told(rules, slug="code", touched=(), disabled=()) -> list[str]:
    return [r.rel for r in rules.applying(slug, frozenset(touched), disabled)]


# ---------------------------------------------------------------- every source, its format and scope


def test_every_format_is_read_with_its_scope_in_the_prompts_order(tmp_path):
    ws, config = tmp_path / "ws", tmp_path / "config"
    put(config, "rules/mine.md", "Global rule.")
    for rel in [
        "AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", ".roorules", ".roo/rules/a.md", ".cursorrules",
        ".github/copilot-instructions.md", ".modus/rules/a.md", ".roorules-code", ".roo/rules-code/a.md",
        ".modus/rules-code/a.md", ".modus/rules-ask/a.md", "pkg/AGENTS.md",
    ]:
        put(ws, rel, f"Rule of {rel}.")
    put(ws, ".clinerules/style.md", "Cline md.")
    put(ws, ".clinerules/notes.txt", "Cline txt.")
    put(ws, ".clinerules/data.json", "{}")
    put(ws, ".clinerules/workflows/release.md", "A workflow: a command, not a rule.")
    put(ws, ".clinerules/web.md", "---\npaths:\n  - 'web/**'\n---\nCline web.")
    put(ws, ".cursor/rules/always.mdc", "---\nalwaysApply: true\n---\nCursor always.")
    put(ws, ".cursor/rules/ts/react.mdc", "---\nglobs: src/**/*.tsx, *.ts\nalwaysApply: false\n---\nCursor tsx.")
    put(ws, ".cursor/rules/manual.mdc", "---\ndescription: ask me\n---\nCursor manual.")
    put(ws, ".cursor/rules/readme.md", "Not a .mdc.")
    put(ws, ".github/instructions/py.instructions.md", "---\napplyTo: '**/*.py'\n---\nCopilot py.")
    put(ws, ".github/instructions/none.instructions.md", "Copilot without applyTo.")
    put(ws, ".modus/rules/docs.md", "---\npaths: docs/**\n---\nModus docs.")
    rules = load_rules(Path(os.path.realpath(ws)), config / "rules")
    gpath = str(Path(os.path.realpath(config)) / "rules" / "mine.md")
    assert table(rules) == [
        (gpath, "modus", "always", (), ()),
        ("AGENTS.md", "agents", "always", (), ()),
        ("CLAUDE.md", "claude", "always", (), ()),
        (".claude/CLAUDE.md", "claude", "always", (), ()),
        (".clinerules/notes.txt", "cline", "always", (), ()),
        (".clinerules/style.md", "cline", "always", (), ()),
        (".roorules", "roo", "always", (), ()),
        (".roo/rules/a.md", "roo", "always", (), ()),
        (".cursorrules", "cursor", "always", (), ()),
        (".cursor/rules/always.mdc", "cursor", "always", (), ()),
        (".github/copilot-instructions.md", "copilot", "always", (), ()),
        (".modus/rules/a.md", "modus", "always", (), ()),
        (".roorules-code", "roo", "mode", ("code",), ()),
        (".roo/rules-code/a.md", "roo", "mode", ("code",), ()),
        (".modus/rules-ask/a.md", "modus", "mode", ("ask",), ()),
        (".modus/rules-code/a.md", "modus", "mode", ("code",), ()),
        ("pkg/AGENTS.md", "agents", "paths", (), ("pkg/**",)),
        (".clinerules/web.md", "cline", "paths", (), ("web/**",)),
        (".cursor/rules/manual.mdc", "cursor", "paths", (), ()),
        (".cursor/rules/ts/react.mdc", "cursor", "paths", (), ("src/**/*.tsx", "*.ts")),
        (".github/instructions/none.instructions.md", "copilot", "paths", (), ()),
        (".github/instructions/py.instructions.md", "copilot", "paths", (), ("**/*.py",)),
        (".modus/rules/docs.md", "modus", "paths", (), ("docs/**",)),
    ]
    # before any file is touched: global, always, the mode's; no conditional rule
    assert told(rules) == [gpath, *[r for r, *_ in table(rules)[1:12]], ".roorules-code", ".roo/rules-code/a.md", ".modus/rules-code/a.md"]
    assert ".modus/rules-ask/a.md" in told(rules, "ask") and ".modus/rules-code/a.md" not in told(rules, "ask")
    # touched files wake the conditional rules that match them; the others stay asleep
    woken = told(rules, touched={"pkg/x/y.go", "web/index.html", "src/ui/App.tsx", "tool.py", "docs/guide.md"})[15:]
    assert woken == [
        "pkg/AGENTS.md", ".clinerules/web.md", ".cursor/rules/ts/react.mdc",
        ".github/instructions/py.instructions.md", ".modus/rules/docs.md",
    ]
    texts = [r.text for r in rules.files]
    assert "Cline web." in texts and not any("paths:" in t or "---" in t for t in texts)  # front matter never told


def test_a_clinerules_file_and_cursors_loose_front_matter(tmp_path):
    put(tmp_path, ".clinerules", "---\npaths: [src/**]\n---\nOne file.")
    put(tmp_path, ".cursor/rules/ts.mdc", "---\nglobs: *.ts,*.tsx\n---\nTypes.")  # not YAML (an alias), as Cursor writes it
    rules = load_rules(tmp_path)
    assert table(rules) == [
        (".clinerules", "cline", "paths", (), ("src/**",)),
        (".cursor/rules/ts.mdc", "cursor", "paths", (), ("*.ts", "*.tsx")),
    ]
    assert told(rules, touched={"a.tsx"}) == [".cursor/rules/ts.mdc"]


def test_front_matter_problems_are_told_and_the_rule_applies_without_the_condition(tmp_path):
    put(tmp_path, ".modus/rules/a.md", "---\npaths: {a: 1}\n---\nStill a rule.")
    put(tmp_path, ".modus/rules/b.md", "---\njust words\n---\nB.")
    rules = load_rules(tmp_path)
    assert told(rules) == [".modus/rules/a.md", ".modus/rules/b.md"]
    assert [r.text for r in rules.files] == ["Still a rule.", "B."]
    assert ".modus/rules/a.md: its front matter's `paths` is not a list of globs; the rule applies without it" in rules.skipped
    assert ".modus/rules/b.md: its front matter is not a mapping of keys; it was left out" in rules.skipped


@pytest.mark.parametrize(
    "text, data, body",
    [
        ("---\npaths:\n  - src/**\n---\nBody", {"paths": ["src/**"]}, "Body"),
        ("\ufeff---\nalwaysApply: true\n---\nBody", {"alwaysApply": True}, "Body"),
        ("---\nglobs: *.ts\n---\nBody", {"globs": "*.ts"}, "Body"),
        ("---\nno end of front matter\nBody", {}, "---\nno end of front matter\nBody"),
        ("Body\n---\npaths: x\n---", {}, "Body\n---\npaths: x\n---"),
        ("---\n" + "x: " + "a" * 20000 + "\n---\nBody", {}, "Body"),
    ],
)
def test_front_matter(text, data, body):
    front = FrontMatter(text)
    assert (front.data, front.body) == (data, body)


@pytest.mark.parametrize(
    "pattern, path, matches",
    [
        ("src/**/*.py", "src/pkg/a.py", True),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "lib/src/a.py", False),
        ("src/*.py", "src/pkg/a.py", False),
        ("*.py", "a.py", True),
        ("*.py", "pkg/a.py", False),  # workspace-relative
        ("**/*.{ts,tsx}", "a/b/App.tsx", True),
        ("src/**", "src", True),
        ("src/**", "srcs/a", False),
        ("docs", "docs/a/b.md", True),
        ("./web/", "web/index.html", True),
        ("/web/*.html", "web/index.html", True),
        ("file?.[ch]", "file1.c", True),
        ("file[!0-9].c", "file1.c", False),
    ],
)
def test_globs(pattern, path, matches):
    assert bool(globs((pattern,)).fullmatch(path)) is matches


# ---------------------------------------------------------------- each text once


def test_the_same_file_by_two_names_is_told_once(tmp_path):
    put(tmp_path, "AGENTS.md", "Shared rules.")
    (tmp_path / ".roo" / "rules").mkdir(parents=True)
    (tmp_path / ".roo" / "rules" / "agents.md").symlink_to(tmp_path / "AGENTS.md")
    os.link(tmp_path / "AGENTS.md", tmp_path / ".cursorrules")  # a hard link: the same file by another name
    put(tmp_path, "CLAUDE.md", "@AGENTS.md\n")  # Claude Code's import of it
    put(tmp_path, ".claude/CLAUDE.md", "@../docs/claude.md")  # an import of a file that is no rule: its text
    put(tmp_path, "docs/claude.md", "---\ntitle: x\n---\nFrom the docs.")
    put(tmp_path, ".modus/rules/copy.md", "Shared rules.\n")  # the same words
    rules = load_rules(tmp_path)
    assert told(rules) == ["AGENTS.md", ".claude/CLAUDE.md"]
    assert [r.text for r in rules.applying("code")] == ["Shared rules.", "From the docs."]
    listed = {r.rel: active for r, active in rules.listed("code")}
    assert listed == {
        "AGENTS.md": True, "CLAUDE.md": False, ".claude/CLAUDE.md": True, ".roo/rules/agents.md": False,
        ".cursorrules": False, ".modus/rules/copy.md": False,
    }


def test_an_import_may_not_lead_outside(tmp_path):
    ws = tmp_path / "ws"
    put(tmp_path, "secret.md", "the key is 42")
    put(ws, "CLAUDE.md", "@../secret.md")
    rules = load_rules(ws)
    assert [r.text for r in rules.files] == ["@../secret.md"]
    assert any(s.startswith("CLAUDE.md: its import ../secret.md: it leads outside the workspace") for s in rules.skipped)


def test_rules_disabled_leaves_files_out(tmp_path):
    config = tmp_path / "config"
    put(config, "rules/mine.md", "Global.")
    put(tmp_path / "ws", "AGENTS.md", "Agents.")
    put(tmp_path / "ws", ".roo/rules/a.md", "Roo a.")
    put(tmp_path / "ws", ".roo/rules/b.md", "Roo b.")
    rules = load_rules(tmp_path / "ws", config / "rules")
    gpath = str(config / "rules" / "mine.md")
    assert told(rules, disabled=[".roo/rules/a.md"]) == [gpath, "AGENTS.md", ".roo/rules/b.md"]
    assert told(rules, disabled=[".roo/**", str(config / "**")]) == ["AGENTS.md"]


# ---------------------------------------------------------------- untrusted input


def test_a_nested_agents_file_is_found_below_the_root_but_not_in_dependencies(tmp_path):
    put(tmp_path, "a/b/AGENTS.md", "Deep.")
    put(tmp_path, "node_modules/x/AGENTS.md", "A dependency's.")
    put(tmp_path, ".hidden/AGENTS.md", "Hidden.")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    rules = load_rules(tmp_path)
    assert table(rules) == [("a/b/AGENTS.md", "agents", "paths", (), ("a/b/**",))]
    assert not rules.changed()
    put(tmp_path, "c/AGENTS.md", "New.")
    assert rules.changed()  # a new folder, a new nested file: read again
    assert [r.rel for r in load_rules(tmp_path).files] == ["a/b/AGENTS.md", "c/AGENTS.md"]


def test_global_rules_change_and_global_files_are_watched(tmp_path):
    config = tmp_path / "config"
    rules = load_rules(tmp_path / "ws", config / "rules")
    assert rules.files == () and not rules.changed()
    put(config, "rules/mine.md", "Mine.")
    assert rules.changed()
    rules = load_rules(tmp_path / "ws", config / "rules")
    assert [r.is_global for r in rules.files] == [True]
    put(tmp_path / "ws", ".cursorrules", "Cursor.")
    assert rules.changed()


# ---------------------------------------------------------------- conversations: touched files wake rules


def prompts(monkeypatch) -> list[str]:
    """The system prompt of each model request from now on."""
    seen: list[str] = []
    complete = ScriptedModel.complete

    async def recording(self, request, *args, **kwargs):
        seen.append(request.system)
        return await complete(self, request, *args, **kwargs)

    monkeypatch.setattr(ScriptedModel, "complete", recording)
    return seen


def read(path: str) -> dict:
    return {"name": "read_file", "arguments": {"path": path}}


async def test_a_conditional_rule_applies_after_a_read_from_the_next_request_on(tmp_path, monkeypatch):
    put(tmp_path, ".clinerules/py.md", "---\npaths: ['src/**/*.py']\n---\nPython rule.")
    put(tmp_path, "src/pkg/a.py", "x = 1\n")
    put(tmp_path, "README.md", "hi\n")
    seen = prompts(monkeypatch)
    turns = [{"toolCalls": [read("README.md")]}, {"toolCalls": [read("src/pkg/a.py")]}, {"text": "Done."}, {"text": "Again."}]
    async with running(tmp_path, turns) as session:
        assert await chat(session, "go") == "completed"
        assert [("Python rule." in s) for s in seen] == [False, False, True]
        assert await chat(session, "more") == "completed"
        assert "Python rule." in seen[-1]  # and from then on
        assert "Python rule." in session.prompt(protocol_prompt()).text
        listed = (await session.rules_list(RulesListParams())).rules
        assert [(r.path, r.scope, r.paths, r.active) for r in listed] == [(".clinerules/py.md", "paths", ["src/**/*.py"], True)]
        assert listed[0].tokens == 3
        first = session.conversation_id
        session.open(None)  # another conversation touched nothing
        assert "Python rule." not in session.prompt(protocol_prompt()).text
        assert "Python rule." not in session.task_for("modus").prompt.text
        assert not (await session.rules_list(RulesListParams())).rules[0].active
        assert (await session.rules_list(RulesListParams(conversation_id=first))).rules[0].active
    # a restarted server knows what the conversation touched
    session = make_session(tmp_path)
    try:
        async with session.running():
            assert session.conversation_id != first
            session.open(first)
            assert "Python rule." in session.prompt(protocol_prompt()).text
    finally:
        session.close()


def protocol_prompt():
    from protocol import PromptGetParams

    return PromptGetParams()


async def test_a_failed_call_touches_nothing_and_a_write_does(tmp_path):
    put(tmp_path, ".modus/rules/docs.md", "---\npaths: docs/**\n---\nDocs rule.")
    async with running(tmp_path, yolo=True) as session:
        failed = await call_tool(session, "read_file", path="docs/missing.md")
        assert failed.error is not None and failed.touched == ()
        assert "Docs rule." not in session.prompt(protocol_prompt()).text
        written = await call_tool(session, "write_to_file", path="docs/new.md", content="x\n")
        assert written.error is None and written.touched == ("docs/new.md",)


async def test_mentions_and_a_code_actions_selection_touch_files(tmp_path):
    put(tmp_path, ".modus/rules/a.md", "---\npaths: [lib/**]\n---\nLib rule.")
    put(tmp_path, ".modus/rules/b.md", "---\npaths: [web/**]\n---\nWeb rule.")
    put(tmp_path, ".modus/rules/c.md", "---\npaths: [app/**]\n---\nApp rule.")
    put(tmp_path, "lib/x.py", "")
    put(tmp_path, "web/index.html", "")
    put(tmp_path, "app/main.go", "")
    async with running(tmp_path, [{"text": "ok"}] * 3) as session:
        await session.send(ChatSendParams(text="Look at @nosuch/file.py and mail sam@lib/x.py"))
        await session.idle(session.conversation_id)
        assert "Lib rule." not in session.prompt(protocol_prompt()).text
        await session.send(ChatSendParams(text="Look at @/lib/x.py, please."))
        await session.idle(session.conversation_id)
        assert "Lib rule." in session.prompt(protocol_prompt()).text
        await session.send(ChatSendParams(text=f"And @{tmp_path}/web/index.html"))  # ACP's attachments: absolute
        await session.idle(session.conversation_id)
        assert "Web rule." in session.prompt(protocol_prompt()).text
        await session.start_in_mode("ask", "Explain this code.\n\nFile: app/main.go, lines 1-1:\n1 | ", ("app/main.go",))
        await session.idle(session.conversation_id)
        assert "App rule." in session.prompt(protocol_prompt()).text


async def test_a_cut_conversation_forgets_the_touches_it_cut(tmp_path):
    put(tmp_path, ".modus/rules/a.md", "---\npaths: [lib/**]\n---\nLib rule.")
    put(tmp_path, "lib/x.py", "")
    async with running(tmp_path, [{"text": "ok"}] * 2) as session:
        await chat(session, "hello")
        seq = session.store.last_seq(session.conversation_id)
        await chat(session, "now @lib/x.py")
        assert "Lib rule." in session.task_for("modus").prompt.text
        session.cut_conversation(session.conversation_id, seq)
        assert "Lib rule." not in session.task_for("modus").prompt.text


async def test_a_subtasks_touches_count_for_its_conversation(tmp_path):
    put(tmp_path, ".modus/rules/a.md", "---\npaths: [lib/**]\n---\nLib rule.")
    put(tmp_path, "lib/x.py", "")
    turns = [
        {"toolCalls": [{"name": "new_task", "arguments": {"mode": "ask", "message": "read it"}}]},
        {"toolCalls": [read("lib/x.py")]},
        {"toolCalls": [{"name": "attempt_completion", "arguments": {"result": "read"}}]},
        {"toolCalls": [{"name": "attempt_completion", "arguments": {"result": "done"}}]},
    ]
    async with running(tmp_path, turns, autoApprove={"subtasks": True, "read": True, "modeSwitch": True}) as session:
        assert await chat(session, "go") == "completed"
        assert "Lib rule." in session.task_for("modus").prompt.text
        cid = session.conversation_id
    session = make_session(tmp_path)
    try:
        async with session.running():
            session.open(cid)
            assert "Lib rule." in session.task_for("modus").prompt.text
    finally:
        session.close()


async def test_rules_list_and_rules_disabled_in_a_session(tmp_path):
    put(tmp_path, "AGENTS.md", "Agents.")
    put(tmp_path, ".roo/rules-ask/a.md", "Ask only.")
    put(tmp_path, ".cursor/rules/x.mdc", "---\nglobs: ['x/**']\n---\nX.")
    host = MemoryHost()
    async with running(tmp_path, host=host, rulesDisabled=["AGENTS.md"]) as session:
        listed = [r.wire() for r in (await session.rules_list(RulesListParams())).rules]
        assert listed == [
            {"path": "AGENTS.md", "format": "agents", "scope": "always", "active": False, "tokens": 2},
            {"path": ".roo/rules-ask/a.md", "format": "roo", "scope": "mode", "modes": ["ask"], "active": False, "tokens": 3},
            {"path": ".cursor/rules/x.mdc", "format": "cursor", "scope": "paths", "paths": ["x/**"], "active": False, "tokens": 2},
        ]
        assert "Agents." not in session.task_for("modus").prompt.text
        session.switch_mode("ask", by="user")
        assert [r.active for r in (await session.rules_list(RulesListParams())).rules] == [False, True, False]
        from protocol import Settings

        session.update_settings(Settings.model_validate({"modeSwitchDelayMs": 0}))
        assert "Agents." in session.task_for("modus").prompt.text
        with pytest.raises(Exception, match="agent: unknown agent: nobody"):
            await session.rules_list(RulesListParams(agent="nobody"))
        with pytest.raises(Exception, match="conversationId: unknown conversation: conv-nosuch"):
            await session.rules_list(RulesListParams(conversation_id="conv-nosuch"))
