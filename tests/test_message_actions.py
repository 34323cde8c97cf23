"""The queue and Resend parts in the core (agent/queue.py, agent/resend.py): who a message waits
for, the order messages go in, a queued slash command's switch made when it goes in, Edit &
resend with one of Modus's own commands."""

from __future__ import annotations

import yaml

from helpers import chat, running, until
from memory_host import MemoryHost
from protocol import ChatEditParams, ChatSendParams
from server.errors import BadRequest


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


SLEEP = {"toolCalls": [call("execute_command", command="sleep 30")]}


def agent(root, name: str, *turns: dict) -> dict:
    (root / f"{name}.yaml").write_text(yaml.safe_dump({"turns": list(turns)}), encoding="utf-8")
    return {"name": name, "model": {"provider": "scripted", "script": f"{name}.yaml"}}


async def test_a_message_to_an_idle_agent_goes_at_once_and_the_order_is_kept(tmp_path):
    agents = [agent(tmp_path, "lead", SLEEP, {"text": "lead again"}), agent(tmp_path, "helper", {"text": "helper here"}, {"text": "helper again"})]
    host = MemoryHost()
    async with running(tmp_path, None, host=host, agents=agents, autoApprove={"command": True}) as session:
        cid = session.conversation_id
        await session.send(ChatSendParams(text="@lead work"))
        await until(lambda: [u for u in host.of_kind("tool_call") if u.status == "running"])
        parallel = await session.send(ChatSendParams(text="@helper a quick one"))  # helper is free: it answers now
        await until(lambda: [u for u in host.of_kind("turn_ended") if u.agent == "helper"])
        to_lead = await session.send(ChatSendParams(text="@lead then this"))
        behind = await session.send(ChatSendParams(text="@helper and this"))  # helper is free, but it goes in after the one before
        assert [q.message_id for q in session.history(cid).queued] == [to_lead.message_id, behind.message_id]
        session.cancel(cid)
        await until(lambda: len(host.of_kind("turn_ended")) == 4)
        users = [m.text for m in session.store.messages(cid) if m.role == "user"]
    assert parallel.queued is None and to_lead.queued is behind.queued is True
    assert users == ["work", "a quick one", "then this", "and this"]
    assert sorted((u.agent, u.outcome) for u in host.of_kind("turn_ended")) == [
        ("helper", "completed"), ("helper", "completed"), ("lead", "cancelled"), ("lead", "completed")
    ]


async def test_a_queued_commands_switch_is_made_when_it_goes_in(tmp_path):
    commands = tmp_path / ".modus" / "commands"
    commands.mkdir(parents=True)
    (commands / "design.md").write_text("---\nmode: architect\n---\nDesign $ARGUMENTS.\n")
    host = MemoryHost()
    async with running(tmp_path, [SLEEP, {"text": "designed"}], host=host, autoApprove={"command": True}) as session:
        cid = session.conversation_id
        await session.send(ChatSendParams(text="run it"))
        await until(lambda: [u for u in host.of_kind("tool_call") if u.status == "running"])
        held = await session.send(ChatSendParams(text="/design the cache"))
        assert held.queued is True and held.text == "Design the cache."
        assert session.mode_of("modus").slug == "code" and host.of_kind("mode_changed") == []  # not yet
        session.cancel(cid)
        await until(lambda: len(host.of_kind("turn_ended")) == 2)
        assert session.mode_of("modus").slug == "architect"
        stored = [m for m in session.store.messages(cid) if m.role == "user"][-1]
    assert (stored.text, stored.metadata["typed"]) == ("Design the cache.", "/design the cache")
    assert [u.to for u in host.of_kind("mode_changed")] == ["architect"]


async def test_edit_and_resend_with_one_of_modus_own_commands(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, [{"text": "one"}, {"text": "planning"}], host=host) as session:
        cid = session.conversation_id
        await chat(session, "first")
        first = session.history(cid).messages[0]
        sent = await session.resend.edit(ChatEditParams(message_id=first.id, text="/plan think first"))
        await until(lambda: len(host.of_kind("turn_ended")) == 2)
        texts = [m.text for m in session.history(cid).messages]
    assert sent.command == "plan" and sent.text == "think first" and session.phase == "plan"
    assert texts == ["think first", "planning"]
    assert [u.message_id for u in host.of_kind("conversation_cut")] == [first.id]


async def test_an_edit_whose_mode_command_cannot_run_cuts_nothing(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, [{"text": "one"}], host=host) as session:
        cid = session.conversation_id
        await chat(session, "first")
        first = session.history(cid).messages[0]
        refused = []
        for text in ("/mode nosuch then go", "/mode"):
            try:
                await session.resend.edit(ChatEditParams(message_id=first.id, text=text))
            except BadRequest as exc:
                refused.append(str(exc))
        texts = [m.text for m in session.history(cid).messages]
    assert refused[0] == "text: /mode: Invalid mode: nosuch"
    assert refused[1].startswith("text: /mode: /mode <slug>, where the slug is one of `code`")
    assert texts == ["first", "one"] and host.of_kind("conversation_cut") == []
