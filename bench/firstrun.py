"""Benchmark of the first run's set-up (issue 25, "Set up Modus"): the time from a click to Modus
installed in its own environment, with a package index and offline from the bundled wheels, against
`python -m venv` alone in the same run. The measuring is editor-client/test/bench-firstrun.ts: it
runs the extension's own steps (the compiled src/envSetup.ts: the interpreter checked, `python -m
venv`, `pip install` of the bundled wheel), so this builds the client's tests and runs it.

Targets: under 60 s with a package index, under 20 s offline; exit status 1 when missed.

Usage: python bench/firstrun.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parent.parent / "editor-client"


def main() -> int:
    if not (CLIENT / "node_modules" / ".package-lock.json").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=CLIENT, check=True)
    subprocess.run(["npm", "run", "-s", "compile-tests"], cwd=CLIENT, check=True, stdout=subprocess.DEVNULL)
    return subprocess.run(["node", "out/test/bench-firstrun.js"], cwd=CLIENT).returncode


if __name__ == "__main__":
    sys.exit(main())
