"""The agent loop: how a turn runs and ends, what is streamed and stored, cancellation."""

from __future__ import annotations

import anyio
import pytest

from helpers import chat, running, until
from memory_host import MemoryHost
from protocol import ChatSendParams
from server.errors import BadRequest
from server.state import StoredMessage
from server.providers.scripted import NOT_CONFIGURED, SCRIPT_FINISHED


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


@pytest.mark.parametrize(
    "turns, outcome",
    [
        ([{"text": "Just talking."}], "completed"),
        ([{"toolCalls": [call("attempt_completion", result="done")]}], "completed"),
        ([{"toolCalls": [call("ask_followup_question", question="Which one?")]}], "awaiting_user"),
        ([{"text": "<ask_followup_question><question>Which?</question></ask_followup_question>"}], "awaiting_user"),
        ([{"toolCalls": [call("nosuch")]}] * 3, "failed"),
    ],
)
async def test_how_a_turn_ends(tmp_path, turns, outcome):
    async with running(tmp_path, turns) as session:
        assert await chat(session, "go") == outcome


async def test_updates_of_a_turn_in_order(tmp_path):
    turns = [{"text": "Reading it.", "toolCalls": [call("read_file", path="a.txt")]}, {"text": "It says hi."}]
    (tmp_path / "a.txt").write_text("hi\n")
    host = MemoryHost()
    async with running(tmp_path, turns, host=host) as session:
        await chat(session, "what is in a.txt?")
    kinds = [k for k in host.kinds() if k != "message_delta"]
    assert kinds == [
        "message", "turn_started", "message", "context", "tool_call", "tool_call", "tool_call", "message", "context", "turn_ended"
    ]
    deltas = [u for u in host.updates if u.kind == "message_delta"]
    assert "".join(d.text for d in deltas) == "Reading it.It says hi."
    assert [u.status for u in host.of_kind("tool_call")] == ["pending", "running", "completed"]
    assert host.of_kind("tool_call")[-1].result.startswith("a.txt (lines 1-1 of 1)")
    turn_ids = {u.turn_id for u in host.updates if hasattr(u, "turn_id") and u.turn_id}
    assert len(turn_ids) == 1
    assert host.progress_titles == ["Modus: modus is working"]


async def test_xml_tool_calls_are_hidden_from_the_streamed_text(tmp_path):
    text = "Let me check.\n<read_file>\n<path>a.txt</path>\n</read_file>"
    (tmp_path / "a.txt").write_text("x\n")
    host = MemoryHost()
    async with running(tmp_path, [{"text": text}, {"text": "ok"}], host=host) as session:
        await chat(session, "go")
        stored = session.store.messages(session.conversation_id)[1]
    shown = "".join(u.text for u in host.updates if u.kind == "message_delta")
    assert "<read_file>" not in shown and shown.startswith("Let me check.")
    assert stored.text == "Let me check." and stored.metadata["raw"] == text
    assert stored.metadata["toolCalls"][0]["name"] == "read_file" and not stored.metadata["toolCalls"][0]["native"]


async def test_consecutive_mistakes_stop_the_turn(tmp_path):
    turns = [{"toolCalls": [call("read_file")]}] * 3 + [{"text": "never reached"}]
    host = MemoryHost()
    async with running(tmp_path, turns, host=host, maxConsecutiveMistakes=3) as session:
        assert await chat(session, "go") == "failed"
    system = [u.text for u in host.of_kind("message") if u.role == "system"]
    assert system == ["Stopped: 3 tool calls in a row failed. Tell the agent how to go on, or rephrase the request."]


async def test_a_success_resets_the_mistake_count(tmp_path):
    (tmp_path / "a.txt").write_text("x\n")
    bad, good = {"toolCalls": [call("read_file")]}, {"toolCalls": [call("read_file", path="a.txt")]}
    turns = [bad, bad, good, bad, bad, {"text": "fine"}]
    async with running(tmp_path, turns) as session:
        assert await chat(session, "go") == "completed"


async def test_calls_after_the_end_of_a_turn_are_skipped(tmp_path):
    turns = [{"toolCalls": [call("attempt_completion", result="done"), call("write_to_file", path="x", content="x")]}]
    async with running(tmp_path, turns) as session:
        assert await chat(session, "go") == "completed"
        tool_messages = [m for m in session.store.messages(session.conversation_id) if m.role == "tool"]
    assert [m.text for m in tool_messages] == ["done", "Skipped: an earlier tool call of this reply ended the turn."]
    assert [m.metadata.get("errorType") for m in tool_messages] == [None, "Skipped"]
    assert [m.metadata["isError"] for m in tool_messages] == [False, True]
    assert not (tmp_path / "x").exists()


async def test_without_a_script_the_model_says_how_to_configure_one(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, None, host=host) as session:
        assert await chat(session, "hello") == "completed"
    [reply] = [u.text for u in host.of_kind("message") if u.role == "assistant"]
    assert reply == NOT_CONFIGURED and "modus.models" in reply


async def test_an_exhausted_script_says_so(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, [], host=host) as session:
        await chat(session, "hello")
    assert [u.text for u in host.of_kind("message") if u.role == "assistant"] == [SCRIPT_FINISHED]


async def test_a_broken_script_fails_the_turn_with_its_reason(tmp_path):
    (tmp_path / "bad.yaml").write_text("turns:\n  - toolCalls: [{arguments: {}}]\n")
    host = MemoryHost()
    async with running(tmp_path, None, host=host, models={"default": {"provider": "scripted", "script": "bad.yaml"}}) as session:
        assert await chat(session, "hello") == "failed"
    [system] = [u.text for u in host.of_kind("message") if u.role == "system"]
    assert system.startswith("The model request failed: Invalid script") and "turns.0.toolCalls.0.name" in system


async def test_user_messages_carry_environment_details(tmp_path):
    async with running(tmp_path, [{"text": "hi"}]) as session:
        session.switch_mode("architect", by="user")
        await chat(session, "hello")
        history = session.history(session.conversation_id).messages
    user = history[0]
    assert user.role == "user" and user.text == "hello"
    env = user.metadata["environmentDetails"]
    assert env.startswith("<environment_details>") and env.endswith(
        "# Current Mode\n<slug>architect</slug>\n<name>Architect</name>\n\n# Current Phase\nACT MODE\n</environment_details>"
    )


async def test_cancel_ends_the_turn_and_closes_open_calls(tmp_path):
    turns = [{"toolCalls": [call("execute_command", command="sleep 30")]}]
    host = MemoryHost()
    async with running(tmp_path, turns, host=host, autoApprove={"command": True}) as session:
        await session.send(ChatSendParams(text="run it"))
        await until(lambda: [u for u in host.of_kind("tool_call") if u.status == "running"])
        assert session.cancel(session.conversation_id) is True
        await until(lambda: host.of_kind("turn_ended"))
        assert session.cancel(session.conversation_id) is False  # nothing runs any more
        tool_messages = [m for m in session.store.messages(session.conversation_id) if m.role == "tool"]
    assert host.of_kind("turn_ended")[0].outcome == "cancelled"
    assert host.of_kind("tool_call")[-1].error.type == "Cancelled"
    assert [m.text for m in tool_messages] == ["Cancelled by the user."]
    assert tool_messages[0].metadata["errorType"] == "Cancelled" and tool_messages[0].metadata["isError"] is True


async def test_a_message_during_a_turn_runs_after_it(tmp_path):
    turns = [{"toolCalls": [call("execute_command", command="sleep 0.3")]}, {"text": "first done"}, {"text": "second"}]
    host = MemoryHost()
    async with running(tmp_path, turns, host=host, autoApprove={"command": True}) as session:
        await session.send(ChatSendParams(text="one"))
        await session.send(ChatSendParams(text="two"))
        with anyio.fail_after(10):
            while len(host.of_kind("turn_ended")) < 2:
                await anyio.sleep(0.01)
    assert [u.outcome for u in host.of_kind("turn_ended")] == ["completed", "completed"]
    assert [u.text for u in host.of_kind("message") if u.role == "assistant"] == ["first done", "second"]


async def test_new_conversation_by_id_and_bad_requests(tmp_path):
    async with running(tmp_path, [{"text": "a"}, {"text": "b"}]) as session:
        first = session.conversation_id
        await chat(session, "in the first")
        await chat(session, "in a second", conversation_id="conv-mine")
        assert session.conversation_id == "conv-mine"
        assert [m.text for m in session.history("conv-mine").messages] == ["in a second", "b"]
        assert len(session.history(first).messages) == 2
        with pytest.raises(BadRequest, match="text: must not be empty"):
            await session.send(ChatSendParams(text="  "))
        with pytest.raises(BadRequest, match="owner: unknown agent: nobody"):
            await session.send(ChatSendParams(text="x", conversation_id="c2", owner="nobody"))
        with pytest.raises(BadRequest, match="unknown conversation: nope"):
            session.history("nope")


async def test_who_answers_a_message_that_mentions_nobody(tmp_path):
    agents = [{"name": "helper", "topLevel": False}, {"name": "lead"}, {"name": "second"}]
    async with running(tmp_path, [{"text": "a"}] * 4, agents=agents) as session:
        assert session.responder(session.conversation_id) == "lead"  # the first top-level agent
        await chat(session, "hi")
        assert [u.agent for u in session.host.of_kind("turn_started")] == ["lead"]
        await chat(session, "a new conversation, no owner", conversation_id="conv-plain")
        assert session.host.of_kind("turn_started")[-1].agent == "lead"
        await session.send(ChatSendParams(text="x", conversation_id="conv-new", owner="helper"))
        await chat(session, "again", conversation_id="conv-new")
        assert session.responder("conv-new") == "helper"  # the owner, then the last that spoke
        session.store.add_message(StoredMessage("m-gone", "conv-new", "assistant", "old", "retired"))
        assert session.responder("conv-new") == "helper"  # an agent no longer configured does not count


async def test_a_failed_turn_says_why_and_the_retry_answers_the_same_message(tmp_path):
    turns = [{"toolCalls": [call("nosuch")]}] * 3 + [{"text": "Now it works."}]
    host = MemoryHost()
    async with running(tmp_path, turns, host=host) as session:
        assert await chat(session, "go") == "failed"
        cid = session.conversation_id
        [ended] = host.of_kind("turn_ended")
        last = session.history(cid).messages[-1]
        retried = await session.resend.retry(None)
        await until(lambda: len(host.of_kind("turn_ended")) == 2)
        with pytest.raises(BadRequest, match="its last turn did not fail"):
            await session.resend.retry(None)
        model = session.histories.get(cid, "modus").messages
    assert ended.error.type == "MistakeLimit" and ended.error.message.startswith("Stopped: 3 tool calls in a row failed.")
    assert (last.role, last.text, last.metadata["outcome"]) == ("system", ended.error.message, "failed")
    assert last.metadata["error"] == ended.error.wire() and last.metadata["turnId"] == ended.turn_id
    assert (retried.agent, retried.retried) == ("modus", ended.turn_id)
    assert host.of_kind("turn_ended")[-1].outcome == "completed" and host.of_kind("turn_ended")[-1].error is None
    # what the model got: the user's message once, every call with its result, then the answer
    assert [m.role for m in model] == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]


async def test_a_held_message_is_not_stored_until_its_turn_starts(tmp_path):
    turns = [{"toolCalls": [call("execute_command", command="sleep 30")]}, {"text": "Answered."}]
    host = MemoryHost()
    async with running(tmp_path, turns, host=host, autoApprove={"command": True}) as session:
        cid = session.conversation_id
        await session.send(ChatSendParams(text="run it"))
        await until(lambda: [u for u in host.of_kind("tool_call") if u.status == "running"])
        held = await session.send(ChatSendParams(text="then this"))
        assert held.queued is True and held.dispatched == ["modus"]
        assert [m.text for m in session.store.messages(cid) if m.role == "user"] == ["run it"]
        assert "then this" not in [m.text for m in session.histories.get(cid, "modus").messages]
        assert [q.message_id for q in session.history(cid).queued] == [held.message_id]
        session.cancel(cid)  # the queue is kept: its message goes in after the cancelled turn
        await until(lambda: len(host.of_kind("turn_ended")) == 2)
        stored = [m for m in session.store.messages(cid) if m.role == "user"]
    assert [(m.id, m.text) for m in stored][-1] == (held.message_id, "then this")
    users = [(u.text, u.message_id, u.queued) for u in host.of_kind("message") if u.role == "user"]
    assert users[1:] == [("then this", held.message_id, True), ("then this", held.message_id, None)]
    assert [u.outcome for u in host.of_kind("turn_ended")] == ["cancelled", "completed"]
