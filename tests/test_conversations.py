"""The conversation list (store query, titles, times) and opening a conversation."""

from __future__ import annotations

import pytest

from helpers import chat, make_session, running
from memory_host import MemoryHost
from protocol import ApprovalResponse, ChatSendParams
from server.agent.conversations import checked_id, title
from server.state.records import iso_utc
from server.errors import BadRequest
from server.state import StoredMessage
from server.state.store import Store


def message(store: Store, cid: str, n: int, role: str, text: str, at: float, **metadata) -> None:
    """A message written at a known time (seconds)."""
    store.add_message(StoredMessage(f"{cid}-{n}", cid, role, text, "modus" if role == "assistant" else None, metadata))
    store.db.execute("UPDATE messages SET created_at = ? WHERE id = ?", (at, f"{cid}-{n}"))


def conversation(store: Store, cid: str, at: float, parent: str | None = None) -> None:
    store.ensure_conversation(cid, parent_id=parent)
    store.db.execute("UPDATE conversations SET created_at = ? WHERE id = ?", (at, cid))


def task(store: Store, task_id: str, cid: str, mode: str, at: float) -> None:
    store.add_task(task_id, "modus", mode, "act", cid, None, None)
    store.db.execute("UPDATE tasks SET created_at = ? WHERE id = ?", (at, task_id))


def test_the_list_holds_top_level_conversations_with_messages_the_latest_first():
    store = Store(None)
    conversation(store, "old", 100)
    message(store, "old", 1, "user", "\n  \n  Fix   the\tlogin bug  \nplease", 101)
    message(store, "old", 2, "assistant", "On it.", 102, mode="debug")
    message(store, "old", 3, "user", "and the logout one", 150)
    conversation(store, "new", 110)
    message(store, "new", 1, "system", "A note first.", 111)
    message(store, "new", 2, "user", "Design the API", 120)
    message(store, "new", 3, "assistant", "Here it is.", 121, mode="architect")
    task(store, "t1", "new", "code", 110)
    task(store, "t2", "new", "ask", 115)  # the latest task wins over the replies' mode
    conversation(store, "child", 130, parent="new")  # a subtask's conversation
    message(store, "child", 1, "user", "subtask", 200)
    conversation(store, "empty", 140)  # no message yet
    conversation(store, "quiet", 90)
    message(store, "quiet", 1, "user", "hello", 91)  # no reply, no task: no mode

    rows = store.conversations()

    assert [(r.id, r.created_at, r.updated_at, r.messages, r.mode) for r in rows] == [
        ("old", 100, 150, 3, "debug"),
        ("new", 110, 121, 3, "ask"),
        ("quiet", 90, 91, 1, None),
    ]
    assert [title(r.first_user_text) for r in rows] == ["Fix the login bug", "Design the API", "hello"]


def test_the_list_is_capped_to_the_most_recently_updated():
    store = Store(None)
    for n in range(5):
        conversation(store, f"c{n}", n)
        message(store, f"c{n}", 1, "user", f"number {n}", 10 + n)
    assert [r.id for r in store.conversations(limit=3)] == ["c4", "c3", "c2"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Hello", "Hello"),
        ("\n\n   \t\n  two  words \n second line", "two words"),
        ("x" * 80, "x" * 80),
        ("x" * 81, "x" * 79 + "…"),
        ("x" * 78 + " yyy", "x" * 78 + "…"),  # no blank before the cut
        ("", ""),
        (None, ""),
    ],
)
def test_title(text, expected):
    assert title(text) == expected
    assert len(title(text)) <= 80


def test_times_are_iso_8601_utc():
    assert iso_utc(0) == "1970-01-01T00:00:00.000Z"
    assert iso_utc(1796124911.7735) == "2026-12-01T11:35:11.773Z"


@pytest.mark.parametrize("good", ["conv-0123abcd", "3f2b8c1e-2d4a-4c1b-9f1e-0a1b2c3d4e5f", "a", "x" * 128, "ns:thing.v2_1"])
def test_conversation_ids_a_client_may_choose(good):
    assert checked_id(good) == good


@pytest.mark.parametrize("bad", ["", " ", "-lead", "has space", "a/b", "x" * 129, "tab\there", "new\nline", "é"])
def test_conversation_ids_refused_name_the_field(bad):
    with pytest.raises(BadRequest, match=r"^conversationId: must be 1 to 128"):
        checked_id(bad)


async def test_open_makes_a_conversation_current_and_a_restart_continues_it(tmp_path):
    async with running(tmp_path, [{"text": "one"}, {"text": "two"}]) as session:
        first = session.conversation_id
        await chat(session, "in the first")
        fresh = session.open(None)
        assert fresh.conversation_id != first and fresh.conversation_id == session.conversation_id
        chosen = session.open("mine-1").conversation_id
        await chat(session, "in mine")  # no id: it goes to the one that is open
        back = session.open(first).conversation_id
        assert [m.text for m in session.store.messages("mine-1") if m.role == "user"] == ["in mine"]
    assert chosen == "mine-1" and back == first
    again = make_session(tmp_path)
    try:
        assert again.conversation_id == first
        assert again.state().conversation_id == first
    finally:
        again.close()


async def test_open_refuses_a_bad_id_and_a_subtask_s_conversation(tmp_path):
    async with running(tmp_path) as session:
        current = session.conversation_id
        session.store.ensure_conversation("sub-1", parent_id=current)
        with pytest.raises(BadRequest, match="^conversationId: must be"):
            session.open("")
        with pytest.raises(BadRequest, match=f"^conversationId: sub-1 is a subtask's conversation; open {current}"):
            session.open("sub-1")
        assert session.conversation_id == current
        assert not session.store.conversation_exists("")


async def test_a_turn_s_mode_switch_stays_in_its_conversation_when_another_is_opened(tmp_path):
    """The user opens another conversation while a turn waits for approval of its switch_mode:
    the switch is still that turn's (its update, its task)."""
    opened = []

    def approve_after_opening_another(request):
        opened.append(session.open(None).conversation_id)
        return ApprovalResponse(decision="approve")

    turns = [{"toolCalls": [{"name": "switch_mode", "arguments": {"mode_slug": "ask"}}]}, {"text": "ok"}]
    host = MemoryHost(approve=approve_after_opening_another)
    async with running(tmp_path, turns, host=host) as session:
        first = session.conversation_id
        assert await chat(session, "switch") == "completed"
        assert session.conversation_id == opened[0] != first
        [changed] = host.of_kind("mode_changed")
        listed = {c.id: c.mode for c in session.list_conversations().conversations}
    assert (changed.conversation_id, changed.from_, changed.to) == (first, "code", "ask")
    assert listed == {first: "ask"}
    assert {u.conversation_id for u in host.updates if hasattr(u, "conversation_id")} == {first}


async def test_idle_waits_for_the_turns_a_message_started_and_those_they_woke(tmp_path):
    """Session.idle (what ACP's session/prompt waits for): the user's agent and the agent its
    text woke have both ended; with nothing running it returns at once."""
    async with running(tmp_path, [{"text": "@b have a look"}], agents=[{"name": "a"}, {"name": "b"}]) as session:
        await session.idle(session.conversation_id)
        await session.send(ChatSendParams(text="@a start"))
        await session.idle(session.conversation_id)
        ended = [(u.agent, u.outcome) for u in session.host.of_kind("turn_ended")]
    assert ended == [("a", "completed"), ("b", "completed")]
