"""Agent-to-agent wakes (SPEC §5, seed 002): the chain's depth, no revisits, the rate limit of
each ordered pair (with a fake clock), the refusals batched into one system message, and no
wake at all from a turn that did not complete."""

from __future__ import annotations

import pytest

from protocol import AgentConfig
from server.roster import Chain, Refusal, Wake, WakePolicy, refusal_message, wakes_after
from server.roster.mentions import AMBIGUOUS, TOO_MANY
from server.roster.wakes import ALREADY_IN_CHAIN, CHAIN_FULL, rate_limited


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def outcome(decisions: list[Wake | Refusal]) -> list[str]:
    """Each decision as 'A->B' (woken) or '@B: reason' (refused)."""
    return [f"{d.by}->{d.to}" if isinstance(d, Wake) else f"{d.mention}: {d.reason}" for d in decisions]


# Each row: the agents the user message started, then the turns that end, in order, each as
# (writer, [targets]); the expected decisions of each turn.
CHAINS = [
    ("spec: A wakes B, B wakes C, C wakes D; D's mention of E is refused", ["A"],
     [("A", ["B"]), ("B", ["C"]), ("C", ["D"]), ("D", ["E"])],
     [["A->B"], ["B->C"], ["C->D"], [f"@E: {CHAIN_FULL}"]]),
    ("spec: no A -> B -> A", ["A"],
     [("A", ["B"]), ("B", ["A"])],
     [["A->B"], [f"@A: {ALREADY_IN_CHAIN}"]]),
    ("no revisit further down the chain", ["A"],
     [("A", ["B"]), ("B", ["C"]), ("C", ["B", "A"])],
     [["A->B"], ["B->C"], [f"@B: {ALREADY_IN_CHAIN}", f"@A: {ALREADY_IN_CHAIN}"]]),
    ("a revisit is named before a full chain", ["A"],
     [("A", ["B", "C", "D"]), ("D", ["A", "E"])],
     [["A->B", "A->C", "A->D"], [f"@A: {ALREADY_IN_CHAIN}", f"@E: {CHAIN_FULL}"]]),
    ("the 3 wakes are shared by the branches", ["A"],
     [("A", ["B", "C"]), ("B", ["D"]), ("C", ["E"])],
     [["A->B", "A->C"], ["B->D"], [f"@E: {CHAIN_FULL}"]]),
    ("one turn can spend the chain", ["A"],
     [("A", ["B", "C", "D", "E"])],
     [["A->B", "A->C", "A->D", f"@E: {CHAIN_FULL}"]]),
    ("the agents the user started together are in the chain", ["alice", "bob"],
     [("alice", ["bob", "carol"])],
     [[f"@bob: {ALREADY_IN_CHAIN}", "alice->carol"]]),
    ("a refused wake costs nothing", ["A"],
     [("A", ["A"]), ("A", ["B"]), ("B", ["C"]), ("C", ["D"])],
     [[f"@A: {ALREADY_IN_CHAIN}"], ["A->B"], ["B->C"], ["C->D"]]),
    ("the same target twice in one turn", ["A"],
     [("A", ["B", "B"])],
     [["A->B", f"@B: {ALREADY_IN_CHAIN}"]]),
]


@pytest.mark.parametrize(("started", "turns", "expected"), [r[1:] for r in CHAINS], ids=[r[0] for r in CHAINS])
def test_chain(started, turns, expected):
    policy, chain = WakePolicy(FakeClock()), Chain.start(started)
    assert [outcome(policy.decide(chain, writer, targets)) for writer, targets in turns] == expected
    woken = [d for row in expected for d in row if "->" in d]
    assert chain.wakes == len(woken)
    assert chain.agents == list(dict.fromkeys(started + [d.split("->")[1] for d in woken]))


# (time, from, to, allowed): one new chain per wake, so that only the rate limit applies.
RATE = [
    (0, "A", "B", True),
    (10, "A", "B", True),
    (20, "A", "B", True),
    (30, "A", "B", True),
    (40, "A", "B", True),
    (50, "A", "B", False),  # the 6th within 300 s
    (60, "A", "C", True),  # another pair
    (70, "B", "A", True),  # the reverse pair is another pair
    (299.9, "A", "B", False),  # the first is 299.9 s old: still counted
    (300, "A", "B", True),  # the first is 300 s old: out of the window
    (301, "A", "B", False),  # 10, 20, 30, 40 and 300 in the window
    (310, "A", "B", True),  # 10 went out
]


def test_the_rate_limit_of_an_ordered_pair():
    clock = FakeClock()
    policy = WakePolicy(clock)
    start = clock.now
    for at, by, to, allowed in RATE:
        clock.now = start + at
        [decision] = policy.decide(Chain.start([by]), by, [to])
        expected = Wake(by, to) if allowed else Refusal(f"@{to}", rate_limited(by, to))
        assert decision == expected, f"at {at} s: {by} -> {to}"


def test_the_rate_limit_reason():
    assert rate_limited("alice", "bob") == "rate limit: 5 wakes per 5 minutes from alice to bob"


def test_a_wake_refused_by_its_chain_does_not_spend_the_rate():
    clock = FakeClock()
    policy = WakePolicy(clock)
    for _ in range(10):
        policy.decide(Chain.start(["A", "B"]), "A", ["B"])  # already in the chain
    assert outcome(policy.decide(Chain.start(["A"]), "A", ["B"])) == ["A->B"]


# ------------------------------------------------------------------ the system message

MESSAGES = [
    ("nothing refused: no message", [], None),
    ("one", [Refusal("@E", CHAIN_FULL)], "Mentions not delivered: @E (chain depth 3 reached)."),
    ("each mention with its reason, in one message",
     [Refusal("@alice", AMBIGUOUS), Refusal("@erin", TOO_MANY), Refusal("@bob", rate_limited("carol", "bob"))],
     "Mentions not delivered: @alice (ambiguous); @erin (more than 3 mentions in one turn); "
     "@bob (rate limit: 5 wakes per 5 minutes from carol to bob)."),
]


@pytest.mark.parametrize(("refusals", "text"), [r[1:] for r in MESSAGES], ids=[r[0] for r in MESSAGES])
def test_refusal_message(refusals, text):
    assert refusal_message(refusals) == text


# ------------------------------------------------------------------ at a turn's end

CREW = [AgentConfig(name=n) for n in ("alice", "bob", "carol", "dave", "erin", "Frank", "frank")]
TURN = "Done. @bob review it, @carol test it, @frank is unsure, @dave ship it, @erin relax. @nobody."

# (outcome, wakes, the system message)
ENDINGS = [
    ("completed", ["alice->bob", "alice->carol", "alice->dave"],
     "Mentions not delivered: @frank (ambiguous); @erin (more than 3 mentions in one turn)."),
    ("failed", [], None),
    ("cancelled", [], None),
    ("awaiting_user", [], None),
]


@pytest.mark.parametrize(("ended", "woken", "message"), ENDINGS, ids=[e[0] for e in ENDINGS])
def test_wakes_after_a_turn(ended, woken, message):
    policy, chain = WakePolicy(FakeClock()), Chain.start(["alice"])
    result = wakes_after(ended, TURN, agents=CREW, self_name="alice", chain=chain, policy=policy)
    assert outcome(result.wakes) == woken
    assert result.message == message
    assert chain.agents == ["alice"] + [w.split("->")[1] for w in woken]


def test_the_parser_and_the_guards_refuse_in_one_message():
    policy, chain = WakePolicy(FakeClock()), Chain.start(["alice"])
    wakes_after("completed", "@bob go", agents=CREW, self_name="alice", chain=chain, policy=policy)
    result = wakes_after(
        "completed", "@alice @Frank @carol", agents=CREW, self_name="bob", chain=chain, policy=policy
    )
    assert outcome(result.wakes) == ["bob->carol"]
    assert result.message == "Mentions not delivered: @Frank (ambiguous); @alice (already in this chain)."


def test_a_turn_that_did_not_complete_spends_nothing():
    clock = FakeClock()
    policy = WakePolicy(clock)
    for _ in range(6):
        wakes_after("failed", "@bob go", agents=CREW, self_name="alice", chain=Chain.start(["alice"]), policy=policy)
    chain = Chain.start(["alice"])
    result = wakes_after("completed", "@bob go", agents=CREW, self_name="alice", chain=chain, policy=policy)
    assert outcome(result.wakes) == ["alice->bob"] and chain.wakes == 1
