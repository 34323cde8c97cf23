"""Benchmark of the checks every client message passes (issue 19, items 7 and 8): the nesting
bound and the lone-surrogate search of server/inbound.py, against the baseline of the same run:
json.loads of the same message, which every message pays anyway.

The messages are what an editor sends most: a `modus/state` request, a chat message (plain, and
with emoji as JSON escapes, which a Python client writes for every one), a 55 KB document's
`didChange` (the whole text, as full sync sends it on every keystroke), and code actions with 1
and 20 diagnostics. Measured per message (median of rounds): json.loads of its bytes, and
`inbound.flaw` on the decoded value (the checks alone).

Target: the checks of the whole mix ≤ 0.25× its json.loads; exit status 1 when missed.

Usage: python bench/inbound.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this tree's server, not an installed copy

from server.inbound import flaw  # noqa: E402

TARGET_RATIO = 0.25


def span(line: int, start: int, end: int) -> dict:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


def code_action(diagnostics: int) -> dict:
    problem = {"range": span(4, 2, 9), "message": "undefined name 'x'", "source": "pyflakes", "severity": 1, "code": "F821"}
    return {"jsonrpc": "2.0", "id": 12, "method": "textDocument/codeAction", "params": {
        "textDocument": {"uri": "file:///w/src/app.py"}, "range": span(3, 0, 4),
        "context": {"diagnostics": [problem] * diagnostics, "triggerKind": 1}}}


MESSAGES = {
    "modus/state": {"jsonrpc": "2.0", "id": 3, "method": "modus/state", "params": {}},
    "chat message": {"jsonrpc": "2.0", "id": 4, "method": "modus/chat/send",
                     "params": {"text": "Please make the parser in src/app.py report line numbers."}},
    "chat message, emoji": {"jsonrpc": "2.0", "id": 5, "method": "modus/chat/send",
                            "params": {"text": "Ship it \U0001f680 when the tests pass \u2705 " * 20}},
    "didChange, 55 KB": {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": "file:///w/src/app.py", "version": 7},
        "contentChanges": [{"text": "def parse(line):\n    return [t for t in line.split() if t not in {'#', ''}]\n" * 700}]}},
    "code action, 1 diagnostic": code_action(1),
    "code action, 20 diagnostics": code_action(20),
}


def median_us(fn, rounds: int, number: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number * 1e6)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, number = (5, 200) if args.quick else (15, 1000)

    print("inbound checks: nesting bound and lone surrogates, against json.loads of the same message")
    total_loads = total_checks = 0.0
    for name, message in MESSAGES.items():
        data = json.dumps(message).encode()
        text = data.decode()
        value = json.loads(data)
        assert flaw(value, text) is None
        loads = median_us(lambda: json.loads(data), rounds, number)
        checks = median_us(lambda: flaw(value, text), rounds, number)
        total_loads += loads
        total_checks += checks
        print(f"  {name:<28} {len(data):7,} B   json.loads {loads:7.2f} µs   checks {checks:6.2f} µs   {checks / loads:.2f}×")
    ratio = total_checks / total_loads
    ok = ratio <= TARGET_RATIO
    print(f"  {'the whole mix':<28} {'':9}   json.loads {total_loads:7.2f} µs   checks {total_checks:6.2f} µs   "
          f"{ratio:.2f}×  (≤ {TARGET_RATIO}×: {'ok' if ok else 'MISSED'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
