"""@-mentions typed by the user, over the wire (SPEC §5): who is dispatched, what `mentions`
reports, what the agents see, and agents running in parallel in one conversation."""

from __future__ import annotations

import asyncio

import yaml
from lsprotocol import types as lsp

from protocol import methods


def agent_script(workspace, name: str, *turns: dict) -> dict:
    path = workspace / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"turns": list(turns)}), encoding="utf-8")
    return {"provider": "scripted", "script": path.name}


async def start(editor, workspace) -> None:
    await editor.start(
        {
            "agents": [
                {"name": "architect", "model": agent_script(workspace, "architect", {"text": "The cache design."})},
                {"name": "coder", "model": agent_script(workspace, "coder", {"text": "The cache code."})},
                {"name": "reviewer", "topLevel": False},
            ],
            "members": [{"handle": "sam", "name": "Sam Jones"}],
        }
    )


async def test_two_agents_start_in_parallel_each_with_the_whole_message(editor, workspace):
    await start(editor, workspace)
    sent = await editor.request(methods.CHAT_SEND, {"text": "@architect design the cache. @coder implement it."})
    assert sent["dispatched"] == ["architect", "coder"]
    assert sent["mentions"] == [
        {"raw": "@architect", "kind": "agent", "name": "architect"},
        {"raw": "@coder", "kind": "agent", "name": "coder"},
    ]
    assert sent["text"] == "design the cache. implement it."
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    started = {u["agent"] for u in editor.of_kind("turn_started")}
    said = {u["agent"]: u["text"] for u in editor.of_kind("message") if u["role"] == "assistant"}
    assert started == {"architect", "coder"}
    assert said == {"architect": "The cache design.", "coder": "The cache code."}
    # both turns were running at once: each started before either ended
    kinds = [(u["kind"], u.get("agent")) for u in editor.updates if u["kind"] in ("turn_started", "turn_ended")]
    assert [k for k, _ in kinds[:2]] == ["turn_started", "turn_started"]
    history = await editor.request(methods.CHAT_HISTORY, {"conversationId": sent["conversationId"]})
    user = history["messages"][0]
    assert user["text"] == "design the cache. implement it."
    assert user["metadata"]["typed"] == "@architect design the cache. @coder implement it."


async def test_a_prefix_a_human_and_the_default_responder(editor, workspace):
    await start(editor, workspace)
    sent = await editor.request(methods.CHAT_SEND, {"text": "@ARCH and @sam: have a look"})
    assert sent["dispatched"] == ["architect"]  # case-insensitive, by prefix
    assert [(m["kind"], m["name"]) for m in sent["mentions"]] == [("agent", "architect"), ("human", "sam")]
    await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    nobody = await editor.request(methods.CHAT_SEND, {"text": "and now?"})
    assert nobody["dispatched"] == ["architect"] and nobody["mentions"] == []  # the last agent that spoke
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)


async def test_a_message_of_mentions_only_starts_nothing(editor, workspace):
    await start(editor, workspace)
    sent = await editor.request(methods.CHAT_SEND, {"text": "@coder"})
    assert sent["dispatched"] == [] and sent["mentions"] == [{"raw": "@coder", "kind": "agent", "name": "coder"}]
    assert editor.of_kind("turn_started") == []
    assert [u["text"] for u in editor.of_kind("message")] == ["@coder"]


async def test_an_agent_wakes_another_by_name_and_a_chain_never_loops(editor, workspace):
    await editor.start(
        {
            "agents": [
                {"name": "architect", "model": agent_script(workspace, "architect", {"text": "Designed. @coder please build it; `@reviewer` is in code."})},
                {"name": "coder", "model": agent_script(workspace, "coder", {"text": "Built it. @architect have a look."})},
                {"name": "reviewer", "model": agent_script(workspace, "reviewer", {"text": "Never asked."})},
            ]
        }
    )
    await editor.request(methods.CHAT_SEND, {"text": "@architect design the cache"})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    started = [(u["agent"], u.get("wokenBy")) for u in editor.of_kind("turn_started")]
    assert started == [("architect", None), ("coder", "architect")]  # a mention in backticks wakes no one
    refused = [u for u in editor.of_kind("message") if u["role"] == "system"]
    assert len(refused) == 1 and refused[0]["text"] == "Mentions not delivered: @architect (already in this chain)."
    assert refused[0]["mentionsRefused"] == [{"mention": "@architect", "reason": "already in this chain"}]
    await asyncio.sleep(0.2)
    assert len(editor.of_kind("turn_started")) == 2  # no A → B → A
    # the history says which turn each message was, who woke it, and what was refused
    turns = {u["agent"]: u["turnId"] for u in editor.of_kind("turn_started")}
    history = await editor.request(methods.CHAT_HISTORY, {"conversationId": editor.of_kind("turn_started")[0]["conversationId"]})
    said = [(m["agent"], m["metadata"]["turnId"], m["metadata"].get("wokenBy")) for m in history["messages"] if m["role"] == "assistant"]
    assert said == [("architect", turns["architect"], None), ("coder", turns["coder"], "architect")]
    [system] = [m for m in history["messages"] if m["role"] == "system"]
    assert system["metadata"]["mentionsRefused"] == [{"mention": "@architect", "reason": "already in this chain"}]


async def test_a_turn_that_does_not_complete_wakes_no_one(editor, workspace):
    await editor.start(
        {
            "agents": [
                {"name": "architect", "model": agent_script(workspace, "architect", {"text": "@coder go", "toolCalls": [{"name": "ask_followup_question", "arguments": {"question": "Which cache?"}}]})},
                {"name": "coder", "model": agent_script(workspace, "coder", {"text": "Never asked."})},
            ]
        }
    )
    await editor.request(methods.CHAT_SEND, {"text": "@architect design the cache"})
    await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    assert editor.of_kind("turn_ended")[0]["outcome"] == "awaiting_user"
    await asyncio.sleep(0.2)
    assert [u["agent"] for u in editor.of_kind("turn_started")] == ["architect"]


AGENTS_FILE = """\
agents:
  - name: architect
    mode: architect
    instructions: Design first.
    model: {provider: scripted, script: architect.yaml}
  - name: code reviewer
  - name: coder
    topLevel: false
    model: {provider: scripted, script: coder.yaml}
"""


async def test_the_workspace_agents_file_gives_the_roster_each_agent_its_mode_and_diagnostics(editor, workspace):
    agent_script(workspace, "architect", {"text": "Designed."})
    agent_script(workspace, "coder", {"text": "Built."})
    (workspace / ".modus").mkdir()
    agents_file = workspace / ".modus" / "agents.yaml"
    agents_file.write_text(AGENTS_FILE)
    await editor.start({"members": [{"handle": "sam", "name": "Sam Jones"}]})
    [problem] = await editor.wait_for(lambda: editor.client.diagnostics.get(agents_file.as_uri()))
    assert problem.range.start.line == 5 and "'code reviewer'" in problem.message and "letters, digits" in problem.message
    listed = await editor.request(methods.AGENTS_LIST)
    assert listed == {
        "agents": [
            {"name": "architect", "topLevel": True, "mode": "architect", "source": "workspace", "model": "scripted", "instructions": "Design first."},
            {"name": "coder", "topLevel": False, "mode": "code", "source": "workspace", "model": "scripted"},
        ],
        "members": [{"handle": "sam", "name": "Sam Jones"}],
    }  # the file's agents replace the default `modus`
    await editor.request(methods.CHAT_SEND, {"text": "@architect @coder the cache"})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    history = await editor.request(methods.CHAT_HISTORY, {"conversationId": editor.of_kind("turn_started")[0]["conversationId"]})
    modes = {m["agent"]: m["metadata"]["mode"] for m in history["messages"] if m["role"] == "assistant"}
    assert modes == {"architect": "architect", "coder": "code"}  # each agent in its own mode
    # the user's switch from the palette is the responder's: the agent that spoke last
    last = history["messages"][-1]["agent"]
    state = await editor.request(methods.MODES_SWITCH, {"slug": "ask"})
    assert state["mode"]["slug"] == "ask"
    modes = {a["name"]: a["mode"] for a in (await editor.request(methods.AGENTS_LIST))["agents"]}
    assert modes == {"architect": "architect", "coder": "code", last: "ask"}

    agents_file.write_text(AGENTS_FILE.replace("  - name: code reviewer\n", ""))
    editor.client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=agents_file.as_uri(), type=lsp.FileChangeType.Changed)])
    )
    await editor.wait_for(lambda: len(editor.client.diagnostics[agents_file.as_uri()]) == 0)


async def test_settings_agents_come_first_and_a_file_agent_under_a_taken_name_is_left_out(editor, workspace):
    (workspace / ".modus").mkdir()
    (workspace / ".modus" / "agents.yaml").write_text("agents:\n  - name: Architect\n  - name: qa\n    mode: debug\n")
    await editor.start({"agents": [{"name": "architect"}, {"name": "coder"}]})
    listed = await editor.request(methods.AGENTS_LIST)
    assert [(a["name"], a["source"], a["mode"]) for a in listed["agents"]] == [
        ("architect", "settings", "code"),
        ("coder", "settings", "code"),
        ("qa", "workspace", "debug"),
    ]
