"""Benchmark of checkpoints (issue 13, item 1): the cost of a checkpoint on a 10,000-file
workspace where one file changed, against the baseline of the same run: plain git on the same
tree.

The workspace is a git repository (its work committed) of 10,000 small text files (source-like
lines, 200 B to 6 KB) in nested folders (20 packages × 10 modules × 50 files), with a .gitignore
and an ignored folder of 2,000 files (node_modules-like). Measured, in this order:

- the first checkpoint (the shadow repository made, every file hashed): reported;
- then rounds of: one file changed (a different one each round), then, in alternating order,
  the baseline `git status --porcelain` in the workspace's own repository and a checkpoint
  (`ShadowRepo.take`); median over the rounds. Also `git add -A` + `git commit` in the same
  repository (what a checkpoint with plain git commands costs), as a second baseline;
- a checkpoint when nothing changed; `diff` and the restore plan against the checkpoint before.

git runs with no global or system config for the baselines too. Target: the checkpoint after
one change < 150 ms (median); exit status 1 when missed.

Usage: python bench/checkpoints.py [--quick] [--files N]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # this tree's server, not an installed copy

from server.checkpoints import ShadowRepo  # noqa: E402

TARGET_MS = 150.0

WORDS = ["cache", "login", "parser", "router", "session", "schema", "upload", "billing", "search", "queue",
         "token", "record", "handler", "client", "server", "config", "result", "value", "buffer", "stream"]


def source_file(rng: random.Random) -> str:
    lines = [f'"""The {rng.choice(WORDS)} {rng.choice(WORDS)} module."""', "", "import os", ""]
    for _ in range(rng.randint(1, 12)):
        name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"
        lines += [f"def {name}({rng.choice(WORDS)}, {rng.choice(WORDS)}=None):",
                  f"    # {' '.join(rng.choices(WORDS, k=8))}",
                  f"    return {rng.choice(WORDS)} or {rng.randint(0, 999)}", ""]
    return "\n".join(lines) + "\n"


def make_workspace(root: Path, files: int, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    paths = []
    packages, modules = 20, 10
    per_folder = max(1, files // (packages * modules))
    for p in range(packages):
        for m in range(modules):
            folder = root / f"pkg{p:02d}" / f"mod{m:02d}"
            folder.mkdir(parents=True)
            for f in range(per_folder):
                path = folder / f"{rng.choice(WORDS)}_{f:03d}.py"
                path.write_text(source_file(rng))
                paths.append(path)
    (root / ".gitignore").write_text("node_modules/\n*.pyc\n")
    for i in range(2000):
        dep = root / "node_modules" / f"dep{i // 100:02d}" / f"index{i % 100:02d}.js"
        dep.parent.mkdir(parents=True, exist_ok=True)
        dep.write_text("module.exports = {};\n")
    return paths


def plain_git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@x", LC_ALL="C")
    return env


def timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test of the harness)")
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args()
    rounds = 5 if args.quick else 21
    if shutil.which("git") is None:
        print("checkpoints: git is not on PATH, nothing measured")
        return 1
    env = plain_git_env()

    with tempfile.TemporaryDirectory(prefix="modus-bench-ckpt-") as tmp:
        ws, state = Path(tmp) / "workspace", Path(tmp) / "state"
        ws.mkdir()
        paths = make_workspace(ws, args.files)
        git = lambda *a: subprocess.run(["git", *a], cwd=ws, env=env, capture_output=True, check=True)  # noqa: E731
        git("init", "-q")
        git("config", "gc.auto", "0")  # no gc detached in the background while we measure
        git("config", "maintenance.auto", "false")
        git("add", "-A")
        git("commit", "-qm", "the work so far")
        git("status", "--porcelain")  # the user's index refreshed, as in a repository in use
        version = git("--version").stdout.decode().split()[-1]

        repo = ShadowRepo(ws, state)
        assert repo.available(), repo.reason
        first_s, first = timed(lambda: repo.take("first"))
        held = len(repo.files_at(first.id, ["pkg00"]))  # a sample: one package's files are held
        assert held == len([p for p in paths if p.parts[-3] == "pkg00"]), held
        repo.take("settle")  # a second pass: racily clean entries hashed again once

        rng = random.Random(11)
        changed = rng.sample(paths, rounds * 2 + 1)
        status, take, add_commit = [], [], []
        for i in range(rounds):
            path = changed[i]
            path.write_text(path.read_text() + f"# edit {i}\n")
            runs = [("status", lambda: git("status", "--porcelain")), ("take", lambda: repo.take(f"round {i}"))]
            for name, fn in (runs if i % 2 == 0 else runs[::-1]):
                seconds, result = timed(fn)
                (status if name == "status" else take).append(seconds)
                if name == "take":
                    assert result.changed, "the change was not seen"
        for i in range(rounds):  # plain git's own checkpoint: add everything, commit
            path = changed[rounds + i]
            path.write_text(path.read_text() + f"# edit {i}\n")
            seconds, _ = timed(lambda: (git("add", "-A"), git("commit", "-qm", f"round {i}")))
            add_commit.append(seconds)

        unchanged = [timed(lambda: repo.take("nothing changed"))[0] for _ in range(5)]
        before = repo.list(limit=1)[0].id
        path = changed[-1]
        path.write_text(path.read_text() + "# one more\n")
        diff_s, diffs = timed(lambda: repo.diff(before))
        plan_s, plan = timed(lambda: repo.restore(before))
        list_s, listed = timed(lambda: repo.list())
        assert len(diffs) == 1 and len(plan) == 1, (diffs, plan)

    ms = lambda s: f"{s * 1000:8.2f} ms"  # noqa: E731
    med = statistics.median
    status_ms, take_ms = med(status), med(take)
    ok = take_ms * 1000 < TARGET_MS
    print(f"checkpoints on a workspace of {len(paths):,} files (+2,000 ignored), git {version}, "
          f"{rounds} rounds, one file changed in each\n")
    print(f"{'measure':<58} {'baseline':>11} {'modus':>11} {'ratio':>7}  target")
    print(f"{'first checkpoint (shadow repository made, all hashed)':<58} {'':>11} {ms(first_s)}")
    print(f"{'checkpoint, one file changed, median vs git status':<58} {ms(status_ms)} {ms(take_ms)} "
          f"{take_ms / status_ms:6.2f}×  < {TARGET_MS:.0f} ms {'ok' if ok else 'MISSED'}")
    print(f"{'checkpoint, one file changed, p90':<58} {ms(sorted(status)[int(0.9 * (rounds - 1))])} "
          f"{ms(sorted(take)[int(0.9 * (rounds - 1))])}")
    print(f"{'checkpoint vs git add -A + git commit (median)':<58} {ms(med(add_commit))} {ms(take_ms)} "
          f"{take_ms / med(add_commit):6.2f}×")
    print(f"{'checkpoint, nothing changed (median of 5)':<58} {ms(status_ms)} {ms(med(unchanged))} "
          f"{med(unchanged) / status_ms:6.2f}×")
    print(f"{'diff since the last checkpoint (one file changed)':<58} {ms(status_ms)} {ms(diff_s)} {diff_s / status_ms:6.2f}×")
    print(f"{'restore plan to the last checkpoint':<58} {ms(status_ms)} {ms(plan_s)} {plan_s / status_ms:6.2f}×")
    print(f"{f'list ({len(listed)} checkpoints)':<58} {'':>11} {ms(list_s)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
