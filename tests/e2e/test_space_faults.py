"""A team space's faults, over stdio with a real server on a real PostgreSQL of the test's own
(PROTOCOL.md, "Team spaces on PostgreSQL"): PostgreSQL down at start, restarted while attached,
and the network cut in the middle of a turn; a dead server's turn; one turn per agent. Each time the server says so (offline, why, never the password),
keeps local work going, reconnects by itself, and nothing stored is lost or doubled."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from contextlib import asynccontextmanager
from typing import AsyncIterator

import pytest
from pygls.exceptions import JsonRpcException

import pg_cluster
from protocol import methods

from .conftest import script
from .editor import Editor
from .test_space import rows, space


def states(editor: Editor) -> list[str]:
    return [u["space"]["state"] for u in editor.of_kind("space_changed")]


async def now(editor: Editor, state: str, times: int = 1, timeout: float = 30) -> dict:
    """The `times`-th space_changed saying `state`."""
    def found():
        said = [u for u in editor.of_kind("space_changed") if u["space"]["state"] == state]
        return said[times - 1] if len(said) >= times else None

    return await editor.wait_for(found, timeout=timeout)


async def refused(editor: Editor, conversation: str) -> str:
    with pytest.raises(JsonRpcException) as failed:
        await editor.request(methods.CHAT_SEND, {"text": "hello?", "conversationId": conversation})
    assert failed.value.code == -32803  # LSP's RequestFailed
    return failed.value.message


async def test_postgresql_restarted_while_attached(own_pg, tmp_path):
    url, folder = own_pg
    workspace = tmp_path / "ws"
    workspace.mkdir()
    editor = Editor(workspace, tmp_path / "config")
    await editor.start({**script(workspace, {"text": "one"}, {"text": "local"}, {"text": "two"}), **space(url)})
    try:
        await now(editor, "connected")
        await editor.chat("before", conversationId="conv-f-1")

        pg_cluster.halt(folder)
        offline = await now(editor, "offline")
        assert "127.0.0.1" in offline["space"]["error"]
        assert "'team'" in await refused(editor, "conv-f-1")
        ended = await editor.chat("meanwhile", conversationId="conv-f-local")  # local work goes on
        assert ended["outcome"] == "completed"

        pg_cluster.resume(folder)
        await now(editor, "connected", times=2)
        ended = await editor.chat("after", conversationId="conv-f-1")
        assert ended["outcome"] == "completed"
        assert rows(url, "SELECT seq, role, text FROM messages WHERE conversation_id = %s ORDER BY seq", "conv-f-1") == [
            (1, "user", "before"), (2, "assistant", "one"), (3, "user", "after"), (4, "assistant", "two"),
        ]
        assert pg_cluster.PASSWORD not in json.dumps(editor.updates)
    finally:
        await editor.stop()
    assert pg_cluster.PASSWORD not in "".join(editor.stderr)


class Network:
    """A TCP relay between the server and PostgreSQL that the test cuts (every connection reset,
    new ones refused) and mends. A cut ends both sides of every relayed connection at once: a
    socket is shut down before it is closed, which wakes a thread blocked reading it (a close
    alone does not, and the connection would stay half alive: the kernel answering keepalives,
    nobody relaying the answers)."""

    def __init__(self, port: int):
        self.target = port
        self.up = True
        self.lock = threading.Lock()  # a connection is relayed whole, or refused whole, around a cut
        self.flowing = threading.Event()  # clear: what comes is taken (acknowledged) and held, never passed on
        self.flowing.set()
        self.pairs: list[socket.socket] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, url: str) -> str:
        return url.replace(f":{self.target}/", f":{self.port}/")

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if not self.up:
                    _reset(client)
                    continue
                server = socket.create_connection(("127.0.0.1", self.target))
                self.pairs += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, a: socket.socket, b: socket.socket):
        try:
            while data := a.recv(65536):
                self.flowing.wait()
                b.sendall(data)
        except OSError:
            pass
        _reset(a)
        _reset(b)

    def cut(self):
        with self.lock:
            self.up = False
            for s in self.pairs:
                _reset(s)
            self.pairs = []

    def mend(self):
        with self.lock:
            self.up = True

    def freeze(self):
        """PostgreSQL there but silent, as a frozen server or a hung proxy: every connection stays
        open (its bytes acknowledged, keepalives answered), and nothing is answered."""
        self.flowing.clear()

    def close(self):
        self.listener.close()
        self.cut()
        self.flowing.set()  # the held threads end


def _reset(s: socket.socket) -> None:
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # close sends RST
        s.shutdown(socket.SHUT_RDWR)  # a thread blocked reading it wakes
    except OSError:
        pass
    s.close()


async def test_the_network_cut_in_the_middle_of_a_turn(own_pg, tmp_path):
    url, folder = own_pg
    network = Network(int(url.rsplit(":", 1)[1].split("/")[0]))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    editor = Editor(workspace, tmp_path / "config")
    edit = {"toolCalls": [{"name": "write_to_file", "arguments": {"path": "a.md", "content": "written\n"}}]}
    await editor.start({**script(workspace, edit, {"text": "local"}, {"text": "again"}), **space(network.url(url))})
    waiting = asyncio.get_running_loop().create_future()
    editor.decide = lambda request: waiting  # the turn waits on the user: the network goes meanwhile
    try:
        await now(editor, "connected")
        await editor.request(methods.CHAT_SEND, {"text": "write it", "conversationId": "conv-f-2"})
        await editor.wait_for(lambda: editor.approvals)
        network.cut()
        waiting.set_result({"decision": "approve"})
        ended = await editor.wait_for(lambda: editor.of_kind("turn_ended"))
        assert ended[0]["outcome"] == "failed"
        offline = await now(editor, "offline")
        assert "127.0.0.1" in offline["space"]["error"] and "TaskGroup" not in offline["space"]["error"]
        [call] = [u for u in editor.of_kind("tool_call") if u["status"] == "failed"]  # every call given a result
        assert call["error"]["type"] == "TurnFailed"
        assert not (workspace / "a.md").exists()  # its checkpoint could not be taken: nothing written
        assert "'team'" in ended[0]["error"]["message"]
        ended = await editor.chat("meanwhile", conversationId="conv-f-local")  # local work goes on
        assert ended["outcome"] == "completed"
        assert "'team'" in await refused(editor, "conv-f-2")

        network.mend()
        await now(editor, "connected", times=2)
        editor.decide = lambda request: {"decision": "approve"}
        ended = await editor.chat("and now?", conversationId="conv-f-2")
        assert ended["outcome"] == "completed"
        stored = rows(url, "SELECT seq, role, text, id FROM messages WHERE conversation_id = %s ORDER BY seq", "conv-f-2")
        assert [seq for seq, *_ in stored] == list(range(1, len(stored) + 1))
        assert len({mid for *_, mid in stored}) == len(stored)  # nothing doubled
        assert [(role, text) for _, role, text, _ in stored if role == "user"] == [("user", "write it"), ("user", "and now?")]
        assert stored[-1][1:3] == ("assistant", "again")
        assert [role for _, role, _, _ in stored] == ["user", "assistant", "tool", "system", "user", "assistant"]  # the cut call got a result
        assert rows(url, "SELECT outcome FROM turns ORDER BY started_at") == [("interrupted",), ("completed",)]  # closed once back
    finally:
        network.close()
        await editor.stop()


@asynccontextmanager
async def frozen(own_pg, tmp_path) -> AsyncIterator[Editor]:
    """Alice's server attached to a space whose PostgreSQL then goes silent (Network.freeze)."""
    url, folder = own_pg
    network = Network(int(url.rsplit(":", 1)[1].split("/")[0]))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    editor = Editor(workspace, tmp_path / "config")
    await editor.start({**script(workspace, {"text": "one"}), **space(network.url(url))})
    try:
        await now(editor, "connected")
        network.freeze()
        yield editor
    finally:
        network.close()  # first: a server that hangs on it would not stop
        await editor.stop()


async def test_a_postgresql_that_does_not_answer_fails_the_call_in_10_seconds_and_the_server_goes_on(own_pg, tmp_path):
    """PostgreSQL (or a proxy before it) is there but silent: the connection's own limits never
    fire (every byte is acknowledged). The store's call that waits on it ends after 10 s with an
    error naming the space, the server answers again at once, and the space shows offline."""
    async with frozen(own_pg, tmp_path) as editor:
        loop = asyncio.get_running_loop()
        began = loop.time()
        message = await asyncio.wait_for(refused(editor, "conv-f-5"), 30)
        waited = loop.time() - began
        assert "'team'" in message and "no answer from PostgreSQL in 10 s" in message, message
        assert 9 <= waited < 25, waited  # the watchdog's limit, not a connection's own (none fires here)
        state = await asyncio.wait_for(editor.request(methods.STATE), 5)  # the server goes on
        assert state["space"]["state"] in ("offline", "connecting"), state["space"]
        ended = await editor.chat("local work", conversationId="conv-f-local")
        assert ended["outcome"] == "completed"


async def test_a_postgresql_that_does_not_answer_takes_the_space_offline_with_no_call_made(own_pg, tmp_path):
    """Nobody writes: the heartbeat finds the silent PostgreSQL (its calls bounded as the store's)."""
    async with frozen(own_pg, tmp_path) as editor:
        offline = await now(editor, "offline", timeout=35)  # the next beat (10 s), then its limit (10 s)
        assert "no answer from PostgreSQL in 10 s" in offline["space"]["error"], offline["space"]


async def test_the_members_asked_of_a_postgresql_that_does_not_answer_come_from_the_last_read(own_pg, tmp_path):
    async with frozen(own_pg, tmp_path) as editor:
        members = await asyncio.wait_for(editor.request(methods.SPACE_MEMBERS), 15)  # 10 s at most
        assert [(m["handle"], m["online"]) for m in members["members"]] == [("alice", True)]
        offline = await now(editor, "offline", timeout=5)  # and the space is gone, at once
        assert "no answer from PostgreSQL in 10 s" in offline["space"]["error"], offline["space"]


async def test_a_dead_server_s_turn_is_ended_interrupted_by_another_within_30_seconds(pg_url, tmp_path):
    """Alice's server dies in the middle of a turn (a call waiting for her approval): Bob's server
    closes the turn within 30 s of its lease's last renewal — the call given a result, the turn
    ended `interrupted` — once, and both editors' histories agree; Alice shows offline by then."""
    ws_a, ws_b = tmp_path / "a", tmp_path / "b"
    ws_a.mkdir(), ws_b.mkdir()
    alice, bob = Editor(ws_a, tmp_path / "config-a"), Editor(ws_b, tmp_path / "config-b")
    edit = {"toolCalls": [{"name": "write_to_file", "arguments": {"path": "a.md", "content": "never\n"}}]}
    await alice.start({**script(ws_a, edit), **space(pg_url)})
    await bob.start(space(pg_url, member="bob"))
    try:
        await now(alice, "connected"), await now(bob, "connected")
        alice.decide = lambda request: asyncio.get_running_loop().create_future()  # never answered
        await alice.request(methods.CHAT_SEND, {"text": "write it", "conversationId": "conv-f-3"})
        await alice.wait_for(lambda: alice.approvals)
        [started] = await bob.wait_for(lambda: [u for u in bob.of_kind("turn_started") if u["conversationId"] == "conv-f-3"])
        await alice.kill()

        ended = await bob.wait_for(lambda: [u for u in bob.of_kind("turn_ended") if u["conversationId"] == "conv-f-3"], timeout=45)
        assert [(u["turnId"], u["outcome"], u["error"]["type"]) for u in ended] == [(started["turnId"], "interrupted", "Interrupted")]
        stored = rows(pg_url, "SELECT role, metadata::text FROM messages WHERE conversation_id = %s ORDER BY seq", "conv-f-3")
        assert [role for role, _ in stored] == ["user", "assistant", "tool", "system"]  # the call got its result, once
        assert '"Interrupted"' in stored[2][1]
        assert rows(pg_url, "SELECT outcome FROM turns WHERE id = %s", started["turnId"]) == [("interrupted",)]
        # a server killed says no goodbye: its member shows offline once not seen for 30 s
        async def alice_offline() -> list:
            while True:
                members = (await bob.request(methods.SPACE_MEMBERS))["members"]
                if not next(m["online"] for m in members if m["handle"] == "alice"):
                    return members
                await asyncio.sleep(0.5)

        members = await asyncio.wait_for(alice_offline(), 31)  # at most 30 s after her last beat, which came before
        assert [(m["handle"], m["online"]) for m in members] == [("bob", True), ("alice", False)]
    finally:
        await bob.stop()


async def test_one_turn_per_agent_per_conversation_across_the_space(pg_url, tmp_path):
    """Bob's message wakes the agent while it runs a turn on Alice's server (waiting for her
    approval): Bob's turn starts only after Alice's has ended, never beside it."""
    ws_a, ws_b = tmp_path / "a", tmp_path / "b"
    ws_a.mkdir(), ws_b.mkdir()
    alice, bob = Editor(ws_a, tmp_path / "config-a"), Editor(ws_b, tmp_path / "config-b")
    edit = {"toolCalls": [{"name": "write_to_file", "arguments": {"path": "a.md", "content": "alice\n"}}]}
    await alice.start({**script(ws_a, edit, {"text": "alice's done"}), **space(pg_url)})
    await bob.start({**script(ws_b, {"text": "bob's answer"}), **space(pg_url, member="bob")})
    try:
        await now(alice, "connected"), await now(bob, "connected")
        answer = asyncio.get_running_loop().create_future()
        alice.decide = lambda request: answer
        await alice.request(methods.CHAT_SEND, {"text": "write it", "conversationId": "conv-f-4"})
        await alice.wait_for(lambda: alice.approvals)
        await bob.wait_for(lambda: [u for u in bob.of_kind("turn_started") if u["conversationId"] == "conv-f-4"])
        await bob.request(methods.CHAT_SEND, {"text": "and me?", "conversationId": "conv-f-4"})
        await asyncio.sleep(2)  # Bob's turn waits
        assert len([u for u in bob.of_kind("turn_started") if u["conversationId"] == "conv-f-4"]) == 1
        answer.set_result({"decision": "approve"})
        await bob.wait_for(lambda: len([u for u in bob.of_kind("turn_ended") if u["conversationId"] == "conv-f-4"]) == 2, timeout=20)
        order = [(u["kind"], u.get("outcome")) for u in bob.updates if u.get("conversationId") == "conv-f-4" and u["kind"] in ("turn_started", "turn_ended")]
        assert order == [("turn_started", None), ("turn_ended", "completed"), ("turn_started", None), ("turn_ended", "completed")]
        assert (ws_a / "a.md").read_text() == "alice\n"  # Alice's turn ran on her checkout
    finally:
        await bob.stop()
        await alice.stop()


async def test_postgresql_down_at_start_then_up(own_pg, tmp_path):
    """The server starts while PostgreSQL is stopped: it says offline and works locally; once
    PostgreSQL is started, it connects by itself and the space's conversations work."""
    url, folder = own_pg
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pg_cluster.halt(folder)
    editor = Editor(workspace, tmp_path / "config")
    await editor.start({**script(workspace, {"text": "local"}, {"text": "shared"}), **space(url)})
    try:
        offline = await now(editor, "offline")
        assert "127.0.0.1" in offline["space"]["error"] and pg_cluster.PASSWORD not in offline["space"]["error"]
        ended = await editor.chat("meanwhile", conversationId="conv-f-local")
        assert ended["outcome"] == "completed"
        pg_cluster.resume(folder)
        await now(editor, "connected", timeout=40)  # tried again after 1, 2, 4 … s
        ended = await editor.chat("now shared", conversationId="conv-f-5")
        assert ended["outcome"] == "completed"
        assert rows(url, "SELECT role, text FROM messages WHERE conversation_id = %s ORDER BY seq", "conv-f-5") == [
            ("user", "now shared"), ("assistant", "shared"),
        ]
    finally:
        await editor.stop()
