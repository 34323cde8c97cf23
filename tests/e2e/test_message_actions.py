"""The chat's message actions over the wire (issue 23): why a turn failed (`turn_ended.error`,
kept in the history) and Retry (`modus/chat/retry`); Edit & resend (`modus/chat/edit`: the
conversation cut back, the files too on request, the new text sent); and messages sent while a
turn runs, held as queued until it has ended, which `modus/chat/unqueue` takes back."""

from __future__ import annotations

import asyncio
import pytest
from pygls.exceptions import JsonRpcException

from fake_models import Call, Failure, FakeOpenAI, Reply
from protocol import methods

from .conftest import script
from .editor import Editor


def openai(url: str) -> dict:
    return {"models": {"default": {"provider": "openai", "baseUrl": url, "model": "fake"}}}


def user_texts(body: dict) -> list[str]:
    """The user messages of a recorded OpenAI request, without their environment_details."""
    found = []
    for m in body["messages"]:
        if m["role"] != "user":
            continue
        content = m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"])
        found.append(content.split("\n\n<environment_details>")[0])
    return found


async def refused(editor: Editor, method: str, params: dict) -> str:
    with pytest.raises(JsonRpcException) as caught:
        await editor.request(method, params)
    assert caught.value.code == -32602
    return caught.value.message


async def history(editor: Editor, cid: str) -> dict:
    return await editor.request(methods.CHAT_HISTORY, {"conversationId": cid})


def gate(editor: Editor) -> asyncio.Future:
    """Approvals wait for the returned future (the test opens it: the turn goes on)."""
    opened: asyncio.Future = asyncio.get_running_loop().create_future()
    editor.decide = lambda request: opened
    return opened


WRITE = Reply(calls=[Call("call_w", "write_to_file", {"path": "notes.md", "content": "hi\n"})])


# ---------------------------------------------------------------------- why a turn failed, and Retry


async def test_a_failed_turn_says_why_and_retry_runs_it_again(editor: Editor):
    with FakeOpenAI() as server:
        server.add(Failure(400, "The model is sulking."), Reply("Hello after all."))
        await editor.start(openai(server.url))
        ended = await editor.chat("hello?")
        cid = ended["conversationId"]
        stored = (await history(editor, cid))["messages"]
        retried = await editor.request(methods.CHAT_RETRY, {"conversationId": cid})
        await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
        again = await refused(editor, methods.CHAT_RETRY, {})
        after = (await history(editor, cid))["messages"]

    assert ended["outcome"] == "failed"
    error = ended["error"]
    assert error["type"] == "ModelError" and error["message"].startswith("The model request failed: ")
    assert "The model is sulking." in error["message"]
    # the history keeps why: the turn's last message
    assert [(m["role"], m["text"]) for m in stored] == [("user", "hello?"), ("system", error["message"])]
    assert stored[-1]["metadata"]["outcome"] == "failed" and stored[-1]["metadata"]["error"] == error
    assert stored[-1]["metadata"]["turnId"] == ended["turnId"]
    assert retried == {"conversationId": cid, "agent": "modus", "retried": ended["turnId"]}
    second = editor.of_kind("turn_ended")[-1]
    assert second["outcome"] == "completed" and "error" not in second and second["turnId"] != ended["turnId"]
    # the model got the conversation as it stands: the user's message, once
    assert len(server.requests) == 2 and user_texts(server.requests[1].body) == ["hello?"]
    assert [m["text"] for m in after] == ["hello?", error["message"], "Hello after all."]
    assert again == f"conversationId: nothing to retry in conversation {cid}: its last turn did not fail and was not cancelled"


async def test_a_cancelled_turn_says_why_and_can_be_retried(editor: Editor, workspace):
    sleep = {"toolCalls": [{"name": "execute_command", "arguments": {"command": "sleep 30"}}]}
    await editor.start({**script(workspace, sleep, {"text": "Retried, and done."}), "autoApprove": {"command": True}})
    sent = await editor.request(methods.CHAT_SEND, {"text": "wait"})
    cid = sent["conversationId"]
    await editor.wait_for(lambda: [u for u in editor.of_kind("tool_call") if u["status"] == "running"])
    assert await refused(editor, methods.CHAT_RETRY, {"conversationId": cid}) == (
        f"conversationId: a turn is running in conversation {cid}; cancel it first"
    )
    await editor.request(methods.CHAT_CANCEL, {"conversationId": cid})
    [ended] = await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    stored = (await history(editor, cid))["messages"]
    retried = await editor.request(methods.CHAT_RETRY, {"conversationId": cid})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)

    assert ended["outcome"] == "cancelled" and ended["error"] == {"type": "Cancelled", "message": "Cancelled by the user."}
    # the call got its result, then the turn's end says why (not shown live: turn_ended says it)
    assert [(m["role"], m["text"]) for m in stored[-2:]] == [("tool", "Cancelled by the user."), ("system", "Cancelled by the user.")]
    assert stored[-1]["metadata"]["outcome"] == "cancelled"
    assert "Cancelled by the user." not in [u["text"] for u in editor.of_kind("message") if u["role"] == "system"]
    assert retried["retried"] == ended["turnId"]
    assert editor.of_kind("turn_ended")[-1]["outcome"] == "completed"
    assert editor.of_kind("message")[-1]["text"] == "Retried, and done."


async def test_retry_refuses_what_it_cannot_retry(editor: Editor, workspace):
    await editor.start(script(workspace, {"text": "fine"}))
    cid = (await editor.request(methods.STATE))["conversationId"]
    assert await refused(editor, methods.CHAT_RETRY, {}) == f"conversationId: nothing to retry in conversation {cid}: it has no turn"
    assert await refused(editor, methods.CHAT_RETRY, {"conversationId": "nosuch"}) == "conversationId: unknown conversation: nosuch"
    assert (await refused(editor, methods.CHAT_RETRY, {"conversationId": "a b"})).startswith("conversationId: must be 1 to 128")
    await editor.chat("hi")
    assert await refused(editor, methods.CHAT_RETRY, {"conversationId": cid}) == (
        f"conversationId: nothing to retry in conversation {cid}: its last turn did not fail and was not cancelled"
    )


# ---------------------------------------------------------------------- queued messages


async def test_a_message_sent_during_a_turn_waits_queued_until_the_turn_ends(editor: Editor):
    with FakeOpenAI() as server:
        server.add(WRITE, Reply("Wrote it."), Reply("Got your note."))
        opened = gate(editor)
        await editor.start(openai(server.url))
        first = await editor.request(methods.CHAT_SEND, {"text": "write notes"})
        cid = first["conversationId"]
        await editor.wait_for(lambda: editor.approvals)
        queued = await editor.request(methods.CHAT_SEND, {"text": "also: keep it short"})
        held = (await history(editor, cid))
        opened.set_result({"decision": "approve"})
        await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
        after = (await history(editor, cid))

    assert "queued" not in first
    assert queued["queued"] is True and queued["dispatched"] == ["modus"] and queued["text"] == "also: keep it short"
    mid = queued["messageId"]
    users = [u for u in editor.of_kind("message") if u["role"] == "user"]
    assert [(u["text"], u["messageId"], u.get("queued")) for u in users] == [
        ("write notes", first["messageId"], None),
        ("also: keep it short", mid, True),  # held
        ("also: keep it short", mid, None),  # in the conversation: its turn starts
    ]
    # held: not in the conversation, listed apart
    assert [m["text"] for m in held["messages"]] == ["write notes", ""]
    assert held["queued"] == [{"messageId": mid, "text": "also: keep it short", "dispatched": ["modus"]}]
    # the running turn's next request did not see it; the next turn's did
    assert user_texts(server.requests[1].body) == ["write notes"]
    assert user_texts(server.requests[2].body) == ["write notes", "also: keep it short"]
    # it went in after the first turn ended, before the second started
    order = [(u["kind"], u.get("messageId")) for u in editor.updates if u["kind"] in ("turn_started", "turn_ended") or u.get("messageId") == mid]
    assert order == [("turn_started", None), ("message", mid), ("turn_ended", None), ("message", mid), ("turn_started", None), ("turn_ended", None)]
    assert [m["id"] for m in after["messages"] if m["role"] == "user"] == [first["messageId"], mid]
    assert "queued" not in after


async def test_queued_messages_go_in_together_and_one_can_be_taken_back(editor: Editor):
    with FakeOpenAI() as server:
        server.add(WRITE, Reply("Wrote it."), Reply("Both noted."))
        opened = gate(editor)
        await editor.start(openai(server.url))
        first = await editor.request(methods.CHAT_SEND, {"text": "write notes"})
        cid = first["conversationId"]
        await editor.wait_for(lambda: editor.approvals)
        a, b, c = [await editor.request(methods.CHAT_SEND, {"text": t}) for t in ("A: title it", "B: never mind", "C: and date it")]
        taken = await editor.request(methods.CHAT_UNQUEUE, {"messageId": b["messageId"]})
        again = await refused(editor, methods.CHAT_UNQUEUE, {"conversationId": cid, "messageId": b["messageId"]})
        listed = (await history(editor, cid))["queued"]
        opened.set_result({"decision": "approve"})
        await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
        too_late = await refused(editor, methods.CHAT_UNQUEUE, {"messageId": a["messageId"]})

    assert all(m["queued"] for m in (a, b, c))
    assert taken == {"conversationId": cid, "messageId": b["messageId"], "text": "B: never mind"}
    assert editor.of_kind("unqueued") == [
        {"kind": "unqueued", "conversationId": cid, "messageId": b["messageId"], "text": "B: never mind"}
    ]
    assert again == f"messageId: unknown queued message: {b['messageId']} (conversation {cid})"
    assert [q["messageId"] for q in listed] == [a["messageId"], c["messageId"]]
    # one turn answers both, in the order sent; the one taken back never reached a model
    assert len(editor.of_kind("turn_started")) == 2 and len(server.requests) == 3
    assert user_texts(server.requests[2].body) == ["write notes", "A: title it", "C: and date it"]
    assert too_late == f"messageId: {a['messageId']} is not queued: it is in the conversation already (its turn has started)"


async def test_a_cancel_keeps_the_queue_and_its_messages_go_in_after_it(editor: Editor, workspace):
    sleep = {"toolCalls": [{"name": "execute_command", "arguments": {"command": "sleep 30"}}]}
    await editor.start({**script(workspace, sleep, {"text": "On it, instead."}), "autoApprove": {"command": True}})
    sent = await editor.request(methods.CHAT_SEND, {"text": "wait"})
    cid = sent["conversationId"]
    await editor.wait_for(lambda: [u for u in editor.of_kind("tool_call") if u["status"] == "running"])
    queued = await editor.request(methods.CHAT_SEND, {"text": "stop that, do this instead"})
    assert await editor.request(methods.CHAT_CANCEL, {"conversationId": cid}) == {"cancelled": True}
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    ended = editor.of_kind("turn_ended")
    assert queued["queued"] is True
    assert [u["outcome"] for u in ended] == ["cancelled", "completed"]
    messages = (await history(editor, cid))["messages"]
    assert [m["text"] for m in messages if m["role"] == "user"] == ["wait", "stop that, do this instead"]
    assert messages[-1]["text"] == "On it, instead."


async def test_unqueue_refuses_a_bad_conversation(editor: Editor, workspace):
    await editor.start(script(workspace))
    assert (await refused(editor, methods.CHAT_UNQUEUE, {"conversationId": "a b", "messageId": "m"})).startswith("conversationId: must be 1 to 128")
    cid = (await editor.request(methods.STATE))["conversationId"]
    assert await refused(editor, methods.CHAT_UNQUEUE, {"messageId": "nosuch"}) == f"messageId: unknown queued message: nosuch (conversation {cid})"
    assert (await refused(editor, methods.CHAT_UNQUEUE, {})).startswith("Invalid params for modus/chat/unqueue: messageId")


# ---------------------------------------------------------------------- Edit & resend


async def test_edit_cuts_the_conversation_back_and_sends_the_new_text(editor: Editor, workspace):
    await editor.start(script(workspace, {"text": "One."}, {"text": "Two."}, {"text": "Two, better."}))
    await editor.chat("first")
    await editor.chat("second")
    state = await editor.request(methods.STATE)
    cid = state["conversationId"]
    before = (await history(editor, cid))["messages"]
    second = before[2]
    edited = await editor.request(methods.CHAT_EDIT, {"messageId": second["id"], "text": "second, said better"})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 3)
    after = (await history(editor, cid))["messages"]

    assert edited["conversationId"] == cid and edited["dispatched"] == ["modus"] and edited["text"] == "second, said better"
    assert edited["messageId"] != second["id"] and "restored" not in edited and "filesNotRestored" not in edited
    [cut] = editor.of_kind("conversation_cut")
    assert cut == {"kind": "conversation_cut", "conversationId": cid, "messageId": second["id"], "messages": 2}
    assert [m["text"] for m in after] == ["first", "One.", "second, said better", "Two, better."]
    assert after[2]["id"] == edited["messageId"]
    assert (await editor.request(methods.STATE))["task"]["id"] != state["task"]["id"]  # a new task, as a restore makes
    # the cut message is gone from the conversation, so it cannot be edited again
    assert await refused(editor, methods.CHAT_EDIT, {"conversationId": cid, "messageId": second["id"], "text": "x"}) == (
        f"messageId: {second['id']} is no longer part of conversation {cid}: a restore or an edit cut it"
    )
    # the live `message` update of a user message names it
    assert [u["messageId"] for u in editor.of_kind("message") if u["role"] == "user"] == [before[0]["id"], second["id"], edited["messageId"]]


async def test_edit_with_files_puts_the_files_back_as_they_were(editor: Editor, workspace):
    (workspace / "notes.md").write_text("original\n")
    write = {"toolCalls": [{"name": "write_to_file", "arguments": {"path": "notes.md", "content": "changed\n"}}]}
    await editor.start({**script(workspace, {"text": "Read."}, write, {"text": "Changed."}, {"text": "Redone."}), "autoApprove": {"edit": True}})
    await editor.chat("look")
    await editor.chat("change notes")
    cid = (await editor.request(methods.STATE))["conversationId"]
    messages = (await history(editor, cid))["messages"]
    look, change = [m for m in messages if m["role"] == "user"]
    assert (workspace / "notes.md").read_text() == "changed\n"
    edited = await editor.request(methods.CHAT_EDIT, {"messageId": change["id"], "text": "change notes, carefully", "files": True})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 3)
    restored_text = (workspace / "notes.md").read_text()
    undo = await editor.request(methods.CHECKPOINTS_RESTORE, {"id": edited["checkpoint"], "restore": "files"})

    assert edited["restored"] == ["notes.md"] and restored_text == "original\n"
    assert undo["restored"] == ["notes.md"] and (workspace / "notes.md").read_text() == "changed\n"
    after = (await history(editor, cid))["messages"]
    assert [m["text"] for m in after] == ["look", "Read.", "change notes, carefully", "Redone."]


async def test_edit_with_files_says_when_there_is_nothing_to_put_back(editor: Editor, workspace):
    await editor.start(script(workspace, {"text": "One."}, {"text": "Again."}))
    await editor.request(methods.MODES_SWITCH, {"slug": "ask"})  # its turns change no files: no checkpoint
    await editor.chat("first")
    cid = (await editor.request(methods.STATE))["conversationId"]
    first = (await history(editor, cid))["messages"][0]
    edited = await editor.request(methods.CHAT_EDIT, {"messageId": first["id"], "text": "first, again", "files": True})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    assert "restored" not in edited and "checkpoint" not in edited
    assert edited["filesNotRestored"] == "No checkpoint was taken after this message: no tool call has changed files since."
    assert [m["text"] for m in (await history(editor, cid))["messages"]] == ["first, again", "Again."]


async def test_edit_refuses_naming_the_field_and_changes_nothing(editor: Editor, workspace):
    settings = script(workspace, {"text": "One."}, {"toolCalls": [{"name": "execute_command", "arguments": {"command": "sleep 30"}}]})
    settings["hooks"] = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "grep -q secret && { echo 'No secrets.' >&2; exit 2; }; exit 0"}]}]}
    settings["autoApprove"] = {"command": True}
    await editor.start(settings)
    await editor.chat("first")
    cid = (await editor.request(methods.STATE))["conversationId"]
    before = (await history(editor, cid))["messages"]
    user, reply = before
    edit = lambda **params: refused(editor, methods.CHAT_EDIT, {"messageId": user["id"], "text": "x", **params})  # noqa: E731

    assert await edit(messageId="nosuch") == f"messageId: unknown message: nosuch (conversation {cid})"
    assert await edit(messageId=reply["id"]) == f"messageId: {reply['id']} is not a message the user wrote (only those can be edited)"
    assert await edit(text="  ") == "text: must not be empty"
    assert await edit(text="the secret is 42") == "text: refused by a UserPromptSubmit hook: No secrets."
    assert await edit(conversationId="nosuch") == "conversationId: unknown conversation: nosuch"
    assert (await edit(conversationId="a b")).startswith("conversationId: must be 1 to 128")
    assert (await refused(editor, methods.CHAT_EDIT, {"text": "x"})).startswith("Invalid params for modus/chat/edit: messageId")
    assert (await history(editor, cid))["messages"] == before and editor.of_kind("conversation_cut") == []

    await editor.request(methods.CHAT_SEND, {"text": "wait"})
    await editor.wait_for(lambda: [u for u in editor.of_kind("tool_call") if u["status"] == "running"])
    assert await edit() == f"conversationId: a turn is running in conversation {cid}; cancel it first"
    await editor.request(methods.CHAT_CANCEL, {"conversationId": cid})
    await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    assert editor.of_kind("conversation_cut") == []


async def test_restoring_the_conversation_tells_the_clients_of_the_cut(editor: Editor, workspace):
    write = {"toolCalls": [{"name": "write_to_file", "arguments": {"path": "a.txt", "content": "a\n"}}]}
    await editor.start({**script(workspace, write, {"text": "Done."}), "autoApprove": {"edit": True}})
    await editor.chat("write a")
    listed = (await editor.request(methods.CHECKPOINTS_LIST, {}))["checkpoints"]
    cid = listed[0]["conversationId"]
    messages = (await history(editor, cid))["messages"]
    await editor.request(methods.CHECKPOINTS_RESTORE, {"id": listed[0]["id"], "restore": "conversation"})
    [cut] = editor.of_kind("conversation_cut")
    # the turn's start: the user's message stays, the reply that made the call and what followed go
    assert cut == {"kind": "conversation_cut", "conversationId": cid, "messageId": messages[1]["id"], "messages": len(messages) - 1}
