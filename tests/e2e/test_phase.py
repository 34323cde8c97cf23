"""PLAN ⇄ ACT over the wire: the phase, plan_mode_respond, act_mode_respond and yolo (SPEC §3)."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from protocol import Command, methods

from .conftest import script
from .editor import Editor


def call(name: str, **arguments) -> dict:
    return {"toolCalls": [{"name": name, "arguments": arguments}]}


def respond(text: str, **more) -> dict:
    return call("plan_mode_respond", response=text, **more)


WRITE = call("write_to_file", path="src/app.py", content="print('hi')\n")


async def history(editor: Editor) -> list[dict]:
    cid = (await editor.request(methods.STATE))["conversationId"]
    return (await editor.request(methods.CHAT_HISTORY, {"conversationId": cid}))["messages"]


def results(messages: list[dict], name: str) -> list[str]:
    return [m["text"] for m in messages if m["role"] == "tool" and m["metadata"]["name"] == name]


async def test_the_phase_flips_with_a_new_task_and_an_update(editor):
    init = await editor.start()
    commands = init.capabilities.execute_command_provider.commands
    assert Command.SET_PHASE in commands and Command.TOGGLE_PHASE in commands
    before = await editor.request(methods.STATE)
    assert before["phase"] == "act"

    state = await editor.request(methods.PHASE_SET, {"phase": "plan"})
    assert state["phase"] == "plan" and state["task"]["phase"] == "plan"
    assert state["task"]["id"] != before["task"]["id"]
    [changed] = editor.of_kind("phase_changed")
    assert (changed["from"], changed["to"], changed["by"], changed["taskId"]) == ("act", "plan", "user", state["task"]["id"])

    again = await editor.request(methods.PHASE_SET, {"phase": "plan"})  # the current phase: nothing changes
    assert again["task"]["id"] == state["task"]["id"] and len(editor.of_kind("phase_changed")) == 1

    assert (await editor.command(Command.TOGGLE_PHASE))["phase"] == "act"
    assert (await editor.command(Command.SET_PHASE, "plan"))["phase"] == "plan"
    assert [u["to"] for u in editor.of_kind("phase_changed")] == ["plan", "act", "plan"]

    with pytest.raises(JsonRpcException) as bad:
        await editor.request(methods.PHASE_SET, {"phase": "think"})
    assert bad.value.code == -32602 and "phase" in bad.value.message and "'plan'" in bad.value.message and "'act'" in bad.value.message
    with pytest.raises(JsonRpcException) as bad_command:
        await editor.command(Command.SET_PHASE, "think")
    assert bad_command.value.code == -32602 and '["plan"] or ["act"]' in bad_command.value.message
    assert (await editor.request(methods.STATE))["phase"] == "plan"  # nothing changed, the server goes on


async def test_the_tools_follow_the_phase(editor):
    await editor.start()
    plan = (await editor.request(methods.PROMPT_GET, {"phase": "plan"}))
    act = (await editor.request(methods.PROMPT_GET, {"phase": "act"}))
    assert "plan_mode_respond" in plan["tools"] and "act_mode_respond" not in plan["tools"]
    assert "act_mode_respond" in act["tools"] and "plan_mode_respond" not in act["tools"]
    assert "PLAN MODE" in plan["environmentDetails"] and "ACT MODE" in act["environmentDetails"]


async def test_a_plan_is_talked_through_then_carried_out_in_act(editor, workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('old')\n")
    await editor.start(
        {
            **script(
                workspace,
                call("read_file", path="src/app.py"),
                WRITE,  # refused: PLAN cannot write
                respond("Read more first.", needs_more_exploration=True),  # the turn goes on
                respond("Plan: print hi instead of old."),  # the turn waits for the user
                respond("Yes: one line changes."),  # the answer to the user's question
                WRITE,  # after the user's switch to ACT
                {"text": "Done."},
            ),
            "autoApprove": {"edit": True},
        }
    )
    await editor.request(methods.PHASE_SET, {"phase": "plan"})
    ended = await editor.chat("Change the greeting")
    assert ended["outcome"] == "awaiting_user"
    refused = [u for u in editor.of_kind("tool_call") if u["status"] == "failed"]
    assert [(u["name"], u["error"]["type"]) for u in refused] == [("write_to_file", "PlanModeBlocked")]
    assert "PLAN MODE" in refused[0]["error"]["message"]
    assert (workspace / "src" / "app.py").read_text() == "print('old')\n"
    said = [u["text"] for u in editor.of_kind("message") if u["role"] == "assistant"]
    assert said[-2:] == ["Read more first.", "Plan: print hi instead of old."]

    # the user answers in PLAN: plan_mode_respond's result says that the reply follows
    assert (await editor.chat("Only one line?"))["outcome"] == "awaiting_user"
    first_answer = results(await history(editor), "plan_mode_respond")
    assert first_answer[-1] == "Your response was shown to the user. Their reply is the next user message."

    # the user flips to ACT and says nothing: the turn goes on in ACT, told that the user switched
    turns = len(editor.of_kind("turn_ended"))
    await editor.request(methods.PHASE_SET, {"phase": "act"})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) > turns)
    assert editor.of_kind("turn_ended")[-1]["outcome"] == "completed"
    assert (workspace / "src" / "app.py").read_text() == "print('hi')\n"
    messages = await history(editor)
    assert results(messages, "plan_mode_respond")[-1] == "[The user switched to ACT MODE, so you may now proceed with the task.]"
    write = [m for m in messages if m["role"] == "assistant" and m["metadata"].get("toolCalls", [{}])[0].get("name") == "write_to_file"]
    assert [m["metadata"]["phase"] for m in write] == ["plan", "act"]


async def test_the_toggle_command_resumes_a_waiting_plan_in_act(editor, workspace):
    await editor.start(script(workspace, respond("Here is the plan."), {"text": "On it."}))
    await editor.request(methods.PHASE_SET, {"phase": "plan"})
    assert (await editor.chat("Plan it"))["outcome"] == "awaiting_user"
    await editor.command(Command.TOGGLE_PHASE)
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    texts = results(await history(editor), "plan_mode_respond")
    assert texts == ["[The user switched to ACT MODE, so you may now proceed with the task.]"]


async def test_act_mode_respond_twice_in_a_row_is_blocked_not_an_error(editor, workspace):
    twice = {
        "toolCalls": [
            {"name": "act_mode_respond", "arguments": {"response": "Halfway there.", "task_progress": "- [x] read\n- [ ] write"}},
            {"name": "act_mode_respond", "arguments": {"response": "Still halfway."}},
        ]
    }
    await editor.start(script(workspace, twice, call("plan_mode_respond", response="not in ACT"), {"text": "Done."}))
    assert (await editor.chat("Go"))["outcome"] == "completed"
    calls = [u for u in editor.of_kind("tool_call") if u["status"] in ("completed", "failed")]
    assert [(u["name"], u["status"]) for u in calls] == [
        ("act_mode_respond", "completed"),
        ("act_mode_respond", "completed"),
        ("plan_mode_respond", "failed"),
    ]
    assert calls[0]["result"] == "Your message was shown to the user. Go on with the task."
    assert calls[1]["result"].startswith("[BLOCKED] act_mode_respond cannot be called twice in a row.")
    assert calls[2]["error"]["type"] == "ToolNotAllowed" and "only available in PLAN MODE" in calls[2]["error"]["message"]
    said = [u["text"] for u in editor.of_kind("message") if u["role"] == "assistant"]
    assert said == ["Halfway there.\n\n- [x] read\n- [ ] write", "Done."]


async def test_yolo_moves_from_plan_to_act_by_itself(editor, workspace):
    settings = script(workspace, respond("The plan: write it."), WRITE, {"text": "Done."})
    await editor.start(settings)
    plan_tools = (await editor.request(methods.PROMPT_GET, {"phase": "plan"}))["tools"]
    assert "ask_followup_question" in plan_tools
    editor.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"modus": {**settings, "yolo": True}}))
    state = await editor.request(methods.PHASE_SET, {"phase": "plan"})
    assert state["yolo"] is True
    prompt = await editor.request(methods.PROMPT_GET, {"phase": "plan"})
    assert "ask_followup_question" not in prompt["tools"] and "ask_followup_question" not in prompt["text"]

    assert (await editor.chat("Do it"))["outcome"] == "completed"  # one turn: no waiting, no approval
    changed = editor.of_kind("phase_changed")
    assert [(u["from"], u["to"], u["by"]) for u in changed] == [("act", "plan", "user"), ("plan", "act", "model")]
    assert (workspace / "src" / "app.py").read_text() == "print('hi')\n"
    assert editor.approvals == []
    assert (await editor.request(methods.STATE))["phase"] == "act"
