"""Benchmark of a team space on one PostgreSQL (issue 26's scale figures), measured in one run.

A throwaway PostgreSQL cluster of the run's own (tests/pg_cluster.py: initdb and pg_ctl in a
temporary folder, as `nobody` when run as root), stopped at the end, also on failure. Three
figures, each against a baseline of the same run:

1. Fan-out latency. 10 real servers (`python -m server` over stdio, each with its own temporary
   workspace, config, state and home) attached to one space as alice, bob, m3 … m10. Alice sends
   50 messages a second (paced; 10 s, --quick 3 s) into one space conversation, each made only
   of a member's mention (`@bob`, `@m3` … in turn), which starts no agent turn. For each message
   and each of the 9 other servers: the time from alice's `modus/chat/send` to the arrival of its
   `message` update (role user, the same messageId) at that server's client; p50 and p99 over
   all (message, receiver) pairs. Target: p99 < 200 ms. Baseline: send → alice's own client
   receiving it (a space conversation's update reaches its own server's clients through the
   feed too). Checked (an error, not a figure): every client got the conversation's updates
   numbered 1, 2, 3 … without a gap, and all the same ones in the same order. The same with 2
   servers beside it (what each attached server adds); for both, the CPU time each part spent
   per message (alice's server, each other server, PostgreSQL's processes, this client), and
   where a message's time goes, from the times the sender's server wrote in `messages` and
   `events` (its clock is this one's): send → stored → its update appended → alice's client →
   the others'.
2. History of a big space. A conversation of 1,000,000 messages (--quick 200,000) put in the
   space's `messages` table with COPY (the schema made by SpaceStore), then `SpaceStore.history`
   timed: the first page (the newest 50) and a page in the middle, median of 21 runs each.
   Baseline: the same on a 1,000-message conversation of the same database. Target: the first
   page < 50 ms.
3. Memory per attached server. A fresh pair of attached servers; one sends mention-only messages
   into a new conversation, as fast as they are answered (50 requests in flight); the other's RSS
   (VmRSS) once 1,000 and once 10,000 (--quick 500 and 3,000) of them have reached its client.
   Target: ratio ≤ 1.2.

Exit status 1 when a target is missed or a check fails.

Usage: python bench/space.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))  # this tree's server, not an installed copy
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # the servers' too

import pg_cluster  # noqa: E402

SERVERS = 10
RATE = 50  # messages a second
CONVERSATION = "conv-bench-fanout"
MEMORY_CONVERSATION = "conv-bench-memory"
FANOUT_P99_MS = 200.0
FIRST_PAGE_MS = 50.0
RSS_RATIO = 1.2


def handles(n: int) -> list[str]:
    return ["alice", "bob", *(f"m{i}" for i in range(3, n + 1))][:n]


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


# ---------------------------------------------------------------- a client of one server over stdio


class Server:
    """`python -m server` over stdio, Content-Length framed JSON-RPC. Every `modus/update` is
    kept with the time it arrived (perf_counter); the server's requests are answered null."""

    def __init__(self, handle: str, folder: Path):
        self.handle = handle
        self.folder = folder
        self.proc: asyncio.subprocess.Process | None = None
        self.next_id = 0
        self.pending: dict[int, asyncio.Future] = {}
        self.updates: list[tuple[float, dict]] = []
        #: False: updates are counted, not kept (the memory run's many thousands)
        self.keep = True
        #: the user messages that arrived, per conversation
        self.counts: dict[str, int] = {}
        self.changed = asyncio.Event()
        self.reader: asyncio.Task | None = None

    async def start(self, url: str, members: list[str]) -> None:
        workspace = self.folder / "ws"
        for name in ("ws", "config", "state", "data", "home"):
            (self.folder / name).mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "XDG_CONFIG_HOME": str(self.folder / "config"), "XDG_STATE_HOME": str(self.folder / "state"),
               "XDG_DATA_HOME": str(self.folder / "data"), "HOME": str(self.folder / "home")}
        self.stderr = open(self.folder / "stderr.log", "wb")
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=self.stderr,
            cwd=workspace, env=env, limit=2**24,
        )
        self.reader = asyncio.create_task(self._read())
        options = {"modus": {
            "space": {"url": url, "name": "team", "member": self.handle},
            "members": [{"handle": h, "name": h.title()} for h in members],
            "modeSwitchDelayMs": 0, "checkpoints": False,
        }}
        await self.call("initialize", {"processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {},
                                       "workspaceFolders": [{"uri": workspace.as_uri(), "name": "ws"}],
                                       "initializationOptions": options})
        self.notify("initialized", {})

    def _write(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> asyncio.Future:
        """Sent at once; the future holds the result."""
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        self._write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return future

    async def call(self, method: str, params: Any, timeout: float = 60) -> Any:
        future = self.request(method, params)
        await self.proc.stdin.drain()
        return await asyncio.wait_for(future, timeout)

    async def _read(self) -> None:
        stdout = self.proc.stdout
        try:
            while True:
                length = 0
                while (line := await stdout.readline()) != b"\r\n":
                    if not line:
                        raise EOFError
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = await stdout.readexactly(length)
                at = time.perf_counter()
                message = json.loads(body)
                if "method" not in message:
                    future = self.pending.pop(message.get("id"), None)
                    if future is not None and not future.done():
                        if "error" in message:
                            future.set_exception(RuntimeError(f"{self.handle}: {message['error']}"))
                        else:
                            future.set_result(message.get("result"))
                elif "id" in message:  # a request of the server's: answered null
                    self._write({"jsonrpc": "2.0", "id": message["id"], "result": None})
                elif message["method"] == "modus/update":
                    update = message["params"]
                    if update["kind"] == "message" and update.get("role") == "user":
                        cid = update.get("conversationId")
                        self.counts[cid] = self.counts.get(cid, 0) + 1
                    if self.keep or update["kind"] != "message":
                        self.updates.append((at, update))
                    self.changed.set()
        except (EOFError, asyncio.IncompleteReadError, ConnectionError):
            failure = RuntimeError(f"{self.handle}'s server closed its output (see {self.folder / 'stderr.log'})")
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(failure)
            self.pending.clear()
            self.changed.set()

    async def wait_for(self, predicate, timeout: float = 60) -> Any:
        async with asyncio.timeout(timeout):
            while not (found := predicate()):
                if self.reader.done():
                    raise RuntimeError(f"{self.handle}'s server closed its output (see {self.folder / 'stderr.log'})")
                self.changed.clear()
                try:
                    await asyncio.wait_for(self.changed.wait(), 0.5)
                except TimeoutError:
                    pass
        return found

    async def attached(self) -> None:
        await self.wait_for(lambda: any(u["kind"] == "space_changed" and u["space"]["state"] == "connected" for _, u in self.updates))

    def user_messages(self, cid: str) -> list[tuple[float, dict]]:
        return [(at, u) for at, u in self.updates if u["kind"] == "message" and u.get("role") == "user" and u.get("conversationId") == cid]

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    async def stop(self) -> None:
        if self.proc is None:
            return
        try:
            if self.proc.returncode is None:
                await self.call("shutdown", None, timeout=10)
                self.notify("exit", None)
                await asyncio.wait_for(self.proc.wait(), 10)
        except Exception:  # noqa: BLE001 - whatever went wrong, it goes
            if self.proc.returncode is None:
                self.proc.kill()
                await self.proc.wait()
        finally:
            if self.reader is not None:
                self.reader.cancel()
            self.stderr.close()


async def start_servers(url: str, names: list[str], folder: Path) -> list[Server]:
    servers = [Server(h, folder / h) for h in names]
    try:
        for s in servers:  # one after another: ten imports at once on 2 cores only slow each other
            await s.start(url, names)
        await asyncio.gather(*(s.attached() for s in servers))
    except BaseException:
        await asyncio.gather(*(s.stop() for s in servers), return_exceptions=True)
        raise
    return servers


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int, children: bool = False) -> float:
    """The process's CPU time (user + system), with its reaped children's when asked."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)
    return ticks / TICK


def postgres_cpu(pg_folder: Path) -> float:
    """The CPU time of the cluster: the postmaster, its live processes and those it reaped."""
    postmaster = int((pg_folder / "data" / "postmaster.pid").read_text().split()[0])
    total = cpu_seconds(postmaster, children=True)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == postmaster:
                total += (int(fields[11]) + int(fields[12])) / TICK
        except (OSError, ValueError, IndexError):
            pass
    return total


def mention(i: int, receivers: list[str]) -> str:
    return f"@{receivers[i % len(receivers)]}"


# ---------------------------------------------------------------- 1. fan-out latency


async def quiet(servers: list[Server], limit: float = 20) -> None:
    """Until the servers are idle (what they load in the background at start-up, loaded): under
    5 % of a core together over half a second, or `limit` seconds."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        before = sum(cpu_seconds(s.proc.pid) for s in servers)
        await asyncio.sleep(0.5)
        if sum(cpu_seconds(s.proc.pid) for s in servers) - before < 0.025:
            return


async def fanout(url: str, folder: Path, seconds: float, pg_folder: Path, n: int) -> dict:
    names = handles(n)
    servers = await start_servers(url, names, folder)
    try:
        alice, receivers = servers[0], servers[1:]
        others = names[1:]
        # warm-up: the conversation made, every server's feed and parser exercised
        warm = 20
        for i in range(warm):
            await alice.call("modus/chat/send", {"text": mention(i, others), "conversationId": CONVERSATION})
        for s in servers:
            await s.wait_for(lambda s=s: s.counts.get(CONVERSATION, 0) >= warm)
        await quiet(servers)
        marks = {s.handle: s.counts[CONVERSATION] for s in servers}

        count = int(seconds * RATE)
        cpu0 = [cpu_seconds(s.proc.pid) for s in servers], postgres_cpu(pg_folder), time.process_time()
        sends: list[tuple[float, asyncio.Future]] = []
        t0 = time.perf_counter()
        for i in range(count):
            delay = t0 + i / RATE - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            sent = time.perf_counter()
            sends.append((sent, alice.request("modus/chat/send", {"text": mention(i, others), "conversationId": CONVERSATION})))
            await alice.proc.stdin.drain()
        results = await asyncio.wait_for(asyncio.gather(*(f for _, f in sends)), 60)
        pace = (sends[-1][0] - sends[0][0]) / max(1, count - 1)
        for s in servers:
            await s.wait_for(lambda s=s: s.counts.get(CONVERSATION, 0) >= warm + count, timeout=60)
        cpu1 = [cpu_seconds(s.proc.pid) for s in servers], postgres_cpu(pg_folder), time.process_time()
        cpu = {"alice": (cpu1[0][0] - cpu0[0][0]) / count * 1000,
               "receiver": statistics.mean(b - a for a, b in zip(cpu0[0][1:], cpu1[0][1:])) / count * 1000,
               "postgres": (cpu1[1] - cpu0[1]) / count * 1000, "bench": (cpu1[2] - cpu0[2]) / count * 1000}
        for r in results:
            if r.get("dispatched"):
                raise RuntimeError(f"a mention-only message started a turn: {r}")

        sent_at = {r["messageId"]: at for (at, _), r in zip(sends, results)}
        own, latencies, errors = [], [], []
        for s in servers:
            arrived = {u.get("messageId"): at for at, u in s.user_messages(CONVERSATION)[marks[s.handle]:]}
            missing = [m for m in sent_at if m not in arrived]
            if missing:
                errors.append(f"{s.handle}: {len(missing)} messages never arrived")
                continue
            delays = [(arrived[m] - at) * 1000 for m, at in sent_at.items()]
            (own if s is alice else latencies).extend(delays)
        errors += order_errors(servers, CONVERSATION)
        stages = None if errors else where_the_time_goes(url, sent_at, arrivals(alice), [arrivals(s) for s in receivers])
        return {"stages": stages, "count": count, "pace_ms": pace * 1000, "cpu": cpu, "wall": (sends[-1][0] - sends[0][0]) / count * 1000,
                "own": own, "latencies": latencies, "errors": errors, "receivers": len(receivers)}
    finally:
        await asyncio.gather(*(s.stop() for s in servers), return_exceptions=True)


def arrivals(server: Server) -> dict[str, float]:
    return {u.get("messageId"): at for at, u in server.user_messages(CONVERSATION)}


def where_the_time_goes(url: str, sent: dict[str, float], own: dict[str, float], others: list[dict[str, float]]) -> dict[str, list[float]]:
    """Each message's way, in ms, from the times the sender's server wrote with it (its clock is
    this one's): send → stored in `messages` (the request read, the message composed and
    stored); → its update's `events` row written (the feed's queue, the append's first
    statements); → the sender's own client (commit, NOTIFY, the notice back, out to stdout);
    → each other client, beyond the sender's own (the notice, the read, out to stdout)."""
    import psycopg

    offset = time.time() - time.perf_counter()  # perf_counter → wall clock, to a few µs
    with psycopg.connect(url, autocommit=True) as db:
        stored = dict(db.execute("SELECT id, created_at FROM messages WHERE conversation_id = %s", (CONVERSATION,)).fetchall())
        appended = dict(db.execute(
            "SELECT body::json ->> 'messageId', created_at FROM events WHERE conversation_id = %s AND body::json ->> 'kind' = 'message'",
            (CONVERSATION,)).fetchall())
    stages: dict[str, list[float]] = {"stored": [], "appended": [], "own": [], "others": []}
    for m, at in sent.items():
        wall = at + offset
        stages["stored"].append((stored[m] - wall) * 1000)
        stages["appended"].append((appended[m] - stored[m]) * 1000)
        stages["own"].append((own[m] + offset - appended[m]) * 1000)
        stages["others"].extend((o[m] - own[m]) * 1000 for o in others)
    return stages


def order_errors(servers: list[Server], cid: str) -> list[str]:
    """Every client: the conversation's updates numbered 1, 2, 3 … without a gap; all the same.
    A `notification` (the member mentioned) is one member's, and never numbered: apart."""
    errors = []
    reference: list[tuple] | None = None
    for s in servers:
        seen = [(u.get("seq"), u["kind"], u.get("messageId")) for _, u in s.updates
                if u.get("conversationId") == cid and u["kind"] != "notification"]
        numbered = [seq for seq, _, _ in seen if seq is not None]
        if len(numbered) != len(seen):
            errors.append(f"{s.handle}: {len(seen) - len(numbered)} updates of the conversation without seq")
        if numbered != list(range(1, len(numbered) + 1)):
            gaps = [(a, b) for a, b in zip(numbered, numbered[1:]) if b != a + 1]
            errors.append(f"{s.handle}: seq not 1, 2, 3 … (first {numbered[:1]}, breaks {gaps[:5]})")
        if reference is None:
            reference = seen
        elif seen != reference:
            first = next((i for i, (a, b) in enumerate(zip(seen, reference)) if a != b), min(len(seen), len(reference)))
            errors.append(f"{s.handle}: its updates differ from {servers[0].handle}'s from the {first + 1}th on "
                          f"({len(seen)} vs {len(reference)})")
    return errors


# ---------------------------------------------------------------- 2. history of a big space


def history(url: str, big: int, runs: int) -> dict:
    from server.state.pg import SpaceStore

    store = SpaceStore(url)
    try:
        import psycopg

        conversations = {"conv-big": big, "conv-small": 1000}
        t0 = time.perf_counter()
        with psycopg.connect(url, autocommit=True) as db:
            for cid, n in conversations.items():
                db.execute("INSERT INTO conversations(id, owner, created_at, last_seq) VALUES (%s, NULL, %s, %s)", (cid, time.time(), n))
                with db.cursor().copy("COPY messages (conversation_id, seq, id, role, agent, text, metadata, created_at) FROM STDIN") as copy:
                    chunk = io.StringIO()
                    now = time.time()
                    for seq in range(1, n + 1):
                        role, agent, text = ("user", r"\N", f"@bob look at step {seq}") if seq % 2 else \
                            ("assistant", "default", f"Step {seq} reads the file, checks the result and writes the next part of the plan.")
                        meta = '{"member": "alice"}' if seq % 2 else "{}"
                        chunk.write(f"{cid}\t{seq}\tmsg-{cid}-{seq}\t{role}\t{agent}\t{text}\t{meta}\t{now + seq * 1e-3}\n")
                        if seq % 50_000 == 0:
                            copy.write(chunk.getvalue())
                            chunk = io.StringIO()
                    copy.write(chunk.getvalue())
            db.execute("VACUUM ANALYZE messages")
        loaded = time.perf_counter() - t0

        def timed(cid: str, before: int | None) -> float:
            t = time.perf_counter()
            page = store.history(cid, before=before, limit=50)
            elapsed = (time.perf_counter() - t) * 1000
            expected_last = (before or conversations[cid] + 1) - 1
            if len(page) != 50 or page[-1][0] != expected_last:
                raise RuntimeError(f"history({cid}, before={before}): {len(page)} messages, last {page[-1][0] if page else None}")
            return elapsed

        cases = {("conv-big", None): [], ("conv-big", big // 2): [], ("conv-small", None): [], ("conv-small", 500): []}
        for case in cases:  # warm: the pool's connection, the statement, the pages in the cache
            timed(*case)
        for _ in range(runs):
            for case, samples in cases.items():
                samples.append(timed(*case))
        return {"loaded_s": loaded, "big": big, "medians": {case: statistics.median(s) for case, s in cases.items()}}
    finally:
        store.close()


# ---------------------------------------------------------------- 3. memory per attached server


async def memory(url: str, folder: Path, early: int, late: int, window: int = 50) -> dict:
    sender_name, receiver_name = "alice", "bob"
    servers = await start_servers(url, [sender_name, receiver_name], folder)
    try:
        sender, receiver = servers
        sender.keep = receiver.keep = False
        sent = 0

        async def send_until(total: int) -> None:
            """Messages sent until `total` have been, and all have reached the receiver's client."""
            nonlocal sent
            in_flight: set[asyncio.Future] = set()
            while sent < total or in_flight:
                while sent < total and len(in_flight) < window:
                    in_flight.add(sender.request("modus/chat/send", {"text": "@bob", "conversationId": MEMORY_CONVERSATION}))
                    sent += 1
                await sender.proc.stdin.drain()
                done, in_flight = await asyncio.wait(in_flight, timeout=60, return_when=asyncio.FIRST_COMPLETED)
                if not done:
                    raise RuntimeError("no answer to modus/chat/send in 60 s")
                for f in done:
                    f.result()
            await receiver.wait_for(lambda: receiver.counts.get(MEMORY_CONVERSATION, 0) >= total, timeout=120)

        await send_until(early)
        await asyncio.sleep(1)
        rss_early, sender_early = receiver.rss_mb(), sender.rss_mb()
        t0 = time.perf_counter()
        await send_until(late)
        elapsed = time.perf_counter() - t0
        await asyncio.sleep(1)
        return {"early": early, "late": late, "rss_early": rss_early, "rss_late": receiver.rss_mb(),
                "sender_early": sender_early, "sender_late": sender.rss_mb(), "rate": (late - early) / elapsed}
    finally:
        await asyncio.gather(*(s.stop() for s in servers), return_exceptions=True)


# ---------------------------------------------------------------- the run


def row(name: str, base: str, ours: str, ratio: str, target: str = "") -> None:
    print(f"  {name:<72} {base:>11} {ours:>11} {ratio:>8}  {target}")


async def main_async(args: argparse.Namespace, cluster: str) -> int:
    ok = True
    seconds = 3 if args.quick else 10
    big = 200_000 if args.quick else 1_000_000
    early, late = (500, 3_000) if args.quick else (1_000, 10_000)

    import psycopg

    print(f"Team space on one PostgreSQL ({cluster_version(cluster)}, a throwaway cluster; {os.cpu_count()} cores, "
          f"Python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.2f} at the start){' --quick' if args.quick else ''}")
    row("measure", "baseline", "space", "ratio")

    runs = {}
    for n in (SERVERS, 2):
        with pg_cluster.database(cluster) as url:
            runs[n] = await fanout(url, args.folder / f"fanout-{n}", seconds, args.pg_folder, n)
            with psycopg.connect(url, autocommit=True) as db:
                runs[n]["events"] = db.execute("SELECT count(*) FROM events").fetchone()[0]
                runs[n]["events_bytes"] = db.execute("SELECT pg_total_relation_size('events')").fetchone()[0]
    f = runs[SERVERS]
    print(f"1. fan-out: alice sends {f['count']} mention-only messages at {1000 / f['pace_ms']:.0f}/s into one space conversation; "
          "baseline: alice's own client")
    for n, f in runs.items():
        for e in f["errors"]:
            print(f"  ERROR ({n} servers): {e}")
        ok &= not f["errors"]
        if not f["latencies"]:
            continue
        p50, p99 = percentile(f["latencies"], 50), percentile(f["latencies"], 99)
        o50, o99 = percentile(f["own"], 50), percentile(f["own"], 99)
        others = f"the {n - 1} others' clients" if n > 2 else "bob's client"
        row(f"{n} servers: send → message update at {others}, p50 of {len(f['latencies']):,}", f"{o50:.2f} ms", f"{p50:.2f} ms", f"{p50 / o50:.2f}×")
        if n == SERVERS:
            met = p99 < FANOUT_P99_MS
            ok &= met
            row("… p99", f"{o99:.2f} ms", f"{p99:.2f} ms", f"{p99 / o99:.2f}×", f"< {FANOUT_P99_MS:.0f} ms {'ok' if met else 'MISSED'}")
        else:
            row("… p99", f"{o99:.2f} ms", f"{p99:.2f} ms", f"{p99 / o99:.2f}×")
    for n, f in runs.items():
        st = f["stages"]
        if st is None:
            continue
        print(f"  {n} servers, where the time goes, p50 / p99 (ms): send → stored {percentile(st['stored'], 50):.1f} / "
              f"{percentile(st['stored'], 99):.1f}; → its update appended {percentile(st['appended'], 50):.1f} / "
              f"{percentile(st['appended'], 99):.1f}; → alice's client {percentile(st['own'], 50):.1f} / {percentile(st['own'], 99):.1f}; "
              f"the others' beyond alice's {percentile(st['others'], 50):.1f} / {percentile(st['others'], 99):.1f}")
    for n, f in runs.items():
        c = f["cpu"]
        print(f"  {n} servers, CPU per message: alice's server {c['alice']:.2f} ms, each other server {c['receiver']:.2f} ms, "
              f"PostgreSQL {c['postgres']:.2f} ms, this client {c['bench']:.2f} ms "
              f"({os.cpu_count()} cores give {os.cpu_count() * f['wall']:.0f} ms a message at this rate)")
    for n, f in runs.items():
        events = f["events"]
        print(f"  {n} servers, every client: the conversation's {events} updates numbered 1…{events} without a gap, in one order: "
              f"{'ok' if not f['errors'] else 'FAILED'}")
    f = runs[SERVERS]
    print(f"  the events table (kept a day): {f['events']} rows, {f['events_bytes'] / 1024:.0f} KB with its index, "
          f"{f['events_bytes'] / f['events']:.0f} bytes an update of this size")

    with pg_cluster.database(cluster) as url:
        h = history(url, big, 21)
    m = h["medians"]
    first_big, first_small = m[("conv-big", None)], m[("conv-small", None)]
    mid_big, mid_small = m[("conv-big", big // 2)], m[("conv-small", 500)]
    met = first_big < FIRST_PAGE_MS
    ok &= met
    print(f"2. history: SpaceStore.history(limit=50), median of 21, a conversation of {big:,} messages "
          f"(COPY and VACUUM ANALYZE: {h['loaded_s']:.1f} s) vs one of 1,000")
    row(f"first page (the newest 50), {big:,} vs 1,000 messages", f"{first_small:.2f} ms", f"{first_big:.2f} ms",
        f"{first_big / first_small:.2f}×", f"< {FIRST_PAGE_MS:.0f} ms {'ok' if met else 'MISSED'}")
    row(f"a middle page (before={big // 2:,} vs before=500)", f"{mid_small:.2f} ms", f"{mid_big:.2f} ms", f"{mid_big / mid_small:.2f}×")

    with pg_cluster.database(cluster) as url:
        r = await memory(url, args.folder / "memory", early, late)
    ratio = r["rss_late"] / r["rss_early"]
    met = ratio <= RSS_RATIO
    ok &= met
    print(f"3. memory: the receiving server's VmRSS after {r['early']:,} and {r['late']:,} mention-only messages "
          f"from another server ({r['rate']:.0f} a second)")
    row(f"RSS after {r['early']:,} → after {r['late']:,} messages", f"{r['rss_early']:.1f} MB", f"{r['rss_late']:.1f} MB",
        f"{ratio:.2f}×", f"≤ {RSS_RATIO}× {'ok' if met else 'MISSED'}")
    row("(the sender's, for comparison)", f"{r['sender_early']:.1f} MB", f"{r['sender_late']:.1f} MB",
        f"{r['sender_late'] / r['sender_early']:.2f}×")
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (other work on the machine slows the fan-out most)")
    return 0 if ok else 1


def cluster_version(url: str) -> str:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        return "PostgreSQL " + db.execute("SHOW server_version").fetchone()[0].split()[0]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="shorter runs (a smoke test of the harness)")
    args = parser.parse_args()
    folder = args.pg_folder = Path(tempfile.mkdtemp(prefix="modus-bench-pg-"))
    args.folder = Path(tempfile.mkdtemp(prefix="modus-bench-space-"))
    try:
        cluster = pg_cluster.cluster_url(folder)
        return asyncio.run(main_async(args, cluster))
    finally:
        pg_cluster.stop(folder)
        shutil.rmtree(args.folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
