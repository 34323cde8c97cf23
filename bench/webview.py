"""Benchmark of the chat webview while a reply streams (issue 23, item 6): a 64 KB reply after
300 tool cards, in headless Chromium, against an empty chat in the same run. The measuring is
editor-client/test/bench-webview.ts (it needs the browser the editor tests use); this builds the
webview and runs it.

Target: no long task over 50 ms while the reply streams; exit status 1 when missed.

Usage: python bench/webview.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parent.parent / "editor-client"


def main() -> int:
    if not (CLIENT / "node_modules" / ".package-lock.json").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=CLIENT, check=True)
    for script in ("build", "compile-tests"):
        subprocess.run(["npm", "run", "-s", script], cwd=CLIENT, check=True, stdout=subprocess.DEVNULL)
    return subprocess.run(["node", "out/test/bench-webview.js"], cwd=CLIENT).returncode


if __name__ == "__main__":
    sys.exit(main())
