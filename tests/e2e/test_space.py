"""Team spaces on PostgreSQL, over stdio with real servers on a real PostgreSQL (PROTOCOL.md,
"Team spaces on PostgreSQL"): attach, where a conversation is stored, a second server reading
it, history pages, a space that cannot be reached, a restart coming back to the space conversation
that was current, and a workspace file's space waiting for trust."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from protocol import methods
from protocol.names import Command

from .conftest import script
from .editor import Editor


def space(url: str, member: str = "alice", name: str = "team") -> dict:
    return {"space": {"url": url, "name": name, "member": member}}


async def attached(editor: Editor, state: str = "connected") -> dict:
    """The first space_changed saying `state`."""
    return await editor.wait_for(lambda: next((u for u in editor.of_kind("space_changed") if u["space"]["state"] == state), None))


def rows(url: str, sql: str, *params) -> list[tuple]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        return db.execute(sql, params).fetchall()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_a_conversation_started_while_attached_is_the_space_s_and_a_second_server_reads_it_by_pages(pg_url, tmp_path):
    ws_a, ws_b = tmp_path / "a", tmp_path / "b"
    ws_a.mkdir(), ws_b.mkdir()
    alice = Editor(ws_a, tmp_path / "config-a")
    bob = Editor(ws_b, tmp_path / "config-b")
    await alice.start({**script(ws_a, {"text": "one"}, {"text": "two"}, {"text": "three"}), **space(pg_url)})
    try:
        changed = await attached(alice)
        assert changed["space"] == {"name": "team", "member": "alice", "state": "connected"}
        state = await alice.request(methods.STATE)
        assert state["space"] == {"name": "team", "member": "alice", "state": "connected"}

        for n, text in enumerate(["first", "second", "third"]):
            ended = await alice.chat(text, conversationId="conv-team-1")
            assert ended["outcome"] == "completed"
        stored = rows(pg_url, "SELECT seq, role, text FROM messages WHERE conversation_id = %s ORDER BY seq", "conv-team-1")
        assert stored == [(1, "user", "first"), (2, "assistant", "one"), (3, "user", "second"), (4, "assistant", "two"),
                          (5, "user", "third"), (6, "assistant", "three")]

        await bob.start(space(pg_url, member="bob"))
        try:
            await attached(bob)
            opened = await bob.request(methods.CHAT_OPEN, {"conversationId": "conv-team-1"})
            assert opened["conversationId"] == "conv-team-1"
            history = await bob.request(methods.CHAT_HISTORY, {"conversationId": "conv-team-1"})
            assert [(m["seq"], m["role"], m["text"]) for m in history["messages"]] == stored
            newest = await bob.request(methods.CHAT_HISTORY, {"conversationId": "conv-team-1", "limit": 2})
            assert [m["seq"] for m in newest["messages"]] == [5, 6]
            page = await bob.request(methods.CHAT_HISTORY, {"conversationId": "conv-team-1", "before": 5, "limit": 2})
            assert [(m["seq"], m["text"]) for m in page["messages"]] == [(3, "second"), (4, "two")]
            first = await bob.request(methods.CHAT_HISTORY, {"conversationId": "conv-team-1", "before": 3})
            assert [m["seq"] for m in first["messages"]] == [1, 2]
            listed = await bob.request(methods.CHAT_LIST)
            assert "conv-team-1" in [c["id"] for c in listed["conversations"]]
        finally:
            await bob.stop()
    finally:
        await alice.stop()


async def test_a_space_that_cannot_be_reached_leaves_the_server_working_and_refuses_its_conversations(pg_url, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    first = Editor(workspace, tmp_path / "config")
    await first.start({**script(workspace, {"text": "shared"}, {"text": "local"}), **space(pg_url)})
    await attached(first)
    await first.chat("in the space", conversationId="conv-team-2")
    await first.stop()

    port = closed_port()
    url = f"postgresql://alice:s3cr3t-pw@127.0.0.1:{port}/team"
    again = Editor(workspace, tmp_path / "config")
    await again.start({**script(workspace, {"text": "local"}), **space(url)})
    try:
        offline = await attached(again, "offline")
        assert f"127.0.0.1:{port}" in offline["space"]["error"]
        state = await again.request(methods.STATE)
        assert state["space"]["state"] == "offline" and state["conversationId"] != "conv-team-2"
        ended = await again.chat("still works", conversationId="conv-local-1")
        assert ended["outcome"] == "completed"
        history = await again.request(methods.CHAT_HISTORY, {"conversationId": "conv-local-1"})
        assert [m["text"] for m in history["messages"]] == ["still works", "local"]
        for method, params in [(methods.CHAT_SEND, {"text": "hello?", "conversationId": "conv-team-2"}),
                               (methods.CHAT_HISTORY, {"conversationId": "conv-team-2"})]:
            with pytest.raises(JsonRpcException) as failed:
                await again.request(method, params)
            assert failed.value.code == -32803  # LSP's RequestFailed
            assert "'team'" in failed.value.message and f"127.0.0.1:{port}" in failed.value.message
        wire = json.dumps(again.updates)
        assert "s3cr3t-pw" not in wire
    finally:
        await again.stop()
    assert "s3cr3t-pw" not in "".join(again.stderr)


def current_again(editor: Editor, cid: str):
    """The state_changed that makes `cid` current."""
    return editor.wait_for(lambda: next((u for u in editor.of_kind("state_changed") if u["state"]["conversationId"] == cid), None))


async def talked_in_the_space(workspace: Path, config: Path, url: str, cid: str) -> dict:
    """A first server's run: `cid`, a space conversation, is current when it stops. Returns the
    settings of its scripted model (one more answer: "later")."""
    settings = script(workspace, {"text": "shared"}, {"text": "later"})
    first = Editor(workspace, config)
    await first.start({**settings, **space(url)})
    try:
        await attached(first)
        await first.chat("in the space", conversationId=cid)
        assert (await first.request(methods.STATE))["conversationId"] == cid
    finally:
        await first.stop()
    return settings


async def test_a_server_restarted_comes_back_to_the_space_conversation_that_was_current(pg_url, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = await talked_in_the_space(workspace, tmp_path / "config", pg_url, "conv-team-4")
    again = Editor(workspace, tmp_path / "config")
    await again.start({**settings, **space(pg_url)})
    try:
        assert (await attached(again))["conversationId"] == "conv-team-4"
        await current_again(again, "conv-team-4")
        state = await again.request(methods.STATE)
        assert state["conversationId"] == "conv-team-4" and state["space"]["state"] == "connected"
        history = await again.request(methods.CHAT_HISTORY, {"conversationId": "conv-team-4"})
        assert [m["text"] for m in history["messages"]] == ["in the space", "shared"]
    finally:
        await again.stop()


async def restarted_offline(tmp_path: Path, pg_url: str, cid: str) -> tuple[Editor, dict]:
    """A server that talked in `cid` of the space, started again with the space out of reach: it,
    and the settings it had."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = await talked_in_the_space(workspace, tmp_path / "config", pg_url, cid)
    again = Editor(workspace, tmp_path / "config")
    await again.start({**settings, **space(f"postgresql://alice@127.0.0.1:{closed_port()}/team")})
    return again, settings


async def test_a_server_restarted_offline_shows_a_local_conversation_until_a_reachable_space_is_set(pg_url, tmp_path):
    from lsprotocol import types as lsp

    again, settings = await restarted_offline(tmp_path, pg_url, "conv-team-5")
    try:
        offline = await attached(again, "offline")
        state = await again.request(methods.STATE)
        assert state["conversationId"] not in ("conv-team-5", "") and offline["conversationId"] == state["conversationId"]
        again.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"modus": {**settings, **space(pg_url)}}))
        await attached(again)
        await current_again(again, "conv-team-5")
        assert (await again.request(methods.STATE))["conversationId"] == "conv-team-5"
        history = await again.request(methods.CHAT_HISTORY, {"conversationId": "conv-team-5"})
        assert [m["text"] for m in history["messages"]] == ["in the space", "shared"]
    finally:
        await again.stop()


async def test_a_conversation_started_while_offline_stays_current_when_the_space_connects(pg_url, tmp_path):
    from lsprotocol import types as lsp

    again, settings = await restarted_offline(tmp_path, pg_url, "conv-team-6")
    try:
        await attached(again, "offline")
        stand_in = (await again.request(methods.STATE))["conversationId"]
        ended = await again.chat("meanwhile")  # in the current one: the local stand-in
        assert ended["outcome"] == "completed" and ended["conversationId"] == stand_in
        again.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"modus": {**settings, **space(pg_url)}}))
        await attached(again)
        assert (await again.request(methods.STATE))["conversationId"] == stand_in
        assert [u for u in again.of_kind("state_changed") if u["state"]["conversationId"] == "conv-team-6"] == []
    finally:
        await again.stop()
    third = Editor(again.workspace, tmp_path / "config")  # and a restart stays there too
    await third.start({**settings, **space(pg_url)})
    try:
        await attached(third)
        assert (await third.request(methods.STATE))["conversationId"] == stand_in
    finally:
        await third.stop()


async def test_a_workspace_file_s_space_waits_for_trust(pg_url, tmp_path):
    workspace = tmp_path / "ws"
    (workspace / ".modus").mkdir(parents=True)
    (workspace / ".modus" / "settings.json").write_text(json.dumps(space(pg_url)), encoding="utf-8")
    editor = Editor(workspace, tmp_path / "config")
    await editor.start()
    try:
        state = await editor.request(methods.STATE)
        assert "space" not in state and editor.of_kind("space_changed") == []
        await editor.command(Command.TRUST_WORKSPACE_SETTINGS)
        await attached(editor)
        assert (await editor.request(methods.STATE))["space"]["state"] == "connected"
    finally:
        await editor.stop()


async def test_a_settings_change_attaches_and_detaches(pg_url, editor, workspace):
    from lsprotocol import types as lsp

    await editor.start(script(workspace, {"text": "ok"}))
    assert "space" not in await editor.request(methods.STATE)
    editor.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"modus": space(pg_url)}))
    await attached(editor, "connecting")
    await attached(editor)
    await editor.chat("now shared", conversationId="conv-team-3")
    assert rows(pg_url, "SELECT count(*) FROM messages WHERE conversation_id = %s", "conv-team-3") == [(2,)]
    editor.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"modus": {}}))
    state = await editor.request(methods.STATE)
    assert "space" not in state and state["conversationId"] != "conv-team-3"  # its space is gone: a local one
    with pytest.raises(JsonRpcException) as failed:
        await editor.request(methods.CHAT_HISTORY, {"conversationId": "conv-team-3"})
    assert failed.value.code == -32803 and "'team'" in failed.value.message


async def test_every_update_of_a_space_conversation_reaches_every_attached_server_s_clients_in_one_order(pg_url, tmp_path):
    """Alice's turn, streamed, seen by Bob's editor as Alice's sees it: the same updates, in the
    same order, numbered 1, 2, 3 … on both; what is about Alice's server alone stays hers."""
    ws_a, ws_b = tmp_path / "a", tmp_path / "b"
    ws_a.mkdir(), ws_b.mkdir()
    alice = Editor(ws_a, tmp_path / "config-a")
    bob = Editor(ws_b, tmp_path / "config-b")
    reply = {"text": "Streamed in pieces, as a model answers.", "toolCalls": [{"name": "read_file", "arguments": {"path": "notes.md"}}]}
    (ws_a / "notes.md").write_text("alice's checkout\n")
    await alice.start({**script(ws_a, reply, {"text": "done"}), **space(pg_url), "autoApprove": {"read": True}})
    await bob.start(space(pg_url, member="bob"))
    try:
        await attached(alice), await attached(bob)
        ended = await alice.chat("read the notes", conversationId="conv-team-5")
        assert ended["outcome"] == "completed"

        def of_conversation(editor: Editor) -> list[dict]:
            return [u for u in editor.updates if u.get("conversationId") == "conv-team-5"]

        await bob.wait_for(lambda: any(u["kind"] == "turn_ended" for u in of_conversation(bob)))
        mine, theirs = of_conversation(alice), of_conversation(bob)
        assert [u["seq"] for u in mine] == list(range(1, len(mine) + 1))
        assert theirs == mine  # the same updates, fields and numbers, in the same order
        kinds = [u["kind"] for u in mine]
        assert kinds[0] == "message" and kinds[-1] == "turn_ended" and "message_delta" in kinds and "tool_call" in kinds
        assert any("alice's checkout" in (u.get("result") or "") for u in theirs)  # the turn ran on Alice's server
        assert not [u for u in bob.updates if u["kind"] in ("state_changed", "space_changed") and u.get("conversationId") == "conv-team-5"]
    finally:
        await bob.stop()
        await alice.stop()


async def test_members_online_and_a_mention_notifies_only_that_member_s_clients(pg_url, tmp_path):
    """Alice and Bob attached: both online, with their names; `@bob` in Alice's message starts no
    turn, reaches Bob's editor as a `notification` and no one else's, and Bob's editor shows who
    wrote it; Bob leaves: offline at once."""
    ws_a, ws_b, ws_c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for ws in (ws_a, ws_b, ws_c):
        ws.mkdir()
    alice, bob, carol = Editor(ws_a, tmp_path / "config-a"), Editor(ws_b, tmp_path / "config-b"), Editor(ws_c, tmp_path / "config-c")
    await alice.start({**script(ws_a, {"text": "unused"}), "space": {"url": pg_url, "name": "team", "member": "alice", "displayName": "Alice A."}})
    await bob.start({"space": {"url": pg_url, "name": "team", "member": "bob", "displayName": "Bob B."}})
    await carol.start(space(pg_url, member="carol"))
    try:
        for editor in (alice, bob, carol):
            await attached(editor)
        members = (await alice.request(methods.SPACE_MEMBERS))["members"]
        assert members == [
            {"handle": "alice", "displayName": "Alice A.", "online": True},
            {"handle": "bob", "displayName": "Bob B.", "online": True},
            {"handle": "carol", "online": True},
        ]
        listed = await alice.request(methods.AGENTS_LIST)  # what the composer completes after `@`
        assert [m["handle"] for m in listed["members"]] == ["alice", "bob", "carol"]

        sent = await alice.request(methods.CHAT_SEND, {"text": "@bob have a look at the parser", "conversationId": "conv-team-6"})
        assert sent["dispatched"] == []  # a member's mention wakes no agent
        notified = await bob.wait_for(lambda: bob.of_kind("notification"))
        assert notified == [{"conversationId": "conv-team-6", "kind": "notification", "from": "alice",
                             "text": "@bob have a look at the parser", "messageId": sent["messageId"]}]
        said = await bob.wait_for(lambda: [u for u in bob.of_kind("message") if u.get("conversationId") == "conv-team-6"])
        assert said[0]["member"] == "alice" and said[0]["seq"] >= 1
        history = await bob.request(methods.CHAT_HISTORY, {"conversationId": "conv-team-6"})
        assert history["messages"][0]["metadata"]["member"] == "alice"
        await carol.wait_for(lambda: [u for u in carol.of_kind("message") if u.get("conversationId") == "conv-team-6"])
        assert not alice.of_kind("notification") and not carol.of_kind("notification")
        assert not alice.of_kind("turn_started")

        await bob.stop()
        members = (await alice.request(methods.SPACE_MEMBERS))["members"]
        assert [(m["handle"], m["online"]) for m in members] == [("alice", True), ("carol", True), ("bob", False)]
    finally:
        await carol.stop()
        await alice.stop()


def test_the_space_demo_runs_and_leaves_nothing_behind(pg_cluster_url):
    """`modus demo --space`: its own PostgreSQL started and removed, two members and an agent."""
    import subprocess
    import sys
    import tempfile

    before = set(Path(tempfile.gettempdir()).glob("modus-demo-*"))
    run = subprocess.run([sys.executable, "-m", "server", "demo", "--space"], capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "🔔 Bob's editor: alice mentioned you" in run.stdout
    assert "in one order, numbered 1–" in run.stdout and ": NO" not in run.stdout
    assert "Bob (offline)" in run.stdout and "postgres ▸ stopped and removed" in run.stdout
    assert set(Path(tempfile.gettempdir()).glob("modus-demo-*")) == before


async def test_the_agent_s_todos_are_the_space_s_while_attached(pg_url, tmp_path):
    """The team's agent keeps one list: what it wrote in Alice's turn, Bob's server reads."""
    ws_a, ws_b = tmp_path / "a", tmp_path / "b"
    ws_a.mkdir(), ws_b.mkdir()
    write = {"toolCalls": [{"name": "todo_write", "arguments": {"todos": [{"content": "Fix the cache", "status": "in_progress"}]}}]}
    alice, bob = Editor(ws_a, tmp_path / "config-a"), Editor(ws_b, tmp_path / "config-b")
    await alice.start({**script(ws_a, write, {"text": "Planned."}), **space(pg_url)})
    await bob.start(space(pg_url, member="bob"))
    try:
        await attached(alice), await attached(bob)
        await alice.chat("plan it", conversationId="conv-team-7")
        listed = await bob.request(methods.TODOS_GET, {"agent": "modus"})
        assert [(t["content"], t["status"]) for t in listed["todos"]] == [("Fix the cache", "in_progress")]
        assert rows(pg_url, "SELECT content FROM todos WHERE agent = 'modus'") == [("Fix the cache",)]
    finally:
        await bob.stop()
        await alice.stop()


async def test_over_acp_a_colleague_s_messages_and_a_mention_are_notes_of_the_session(pg_url, tmp_path):
    """Bob in an ACP client, Alice in an editor, one space conversation: what Alice wrote before is
    told again as hers when Bob loads it, her new message reaches Bob's session as hers, and her
    `@bob` tells him he was mentioned."""
    import asyncio

    from .acp_client import modus_acp, workspace_with

    ws_a = tmp_path / "a"
    ws_a.mkdir()
    alice = Editor(ws_a, tmp_path / "config-a")
    await alice.start({**script(ws_a, {"text": "unused"}), **space(pg_url)})
    config_b = tmp_path / "config-b"
    (config_b / "modus").mkdir(parents=True)
    (config_b / "modus" / "settings.json").write_text(json.dumps(space(pg_url, member="bob")))  # the user's own file: trusted
    ws_b = workspace_with(tmp_path / "b", [{"text": "unused"}])
    cid = "conv-team-acp"
    try:
        await attached(alice)
        await alice.request(methods.CHAT_SEND, {"text": "a thread for us", "conversationId": cid})
        async with modus_acp(config_b, cwd=ws_b) as bob:
            # the session waits for the attach: the space's conversation loads at once
            await asyncio.wait_for(bob.conn.load_session(cwd=str(ws_b), session_id=cid, mcp_servers=[]), 30)
            replayed = bob.client.text(cid)
            for _ in range(100):  # Alice's server has read Bob's presence notice (a NOTIFY)
                if "bob" in [m["handle"] for m in (await alice.request(methods.AGENTS_LIST))["members"]]:
                    break
                await asyncio.sleep(0.05)
            sent = await alice.request(methods.CHAT_SEND, {"text": "@bob have a look at the parser", "conversationId": cid})
            await bob.client.wait_for(lambda: "mentioned you" in bob.client.text(cid))
            told = bob.client.text(cid)
            said_by_bob = [u for u in bob.client.updates[cid] if u.session_update == "user_message_chunk"]
    finally:
        await alice.stop()
    assert sent["dispatched"] == []
    assert "> **alice:** a thread for us" in replayed
    assert "> **alice:** @bob have a look at the parser" in told
    assert "> **Modus:** @alice mentioned you." in told
    assert said_by_bob == []  # nothing shown as if Bob had written it


async def test_a_member_who_attaches_is_known_at_once_to_the_other_servers(pg_url, tmp_path):
    """Alice attached first; Bob's server attaches and says so: Alice's `@bob` reaches him at
    once (not at her server's next heartbeat, 10 s later), and wakes no agent; no update of her
    conversation comes without its `seq` meanwhile."""
    import asyncio

    ws_a, ws_b = tmp_path / "a", tmp_path / "b"
    ws_a.mkdir(), ws_b.mkdir()
    alice, bob = Editor(ws_a, tmp_path / "config-a"), Editor(ws_b, tmp_path / "config-b")
    await alice.start({**script(ws_a, {"text": "unused"}), **space(pg_url)})
    try:
        await attached(alice)
        cid = "conv-team-join"
        await alice.request(methods.CHAT_SEND, {"text": "a thread", "conversationId": cid})
        await alice.wait_for(lambda: alice.of_kind("turn_ended"))
        await bob.start(space(pg_url, member="bob"))
        await attached(bob)
        # Bob's notice reaches Alice's server (a NOTIFY) and it reads the members again: what the
        # composer completes after `@` (the list as her server knows it, not read anew) has him
        for _ in range(100):
            listed = await alice.request(methods.AGENTS_LIST)
            if "bob" in [m["handle"] for m in listed["members"]]:
                break
            await asyncio.sleep(0.05)
        assert "bob" in [m["handle"] for m in listed["members"]], "within 5 s; the heartbeat would take 10"
        sent = await alice.request(methods.CHAT_SEND, {"text": "@bob the parser, please", "conversationId": cid})
        assert sent["dispatched"] == []  # a member: no agent woken
        await bob.wait_for(lambda: bob.of_kind("notification"))
        assert len(alice.of_kind("turn_started")) == 1
        updates = [u for u in alice.updates if u.get("conversationId") == cid and u["kind"] not in ("state_changed", "space_changed")]
        assert all("seq" in u for u in updates), [u["kind"] for u in updates if "seq" not in u]
    finally:
        await bob.stop()
        await alice.stop()
