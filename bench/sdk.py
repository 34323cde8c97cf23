"""Steps through the real SDKs, and the first request: what a user of a real provider waits for.

1. Turns of 500 read steps (three each) through each provider's official SDK (openai, anthropic), against a
   local fake server of that provider's API (tests/fake_models.py: HTTP on 127.0.0.1, the API's own
   streaming format, instant answers). Each reply asks for one `read_file`; the conversation grows
   by a call and a 1 KB result per step. The server's own time for a step is measured on the fake
   server's clock: from the moment it finished answering one request to the moment the next one
   arrived (running the tool, storing, telling the editor, building and sending the next request).
   Compared: steps 491–500 against steps 1–10, each the median of those steps in the three turns
   (target ≤ 1.2×), and against the floor of a request's cost: the same request body serialised
   with plain `json.dumps`.
2. From start to the first model request: the process spawned, `initialize`, a message sent,
   until the fake server has the request; over LSP (`python -m server`) and over ACP
   (`python -m server acp`: `initialize`, `session/new`, `session/prompt`), with `initialize`'s
   own answer over ACP; and a bare pygls server's time to answer a first request, over LSP. Then
   the same message sent 3 s after start-up (a user typing): message → request.

    python bench/sdk.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # the fake providers the tests use

from fake_models import Call, FakeAnthropic, FakeOpenAI, FakeServer, Reply  # noqa: E402
from run import BARE, EDITOR_CAPABILITIES, MODUS, Client  # noqa: E402

STEPS = 500
#: Turns of STEPS steps per provider: a window's figure is the median of its steps in all of them.
ROUNDS = 3
#: The windows of steps compared (1-based, inclusive).
EARLY, MIDDLE, LATE = (1, 10), (241, 250), (491, 500)
STEP_TARGET = 1.2
FIRST_REQUEST_TARGET_MS = 400.0
ACP_INITIALIZE_TARGET_MS = 300.0
#: A message typed once the server has started: the SDK has loaded meanwhile.
SETTLE = 3.0
TYPED_TARGET_MS = 100.0
#: What each step reads: a 1 KB file, so the conversation grows by about 1.2 KB a step.
NOTES = "".join(f"line {i:03d}: the quick brown fox jumps over the lazy dog, again and again.\n" for i in range(13))
FAKES: dict[str, type[FakeServer]] = {"openai": FakeOpenAI, "anthropic": FakeAnthropic}


def settings(fake: FakeServer, **more) -> dict:
    model = {"provider": fake.provider, "model": "fake", "baseUrl": fake.url, "contextWindow": 100_000_000}
    return {"modus": {"models": {"default": model}, "checkpoints": False, "maxRequestsPerTurn": STEPS + 10, **more}}


#: What each reply says it cost, as the real APIs always do (a provider that tells nothing would
#: have the server count every request with its tokenizer).
USAGE = {"openai": {"prompt_tokens": 1000, "completion_tokens": 20}, "anthropic": {"input_tokens": 1000, "output_tokens": 20}}


def replies(provider: str, steps: int) -> list[Reply]:
    calls = [Reply(calls=[Call(f"call_{i}", "read_file", {"path": "notes.txt"})], usage=USAGE[provider]) for i in range(steps)]
    return [*calls, Reply("Done.", usage=USAGE[provider])]


# ---------------------------------------------------------------- 500 steps through an SDK


def long_turn(provider: str, steps: int) -> tuple[list[float], dict[int, bytes]]:
    """The server's own time of each step (seconds; step i is between request i and i+1), and the
    bodies of the requests of the steps compared, as sent."""
    keep = {w[1] for w in (EARLY, MIDDLE, LATE) if w[1] <= steps}
    with tempfile.TemporaryDirectory() as tmp, FAKES[provider](keep=lambda n: n in keep) as fake:
        workspace = Path(tmp)
        (workspace / "notes.txt").write_text(NOTES)
        fake.add(*replies(provider, steps))
        client = Client(MODUS, workspace)
        client.initialize(EDITOR_CAPABILITIES, settings(fake))
        ended: list[str] = []
        client.on_notification = lambda m, at: ended.append(m["params"]["outcome"]) if m["params"].get("kind") == "turn_ended" else None
        client.call("modus/chat/send", {"text": "Read the notes, again and again."})
        client.wait(lambda: bool(ended))
        client.close()
        if ended != ["completed"] or len(fake.requests) != steps + 1:
            raise RuntimeError(f"the turn ended {ended} after {len(fake.requests)} requests of {steps + 1}")
        own = [b.received - a.answered for a, b in zip(fake.requests, fake.requests[1:])]
        bodies = {n: json.dumps(fake.requests[n].body).encode() for n in keep}
    return own, bodies


def window(turns: list[list[float]], span: tuple[int, int]) -> float:
    """The median of the steps of `span` (1-based, inclusive) in every turn."""
    return statistics.median(x for own in turns for x in own[span[0] - 1 : span[1]])


def dumps_ms(body: bytes, rounds: int = 20) -> float:
    """The floor of a request's cost: its body (as the server sent it) serialised with json.dumps."""
    data = json.loads(body)
    best = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        json.dumps(data)
        best.append(time.perf_counter() - t0)
    return statistics.median(best) * 1000


# ---------------------------------------------------------------- the first request


def first_request_lsp(fake: FakeServer, settle: float = 0.0) -> float:
    """Spawn → the first model request (`settle` 0: the message sent at once); else, after waiting
    `settle` seconds once the server answered (a user typing), the message sent → the request."""
    with tempfile.TemporaryDirectory() as tmp:
        fake.add(Reply("Hello.", usage=USAGE[fake.provider]))
        t0 = time.perf_counter()
        client = Client(MODUS, Path(tmp))
        client.initialize(EDITOR_CAPABILITIES, settings(fake))
        before = len(fake.requests)
        if settle:
            client.call("modus/state")
            time.sleep(settle)
            t0 = time.perf_counter()
        ended: list[str] = []
        client.on_notification = lambda m, at: ended.append(m["params"]["outcome"]) if m["params"].get("kind") == "turn_ended" else None
        client.call("modus/chat/send", {"text": "hello"})
        client.wait(lambda: bool(ended))
        first = fake.requests[before].received - t0
        client.close()
    return first


def ready_bare() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        client = Client(BARE, Path(tmp))
        client.initialize()
        client.call("bench/ping")
        ready = time.perf_counter() - t0
        client.close()
    return ready


class AcpClient:
    """Newline-delimited JSON-RPC to `modus acp`; the agent's requests (permissions) approved."""

    def __init__(self, workspace: Path):
        env = {**os.environ, "XDG_CONFIG_HOME": str(workspace / ".config")}
        self.proc = subprocess.Popen(
            [*MODUS, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=workspace, env=env,
        )
        self.next_id = 0

    def send(self, method: str, params: dict) -> int:
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode() + b"\n")
        self.proc.stdin.flush()
        return self.next_id

    def call(self, method: str, params: dict) -> dict:
        msg_id = self.send(method, params)
        while True:
            message = json.loads(self.proc.stdout.readline())
            if message.get("id") == msg_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def first_request_acp(fake: FakeServer, settle: float = 0.0) -> tuple[float, float]:
    """(spawn → initialize answered, spawn → the first model request); with `settle`, the second
    is the prompt sent → the request, `settle` seconds after the session opened (a user typing)."""
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        (workspace / ".modus").mkdir()
        # ACP reads its settings from the files: the user's own global file (the workspace's
        # endpoints would wait for trust)
        config = workspace / ".config" / "modus"
        config.mkdir(parents=True)
        (config / "settings.json").write_text(json.dumps(settings(fake)["modus"]))
        fake.add(Reply("Hello.", usage=USAGE[fake.provider]))
        before = len(fake.requests)
        t0 = time.perf_counter()
        client = AcpClient(workspace)
        client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        initialized = time.perf_counter() - t0
        session = client.call("session/new", {"cwd": str(workspace), "mcpServers": []})
        if settle:
            time.sleep(settle)
            t0 = time.perf_counter()
        client.call("session/prompt", {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "hello"}]})
        first = fake.requests[before].received - t0
        client.close()
    return initialized, first


# ---------------------------------------------------------------- main


def ok(passed: bool) -> str:
    return "ok" if passed else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer steps and starts (a smoke test of the harness)")
    args = parser.parse_args()
    steps = 60 if args.quick else STEPS
    starts = 3 if args.quick else 11
    failed = False
    print(f"steps through the real SDKs: {1 if args.quick else ROUNDS} turns of {steps} read_file steps against a local fake of each API "
          f"(the server's own time per step, on the fake's clock), Python {sys.version.split()[0]}\n")
    print(f"{'measure':<58}{'steps 1–10':>12}{'241–250':>10}{'491–500':>10}{'ratio':>8}  target")
    for provider in FAKES:
        turns = [long_turn(provider, steps) for _ in range(1 if args.quick else ROUNDS)]
        bodies = turns[-1][1]
        late_span = (steps - 9, steps)
        early, late = window([t[0] for t in turns], EARLY), window([t[0] for t in turns], late_span)
        middle = window([t[0] for t in turns], MIDDLE) if steps >= MIDDLE[1] else float("nan")
        ratio = late / early
        failed |= ratio > STEP_TARGET
        print(f"{provider + ': a step, the server’s own time (median)':<58}{early * 1000:>9.2f} ms{middle * 1000:>7.2f} ms"
              f"{late * 1000:>7.2f} ms{ratio:>7.2f}×  ≤ {STEP_TARGET}× {ok(ratio <= STEP_TARGET)}")
        floors = "   ".join(f"request {n + 1}: {len(body) / 1024:,.0f} KB, {dumps_ms(body):.2f} ms" for n, body in sorted(bodies.items()))
        print(f"  {provider}: the floor, its body with json.dumps — {floors}")
    print()

    with FakeOpenAI() as fake:
        lsp = [first_request_lsp(fake) for _ in range(starts)]
        acp = [first_request_acp(fake) for _ in range(starts)]
        lsp_typed = [first_request_lsp(fake, SETTLE) for _ in range(max(3, starts // 3))]
        acp_typed = [first_request_acp(fake, SETTLE)[1] for _ in range(max(3, starts // 3))]
    bare = statistics.median(ready_bare() for _ in range(starts))
    acp_init = statistics.median(a for a, _ in acp)
    lsp_first, acp_first = statistics.median(lsp), statistics.median(b for _, b in acp)
    sdk_import, acp_import = (statistics.median(import_seconds(m) for _ in range(3)) for m in ("openai", "acp"))
    print(f"start → first model request, openai (median of {starts} starts; the baseline: a bare pygls server answering its first request)")
    print(f"{'measure':<58}{'baseline':>12}{'modus':>12}{'ratio':>8}  target")
    rows = [
        ("LSP: spawn → the first model request", bare, lsp_first, f"≤ {FIRST_REQUEST_TARGET_MS:.0f} ms", lsp_first * 1000 <= FIRST_REQUEST_TARGET_MS),
        ("ACP: spawn → initialize answered", bare, acp_init, f"≤ {ACP_INITIALIZE_TARGET_MS:.0f} ms", acp_init * 1000 <= ACP_INITIALIZE_TARGET_MS),
        ("ACP: spawn → the first model request", bare, acp_first, f"≤ {FIRST_REQUEST_TARGET_MS:.0f} ms", acp_first * 1000 <= FIRST_REQUEST_TARGET_MS),
        (f"LSP: message → request, sent {SETTLE:g} s after start (typed)", None, statistics.median(lsp_typed), f"≤ {TYPED_TARGET_MS:.0f} ms", statistics.median(lsp_typed) * 1000 <= TYPED_TARGET_MS),
        (f"ACP: prompt → request, sent {SETTLE:g} s after the session (typed)", None, statistics.median(acp_typed), f"≤ {TYPED_TARGET_MS:.0f} ms", statistics.median(acp_typed) * 1000 <= TYPED_TARGET_MS),
    ]
    for name, base, value, target, passed in rows:
        failed |= not passed
        base_text = f"{base * 1000:>9.1f} ms" if base else f"{'':>12}"
        ratio = f"{value / base:>7.2f}×" if base else f"{'':>8}"
        print(f"{name:<58}{base_text}{value * 1000:>9.1f} ms{ratio}  {target} {ok(passed)}")
    print(f"(importing the openai SDK alone, in a fresh process: {sdk_import * 1000:.0f} ms; it loads in the background "
          "from the moment the settings name it, so a message typed after it has loaded does not wait for it)")
    # What no start can go below while its first request goes through the official SDK (and, over
    # ACP, the official ACP package reads the prompt): on a machine where these are above the
    # target, the target is out of reach whatever Modus does (issue 20: blocked, with these figures).
    print(f"floors on this machine: over LSP, a bare pygls server's first answer {bare * 1000:.0f} ms; over ACP, importing "
          f"the ACP package {acp_import * 1000:.0f} ms, then the openai SDK {sdk_import * 1000:.0f} ms "
          f"(target {FIRST_REQUEST_TARGET_MS:.0f} ms)")
    return 1 if failed else 0


def import_seconds(module: str) -> float:
    """How long a fresh Python process takes to import `module` (the import alone)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


if __name__ == "__main__":
    sys.exit(main())
