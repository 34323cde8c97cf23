"""Benchmarks of Modus against a bare pygls server, measured in one run, printed as ratios.

- start-up: spawn → `initialize` result (each server started fresh, interleaved runs); and,
  for the whole story, spawn → the first request answered (Modus loads its core on `initialized`)
- round trip: `modus/state` against the bare server's `bench/ping` (p50, p99)
- a user mode switch (`modus/modes/switch`), in ms and as a ratio to the bare round trip

Both servers run on this interpreter over stdio and are driven by the same minimal client.
Usage: python bench/run.py [--quick]
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

import jsonrpcclient

HERE = Path(__file__).resolve().parent
BARE = [sys.executable, str(HERE / "bare_server.py")]
MODUS = [sys.executable, "-m", "server"]


class Client:
    """Content-Length framed JSON-RPC over a child's pipes; skips notifications. Messages are
    written by hand (jsonrpcclient drops empty params, which a bare pygls server refuses) and
    responses read with jsonrpcclient."""

    def __init__(self, command: list[str], workspace: Path):
        env = {**os.environ, "XDG_CONFIG_HOME": str(workspace / ".config")}
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=workspace, env=env)
        self.next_id = 0
        self.workspace = workspace

    def send(self, method: str, params, notify: bool = False) -> int | None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()
        return message.get("id")

    def read(self) -> dict:
        length = 0
        while (line := self.proc.stdout.readline()) != b"\r\n":
            if not line:
                raise RuntimeError("server closed its output")
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def call(self, method: str, params=None):
        msg_id = self.send(method, params or {})
        while True:
            message = self.read()
            if message.get("id") == msg_id and "method" not in message:
                response = jsonrpcclient.parse(message)
                if isinstance(response, jsonrpcclient.Error):
                    raise RuntimeError(f"{method}: {response.code} {response.message}")
                return response.result

    def initialize(self):
        result = self.call("initialize", {"processId": None, "rootUri": self.workspace.as_uri(), "capabilities": {}})
        self.send("initialized", {}, notify=True)
        return result

    def close(self):
        try:
            self.call("shutdown")
            self.send("exit", None, notify=True)
            self.proc.wait(5)
        except Exception:
            self.proc.kill()


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def startup(command: list[str], first_request: str) -> tuple[float, float]:
    """(spawn → initialize result, spawn → first request answered after `initialized`)."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        client = Client(command, Path(tmp))
        client.initialize()
        initialized = time.perf_counter() - t0
        client.call(first_request)
        ready = time.perf_counter() - t0
        client.close()
    return initialized, ready


def round_trips(client: Client, method: str, runs: int, params=None) -> list[float]:
    for _ in range(50):  # warm up
        client.call(method, params)
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        client.call(method, params)
        out.append(time.perf_counter() - t0)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer runs (a smoke test of the harness)")
    args = parser.parse_args()
    starts, trips, switches = (3, 300, 100) if args.quick else (15, 3000, 1000)

    # start-up, interleaved so that the machine's state affects both alike
    bare_start, modus_start = [], []
    for _ in range(starts):
        bare_start.append(startup(BARE, "bench/ping"))
        modus_start.append(startup(MODUS, "modus/state"))

    with tempfile.TemporaryDirectory() as tmp_bare, tempfile.TemporaryDirectory() as tmp_modus:
        bare, modus = Client(BARE, Path(tmp_bare)), Client(MODUS, Path(tmp_modus))
        bare.initialize()
        modus.initialize()
        bare_rt, modus_rt = [], []
        for _ in range(5):  # interleaved rounds
            bare_rt += round_trips(bare, "bench/ping", trips // 5)
            modus_rt += round_trips(modus, "modus/state", trips // 5)
        switch = []
        for i in range(switches):
            slug = "ask" if i % 2 == 0 else "code"
            t0 = time.perf_counter()
            state = modus.call("modus/modes/switch", {"slug": slug})
            switch.append(time.perf_counter() - t0)
            assert state["mode"]["slug"] == slug
        bare.close()
        modus.close()

    ms = lambda s: f"{s * 1000:8.2f} ms"  # noqa: E731
    rows = [
        ("start-up (spawn → initialize), median", statistics.median(s[0] for s in bare_start), statistics.median(s[0] for s in modus_start), 1.3),
        ("ready (spawn → first request answered), median", statistics.median(s[1] for s in bare_start), statistics.median(s[1] for s in modus_start), None),
        ("round trip modus/state vs bench/ping, p50", percentile(bare_rt, 50), percentile(modus_rt, 50), 1.2),
        ("round trip modus/state vs bench/ping, p99", percentile(bare_rt, 99), percentile(modus_rt, 99), 1.2),
        ("user mode switch vs bench/ping, p50", percentile(bare_rt, 50), percentile(switch, 50), None),
        ("user mode switch vs bench/ping, p99", percentile(bare_rt, 99), percentile(switch, 99), None),
    ]
    print(f"Modus vs a bare pygls server, {sys.version.split()[0]}, runs: {starts} starts, {trips} round trips, {switches} switches\n")
    print(f"{'measure':<50} {'bare pygls':>11} {'modus':>11} {'ratio':>7}  target")
    ok = True
    for name, base, ours, target in rows:
        ratio = ours / base
        verdict = f"≤ {target}×" + (" ok" if ratio <= target else " MISSED") if target else ""
        ok &= target is None or ratio <= target
        print(f"{name:<50} {ms(base)} {ms(ours)} {ratio:6.2f}×  {verdict}")
    p99 = percentile(switch, 99) * 1000
    ok &= p99 < 20
    print(f"\nuser mode switch p99: {p99:.2f} ms (target < 20 ms) {'ok' if p99 < 20 else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
