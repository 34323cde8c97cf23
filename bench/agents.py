"""Benchmarks of agents and @-mentions (issue 10, item 9), measured in one run, printed as ratios.

- the parsers, in this process, each against a baseline that only finds the tokens in the same
  input (so the ratio is what the rules cost); medians of interleaved rounds:
  - `parse_agent_prose` over 1 MB (2^20 characters, ASCII) of agent prose: paragraphs naming the
    configured agents, e-mail addresses, `pkg/@scope`, `node@20`, ``` and ~~~ fenced blocks,
    inline code spans. Baseline: `re.findall(r"@([\w-]+)", text)` over the same text. MB/s.
  - `parse_user_message` over 10,000 composer messages. Baseline: `re.findall(r"@(\w+)", m)`
    over each message. µs per message.
- twenty agents in one conversation, over stdio: `python -m server` with 21 agents configured
  (a1..a20 and a warm-up agent w), each on its own scripted model. An agent's turn is 4 model
  requests: text streamed with one `read_file` each (auto-approved), 3 times, then plain text,
  which ends the turn. One `modus/chat/send` of "@a1 @a2 ... @a20 do the thing" (checked:
  `dispatched` is all 20), against the baseline of the same server sent "@a1 do the thing".
  Two scenarios: the reads only (the model takes no time, so the turns are all CPU on the
  server's one event loop), and with a request running `sleep 0.2` (execute_command,
  auto-approved) after the first read: a stand-in for the time a real model or a test run
  takes, during which the other agents can go on. A fresh server per run, warmed by one turn of
  w in another conversation; runs interleaved, each figure the median over the runs. The client
  records the arrival (perf_counter) of every `modus/update`; per run:
  - wall: from sending `modus/chat/send` to the arrival of the last `turn_ended`;
  - turn: for each agent, its `turn_started` → its `turn_ended`; p99 over the agents (of 20,
    the slowest agent's turn);
  - gap, the notification latency: for each agent, the time from the send to its
    `turn_started`, then from each of its notifications to its next one, up to its
    `turn_ended`: the silences the agent's own stream shows the client. The gap that ends with
    the `sleep 0.2` call's `completed` update is left out (that silence is the command's). p50
    and p99 over all gaps of all agents of the run (about 40 a turn);
  - start: from the send to the latest `turn_started` (if the turns ran one after another the
    last agent would start about 19 single-agent turns late);
  - overlap: whether the latest `turn_started` arrives before the earliest `turn_ended`, in
    every run (all 20 turns were running at one moment); and wall / (20 × the 1-agent wall),
    which is about 1.0 when twenty turns cost as much as twenty in a row, and far below when
    the agents' waits overlap.

Usage: python bench/agents.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))  # this tree's server and protocol, not an installed copy
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # the server's too

from run import EDITOR_CAPABILITIES, MODUS, Client, percentile  # noqa: E402

from protocol import AgentConfig, Member  # noqa: E402
from server.roster import parse_agent_prose, parse_user_message  # noqa: E402

MB = 2**20

# ---------------------------------------------------------------- the parsers: input

#: The agents the parsers know: the twenty of the wire runs and a few with longer names.
PARSE_AGENTS = [AgentConfig(name=f"a{i}") for i in range(1, 21)] + [
    AgentConfig(name=n) for n in ("architect", "code-reviewer", "tester", "docs")
]
PARSE_MEMBERS = [Member(handle=h, name=h.title()) for h in ("sam", "kim", "lee", "priya")]
NAMES = [a.name for a in PARSE_AGENTS]

PROSE_SENTENCES = [
    "I read {file} and the handler in `{ident}` looks right, but @{agent} should check the retry logic.",
    "@{agent}: the tests in tests/test_{word}.py pass now; @{agent2} can take the docs.",
    "Mail sam@host.com or kim@example.org if the build on node@20 breaks again.",
    "The import from pkg/@scope/utils resolves to `@scope/utils` through package.json.",
    "See **@{agent}**'s note (@{agent2}) about the schema before you touch {file}.",
    "The fix is in {file}: `{ident}` now returns early when the cache is cold.",
    "@types/node and @{agent}.py are paths, not agents; @nobody is no one here.",
    "I ran ``pytest -k {word}`` twice, and it passed both times with `--count=2`.",
    "Thanks @{agent}, the migration for {word} is done; @{agent} again, just to be sure.",
    "The {word} step takes most of the time, so I kept it as it was and moved on to {file}.",
]

FENCES = [
    '```python\n@app.route("/{word}")\ndef {ident}():\n    return redirect("@{agent}")\n```',
    "~~~\n@{agent} in a code block is not a mention\n$ npm install @scope/{word}\n~~~",
    "````markdown\n```\n@{agent} nested\n```\n````",
    "```\nuser@{word}.example.com:~$ ls src/{word}\n```",
]

COMPOSER_MESSAGES = [
    "@{agent} fix the login bug in {file}",
    "@{agent} @{agent2} plan the release together; @sam has the dates.",
    "@{prefix} draw the modules for {word}",
    "can you look at {file}? mail sam@host.com when done",
    "@{agent}, use `@dataclass(frozen=True)` for the {word} config.",
    "@kim please review what @{agent} wrote about {word}",
    "@{agent}\n```python\n@app.get('/{word}')\ndef {ident}(): ...\n```\nwhy does this 404?",
    "thanks @{agent}.",
    "{word} is flaky on node@20; @{agent} (@{agent2}) can you check pkg/@scope?",
    "@{agent} @{agent2} @{agent3} review {file}, write tests for `{ident}` and update the docs.",
    "what does {ident} do in {file}",
    "@code-reviewer look at {file} and the change to `{ident}`",
]

WORDS = ["cache", "login", "parser", "router", "session", "schema", "upload", "billing", "search", "queue"]


def _fill(template: str, rng: random.Random) -> str:
    agents = rng.sample(NAMES, 3)
    word = rng.choice(WORDS)
    return template.format(
        agent=agents[0], agent2=agents[1], agent3=agents[2], prefix=agents[0][: max(1, len(agents[0]) - 2)],
        word=word, file=f"src/{word}/{rng.choice(WORDS)}.py", ident=f"{word}_{rng.choice(WORDS)}",
    )


def agent_prose(size: int, seed: int = 1) -> str:
    """At least `size` characters of paragraphs of 3-6 sentences, a fenced block every few."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    length = 0
    while length < size:
        if rng.random() < 0.25:
            paragraph = _fill(rng.choice(FENCES), rng)
        else:
            paragraph = " ".join(_fill(rng.choice(PROSE_SENTENCES), rng) for _ in range(rng.randint(3, 6)))
        paragraphs.append(paragraph)
        length += len(paragraph) + 2
    return "\n\n".join(paragraphs)


def composer_messages(count: int, seed: int = 2) -> list[str]:
    rng = random.Random(seed)
    return [_fill(rng.choice(COMPOSER_MESSAGES), rng) for _ in range(count)]


# ---------------------------------------------------------------- the parsers: timing

BASE_PROSE = re.compile(r"@([\w-]+)")
BASE_USER = re.compile(r"@(\w+)")


def parsers(rounds: int, messages_count: int) -> dict[str, tuple[float, float, int]]:
    """For the prose and for the messages: (baseline seconds, Modus seconds, characters or
    messages), each time the median of `rounds` rounds, the four timings interleaved."""
    prose = agent_prose(MB)
    messages = composer_messages(messages_count)
    found = parse_agent_prose(prose, PARSE_AGENTS, "a1")
    assert found.targets and "a1" not in found.targets, found
    started = sum(bool(parse_user_message(m, PARSE_AGENTS, PARSE_MEMBERS).agents) for m in messages)
    assert started > messages_count // 2, started  # most messages start an agent

    work = {
        "prose base": lambda: BASE_PROSE.findall(prose),
        "prose modus": lambda: parse_agent_prose(prose, PARSE_AGENTS, "a1"),
        "user base": lambda: [BASE_USER.findall(m) for m in messages],
        "user modus": lambda: [parse_user_message(m, PARSE_AGENTS, PARSE_MEMBERS) for m in messages],
    }
    times: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(rounds):
        for name, fn in work.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(samples) for name, samples in times.items()}
    return {
        "prose": (med["prose base"], med["prose modus"], len(prose)),
        "user": (med["user base"], med["user modus"], len(messages)),
    }


# ---------------------------------------------------------------- twenty agents over the wire

AGENTS = [f"a{i}" for i in range(1, 21)]
WARM = "w"
READS = 3
#: The command of the scenario with a wait: what a model's answer or a test run costs in time.
WAIT_COMMAND = "sleep 0.2"


def agent_turn(name: str, wait: bool) -> list[dict]:
    """One agent turn: READS model requests of text and one read_file each (with `wait`, a
    request running WAIT_COMMAND after the first), then plain text, which ends the turn."""
    turns = [
        {
            "text": f"{name}: to see how step {k} is wired I will read src/m{k}.py first, then the tests that cover it.",
            "toolCalls": [{"name": "read_file", "arguments": {"path": f"src/m{k}.py"}}],
        }
        for k in range(READS)
    ]
    if wait:
        turns.insert(1, {"text": f"{name}: now the slow part, the one that waits.",
                         "toolCalls": [{"name": "execute_command", "arguments": {"command": WAIT_COMMAND}}]})
    turns.append({"text": f"{name}: done. The three modules agree on the interface; nothing to change in them, "
                          "and the tests cover the cases I looked for. I have left the code as it was."})
    return turns


def workspace_for(root: Path, wait: bool) -> dict:
    """The files the agents read, a script per agent, and the settings naming them."""
    (root / "src").mkdir()
    for k in range(READS):
        (root / "src" / f"m{k}.py").write_text("".join(f"def step_{k}_{n}(x):\n    return x + {n}\n\n" for n in range(30)))
    agents = []
    for name in [*AGENTS, WARM]:
        (root / f"{name}.json").write_text(json.dumps({"turns": agent_turn(name, wait)}))
        agents.append({"name": name, "model": {"provider": "scripted", "script": f"{name}.json"}})
    # checkpoints off: a git run, one at a time per workspace, measured by bench/checkpoints.py
    return {"modus": {"agents": agents, "modeSwitchDelayMs": 0, "checkpoints": False, "autoApprove": {"read": True, "command": True}}}


def _command_done(update: dict) -> bool:
    """The update that ends WAIT_COMMAND's run: the gap before it is the command's, not the server's."""
    return update["kind"] == "tool_call" and update["name"] == "execute_command" and update["status"] in ("completed", "failed")


@dataclass
class Run:
    wall: float  # send → last turn_ended
    turns: list[float]  # per agent: turn_started → turn_ended
    gaps: list[float]  # per agent: send → turn_started, then between its notifications
    starts: list[float]  # per agent: send → turn_started
    ends: list[float]  # per agent: send → turn_ended
    notifications: int  # the agents' modus/update notifications


def conversation(names: list[str], wait: bool) -> Run:
    """A fresh server; a warm-up turn of w; then one message naming `names`, until every turn ended."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        client = Client(MODUS, root)
        client.initialize(EDITOR_CAPABILITIES, workspace_for(root, wait))
        updates: list[tuple[float, dict]] = []
        client.on_notification = lambda m, at: updates.append((at, m["params"])) if m["method"] == "modus/update" else None

        def ended(count: int):
            return lambda: sum(u["kind"] == "turn_ended" for _, u in updates) >= count

        client.call("modus/chat/send", {"text": f"@{WARM} warm up", "conversationId": "bench-warm"})
        client.wait(ended(1))
        updates.clear()
        text = " ".join(f"@{n}" for n in names) + " do the thing"
        t0 = time.perf_counter()
        sent = client.call("modus/chat/send", {"text": text, "conversationId": "bench-run"})
        if sent["dispatched"] != names:
            raise RuntimeError(f"dispatched {sent['dispatched']}, expected {names}")
        client.wait(ended(len(names)))
        client.close()
    per_agent: dict[str, list[tuple[float, dict]]] = {n: [] for n in names}
    for at, update in updates:
        if update.get("agent") in per_agent:
            per_agent[update["agent"]].append((at, update))
    turns, gaps, starts, ends = [], [], [], []
    for name, seen in per_agent.items():
        kinds = [u["kind"] for _, u in seen]
        failed = [u for _, u in seen if u["kind"] == "tool_call" and u["status"] == "failed"]
        if kinds[0] != "turn_started" or kinds[-1] != "turn_ended" or seen[-1][1]["outcome"] != "completed" or failed:
            raise RuntimeError(f"{name}: {kinds[0]} … {seen[-1][1]}; failed calls: {failed}")
        times = [at for at, _ in seen]
        starts.append(times[0] - t0)
        ends.append(times[-1] - t0)
        turns.append(times[-1] - times[0])
        gaps.append(times[0] - t0)
        gaps += [b - a for (a, _), (b, u) in zip(seen, seen[1:]) if not _command_done(u)]
    return Run(max(ends), turns, gaps, starts, ends, sum(len(s) for s in per_agent.values()))


# ---------------------------------------------------------------- the report

ms = lambda s: f"{s * 1000:8.2f} ms"  # noqa: E731


class Table:
    """Rows in bench/run.py's style; `ok` turns False when a target is missed."""

    def __init__(self) -> None:
        self.ok = True

    def header(self, title: str, base: str, ours: str) -> None:
        print(f"\n{title}\n{'measure':<58} {base:>12} {ours:>12} {'ratio':>7}  target")

    def row(self, name: str, base: str, ours: str, ratio: float | None, target: str = "", met: bool | None = None) -> None:
        self.ok &= met is not False
        verdict = target + ("" if met is None else " ok" if met else " MISSED")
        print(f"{name:<58} {base:>12} {ours:>12} {'' if ratio is None else f'{ratio:6.2f}×':>7}  {verdict}")


def conversations_report(table: Table, title: str, single: list[Run], many: list[Run], wait: bool) -> None:
    """The 20-agent runs against the 1-agent runs. Targets: the overlap, always; without a wait,
    twenty turns cost at most 25 % more than twenty in a row; with one, the slowest agent's turn
    is at most 3 × a lone agent's; an agent's stream is never silent 100 ms (its command aside)."""
    med = lambda runs, f: statistics.median(f(r) for r in runs)  # noqa: E731
    table.header(f"one message naming 20 agents vs naming 1, {title} (ratio: 20 agents / 1 agent)", "1 agent", "20 agents")
    one_wall, all_wall = med(single, lambda r: r.wall), med(many, lambda r: r.wall)
    if wait:
        table.row("wall: send → last turn_ended", ms(one_wall), ms(all_wall), all_wall / one_wall)
    else:
        table.row("wall: send → last turn_ended", ms(one_wall), ms(all_wall), all_wall / one_wall, "≤ 25×", all_wall / one_wall <= 25)
    one_turn, all_turn = med(single, lambda r: percentile(r.turns, 99)), med(many, lambda r: percentile(r.turns, 99))
    if wait:
        table.row("turn (turn_started → turn_ended), p99 of the agents", ms(one_turn), ms(all_turn), all_turn / one_turn, "≤ 3×", all_turn / one_turn <= 3)
    else:
        table.row("turn (turn_started → turn_ended), p99 of the agents", ms(one_turn), ms(all_turn), all_turn / one_turn)
    for p in (50, 99):
        one_gap, all_gap = med(single, lambda r: percentile(r.gaps, p)), med(many, lambda r: percentile(r.gaps, p))
        if p == 99:
            table.row(f"gap in an agent's notifications, p{p}", ms(one_gap), ms(all_gap), all_gap / one_gap, "< 100 ms", all_gap < 0.1)
        else:
            table.row(f"gap in an agent's notifications, p{p}", ms(one_gap), ms(all_gap), all_gap / one_gap)
    one_start, all_start = med(single, lambda r: max(r.starts)), med(many, lambda r: max(r.starts))
    table.row("start: send → the latest turn_started", ms(one_start), ms(all_start), all_start / one_start)
    one_n, all_n = med(single, lambda r: r.notifications), med(many, lambda r: r.notifications)
    table.row("the agents' modus/update notifications (count)", f"{one_n:8.0f}", f"{all_n:8.0f}", all_n / one_n)
    overlapping = [max(r.starts) < min(r.ends) for r in many]
    table.ok &= all(overlapping)
    print(f"20 agents: the latest turn_started came before the earliest turn_ended in {sum(overlapping)} of {len(many)} runs "
          f"(median{ms(med(many, lambda r: max(r.starts)))} vs{ms(med(many, lambda r: min(r.ends)))}) "
          f"{'ok' if all(overlapping) else 'MISSED'}")
    print(f"20 agents: wall / (20 × the 1-agent wall) = {all_wall / (20 * one_wall):.2f} "
          "(1.00: as long as twenty turns one after another)")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer rounds and runs (a smoke test of the harness)")
    args = parser.parse_args()
    rounds, messages, runs = (3, 2000, 2) if args.quick else (7, 10_000, 7)

    parsed = parsers(rounds, messages)
    scenarios = {False: ([], []), True: ([], [])}  # wait → (1-agent runs, 20-agent runs)
    for _ in range(runs):  # interleaved, so that the machine's state affects all alike
        for wait, (single, many) in scenarios.items():
            single.append(conversation(AGENTS[:1], wait))
            many.append(conversation(AGENTS, wait))

    print(f"Agents and @-mentions, {sys.version.split()[0]}: the parsers median of {rounds} rounds, "
          f"each conversation median of {runs} runs")
    table = Table()
    table.header("parsers (ratio: Modus's time / the baseline's, over the same input)", "re.findall", "modus")
    base_s, modus_s, size = parsed["prose"]
    ratio = modus_s / base_s
    table.row(f"parse_agent_prose, {size / MB:.2f} MB of prose (MB/s)", f"{size / MB / base_s:7.1f} MB/s",
              f"{size / MB / modus_s:7.1f} MB/s", ratio, "≤ 20×", ratio <= 20)
    base_s, modus_s, count = parsed["user"]
    per_message = modus_s / count
    table.row(f"parse_user_message, {count:,} messages (µs per message)", f"{base_s / count * 1e6:7.2f} µs",
              f"{per_message * 1e6:7.2f} µs", modus_s / base_s, "≤ 50 µs", per_message <= 50e-6)
    for wait, (single, many) in scenarios.items():
        title = f"with `{WAIT_COMMAND}` in each turn" if wait else "reads only, the model taking no time"
        conversations_report(table, title, single, many, wait)
    return 0 if table.ok else 1


if __name__ == "__main__":
    sys.exit(main())
