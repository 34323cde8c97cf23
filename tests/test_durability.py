"""What survives a crash and a long session: interrupted turns, a corrupt database, memory that
does not grow with the conversation, idle conversations let go, the request limit of a turn."""

from __future__ import annotations

import os
import sqlite3

import pytest

from helpers import chat, make_session, running, settings, until
from memory_host import MemoryHost
from protocol import ApprovalResponse
from server.agent import Session
from server.agent.conversations import INTERRUPTED_CALL, INTERRUPTED_NOTICE, INTERRUPTED_TURN
from server.state import StoredMessage
from server.state.store import DB_NAME, Store
from server.untrusted import Refused
from server.workspace import Workspace


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def crash_mid_call(root, native: bool) -> tuple[str, str]:
    """A session whose turn stopped while a tool call waited (a kill: no end, no result)."""
    session = make_session(root)
    cid = session.conversation_id
    session.store.start_turn("turn-1", cid, "modus")
    session.add_message(StoredMessage("msg-u", cid, "user", "write it", None, {}))
    calls = [{"id": "toolu_1", "name": "write_to_file", "arguments": {"path": "a.md", "content": "x"}, "native": native}]
    session.add_message(StoredMessage("msg-a", cid, "assistant", "Writing.", "modus", {"toolCalls": calls}))
    session.routed.local.db.close()  # no clean end of anything
    return cid, "toolu_1"


@pytest.mark.parametrize("native", [True, False])
def test_a_restart_closes_the_calls_of_an_interrupted_turn(tmp_path, native):
    cid, call_id = crash_mid_call(tmp_path, native)
    session = make_session(tmp_path)
    try:
        messages = session.history(cid).messages
        assert [m.role for m in messages] == ["user", "assistant", "tool", "system"]
        tool, system = messages[2], messages[3]
        assert tool.text == INTERRUPTED_CALL
        assert tool.metadata == {"toolCallId": call_id, "name": "write_to_file", "isError": True, "errorType": "Interrupted"}
        assert system.text == INTERRUPTED_TURN.format(agent="modus")
        assert session.routed.local.turn_outcome("turn-1") == "interrupted"
        model = session.histories.get(cid).messages
        if native:  # the provider gets every tool_use paired with its tool_result
            assert [m.role for m in model] == ["user", "assistant", "tool"]
            assert model[1].tool_calls[0].id == model[2].tool_call_id == call_id
            assert model[2].is_error
    finally:
        session.close()
    again = make_session(tmp_path)  # repaired once: nothing more on the next start
    try:
        assert len(again.history(cid).messages) == 4
    finally:
        again.close()


def test_an_interrupted_turn_is_reported_once(tmp_path):
    cid, _ = crash_mid_call(tmp_path, native=True)
    for start in range(2):
        host = MemoryHost()
        make_session(tmp_path, host).close()
        updates = [(u.conversation_id, u.agent, u.turn_id, u.role, u.text) for u in host.of_kind("message")]
        if start == 0:
            assert updates == [(cid, "modus", "turn-1", "system", INTERRUPTED_TURN.format(agent="modus"))]
            assert host.messages == [("warning", f"{INTERRUPTED_TURN.format(agent='modus')} {INTERRUPTED_NOTICE.format(conversation=cid)}")]
        else:
            assert updates == host.messages == []
        assert host.of_kind("turn_started") == []  # nothing of it runs again


def test_a_second_session_of_the_workspace_leaves_the_running_turns_of_the_first_alone(tmp_path):
    """Two Sessions of one workspace in one process (two ACP sessions): the turns the store has
    as running belong to the first, and the second, started with close_interrupted=False, leaves
    them running."""
    cid, _ = crash_mid_call(tmp_path, native=True)
    host = MemoryHost()
    second = Session(workspace=Workspace(tmp_path), host=host, settings=settings(), global_modes=tmp_path / ".g.yaml", close_interrupted=False)
    try:
        assert [m.role for m in second.history(cid).messages] == ["user", "assistant"]
        assert second.routed.local.turn_outcome("turn-1") is None
        assert host.updates == host.messages == []
    finally:
        second.close()


def test_a_repair_cut_short_is_done_whole_on_the_next_start(tmp_path, monkeypatch):
    """The closing results, the system message and the turn's outcome are one transaction."""
    cid, _ = crash_mid_call(tmp_path, native=True)

    def killed(self, turn_id, outcome):
        raise OSError("killed before the outcome was written")

    with monkeypatch.context() as m:
        m.setattr(Store, "end_turn", killed)
        with pytest.raises(OSError, match="killed"):
            make_session(tmp_path)
    host = MemoryHost()
    session = make_session(tmp_path, host)
    try:
        assert [m.role for m in session.history(cid).messages] == ["user", "assistant", "tool", "system"]
        assert len(host.of_kind("message")) == len(host.messages) == 1
    finally:
        session.close()


async def test_the_conversation_goes_on_after_the_repair(tmp_path):
    cid, _ = crash_mid_call(tmp_path, native=True)
    async with running(tmp_path, [{"text": "Back again."}]) as session:
        assert session.conversation_id == cid
        assert await chat(session, "go on") == "completed"
        assert session.history(cid).messages[-1].text == "Back again."


def test_a_turn_that_ended_is_not_touched(tmp_path):
    session = make_session(tmp_path)
    cid = session.conversation_id
    session.store.start_turn("turn-1", cid, "modus")
    session.add_message(StoredMessage("msg-u", cid, "user", "hi", None, {}))
    session.store.end_turn("turn-1", "completed")
    session.close()
    session = make_session(tmp_path)
    try:
        assert [m.role for m in session.history(cid).messages] == ["user"]
        assert session.routed.local.turn_outcome("turn-1") == "completed"
    finally:
        session.close()


@pytest.mark.parametrize("garbage", [b"\x00" * 100, os.urandom(8192), b"SQLite format 3\x00" + os.urandom(4096)])
def test_a_corrupt_database_is_moved_aside_and_a_fresh_one_started(tmp_path, garbage):
    state = tmp_path / ".modus" / "state"
    state.mkdir(parents=True)
    (state / DB_NAME).write_bytes(garbage)
    host = MemoryHost()
    session = make_session(tmp_path, host)
    try:
        moved = [p for p in state.iterdir() if p.name.startswith(f"{DB_NAME}.corrupt-")]
        assert len(moved) == 1 and moved[0].read_bytes() == garbage  # kept as it was
        [(level, text)] = host.messages
        assert level == "warning" and str(moved[0]) in text and str(state / DB_NAME) in text
        assert session.state().mode.slug == "code"  # and the fresh one works
    finally:
        session.close()


def test_a_database_that_cannot_be_opened_is_not_moved(tmp_path, monkeypatch):
    """Only a corrupt file is moved aside; any other failure is reported as it is."""
    state = tmp_path / "state"
    state.mkdir()
    (state / DB_NAME).write_bytes(b"kept")
    cannot = sqlite3.OperationalError("unable to open database file")
    cannot.sqlite_errorcode = sqlite3.SQLITE_CANTOPEN

    def refuse(*args):
        raise cannot

    monkeypatch.setattr("server.state.store._open", refuse)
    with pytest.raises(sqlite3.OperationalError):
        Store(state)
    assert sorted(p.name for p in state.iterdir()) == [".gitignore", DB_NAME]


@pytest.mark.parametrize("where", [DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"])
def test_a_database_file_that_is_a_link_is_moved_aside_and_what_it_points_to_untouched(tmp_path, where):
    """A repository may hold `.modus/state/`: a link there would send SQLite's writes anywhere."""
    outside = tmp_path / "outside.db"
    outside.write_bytes(b"someone else's file")
    state = tmp_path / "ws" / ".modus" / "state"
    state.mkdir(parents=True)
    (state / where).symlink_to(outside)
    (state / ".gitignore").symlink_to(tmp_path / "planted")  # a dangling link: nothing is written through it
    host = MemoryHost()
    session = make_session(tmp_path / "ws", host)
    try:
        session.store.set_meta(mode="ask")
        [(level, text)] = host.messages
        assert level == "warning" and f"{where} is a symbolic link" in text
    finally:
        session.close()
    assert outside.read_bytes() == b"someone else's file"
    assert not (tmp_path / "planted").exists()
    moved = [p for p in state.iterdir() if ".corrupt-" in p.name]
    assert [p.is_symlink() for p in moved] == [True]


def test_a_state_folder_that_leads_outside_is_refused(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (tmp_path / "ws" / ".modus").mkdir(parents=True)
    (tmp_path / "ws" / ".modus" / "state").symlink_to(outside)
    with pytest.raises(Refused, match="state folder .* leads outside the workspace .*modus.stateDir"):
        make_session(tmp_path / "ws")
    assert list(outside.iterdir()) == []


async def test_a_long_turn_reads_the_store_once(tmp_path, monkeypatch):
    """The model's view of the conversation is kept in memory and appended as messages are written."""
    (tmp_path / "a.txt").write_text("x\n")
    turns = [{"toolCalls": [call("read_file", path="a.txt")]}] * 30 + [{"text": "done"}]
    reads = []
    original = Store.messages
    monkeypatch.setattr(Store, "messages", lambda self, cid: reads.append(cid) or original(self, cid))
    async with running(tmp_path, turns, maxRequestsPerTurn=100) as session:
        assert await chat(session, "read it thirty times") == "completed"
        history = session.histories.get(session.conversation_id, "modus").messages
        stored = original(session.routed.local, session.conversation_id)
    assert reads == [session.conversation_id]
    assert len(history) == len(stored) == 1 + 31 + 30  # user, replies, results


async def test_an_idle_conversation_is_let_go(tmp_path):
    async with running(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}]) as session:
        for n in range(3):
            await chat(session, f"message {n}", conversation_id=f"conv-{n}")
            await until(lambda: session.runtimes.live == {})  # the runtime ends right after its turn
        assert len(session.histories) == 3


async def test_histories_kept_in_memory_are_bounded(tmp_path):
    turns = [{"text": "ok"}] * 12
    async with running(tmp_path, turns) as session:
        for n in range(12):
            await chat(session, "hi", conversation_id=f"conv-{n}")
        assert len(session.histories) == session.histories.capacity
        # a conversation let go is read again from the store, whole
        assert [m.role for m in session.histories.get("conv-0").messages] == ["user", "assistant"]


def limit_script(n: int) -> list[dict]:
    return [{"toolCalls": [call("read_file", path="a.txt")]}] * n + [{"text": "all done"}]


@pytest.mark.parametrize(
    "decision, outcome, asked",
    [("approve", "completed", 2), ("deny", "cancelled", 1)],
)
async def test_at_the_request_limit_the_user_decides(tmp_path, decision, outcome, asked):
    (tmp_path / "a.txt").write_text("x\n")
    host = MemoryHost(approve=lambda r: ApprovalResponse(decision=decision))
    async with running(tmp_path, limit_script(6), host=host, maxRequestsPerTurn=3) as session:  # 7 requests
        assert await chat(session, "go") == outcome
    assert len(host.approvals) == asked
    first = host.approvals[0]
    assert first.kind == "continue" and first.agent == "modus"
    assert first.tool_call_id is None  # it gates no tool call
    assert first.title == "modus has made 3 model requests in this turn. Continue?"
    assert "maxRequestsPerTurn" in first.detail
    completed = [u for u in host.of_kind("tool_call") if u.status == "completed"]
    if decision == "deny":
        assert len(completed) == 3
        assert host.of_kind("message")[-1].text == (
            "Stopped after 3 model requests in one turn (maxRequestsPerTurn): the user chose not to continue."
        )
    else:
        assert len(completed) == 6


async def test_yolo_goes_on_past_the_request_limit(tmp_path):
    (tmp_path / "a.txt").write_text("x\n")
    host = MemoryHost()
    async with running(tmp_path, limit_script(7), host=host, maxRequestsPerTurn=2, yolo=True) as session:
        assert await chat(session, "go") == "completed"
    assert host.approvals == []
    assert len([u for u in host.of_kind("tool_call") if u.status == "completed"]) == 7


async def test_an_interrupted_turn_can_be_retried(tmp_path):
    cid, _ = crash_mid_call(tmp_path, native=True)
    async with running(tmp_path, [{"text": "Picked it up again."}]) as session:
        system = session.history(cid).messages[-1]
        assert system.metadata["outcome"] == "interrupted"
        assert system.metadata["error"] == {"type": "Interrupted", "message": INTERRUPTED_TURN.format(agent="modus")}
        retried = await session.resend.retry(cid)
        assert (retried.agent, retried.retried) == ("modus", "turn-1")
        await until(lambda: session.host.of_kind("turn_ended"))
        assert session.history(cid).messages[-1].text == "Picked it up again."


async def test_a_turn_stopped_at_the_request_limit_says_why(tmp_path):
    (tmp_path / "a.txt").write_text("x\n")
    host = MemoryHost(approve=lambda r: ApprovalResponse(decision="deny"))
    async with running(tmp_path, limit_script(6), host=host, maxRequestsPerTurn=3) as session:
        assert await chat(session, "go") == "cancelled"
        [ended] = host.of_kind("turn_ended")
        last = session.history(session.conversation_id).messages[-1]
    assert ended.error.type == "RequestLimit" and ended.error.message == last.text
    assert last.metadata["outcome"] == "cancelled" and last.metadata["error"]["type"] == "RequestLimit"


class OutcomeAtEachMessage(MemoryHost):
    """Records, as each message of a turn goes out, what the store has as the turn's outcome: a
    server killed right after it had sent the message would find that on its next start."""

    def __init__(self):
        super().__init__()
        self.session: Session | None = None
        self.seen: list[tuple[str, str, str | None]] = []

    def publish(self, update) -> None:
        super().publish(update)
        if update.kind == "message" and update.turn_id and self.session is not None:
            self.seen.append((update.role, update.text, self.session.routed.local.turn_outcome(update.turn_id)))


async def test_a_reply_that_ends_the_turn_is_stored_with_its_end_and_a_stop_hook_that_sends_the_turn_on_opens_it(tmp_path):
    """What follows the final reply (the context's measure, the Stop hooks, the wakes) is no work a
    crash interrupts: the turn is over once its client has the reply. A Stop hook that sends it on
    opens it again until its next end."""
    marker = tmp_path / "stopped-once"
    stop = f"test -e {marker} && exit 0; touch {marker}; echo 'Run the tests first.' >&2; exit 2"
    host = OutcomeAtEachMessage()
    turns = [{"text": "Done."}, {"text": "Tests run, done."}]
    async with running(tmp_path, turns, host=host, hooks={"Stop": [{"hooks": [{"type": "command", "command": stop}]}]}) as session:
        host.session = session
        assert await chat(session, "go") == "completed"
        [(turn_id, outcome)] = session.routed.local.db.execute("SELECT id, outcome FROM turns").fetchall()
    assert host.seen == [
        ("assistant", "Done.", "completed"),
        ("user", "Run the tests first.", None),
        ("assistant", "Tests run, done.", "completed"),
    ]
    assert outcome == "completed" and host.of_kind("turn_ended")[-1].turn_id == turn_id
