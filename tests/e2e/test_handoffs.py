"""Agents handing work to each other over the wire (SPEC §5): the Summons block and the turn
input that says who summoned an agent, and the hand-off tools send_to_agent, ask_agent and
delegate_task under the guards of mentions."""

from __future__ import annotations

import asyncio

from fake_models import FakeOpenAI, Reply
from protocol import methods

from .test_mentions import agent_script


def call(name: str, **arguments) -> dict:
    return {"toolCalls": [{"name": name, "arguments": arguments}]}


def done(result: str) -> dict:
    return call("attempt_completion", result=result)


def results(editor, name: str) -> list[dict]:
    """The finished calls of a tool: (status, result or error)."""
    return [u for u in editor.of_kind("tool_call") if u["name"] == name and u["status"] in ("completed", "failed")]


async def test_the_woken_agent_gets_the_roster_the_rules_and_who_summoned_it(editor, workspace):
    with FakeOpenAI() as coder:
        coder.add(Reply("On it."))
        await editor.start(
            {
                "agents": [
                    {"name": "architect", "model": agent_script(workspace, "architect", {"text": "Designed. @coder please build it."})},
                    {"name": "coder", "topLevel": False, "model": {"provider": "openai", "baseUrl": coder.url, "model": "fake"}},
                ],
                "members": [{"handle": "sam", "name": "Sam Jones"}],
            }
        )
        await editor.request(methods.CHAT_SEND, {"text": "@architect design the cache"})
        await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    [request] = coder.requests
    system = request.body["messages"][0]["content"]
    assert "SUMMONS\n\nYou are the agent @coder. The conversation's participants:\n" in system
    assert "- @architect: top-level agent\n- @coder (you): subordinate agent\n- @sam: Sam Jones, a human member" in system
    assert "send_to_agent" in system and "At most 3 agents per turn" in system
    said = [m["content"] for m in request.body["messages"][1:]]
    assert said[0].startswith("design the cache\n\n<environment_details>")
    assert said[1:] == [
        "[architect said]\nDesigned. @coder please build it.",
        "[architect mentioned you in its words quoted above; this turn is your answer.]",
    ]
    tools = {t["function"]["name"] for t in request.body["tools"]}
    assert {"send_to_agent", "ask_agent", "delegate_task"} <= tools


async def test_one_agent_alone_has_no_summons_and_no_hand_off_tools(editor, workspace):
    await editor.start()
    prompt = await editor.request(methods.PROMPT_GET, {})
    assert "SUMMONS" not in prompt["text"] and not {"send_to_agent", "ask_agent", "delegate_task"} & set(prompt["tools"])
    await editor.request(methods.CHAT_SEND, {"text": "hi"})  # (no script: the default answer)
    await editor.wait_for(lambda: editor.of_kind("turn_ended"))


async def start_two(editor, workspace, architect: list[dict], coder: list[dict], **settings) -> None:
    await editor.start(
        {
            "agents": [
                {"name": "architect", "model": agent_script(workspace, "architect", *architect)},
                {"name": "coder", "topLevel": False, "model": agent_script(workspace, "coder", *coder)},
            ],
            **settings,
        }
    )


async def test_send_to_agent_wakes_the_other_agent_without_waiting(editor, workspace):
    await start_two(editor, workspace, [call("send_to_agent", to="@Coder", message="Build the cache."), done("Handed over.")], [{"text": "Building."}])
    await editor.request(methods.CHAT_SEND, {"text": "@architect the cache"})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    [sent] = results(editor, "send_to_agent")
    assert sent["status"] == "completed" and sent["result"].startswith("Sent to coder")
    assert [(u["agent"], u.get("wokenBy")) for u in editor.of_kind("turn_started")] == [("architect", None), ("coder", "architect")]
    history = await editor.request(methods.CHAT_HISTORY, {"conversationId": sent["conversationId"]})
    [handoff] = [m for m in history["messages"] if "handoff" in m["metadata"]]
    assert (handoff["agent"], handoff["text"], handoff["metadata"]["handoff"]["to"]) == ("architect", "Build the cache.", "coder")


async def test_ask_agent_waits_for_the_answer(editor, workspace):
    await start_two(editor, workspace, [call("ask_agent", to="coder", question="Which port?"), done("Port noted.")], [{"text": "Port 8080."}])
    await editor.request(methods.CHAT_SEND, {"text": "@architect the cache"})
    await editor.wait_for(lambda: any(u["outcome"] for u in editor.of_kind("turn_ended") if u["agent"] == "architect"))
    [asked] = results(editor, "ask_agent")
    assert (asked["status"], asked["result"]) == ("completed", "coder answered:\nPort 8080.")
    ends = [u["agent"] for u in editor.of_kind("turn_ended")]
    assert ends == ["coder", "architect"]  # the architect's turn waited for the coder's


async def test_an_ask_back_would_wait_in_a_circle_and_is_refused(editor, workspace):
    await start_two(
        editor,
        workspace,
        [call("ask_agent", to="coder", question="Which port?"), done("ok")],
        [call("ask_agent", to="architect", question="Which port do you want?"), {"text": "8080 then."}],
    )
    await editor.request(methods.CHAT_SEND, {"text": "@architect the cache"})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    refused, answered = results(editor, "ask_agent")
    assert refused["agent"] == "coder" and refused["error"]["type"] == "ToolNotAllowed"
    assert refused["error"]["message"] == "Not asked: architect is waiting for your answer (architect → coder); asking it would wait in a circle. Answer in this turn instead."
    assert answered["result"] == "coder answered:\n8080 then."


async def test_hand_offs_name_agents_exactly_and_keep_the_guards(editor, workspace):
    await start_two(
        editor,
        workspace,
        [
            call("send_to_agent", to="cod", message="x"),
            call("send_to_agent", to="architect", message="x"),
            call("send_to_agent", to="coder", message="Build it."),
            call("ask_agent", to="coder", question="x", timeout_seconds=5000),
            done("ok"),
        ],
        [call("send_to_agent", to="architect", message="Done, look."), {"text": "Sent."}],
    )
    await editor.request(methods.CHAT_SEND, {"text": "@architect the cache"})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    errors = [(u["agent"], u["error"]["type"], u["error"]["message"]) for u in results(editor, "send_to_agent") + results(editor, "ask_agent") if u["status"] == "failed"]
    assert sorted(errors) == [
        ("architect", "InvalidParams", "Invalid value for parameter 'timeout_seconds': Input should be less than or equal to 1800. Please retry with a complete and valid tool call."),
        ("architect", "InvalidParams", "to: 'architect' is you. The agents you can reach: coder."),
        ("architect", "InvalidParams", "to: 'cod' is not an agent of this conversation. The agents you can reach: coder."),
        ("coder", "ToolNotAllowed", "Not delivered to architect: already in this chain."),
    ]


async def test_delegate_task_runs_a_tracked_subtask_of_the_other_agent(editor, workspace):
    await start_two(
        editor,
        workspace,
        [call("delegate_task", to="coder", title="Build the cache", description="An LRU of 100 entries."), done("Delegated and done.")],
        [{"text": "Building.", **done("Cache built.")}],
        autoApprove={"subtasks": True},
    )
    sent = await editor.request(methods.CHAT_SEND, {"text": "@architect the cache"})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    [delegated] = results(editor, "delegate_task")
    assert delegated["result"] == "coder completed the task 'Build the cache':\nCache built."
    coder = [u for u in editor.of_kind("turn_started") if u["agent"] == "coder"]
    assert [u.get("wokenBy") for u in coder] == ["architect"] and coder[0]["conversationId"] == sent["conversationId"]
    # the subtask's messages are in a conversation of its own under the delegator's
    history = await editor.request(methods.CHAT_HISTORY, {"conversationId": sent["conversationId"]})
    assert all(m.get("agent") != "coder" for m in history["messages"])
    listed = await editor.request(methods.CHAT_LIST)
    assert [c["id"] for c in listed["conversations"]] == [sent["conversationId"]]  # subtasks are not listed


async def test_a_hand_off_asks_nothing_but_delegate_task_asks_like_new_task(editor, workspace):
    await start_two(
        editor,
        workspace,
        [call("delegate_task", to="coder", title="Build", description="it"), done("ok")],
        [done("Built.")],
    )
    await editor.request(methods.CHAT_SEND, {"text": "@architect go"})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    [asked] = editor.approvals
    assert (asked["kind"], asked["title"], asked["tool"]) == ("subtask", "Delegate 'Build' to coder?", "delegate_task")


async def test_cancel_reaches_the_asked_agent_and_the_asker(editor, workspace):
    await start_two(
        editor,
        workspace,
        [call("ask_agent", to="coder", question="Run the slow thing"), done("never")],
        [call("execute_command", command="sleep 30"), {"text": "never"}],
        autoApprove={"command": True},
    )
    sent = await editor.request(methods.CHAT_SEND, {"text": "@architect go"})
    await editor.wait_for(lambda: any(u["name"] == "execute_command" and u["status"] == "running" for u in editor.of_kind("tool_call")))
    assert (await editor.request(methods.CHAT_CANCEL, {"conversationId": sent["conversationId"]}))["cancelled"]
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    assert {(u["agent"], u["outcome"]) for u in editor.of_kind("turn_ended")} == {("architect", "cancelled"), ("coder", "cancelled")}


async def test_ask_agent_gives_up_after_its_timeout(editor, workspace):
    await start_two(
        editor,
        workspace,
        [call("ask_agent", to="coder", question="Run the slow thing", timeout_seconds=0.3), done("gave up")],
        [call("execute_command", command="sleep 2"), {"text": "late answer"}],
        autoApprove={"command": True},
    )
    await editor.request(methods.CHAT_SEND, {"text": "@architect go"})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2, timeout=10)
    [asked] = results(editor, "ask_agent")
    assert asked["error"]["message"] == "No answer from coder within 0.3 seconds. Its turn goes on; what it writes stays in the conversation."
    assert [u["agent"] for u in editor.of_kind("turn_ended")] == ["architect", "coder"]
    await asyncio.sleep(0)
