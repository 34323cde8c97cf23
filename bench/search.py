"""Benchmark of search_files (issue 19, item 10): the tool's search of a 20,000-file workspace
against the baseline of the same run: raw ripgrep with the same arguments on the same tree.

The workspace holds 20,000 small source files (200 B to 2 KB) in 1,000 folders (10 packages ×
10 subpackages × 10 modules, 20 files each), a .gitignore and an ignored build folder of 1,000
files, and symbolic links: two that stay inside (to a file, to a folder) and three that lead
outside (to a file and to a folder beside a rare match, and to a file in a folder where the
rare regex matches nothing). Measured, for each regex (none, rare, in about 1% of the files, in
about 5% and in every file; the last two find more than the 300 results a search shows):

- baseline: `rg --json --no-require-git --context 1 --max-columns 500 --regexp <re> -- .`,
  run in the workspace, its output read whole (subprocess.run);
- Modus: `files.search`, what search_files runs once approved: the same ripgrep, its JSON made
  into the result, and the note naming the links skipped because they lead outside. Which links
  each note names is printed after the table. Past the results it shows, the tool reads
  ripgrep's output no further and stops it: where more are found it takes less than the baseline.

Baseline and Modus alternate, median of the rounds. Target: Modus ≤ 1.2× the baseline for every
regex; exit status 1 when missed.

Usage: python bench/search.py [--quick] [--files N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this tree's server, not an installed copy

import checkpoints  # noqa: E402  (bench/: the same made-up modules)
from server.tools.files import rg_binary, search  # noqa: E402
from server.workspace import Workspace  # noqa: E402

TARGET_RATIO = 1.2
RG_ARGS = ("--json", "--no-require-git", "--context", "1", "--max-columns", "500", "--regexp")  # the tool's
FOLDERS = (10, 10, 10)  # packages × subpackages × modules: 1,000 folders
RARE = "rare_needle_[0-9]+"
REGEXES = (
    ("no match", "no_such_word_[0-9]+"),
    ("rare (5 files)", RARE),
    ("in about 1% of the files (all shown)", "FIXME\\(bench\\)"),
    ("in about 5% of the files (300 shown)", "TODO\\(bench\\)"),
    ("in every file (300 shown)", "^import os$"),
)

def source_file(rng: random.Random, marks: list[str]) -> str:
    """A module as bench/checkpoints.py makes them, with `marks` as comments in its functions."""
    lines = checkpoints.source_file(rng).splitlines()
    for mark in marks:
        lines.insert(rng.randint(4, len(lines)), f"    # {mark}")
    return "\n".join(lines) + "\n"


def make_workspace(root: Path, outside: Path, files: int, seed: int = 5) -> list[str]:
    """The tree described above; returns the links that lead outside (workspace-relative)."""
    rng = random.Random(seed)
    folders = [root / f"pkg{a}" / f"sub{b}" / f"mod{c}" for a in range(FOLDERS[0]) for b in range(FOLDERS[1])
               for c in range(FOLDERS[2])]
    per_folder = max(1, files // len(folders))
    rare = {0, *rng.sample(range(1, per_folder * len(folders)), 4)}  # one beside the links in the first folder
    n = 0
    for folder in folders:
        folder.mkdir(parents=True)
        for f in range(per_folder):
            marks = ["TODO(bench): check this"] if rng.random() < 0.05 else []
            marks += ["FIXME(bench): and this"] if rng.random() < 0.01 else []
            if n in rare:
                marks.append(f"rare_needle_{n}")
            (folder / f"{rng.choice(checkpoints.WORDS)}_{f:02d}.py").write_text(source_file(rng, marks))
            n += 1
    (root / ".gitignore").write_text("build/\n*.log\n")
    for i in range(1000):
        built = root / "build" / f"out{i // 100}" / f"gen{i % 100:02d}.py"
        built.parent.mkdir(parents=True, exist_ok=True)
        built.write_text(f"import os\n# rare_needle_{i} in an ignored file\n")
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.py").write_text("import os\n# rare_needle_0 outside\n")
    (outside / "dir" / "hidden.py").write_text("import os\n# rare_needle_1 outside\n")
    first, quiet = folders[0], folders[-1]
    os.symlink(first / sorted(os.listdir(first))[0], first / "alias.py")  # inside
    os.symlink(folders[1], first / "subalias")  # inside
    links = {first / "secret.py": outside / "secret.py", first / "outdir": outside / "dir",
             quiet / "far.py": outside / "secret.py"}
    for link, to in links.items():
        os.symlink(to, link)
    return sorted(link.relative_to(root).as_posix() for link in links)


def median_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


async def measure(ws: Workspace, regex: str, rounds: int) -> tuple[float, float, str]:
    """Raw ripgrep's median and the tool's (ms), in alternating order; and the tool's result."""
    baseline = [rg_binary(), *RG_ARGS, regex, "--", "."]
    target = ws.resolve(".")
    times: dict[str, list[float]] = {"baseline": [], "modus": []}
    result = ""
    for i in range(rounds + 1):  # round 0 warms the disk cache and the interpreter: not counted
        for name in ("baseline", "modus") if i % 2 == 0 else ("modus", "baseline"):
            t0 = time.perf_counter()
            if name == "baseline":
                subprocess.run(baseline, cwd=ws.root, capture_output=True)
            else:
                result = await search(ws, target, regex)
            if i:
                times[name].append(time.perf_counter() - t0)
    return median_ms(times["baseline"]), median_ms(times["modus"]), result


async def run(args: argparse.Namespace, rounds: int) -> int:
    with tempfile.TemporaryDirectory(prefix="modus-bench-search-") as tmp:
        root, outside = Path(tmp) / "workspace", Path(tmp) / "outside"
        root.mkdir()
        links = make_workspace(root, outside, args.files)
        ws = Workspace(root)
        searched = len(subprocess.run([rg_binary(), "--files", "--no-require-git"], cwd=root, capture_output=True,
                                      text=True).stdout.splitlines())
        version = subprocess.run([rg_binary(), "--version"], capture_output=True, text=True).stdout.split()[1]
        print(f"search_files on a workspace of {searched:,} searched files in {FOLDERS[0] * FOLDERS[1] * FOLDERS[2]:,} "
              f"folders (+1,000 ignored, 5 links), ripgrep {version}, {os.cpu_count()} cores, median of {rounds}\n")
        print("| measure | baseline | Modus | ratio | target |")
        print("|---|---:|---:|---:|---|")
        failed = False
        notes = {}
        for name, regex in REGEXES:
            base, modus, result = await measure(ws, regex, rounds)
            # What the tool found is what it must find: the matches, and the links that lead outside named.
            assert "outside" not in result.split("\n\n[skipped")[0], "a link leading outside was searched"
            if regex == RARE:
                assert result.startswith("Found 5 results."), result[:200]
            notes[name] = [link for link in links if link in result]
            ratio = modus / base
            ok = ratio <= TARGET_RATIO
            failed |= not ok
            print(f"| search_files, {name}, vs raw rg | {base:.2f} ms | {modus:.2f} ms | {ratio:.2f}× | "
                  f"≤ {TARGET_RATIO}× {'ok' if ok else 'MISSED'} |")
        print(f"\nThe links that lead outside ({', '.join(links)}), named in the note:")
        for name, named in notes.items():
            print(f"- {name}: {', '.join(named) or 'none'}")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test of the harness)")
    parser.add_argument("--files", type=int, default=20_000)
    args = parser.parse_args()
    if rg_binary() is None:
        print("search: ripgrep (rg) is not installed, nothing measured")
        return 1
    return anyio.run(run, args, 5 if args.quick else 21)


if __name__ == "__main__":
    sys.exit(main())
