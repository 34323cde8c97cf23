"""@-mentions typed by the user, over the wire (SPEC §5): who is dispatched, what `mentions`
reports, what the agents see, and agents running in parallel in one conversation."""

from __future__ import annotations

import asyncio

import yaml

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
    refused = [u["text"] for u in editor.of_kind("message") if u["role"] == "system"]
    assert len(refused) == 1 and "@architect" in refused[0] and "already in this chain" in refused[0]
    await asyncio.sleep(0.2)
    assert len(editor.of_kind("turn_started")) == 2  # no A → B → A


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
