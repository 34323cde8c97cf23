"""The store's operations, on a real SQLite file and on a real PostgreSQL database (a team space): plans and the agent's plan state, todos,
transactions, interrupted turns; and the interface the core types it by."""

from __future__ import annotations

import inspect
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import server
from server.state import StateStore, Store
from server.state.interface import SpaceTurns
from server.state.records import PLAN_FIELDS, StoredMessage
from server.state.store import DB_NAME


class SQLite:
    """The SQLite store on a file of the test's folder."""

    def __init__(self, tmp_path):
        self.path = tmp_path

    def open(self):
        return Store(self.path)

    def crash(self, store) -> None:
        store.db.close()  # no clean end

    def elsewhere(self, sql: str, *args) -> list[tuple]:
        with closing(sqlite3.connect(self.path / DB_NAME)) as db:
            return db.execute(sql, args).fetchall()

    def write(self, sql: str, *args) -> None:
        with closing(sqlite3.connect(self.path / DB_NAME, isolation_level=None)) as db:
            db.execute(sql, args)


class PostgreSQL:
    """The space's store on a database of its own, on the test run's PostgreSQL cluster."""

    def __init__(self, url: str):
        self.url = url

    def open(self):
        from server.state.pg import SpaceStore

        return SpaceStore(self.url)

    def crash(self, store) -> None:
        store.close()

    def elsewhere(self, sql: str, *args) -> list[tuple]:
        import psycopg

        with psycopg.connect(self.url) as db:
            return db.execute(sql.replace("?", "%s"), args).fetchall()

    def write(self, sql: str, *args) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as db:
            db.execute(sql.replace("?", "%s"), args)


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request, tmp_path):
    """Each store test runs on both stores of the interface: SQLite, and a space's PostgreSQL."""
    if request.param == "sqlite":
        return SQLite(tmp_path)
    return PostgreSQL(request.getfixturevalue("pg_url"))


@pytest.fixture
def store(backend):
    store = backend.open()
    yield store
    store.close()


@pytest.fixture
def elsewhere(backend):
    """What another connection to the database reads: what has been committed."""
    return backend.elsewhere


def todo(id: str, status: str = "pending", **more) -> dict:
    return {"id": id, "content": f"do {id}", "status": status, "priority": "medium", **more}


# ------------------------------------------------------------ plans


def test_a_new_plan(store):
    plan = store.plan_create("modus", "Add a cache", ["src/a.py", "src/b.py"], "conv-1")
    assert set(plan) == set(PLAN_FIELDS)
    assert plan["id"].startswith("plan-")
    assert (plan["agent"], plan["goal"], plan["scope"], plan["conversation_id"]) == ("modus", "Add a cache", ["src/a.py", "src/b.py"], "conv-1")
    assert (plan["state"], plan["plan"], plan["completed"], plan["current_step"], plan["feedback"]) == ("planning", None, {}, None, None)
    assert store.plan_get(plan["id"]) == plan
    assert store.plan_create("modus", "Anywhere")["scope"] is None
    assert store.plan_get("plan-none") is None


def test_a_plan_is_updated_field_by_field(store, elsewhere):
    plan_id = store.plan_create("modus", "Add a cache")["id"]
    body = {"summary": "s", "approach": "a", "steps": [{"id": "s1", "description": "d", "depends_on": []}]}
    updated = store.plan_update(plan_id, plan=body, current_step="s1")
    assert updated["plan"] == body and updated["current_step"] == "s1" and updated["goal"] == "Add a cache"
    updated = store.plan_update(plan_id, completed={"s1": "tests pass"}, current_step=None, feedback="use LRU")
    assert (updated["completed"], updated["current_step"], updated["feedback"]) == ({"s1": "tests pass"}, None, "use LRU")
    assert updated["plan"] == body
    assert store.plan_get(plan_id) == updated
    assert elsewhere("SELECT completed FROM plans WHERE id = ?", plan_id) == [('{"s1": "tests pass"}',)]


def test_plan_update_names_what_is_wrong(store):
    plan_id = store.plan_create("modus", "g")["id"]
    with pytest.raises(ValueError, match=r"plan_update: fields must be some of conversation_id, goal, .*; got agent, colour"):
        store.plan_update(plan_id, colour="red", agent="other")
    with pytest.raises(ValueError, match="got none"):
        store.plan_update(plan_id)
    with pytest.raises(ValueError, match="plan_update: no plan plan-none"):
        store.plan_update("plan-none", goal="g")
    assert store.plan_get(plan_id)["agent"] == "modus"


def test_the_agent_starts_with_no_plan(store):
    assert store.current_plan("modus") == ("normal", None)


def test_the_agents_plan_state_and_the_plans_follow(store, elsewhere):
    plan_id = store.plan_create("modus", "g")["id"]
    for state in ("planning", "awaiting_approval", "executing"):
        store.set_plan_state("modus", state, plan_id)
        assert elsewhere("SELECT state, plan_id FROM plan_state WHERE agent = 'modus'") == [(state, plan_id)]
        current_state, plan = store.current_plan("modus")
        assert current_state == state and plan["id"] == plan_id and plan["state"] == state
    assert store.current_plan("other") == ("normal", None)  # each agent has its own
    store.plan_update(plan_id, state="completed")
    store.set_plan_state("modus", "normal")
    assert store.current_plan("modus") == ("normal", None)
    assert store.plan_get(plan_id)["state"] == "completed"  # the plan is kept


@pytest.mark.parametrize(
    "state, plan, error",
    [
        ("thinking", "mine", "set_plan_state: state must be one of normal, planning, awaiting_approval, executing; got 'thinking'"),
        ("executing", None, "set_plan_state: the state executing takes a plan_id"),
        ("normal", "mine", "set_plan_state: the state normal takes no plan, got plan_id 'plan-"),
        ("planning", "plan-none", "set_plan_state: modus has no plan plan-none"),
        ("planning", "theirs", "set_plan_state: modus has no plan plan-"),
    ],
)
def test_a_plan_state_that_cannot_be_is_refused_and_nothing_changes(store, state, plan, error):
    mine = store.plan_create("modus", "g")["id"]
    theirs = store.plan_create("other", "g")["id"]
    store.set_plan_state("modus", "planning", mine)
    with pytest.raises(ValueError) as refused:
        store.set_plan_state("modus", state, {"mine": mine, "theirs": theirs}.get(plan, plan))
    assert str(refused.value).startswith(error)
    assert store.current_plan("modus")[0] == "planning"
    assert store.plan_get(theirs)["state"] == "planning"


def test_plans_and_their_state_survive_a_restart(backend):
    store = backend.open()
    plan_id = store.plan_create("modus", "g", ["a.py"])["id"]
    store.plan_update(plan_id, plan={"summary": "s"}, completed={"s1": "ok"})
    store.set_plan_state("modus", "executing", plan_id)
    backend.crash(store)
    again = backend.open()
    try:
        state, plan = again.current_plan("modus")
        assert state == "executing"
        assert (plan["scope"], plan["plan"], plan["completed"]) == (["a.py"], {"summary": "s"}, {"s1": "ok"})
    finally:
        again.close()


# ------------------------------------------------------------ transactions


def test_a_transaction_commits_its_writes_together(store, elsewhere):
    plan_id = store.plan_create("modus", "g")["id"]
    store.set_plan_state("modus", "executing", plan_id)
    with store.transaction():
        store.plan_update(plan_id, state="completed")
        store.set_plan_state("modus", "normal")
        assert elsewhere("SELECT state FROM plans") == [("executing",)]  # not yet
    assert elsewhere("SELECT state FROM plans") == [("completed",)]
    assert store.current_plan("modus") == ("normal", None)


def test_a_transaction_that_fails_changes_nothing(store):
    plan_id = store.plan_create("modus", "g")["id"]
    store.set_plan_state("modus", "executing", plan_id)
    store.replace_todos("modus", [todo("1")])
    with pytest.raises(RuntimeError, match="stop"):
        with store.transaction():
            store.plan_update(plan_id, state="completed")
            store.set_plan_state("modus", "normal")
            store.replace_todos("modus", [])
            store.set_meta(mode="ask")
            raise RuntimeError("stop")
    assert store.current_plan("modus")[0] == "executing"
    assert store.plan_get(plan_id)["state"] == "executing"
    assert [t["id"] for t in store.todos("modus")] == ["1"]
    assert store.get_meta("mode") is None


# ------------------------------------------------------------ todos


def test_todos_are_the_agents_in_their_order(store, elsewhere):
    assert store.todos("modus") == []
    items = [todo("b", "in_progress", created_at="2026-12-01T10:00:00.000Z", updated_at="2026-12-01T11:00:00.000Z"), todo("a"), todo("c", "completed")]
    store.replace_todos("modus", items)
    assert elsewhere("SELECT id FROM todos ORDER BY position") == [("b",), ("a",), ("c",)]
    assert store.todos("modus") == [
        {"id": "b", "content": "do b", "status": "in_progress", "priority": "medium", "created_at": "2026-12-01T10:00:00.000Z", "updated_at": "2026-12-01T11:00:00.000Z"},
        {"id": "a", "content": "do a", "status": "pending", "priority": "medium", "created_at": None, "updated_at": None},
        {"id": "c", "content": "do c", "status": "completed", "priority": "medium", "created_at": None, "updated_at": None},
    ]
    store.replace_todos("other", [todo("a", "completed")])  # another agent's list: the same id is another item
    store.replace_todos("modus", [todo("c"), todo("d")])  # the list is replaced whole
    assert [(t["id"], t["status"]) for t in store.todos("modus")] == [("c", "pending"), ("d", "pending")]
    assert [(t["id"], t["status"]) for t in store.todos("other")] == [("a", "completed")]
    store.replace_todos("modus", [])
    assert store.todos("modus") == []


@pytest.mark.parametrize(
    "items, error",
    [
        ([todo("1"), {"id": "2", "status": "pending"}], "replace_todos: item 1 has no content, priority"),
        ([todo("1"), todo("2"), todo("1")], "replace_todos: the id '1' is used twice"),
    ],
)
def test_a_todo_list_that_cannot_be_stored_is_refused_and_the_old_one_kept(store, items, error):
    store.replace_todos("modus", [todo("old")])
    with pytest.raises(ValueError, match=error):
        store.replace_todos("modus", items)
    assert [t["id"] for t in store.todos("modus")] == ["old"]


def test_todos_survive_a_restart(backend):
    store = backend.open()
    store.replace_todos("modus", [todo("1"), todo("2", "in_progress")])
    backend.crash(store)
    again = backend.open()
    try:
        assert [(t["id"], t["status"]) for t in again.todos("modus")] == [("1", "pending"), ("2", "in_progress")]
    finally:
        again.close()


# ------------------------------------------------------------ turns


def test_a_turn_marked_interrupted_is_open_no_more(store, elsewhere):
    store.start_turn("turn-1", "conv-1", "modus")
    store.start_turn("turn-2", "conv-2", "coder")
    assert store.open_turns() == [("turn-1", "conv-1", "modus"), ("turn-2", "conv-2", "coder")]
    store.end_turn("turn-1", "interrupted")
    assert store.open_turns() == [("turn-2", "conv-2", "coder")]
    assert elsewhere("SELECT outcome FROM turns WHERE id = 'turn-1'") == [("interrupted",)]


# ------------------------------------------------------------ messages: found by id, by metadata, after a cut


def test_a_message_is_found_by_id_with_its_number_and_whether_it_was_cut(store):
    store.ensure_conversation("conv-1")
    for i, role in enumerate(("user", "assistant", "user", "assistant"), start=1):
        store.add_message(StoredMessage(f"m{i}", "conv-1", role, f"text {i}", None if role == "user" else "modus", {"turnId": "t"} if i == 2 else {}))
    assert store.locate_message("conv-1", "m3") == (StoredMessage("m3", "conv-1", "user", "text 3", None, {}), 3, False)
    assert store.locate_message("conv-2", "m3") is None and store.locate_message("conv-1", "nosuch") is None
    assert store.first_after("conv-1", 2) == "m3"
    assert store.last_with("conv-1", "turnId").id == "m2"
    assert store.cut_after("conv-1", 1) == 3
    assert store.locate_message("conv-1", "m3")[1:] == (3, True)  # kept, marked
    assert store.first_after("conv-1", 1) is None and store.last_with("conv-1", "turnId") is None
    store.add_message(StoredMessage("m5", "conv-1", "user", "again", None, {}))
    assert store.first_after("conv-1", 1) == "m5" and store.locate_message("conv-1", "m5")[1] == 5


def test_history_pages_back_by_number_oldest_first(store):
    """modus/chat/history: the `limit` messages just before `before` (the newest without it)."""
    store.ensure_conversation("conv-1")
    store.ensure_conversation("conv-2")
    for i in range(1, 121):
        store.add_message(StoredMessage(f"m{i}", "conv-1", "user" if i % 2 else "assistant", f"text {i}", None, {"i": i}))
    store.add_message(StoredMessage("other", "conv-2", "user", "elsewhere"))
    assert store.last_seq("conv-1") == 120 and store.last_seq("conv-2") == 1 and store.last_seq("conv-none") == 0
    newest = store.history("conv-1")
    assert [seq for seq, _ in newest] == list(range(71, 121))
    assert newest[-1][1] == StoredMessage("m120", "conv-1", "assistant", "text 120", None, {"i": 120})
    assert [seq for seq, _ in store.history("conv-1", before=71)] == list(range(21, 71))
    assert [m.id for _, m in store.history("conv-1", before=21, limit=50)] == [f"m{i}" for i in range(1, 21)]
    assert store.history("conv-1", before=1) == [] and store.history("conv-none") == []
    assert [seq for seq, _ in store.history("conv-1", before=10, limit=3)] == [7, 8, 9]
    store.cut_after("conv-1", 100)  # cut messages are not history
    assert [seq for seq, _ in store.history("conv-1", limit=2)] == [99, 100]


def test_the_conversation_list_on_each_store(store, backend):
    """The list's one query, as test_conversations.py has it on SQLite: top-level conversations
    with messages, the latest first; the first user text; the latest task's mode, else the reply's."""

    def conversation(cid, at, parent=None):
        store.ensure_conversation(cid, parent_id=parent)
        backend.write("UPDATE conversations SET created_at = ? WHERE id = ?", at, cid)

    def message(cid, n, role, text, at, **metadata):
        store.add_message(StoredMessage(f"{cid}-{n}", cid, role, text, "modus" if role == "assistant" else None, metadata))
        backend.write("UPDATE messages SET created_at = ? WHERE id = ?", at, f"{cid}-{n}")

    def task(task_id, cid, mode, at):
        store.add_task(task_id, "modus", mode, "act", cid, None, None)
        backend.write("UPDATE tasks SET created_at = ? WHERE id = ?", at, task_id)

    conversation("old", 100)
    message("old", 1, "user", "\n  \n  Fix   the\tlogin bug", 101)
    message("old", 2, "assistant", "On it.", 102, mode="debug")
    message("old", 3, "user", "and the logout one", 150)
    conversation("new", 110)
    message("new", 1, "system", "A note first.", 111)
    message("new", 2, "user", "Design the API", 120)
    message("new", 3, "assistant", "Here it is.", 121, mode="architect")
    task("t1", "new", "code", 110)
    task("t2", "new", "ask", 115)
    task("t3", "new", "debug", 115)  # the same time: the later written wins
    conversation("child", 130, parent="new")
    message("child", 1, "user", "subtask", 200)
    conversation("empty", 140)
    conversation("quiet", 90)
    message("quiet", 1, "user", "hello", 91)
    rows = store.conversations()
    assert [(r.id, r.created_at, r.updated_at, r.messages, r.mode) for r in rows] == [
        ("old", 100, 150, 3, "debug"),
        ("new", 110, 121, 3, "debug"),
        ("quiet", 90, 91, 1, None),
    ]
    assert rows[0].first_user_text == "Fix   the\tlogin bug"
    assert [r.id for r in store.conversations(limit=1)] == ["old"]
    assert store.subconversations("new") == ["new", "child"] and store.conversation_parent("child") == "new"
    assert store.ensure_conversation("new") is False and store.conversation_exists("new") and not store.conversation_exists("none")


def test_calls_speakers_metadata_usage_images_and_meta_on_each_store(store):
    store.ensure_conversation("c", owner="lead")
    assert store.conversation_owner("c") == "lead" and store.conversation_owner("none") is None
    calls = [{"id": "k1", "name": "read_file"}, {"id": "k2", "name": "list_files"}]
    store.add_message(StoredMessage("u1", "c", "user", "go", None, {"mention": ["a"]}))
    store.add_message(StoredMessage("a1", "c", "assistant", "reading", "coder", {"toolCalls": calls, "mention": None}))
    store.add_message(StoredMessage("t1", "c", "tool", "ok", None, {"toolCallId": "k1"}))
    assert store.unanswered_calls("c") == [calls[1]]
    assert store.last_speaker("c", ["coder", "lead"]) == "coder" and store.last_speaker("c", ["lead"]) is None and store.last_speaker("c", []) is None
    assert store.metadata_values(["c"], "mention") == [["a"]]  # a JSON null is no value
    assert store.metadata_values(["c", "none"], "toolCallId") == ["k1"]
    row = {"conversation_id": "c", "task_id": "t", "agent": "coder", "mode": "code", "phase": "act", "model": "m",
           "input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 1, "cache_write_tokens": 0, "cost": 0.25}
    store.add_usage(row)
    store.add_usage({**row, "input_tokens": 2, "cost": 0.5})
    assert store.usage(["c"]) == [row, {**row, "input_tokens": 2, "cost": 0.5}] and store.usage(["none"]) == [] and len(store.usage()) == 2
    assert store.usage_total("c") == {"input_tokens": 12, "output_tokens": 10, "cache_read_tokens": 2, "cache_write_tokens": 0, "cost": 0.75}
    store.add_usage({**row, "cost": None})
    assert store.usage_total("c")["cost"] is None
    assert store.usage_total("none") == {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0, "cost": 0}
    png = bytes.fromhex("89504e470d0a1a0a") + b"\x00" * 24
    first = store.put_image("c", "image/png", png)
    assert store.put_image("d", "image/png", png) == first and store.image(first) == ("image/png", png) and store.image("img-none") is None
    store.set_meta(mode="ask", phase="act")
    store.set_meta(mode="code")
    assert (store.get_meta("mode"), store.get_meta("phase"), store.get_meta("none", "x")) == ("code", "act", "x")
    store.start_turn("turn-1", "c", "coder")
    store.end_turn("turn-1", "done")
    store.reopen_turn("turn-1")
    assert store.open_turns() == [("turn-1", "c", "coder")]


def test_a_nul_in_text_is_stored_and_nothing_fails(store):
    """A tool's output may hold NUL: SQLite keeps it; PostgreSQL's text cannot, it becomes U+FFFD."""
    store.ensure_conversation("c")
    store.add_message(StoredMessage("m", "c", "tool", "a\x00b", None, {"out": "c\x00d"}))
    [message] = store.messages("c")
    assert message.text in ("a\x00b", "a\ufffdb") and message.metadata["out"] in ("c\x00d", "c\ufffdd")


# ------------------------------------------------------------ the interface


def protocol_methods(interface=StateStore) -> list[str]:
    return [name for name, value in vars(interface).items() if callable(value) and not name.startswith("_")]


def test_each_store_is_a_state_store(store):
    assert isinstance(store, StateStore)
    assert "recovered" in StateStore.__annotations__


def space_store():
    from server.state.pg.store import SpaceStore

    return SpaceStore


@pytest.mark.parametrize("implementation", [lambda: Store, space_store], ids=["sqlite", "postgresql"])
@pytest.mark.parametrize("name", protocol_methods())
def test_the_store_has_each_operation_of_the_interface_as_it_is_declared(name, implementation):
    declared = inspect.signature(getattr(StateStore, name)).parameters
    implemented = inspect.signature(getattr(implementation(), name)).parameters
    assert [(p.name, p.kind, p.default) for p in implemented.values()] == [(p.name, p.kind, p.default) for p in declared.values()]


def test_the_core_uses_no_operation_outside_the_interface():
    """What the core asks of `store` (a PostgreSQL store would implement the same)."""
    core = Path(server.__file__).parent
    used = set()
    for source in core.rglob("*.py"):
        if core / "state" not in source.parents:
            used |= set(re.findall(r"\bstore\.(\w+)", source.read_text(encoding="utf-8")))
    assert used, "no store operation found in the core: has the attribute been renamed?"
    space_only = set(protocol_methods(SpaceTurns))  # what SpaceLink asks of the space's store alone
    assert used - set(protocol_methods()) - space_only - {"recovered"} == set(), "add them to server/state/interface.py"


@pytest.mark.parametrize("name", protocol_methods(SpaceTurns))
def test_the_space_store_has_each_operation_of_its_own_as_declared(name):
    declared = inspect.signature(getattr(SpaceTurns, name)).parameters
    implemented = inspect.signature(getattr(space_store(), name)).parameters
    assert [(p.name, p.kind, p.default) for p in implemented.values()] == [(p.name, p.kind, p.default) for p in declared.values()]


# ------------------------------------------------------------ text no UTF-8 can hold


def test_a_lone_surrogate_is_stored_as_u_fffd_and_nothing_fails(store, elsewhere):
    """Text from a model, a tool or an MCP server may hold a lone surrogate (sqlite3 raises
    UnicodeEncodeError binding it): it is stored as U+FFFD; a pair and everything else as they are."""
    store.ensure_conversation("conv-1")
    store.add_message(StoredMessage("m1", "conv-1", "assistant", "half \ud83d of an emoji, and \U0001f600", "modus", {"k": "\udc00"}))
    [message] = store.messages("conv-1")
    # SQLite's JSON keeps it escaped; PostgreSQL's json refuses the escape: repaired as text is
    assert (message.text, message.metadata) == ("half \ufffd of an emoji, and \U0001f600", {"k": "\udc00" if isinstance(store, Store) else "\ufffd"})
    plan = store.plan_create("modus", "goal \ud800", ["a\udfff.py"])
    assert store.plan_update(plan["id"], feedback="no\ud800")["goal"] == "goal \ufffd"
    assert elsewhere("SELECT feedback FROM plans") == [("no\ufffd",)]
    store.replace_todos("modus", [todo("t1"), {**todo("t2"), "content": "\udbff!"}])
    assert [t["content"] for t in store.todos("modus")] == ["do t1", "\ufffd!"]
    assert store.messages("conv-\ud800") == []  # a read with one finds nothing
