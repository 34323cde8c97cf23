"""The conversation as each agent's model sees it, when several agents speak in it."""

from __future__ import annotations

from server.agent.history import Histories, ModelHistory
from server.state import StoredMessage


def msg(role: str, text: str, agent: str | None = None, **metadata) -> StoredMessage:
    return StoredMessage(f"m{id(metadata)}{text}", "c1", role, text, agent, metadata)


def call(call_id: str) -> dict:
    return {"id": call_id, "name": "read_file", "arguments": {"path": "a"}, "native": True}


# architect and coder ran in parallel: their calls and results interleave in the store
STORED = [
    msg("user", "design and build it"),
    msg("assistant", "Reading first.", "architect", toolCalls=[call("a1")]),
    msg("assistant", "Me too.", "coder", toolCalls=[call("c1")]),
    msg("tool", "coder's result", None, toolCallId="c1", name="read_file", isError=False),
    msg("tool", "architect's result", None, toolCallId="a1", name="read_file", isError=False),
    msg("assistant", "The design.", "architect"),
]


def shape(history: ModelHistory) -> list[tuple[str, str, tuple[str, ...], str | None]]:
    return [(m.role, m.text, tuple(c.id for c in m.tool_calls), m.tool_call_id) for m in history.messages]


def test_each_agent_sees_its_own_calls_paired_and_the_others_quoted():
    assert shape(ModelHistory(STORED, "architect")) == [
        ("user", "design and build it", (), None),
        ("assistant", "Reading first.", ("a1",), None),
        ("tool", "architect's result", (), "a1"),  # right after its call: what coder said waits
        ("user", "[coder said]\nMe too.", (), None),
        ("assistant", "The design.", (), None),
    ]
    assert shape(ModelHistory(STORED, "coder")) == [
        ("user", "design and build it", (), None),
        ("user", "[architect said]\nReading first.", (), None),
        ("assistant", "Me too.", ("c1",), None),
        ("tool", "coder's result", (), "c1"),
        ("user", "[architect said]\nThe design.", (), None),
    ]


def test_one_agent_sees_everything_as_before():
    single = [m for m in STORED if m.agent != "coder" and m.metadata.get("toolCallId") != "c1"]
    assert shape(ModelHistory(single, "architect")) == shape(ModelHistory(single))


def test_the_views_of_many_agents_in_one_conversation_are_kept_as_one_conversation():
    class Store:
        reads: list[str] = []

        def messages(self, conversation_id: str) -> list[StoredMessage]:
            self.reads.append(conversation_id)
            return list(STORED)

    store = Store()
    histories = Histories(store, capacity=2)
    for _ in range(2):
        for n in range(12):  # more agents than the capacity: none evicts another's view
            histories.get("c1", f"agent{n}")
    assert store.reads == ["c1"] * 12 and len(histories) == 1
    histories.get("c2", "agent0")
    histories.get("c3", "agent0")  # a third conversation: c1 is let go, with every view of it
    assert len(histories) == 2
    histories.get("c3", "agent0")
    histories.get("c1", "agent5")
    assert store.reads[12:] == ["c2", "c3", "c1"]  # c1 read again, c3 still in memory
