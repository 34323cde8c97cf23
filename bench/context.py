"""Benchmark of the context window's token counting (issue 13, item 2): what counting a 200 KB
conversation costs before each model request, against the baseline of the same run: counting
the whole conversation again with the same tokenizer (tiktoken's cl100k_base), as a counter
without Modus's per-message counts would before every request.

The conversation is an agent's session of about 200 KB: user requests, replies with tool calls,
and their results (source files read, command output), as the history holds it. Measured:

- the tokenizer's load (once per process) and the memory it takes;
- baseline: `encode_ordinary` of the whole conversation's text (median over rounds);
- Modus, first count: the exact count of the same history from nothing (every message counted);
- Modus, per request: one message (a 1 KB tool result) added, then the exact count before the
  next request (what `context.room_for` does near the threshold);
- Modus, the bound: the same with the upper bound (bytes), what every request pays while the
  conversation is below the threshold, and the tokenizer is not even loaded;
- Modus, after a provider's count: only what came since the last request is counted.

Targets: a request's exact count ≤ 0.05× the baseline's full recount, the bound ≤ 0.05×;
exit status 1 when missed.

Usage: python bench/context.py [--quick]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this tree's server, not an installed copy

from server.agent.context import Fitted, prompt_key  # noqa: E402
from server.agent.history import Measured, ModelHistory  # noqa: E402
from server.providers.tokens import TOKENIZER  # noqa: E402
from server.state import StoredMessage  # noqa: E402

TARGET_RATIO = 0.05
SIZE = 200 * 1024
WINDOW = 200_000
SYSTEM = "You are Modus, a coding agent.\n" * 200

WORDS = ["cache", "login", "parser", "router", "session", "schema", "upload", "billing", "search", "queue",
         "token", "record", "handler", "client", "server", "config", "result", "value", "buffer", "stream"]


def source(rng: random.Random, lines: int) -> str:
    out = []
    for n in range(lines):
        name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"
        out.append(f"{n + 1} | def {name}({rng.choice(WORDS)}, {rng.choice(WORDS)}=None):  # {' '.join(rng.choices(WORDS, k=5))}")
    return "\n".join(out)


def conversation(size: int, seed: int = 3) -> list[StoredMessage]:
    rng = random.Random(seed)
    messages: list[StoredMessage] = []
    total, n = 0, 0

    def add(role: str, text: str, **metadata) -> None:
        nonlocal total
        messages.append(StoredMessage(f"m{len(messages)}", "c1", role, text, "modus" if role != "tool" else None, metadata))
        total += len(text.encode())

    while total < size:
        n += 1
        add("user", f"Please make the {rng.choice(WORDS)} {rng.choice(WORDS)} handle an empty {rng.choice(WORDS)}.")
        for step in range(rng.randint(2, 5)):
            call = {"id": f"c{n}-{step}", "name": "read_file", "arguments": {"path": f"src/{rng.choice(WORDS)}.py"}, "native": True}
            add("assistant", f"Reading the {rng.choice(WORDS)} module first.", toolCalls=[call])
            add("tool", source(rng, rng.randint(10, 40)), toolCallId=call["id"], name="read_file")
        add("assistant", f"Done: the {rng.choice(WORDS)} now checks for an empty {rng.choice(WORDS)}.")
    return messages


def median_ms(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds = 5 if args.quick else 21

    stored = conversation(SIZE)
    size = sum(len(m.text.encode()) for m in stored)
    before = rss_mb()
    t0 = time.perf_counter()
    TOKENIZER.count("warm up")
    load_ms = (time.perf_counter() - t0) * 1000
    load_mb = rss_mb() - before

    history = ModelHistory(stored, "modus")
    whole = "\n".join(m.text for m in history.messages)
    baseline = median_ms(lambda: TOKENIZER.count(whole), rounds)
    tokens = TOKENIZER.count(whole)

    def first_count() -> None:
        fresh = ModelHistory(stored, "modus")
        Fitted(fresh, WINDOW).used(SYSTEM, (), exact=True)

    first = median_ms(first_count, max(3, rounds // 4))

    rng = random.Random(11)
    Fitted(history, WINDOW).used(SYSTEM, (), exact=True)  # counted up to now, as after the requests so far
    results = iter([StoredMessage(f"x{i}", "c1", "user", f"[read_file] Result:\n{source(rng, 20)}", None, {}) for i in range(3 * rounds)])

    def next_request(exact: bool):
        def run() -> None:
            history.append(next(results))
            Fitted(history, WINDOW).used(SYSTEM, (), exact=exact)
        return run

    per_request = median_ms(next_request(True), rounds)
    bounded = median_ms(next_request(False), rounds)
    history.measured = Measured(len(history.messages), tokens, prompt_key(SYSTEM, ()))
    measured = median_ms(next_request(True), rounds)

    print(f"context window: counting a {size / 1024:.0f} KB conversation ({len(stored)} messages, {tokens:,} tokens)")
    print(f"  tokenizer load (once)                  {load_ms:8.1f} ms   +{load_mb:.1f} MB")
    print(f"  baseline: the whole text recounted     {baseline:8.2f} ms   1.00×")
    print(f"  first count, every message             {first:8.2f} ms   {first / baseline:.2f}×")
    rows = (("per request, exact", per_request), ("per request, the bound", bounded), ("per request, after a provider's count", measured))
    failed = False
    for name, value in rows:
        ratio = value / baseline
        ok = ratio <= TARGET_RATIO
        failed |= not ok
        print(f"  {name:<38} {value:8.3f} ms   {ratio:.3f}×  (≤ {TARGET_RATIO}×: {'ok' if ok else 'MISSED'})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
