"""Benchmark of browser_action (issue 24, item 5): what a browser action costs the server beyond
Chromium's own work, against the baseline of the same run: the same Playwright calls made
directly on the same page.

A page served on 127.0.0.1 has a button that counts its clicks in large type (so every
screenshot differs: the image store writes each one, none is found stored already). One
Chromium, launched through the gate (browser_action launch, autoApprove.browser). Then, in
alternating order, each round:

- baseline: on the browser's page, directly: `mouse.click`, `wait_for_load_state("load")`,
  `screenshot(type="png")`, `title()` — what the driver asks of Playwright for a click;
- Modus: `browser_action {action: click}` through the whole gate (every stage, the session's
  ports), the screenshot stored in the state's image store, the `browser` and result made and
  serialised as the LSP layer sends them, the result's text.

Each call starts 100 ms after the last ended (not timed), so that neither pays for frames the
other left Chromium drawing. Reported: the medians and the 90th percentiles, and the median overhead (Modus − baseline).
Target: overhead < 50 ms; exit status 1 when missed.

Usage: python bench/browser.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this tree's server, not an installed copy

from protocol import ApprovalResponse, Settings  # noqa: E402
from server.agent import Session  # noqa: E402
from server.providers import ToolCallRequest  # noqa: E402
from server.tools import TOOLS, ToolContext, run_tool  # noqa: E402
from server.workspace import Workspace  # noqa: E402

TARGET_MS = 50.0
PAGE = b"""<!doctype html><html><head><title>Clicks: 0</title><style>body{margin:0;font:64px sans-serif}
button{position:absolute;left:50px;top:50px;width:300px;height:100px;font-size:32px}#n{position:absolute;top:200px;left:50px}</style>
</head><body><button onclick="n.textContent=++count; document.title='Clicks: '+count; console.log('click '+count)">Click</button>
<div id="n">0</div><script>let count=0</script></body></html>"""


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


class WireHost:
    """A host that does what the LSP layer does with an update: its JSON, serialised."""

    def __init__(self):
        self.sent = 0

    def publish(self, update) -> None:
        self.sent += len(json.dumps(update.wire()))

    def show_message(self, level, text) -> None:
        pass

    async def request_approval(self, request, changes=()):
        return ApprovalResponse(decision="approve")

    can_apply_edits = False
    can_run_commands = False

    def progress(self, title, on_cancel=None):
        raise NotImplementedError

    def publish_diagnostics(self, path, diagnostics) -> None:
        pass


def ms(times: list[float], q: float | None = None) -> float:
    if q is None:
        return statistics.median(times) * 1000
    return sorted(times)[min(len(times) - 1, int(q * len(times)))] * 1000


async def run(rounds: int) -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/"
    with tempfile.TemporaryDirectory(prefix="modus-bench-browser-") as tmp:
        root = Path(tmp)
        settings = Settings.model_validate({"autoApprove": {"browser": True}, "checkpoints": False})
        session = Session(workspace=Workspace(root), host=WireHost(), settings=settings, global_modes=root / ".global-modes.yaml")
        try:
            async with session.running():
                n = 0

                async def call(action: str, **arguments) -> str:
                    nonlocal n
                    n += 1
                    ctx = ToolContext(session.ports, session.task_for("modus"), "modus", session.conversation_id, "turn-bench", f"call-{n}")
                    result = await run_tool(ctx, ToolCallRequest(f"call-{n}", "browser_action", {"action": action, **arguments}), TOOLS)
                    assert result.error is None, result.text
                    return result.text

                await call("launch", url=url)
                browser = session.browsers.get(session.conversation_id)
                assert browser is not None
                page = browser.page

                async def direct() -> None:
                    await page.mouse.click(200, 100)
                    await page.wait_for_load_state("load")
                    await page.screenshot(type="png")
                    await page.title()

                times: dict[str, list[float]] = {"baseline": [], "modus": []}
                for i in range(rounds + 2):  # rounds 0 and 1 warm both paths: not counted
                    for name in ("baseline", "modus") if i % 2 == 0 else ("modus", "baseline"):
                        await anyio.sleep(0.1)  # each starts from a quiet page: no frame of the last one still drawn
                        t0 = time.perf_counter()
                        if name == "baseline":
                            await direct()
                        else:
                            text = await call("click", coordinate="200,100")
                        if i > 1:
                            times[name].append(time.perf_counter() - t0)
                assert "Title: Clicks: " in text and "[log] click " in text, text
                clicks = await page.title()
                await call("close")
        finally:
            session.close()
            server.shutdown()
            server.server_close()
    base, modus = ms(times["baseline"]), ms(times["modus"])
    overhead = modus - base
    ok = overhead < TARGET_MS
    print(f"browser_action click on a page of 127.0.0.1, headless Chromium through Playwright, {os.cpu_count()} cores, "
          f"median of {rounds} each, alternating ({clicks.removeprefix('Clicks: ')} clicks in all, each screenshot stored)\n")
    print("| measure | baseline | Modus | beyond | target |")
    print("|---|---:|---:|---:|---|")
    print(f"| click: click, load state, screenshot, title, direct vs through the gate (median) | {base:.2f} ms | {modus:.2f} ms | {overhead:.2f} ms | < {TARGET_MS:g} ms {'ok' if ok else 'MISSED'} |")
    print(f"| the same, p90 | {ms(times['baseline'], 0.9):.2f} ms | {ms(times['modus'], 0.9):.2f} ms | "
          f"{ms(times['modus'], 0.9) - ms(times['baseline'], 0.9):.2f} ms | |")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test of the harness)")
    args = parser.parse_args()
    chromium = os.environ.get("CHROMIUM_PATH") or "/usr/bin/chromium"
    if not os.access(chromium, os.X_OK):
        print(f"browser: no Chromium at {chromium}, nothing measured")
        return 1
    return anyio.run(run, 10 if args.quick else 60)


if __name__ == "__main__":
    sys.exit(main())
