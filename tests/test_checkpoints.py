"""The checkpoint engine (server/checkpoints) against the real git binary, in temporary folders."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from server.checkpoints import CheckpointError, CheckpointsUnavailable, ShadowRepo
from server.checkpoints.shadow import MiB

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git binary")


def write(root: Path, rel: str, content: str | bytes = "", mode: int | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    if mode is not None:
        path.chmod(mode)
    return path


def tree(root: Path, skip: tuple[str, ...] = (".modus",)) -> dict[str, str]:
    """Every entry under root (symlinks not followed): file → its content, link → '-> target'."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.relpath(os.path.join(folder, d), root) not in skip]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            out[rel] = "-> " + os.readlink(path) if path.is_symlink() else path.read_bytes().decode("utf-8", "replace")
    return out


def user_git(root: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="u", GIT_AUTHOR_EMAIL="u@x",
               GIT_COMMITTER_NAME="u", GIT_COMMITTER_EMAIL="u@x")
    return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True).stdout


def fingerprint(folder: Path) -> dict[str, tuple[str, int]]:
    """Each file under folder: (sha256 of its bytes, mtime in ns)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(folder).as_posix()] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    return out


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "my work – ü 名前"  # spaces and unicode in the workspace path
    root.mkdir()
    return root


@pytest.fixture
def repo(ws: Path, tmp_path: Path) -> ShadowRepo:
    shadow = ShadowRepo(ws, tmp_path / "state")
    assert shadow.available(), shadow.reason
    return shadow


def test_take_diff_restore_round_trip(ws: Path, repo: ShadowRepo):
    write(ws, "src/app.py", "print('hi')\n")
    write(ws, "README.md", "# app\n")
    write(ws, "docs/old.md", "old\n")
    first = repo.take("before the edit", meta={"conversationId": "c1", "toolCallId": "t1"})
    assert first.changed and first.parent is None and first.skipped == ()
    before = tree(ws)

    write(ws, "src/app.py", "print('hello')\n")
    (ws / "docs" / "old.md").unlink()
    write(ws, "src/new/module.py", "x = 1\n")

    diffs = {d.path: d for d in repo.diff(first.id)}
    assert {p: d.status for p, d in diffs.items()} == {
        "src/app.py": "modified", "docs/old.md": "deleted", "src/new/module.py": "added",
    }
    assert "-print('hi')\n+print('hello')" in diffs["src/app.py"].text
    assert diffs["src/app.py"].text.startswith("diff --git a/src/app.py b/src/app.py\n")
    assert "+++ /dev/null" in diffs["docs/old.md"].text and "--- /dev/null" in diffs["src/new/module.py"].text

    second = repo.take("after the edit")
    assert second.parent == first.id and second.changed

    plan = {c.path: c for c in repo.restore(first.id)}
    assert tree(ws) != before  # the plan writes nothing
    assert {p: c.action for p, c in plan.items()} == {
        "src/app.py": "modify", "docs/old.md": "create", "src/new/module.py": "delete",
    }
    assert (plan["src/app.py"].old_text, plan["src/app.py"].new_text) == ("print('hello')\n", "print('hi')\n")
    assert plan["docs/old.md"].new_text == "old\n" and plan["docs/old.md"].old_text is None
    assert plan["src/new/module.py"].old_text == "x = 1\n" and plan["src/new/module.py"].new_text is None
    assert all(c.via_editor and not c.binary for c in plan.values())

    done = repo.restore_on_disk(first.id)
    assert [c.error for c in done] == [None, None, None]
    assert tree(ws) == before
    assert not (ws / "src" / "new").exists()  # the folder it emptied is gone too
    assert repo.diff(first.id) == []
    assert repo.restore(first.id) == []


def test_take_when_nothing_changed_is_a_new_checkpoint_marked_unchanged(ws: Path, repo: ShadowRepo):
    write(ws, "a.txt", "a\n")
    first = repo.take("one")
    again = repo.take("two")
    assert again.id != first.id and again.parent == first.id and not again.changed
    write(ws, "a.txt", "b\n")
    third = repo.take("three")
    assert third.changed
    assert [(c.message, c.changed) for c in repo.list()] == [("three", True), ("two", False), ("one", True)]


def test_list_newest_first_with_meta_filter_and_limit(ws: Path, repo: ShadowRepo):
    assert repo.list() == []
    ids = []
    for i in range(5):
        write(ws, "f.txt", f"{i}\n")
        ids.append(repo.take(f"step {i}\nsecond line", meta={"conversationId": "c1" if i % 2 else "c2"}).id)
    listed = repo.list()
    assert [c.id for c in listed] == ids[::-1]
    assert listed[0].message == "step 4\nsecond line" and listed[0].meta == {"conversationId": "c2"}
    assert listed[0].time >= listed[-1].time > 0
    assert [c.id for c in repo.list(meta={"conversationId": "c1"})] == [ids[3], ids[1]]
    assert [c.id for c in repo.list(limit=2)] == [ids[4], ids[3]]
    assert repo.list(limit=2)[1].changed  # its parent's tree was read to tell
    assert repo.get(ids[2][:10]).message == "step 2\nsecond line"


def test_gitignore_and_info_exclude_are_honoured(ws: Path, repo: ShadowRepo):
    user_git(ws, "init", "-q")
    write(ws, ".gitignore", "*.log\nbuild/\n!keep.log\n")
    write(ws, "lib/.gitignore", "secret.txt\n")
    write(ws, ".git/info/exclude", "/local-notes.md\n")
    write(ws, "app.log", "noise\n")
    write(ws, "keep.log", "kept\n")
    write(ws, "build/out.js", "bundle\n")
    write(ws, "lib/secret.txt", "token\n")
    write(ws, "lib/code.py", "pass\n")
    write(ws, "local-notes.md", "mine\n")
    first = repo.take("start")
    assert set(repo.files_at(first.id)) == {".gitignore", "lib/.gitignore", "keep.log", "lib/code.py"}

    # ignored files created or changed since are neither diffed nor deleted by a restore
    write(ws, "new.log", "more noise\n")
    write(ws, "build/out.js", "bundle 2\n")
    write(ws, "local-notes.md", "mine, changed\n")
    assert repo.diff(first.id) == []
    repo.restore_on_disk(first.id)
    assert (ws / "new.log").exists() and (ws / "build/out.js").read_text() == "bundle 2\n"
    assert (ws / "local-notes.md").read_text() == "mine, changed\n"


def test_state_folders_in_the_workspace_are_never_held(ws: Path, tmp_path: Path):
    # the shadow repository in the user's state folder; the session's (stateDir, .modus/state) kept out
    repo = ShadowRepo(ws, tmp_path / "user state", keep_out=[ws / "my state"])
    write(ws, "a.txt", "a\n")
    write(ws, ".modus/settings.json", "{}\n")
    write(ws, ".modus/state/modus.sqlite3", b"SQLite format 3\0")
    write(ws, "my state/modus.sqlite3", b"SQLite format 3\0")
    checkpoint = repo.take("one")
    assert set(repo.files_at(checkpoint.id)) == {"a.txt", ".modus/settings.json"}
    assert repo.git_dir == tmp_path / "user state" / "checkpoints" / repo.dir.name / "git"
    assert not (ws / ".modus" / "state" / "checkpoints").exists()
    write(ws, ".modus/state/modus.sqlite3", b"SQLite format 3\0more")
    write(ws, "my state/modus.sqlite3", b"SQLite format 3\0more")
    assert repo.diff(checkpoint.id) == []


def test_the_users_state_folder_in_the_workspace_is_never_held(ws: Path):
    # a workspace that is the home folder holds the user's state folder
    repo = ShadowRepo(ws, ws / ".local" / "state" / "modus")
    write(ws, "a.txt", "a\n")
    checkpoint = repo.take("one")
    assert set(repo.files_at(checkpoint.id)) == {"a.txt"} and repo.git_dir.is_dir()
    write(ws, "b.txt", "b\n")
    assert [d.path for d in repo.diff(checkpoint.id)] == ["b.txt"]


def test_large_and_binary_files_are_skipped_and_reported(ws: Path, tmp_path: Path):
    repo = ShadowRepo(ws, tmp_path / "state", max_file_bytes=1 * MiB, max_binary_bytes=64 * 1024)
    write(ws, "big.txt", "x" * (1 * MiB + 1))
    write(ws, "video.bin", b"\0\1\2" * 40_000)  # 120 KB of binary: over its cap
    write(ws, "icon.png", b"\x89PNG\r\n\x1a\n\0\0" + bytes(range(256)) * 8)  # small binary: kept
    write(ws, "text.txt", "y" * 100_000)  # text over the binary cap: kept
    checkpoint = repo.take("one")
    reasons = {s.path: s.reason for s in checkpoint.skipped}
    assert set(reasons) == {"big.txt", "video.bin"}
    assert reasons["big.txt"].startswith("too large: 1.0 MiB") and "over 1 MiB" in reasons["big.txt"]
    assert reasons["video.bin"].startswith("binary, 117.2 KiB") and "over 64 KiB" in reasons["video.bin"]
    assert set(repo.files_at(checkpoint.id)) == {"icon.png", "text.txt"}
    assert repo.list()[0].skipped == checkpoint.skipped  # kept with the checkpoint

    # a file skipped at the checkpoint is not deleted by restoring it; the small binary is restored on disk only
    write(ws, "icon.png", b"\0changed")
    (ws / "big.txt").unlink()
    plan = {c.path: c for c in repo.restore(checkpoint.id)}
    assert set(plan) == {"icon.png"} and plan["icon.png"].binary and not plan["icon.png"].via_editor
    assert plan["icon.png"].old_text is None and plan["icon.png"].new_text is None
    repo.restore_on_disk(checkpoint.id)
    assert (ws / "icon.png").read_bytes().startswith(b"\x89PNG")
    assert (ws / "video.bin").exists()


def test_a_file_that_grows_over_the_cap_is_left_alone_and_said(ws: Path, tmp_path: Path):
    repo = ShadowRepo(ws, tmp_path / "state", max_file_bytes=1000)
    write(ws, "data.csv", "a,b\n")
    first = repo.take("small")
    write(ws, "data.csv", "a,b\n" * 500)
    second = repo.take("big")
    assert [s.path for s in second.skipped] == ["data.csv"]
    diffs = repo.diff(first.id)
    assert [(d.path, d.status, d.binary) for d in diffs] == [("data.csv", "modified", True)]
    assert "not compared" in diffs[0].text and "too large" in diffs[0].text
    # restoring the first brings the small one back (on disk only: the big one was never read)
    plan = repo.restore(first.id)
    assert [(c.path, c.action, c.via_editor) for c in plan] == [("data.csv", "modify", False)]
    repo.restore_on_disk(first.id)
    assert (ws / "data.csv").read_text() == "a,b\n"
    # restoring the second (where it was skipped) does not delete it
    assert repo.restore(second.id) == []


def test_nested_repositories_are_held_as_plain_files(ws: Path, repo: ShadowRepo):
    write(ws, "main.py", "main\n")
    nested = ws / "vendor" / "lib"
    write(nested, "lib.py", "lib\n")
    write(nested, ".gitignore", "*.tmp\n")
    write(nested, "scratch.tmp", "tmp\n")
    user_git(nested, "init", "-q")
    user_git(nested, "add", "-A")
    user_git(nested, "commit", "-qm", "nested")
    write(nested, "untracked.py", "new in nested\n")
    deeper = nested / "deeper"  # a repository with no commit yet, in the nested one
    write(deeper, "d.txt", "d\n")
    user_git(deeper, "init", "-q")
    # a submodule-like checkout: .git is a file pointing to its repository elsewhere
    sub = ws / "modules" / "sub"
    write(sub, "s.txt", "s\n")
    user_git(ws, "init", "-q", "--separate-git-dir", str(ws.parent / "elsewhere.git"), str(sub))
    assert (sub / ".git").is_file()
    nested_git = fingerprint(nested / ".git")

    checkpoint = repo.take("with nested")
    files = repo.files_at(checkpoint.id)
    assert set(files) == {
        "main.py", "vendor/lib/lib.py", "vendor/lib/.gitignore", "vendor/lib/untracked.py",
        "vendor/lib/deeper/d.txt", "modules/sub/s.txt",
    }
    shadow_git = ["git", "--git-dir", str(repo.git_dir), "ls-tree", "-r", checkpoint.id]
    assert " commit " not in subprocess.run(shadow_git, capture_output=True, text=True, check=True).stdout  # no gitlink
    assert repo.take("again").changed is False  # stable: the nested folders stay folders

    write(nested, "lib.py", "lib changed\n")
    (deeper / "d.txt").unlink()
    assert {d.path: d.status for d in repo.diff(checkpoint.id)} == {"vendor/lib/lib.py": "modified", "vendor/lib/deeper/d.txt": "deleted"}
    repo.restore_on_disk(checkpoint.id)
    assert (nested / "lib.py").read_text() == "lib\n" and (deeper / "d.txt").read_text() == "d\n"
    assert fingerprint(nested / ".git") == nested_git
    assert user_git(nested, "status", "--porcelain") == "?? deeper/\n?? untracked.py\n"


def test_the_users_own_git_is_untouched(ws: Path, repo: ShadowRepo):
    write(ws, "a.txt", "a\n")
    write(ws, "b.txt", "b\n")
    user_git(ws, "init", "-q")
    user_git(ws, "add", "a.txt")
    user_git(ws, "commit", "-qm", "user's commit")
    write(ws, "a.txt", "a, edited by the user\n")
    status = user_git(ws, "status", "--porcelain")  # (which may write the user's index: before the fingerprint)
    before = fingerprint(ws / ".git")

    first = repo.take("one")
    assert ".git" not in {p.split("/")[0] for p in repo.files_at(first.id)}
    write(ws, "c.txt", "c\n")
    repo.take("two")
    repo.diff(first.id)
    repo.restore_on_disk(first.id)
    repo.list()

    assert fingerprint(ws / ".git") == before
    assert user_git(ws, "status", "--porcelain") == status
    assert user_git(ws, "log", "--format=%s") == "user's commit\n"


def test_restore_deletes_files_created_since(ws: Path, repo: ShadowRepo):
    write(ws, "keep.txt", "keep\n")
    checkpoint = repo.take("one")
    write(ws, "made/by/agent.py", "x\n")
    write(ws, "other.txt", "o\n")
    (ws / "made" / "empty").mkdir()  # an empty folder is no file: it stays, with its parent
    done = repo.restore_on_disk(checkpoint.id)
    assert sorted((c.path, c.action) for c in done) == [("made/by/agent.py", "delete"), ("other.txt", "delete")]
    assert tree(ws) == {"keep.txt": "keep\n"}
    assert not (ws / "made" / "by").exists() and (ws / "made" / "empty").is_dir()


def test_restore_of_a_deleted_file_and_of_one_deleted_and_made_again(ws: Path, repo: ShadowRepo):
    write(ws, "gone.txt", "was here\n")
    write(ws, "again.txt", "first\n")
    checkpoint = repo.take("one")
    (ws / "gone.txt").unlink()
    (ws / "again.txt").unlink()
    repo.take("deleted")
    write(ws, "again.txt", "second\n")
    assert {d.path: d.status for d in repo.diff(checkpoint.id)} == {"gone.txt": "deleted", "again.txt": "modified"}
    repo.restore_on_disk(checkpoint.id)
    assert (ws / "gone.txt").read_text() == "was here\n" and (ws / "again.txt").read_text() == "first\n"


def test_executable_bit_is_kept_and_restored(ws: Path, repo: ShadowRepo):
    write(ws, "run.sh", "#!/bin/sh\necho hi\n", mode=0o755)
    write(ws, "plain.txt", "p\n", mode=0o640)
    checkpoint = repo.take("one")
    assert repo.files_at(checkpoint.id)["run.sh"].kind == "executable"
    assert repo.files_at(checkpoint.id)["plain.txt"].kind == "file"

    (ws / "run.sh").chmod(0o644)
    (ws / "plain.txt").chmod(0o750)
    (ws / "run.sh").unlink()
    write(ws, "run.sh", "#!/bin/sh\necho changed\n", mode=0o644)
    assert {d.path for d in repo.diff(checkpoint.id)} == {"run.sh", "plain.txt"}
    plan = {c.path: c for c in repo.restore(checkpoint.id)}
    assert (plan["run.sh"].old_kind, plan["run.sh"].new_kind, plan["run.sh"].via_editor) == ("file", "executable", False)
    assert (plan["plain.txt"].old_kind, plan["plain.txt"].new_kind, plan["plain.txt"].via_editor) == ("executable", "file", False)
    repo.restore_on_disk(checkpoint.id)
    assert stat.S_IMODE((ws / "run.sh").stat().st_mode) == 0o755
    assert (ws / "run.sh").read_text() == "#!/bin/sh\necho hi\n"
    assert stat.S_IMODE((ws / "plain.txt").stat().st_mode) == 0o640  # the group's r kept, no x

    (ws / "run.sh").unlink()
    repo.restore_on_disk(checkpoint.id)
    assert os.access(ws / "run.sh", os.X_OK)


def test_symlinks_are_held_as_links_and_never_followed(ws: Path, repo: ShadowRepo, tmp_path: Path):
    outside = tmp_path / "outside"
    write(outside, "secret.txt", "outside\n")
    write(ws, "real/file.txt", "in\n")
    os.symlink("real/file.txt", ws / "link.txt")
    os.symlink(str(outside), ws / "out")  # a link to a folder outside the workspace
    checkpoint = repo.take("links")
    files = repo.files_at(checkpoint.id)
    assert set(files) == {"real/file.txt", "link.txt", "out"}
    assert (files["out"].kind, files["out"].data) == ("symlink", os.fsencode(outside))
    assert files["link.txt"].text is None and files["link.txt"].data == b"real/file.txt"

    (ws / "link.txt").unlink()
    write(ws, "link.txt", "now a file\n")
    (ws / "out").unlink()
    diffs = {d.path: d for d in repo.diff(checkpoint.id)}
    assert {p: d.status for p, d in diffs.items()} == {"link.txt": "modified", "out": "deleted"}
    assert "deleted file mode 120000" in diffs["link.txt"].text and "+now a file" in diffs["link.txt"].text
    plan = {c.path: c for c in repo.restore(checkpoint.id)}
    assert (plan["link.txt"].old_kind, plan["link.txt"].new_kind, plan["link.txt"].via_editor) == ("file", "symlink", False)
    repo.restore_on_disk(checkpoint.id)
    assert os.readlink(ws / "link.txt") == "real/file.txt" and os.readlink(ws / "out") == str(outside)
    assert (outside / "secret.txt").read_text() == "outside\n"


def test_restore_never_writes_through_a_symlinked_folder(ws: Path, repo: ShadowRepo, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    write(ws, "conf/app.ini", "a=1\n")
    write(ws, ".gitignore", "conf/\n")
    write(ws, "x.txt", "x\n")
    (ws / ".gitignore").unlink()
    checkpoint = repo.take("one")
    # now conf/ is ignored and replaced by a link to a folder outside: restoring conf/app.ini
    # must not write into it
    write(ws, ".gitignore", "conf\n")
    shutil.rmtree(ws / "conf")
    os.symlink(str(outside), ws / "conf")
    done = {c.path: c for c in repo.restore_on_disk(checkpoint.id)}
    assert "symbolic link" in (done["conf/app.ini"].error or "")
    assert list(outside.iterdir()) == []
    assert not (ws / ".gitignore").exists()  # the rest was restored


def test_concurrent_takes_are_serialised(ws: Path, repo: ShadowRepo, tmp_path: Path):
    write(ws, "a.txt", "0\n")
    results, errors = [], []
    other = ShadowRepo(ws, tmp_path / "state")  # a second engine on the same workspace

    def worker(i: int) -> None:
        try:
            write(ws, f"f{i}.txt", f"{i}\n")
            results.append((other if i % 2 else repo).take(f"take {i}"))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    listed = repo.list()
    assert len(listed) == 8 and len({c.id for c in listed}) == 8
    assert [c.parent for c in listed[:-1]] == [c.id for c in listed[1:]]  # one line, none lost
    assert set(repo.files_at(listed[0].id)) == {"a.txt"} | {f"f{i}.txt" for i in range(8)}


def test_a_stale_index_lock_and_a_damaged_index_are_recovered(ws: Path, repo: ShadowRepo):
    write(ws, "a.txt", "a\n")
    first = repo.take("one")
    (repo.git_dir / "index.lock").write_text("")  # a git command killed midway
    write(ws, "a.txt", "b\n")
    assert repo.take("two").changed
    (repo.git_dir / "index").write_bytes(b"garbage, not an index")
    write(ws, "a.txt", "c\n")
    third = repo.take("three")
    assert third.changed and repo.files_at(third.id)["a.txt"].text == "c\n"
    assert [c.message for c in repo.list()] == ["three", "two", "one"] and repo.recovered is None
    assert repo.files_at(first.id)["a.txt"].text == "a\n"


def test_a_damaged_shadow_repository_is_moved_aside_and_said(ws: Path, repo: ShadowRepo):
    write(ws, "a.txt", "a\n")
    first = repo.take("one")
    (repo.git_dir / "HEAD").write_text("garbage\n")
    second = repo.take("two")
    assert second.parent is None
    assert repo.recovered and "moved to" in repo.recovered and str(repo.git_dir) in repo.recovered
    assert [c.message for c in repo.list()] == ["two"]
    with pytest.raises(CheckpointError, match="No checkpoint"):
        repo.diff(first.id)


def test_unknown_and_malformed_ids(ws: Path, repo: ShadowRepo):
    write(ws, "a.txt", "a\n")
    repo.take("one")
    with pytest.raises(CheckpointError, match="No checkpoint"):
        repo.restore("0" * 40)
    with pytest.raises(CheckpointError, match="not a checkpoint id"):
        repo.diff("--output=/tmp/x")


def test_the_users_git_setup_cannot_interfere(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    hooks = home / "hooks"
    write(hooks, "pre-commit", "#!/bin/sh\nexit 1\n", mode=0o755)
    write(hooks, "post-commit", "#!/bin/sh\ntouch \"$HOME/hook-ran\"\n", mode=0o755)
    write(home, "template/hooks/post-commit", "#!/bin/sh\ntouch \"$HOME/hook-ran\"\n", mode=0o755)
    write(home, ".gitconfig", (
        f"[core]\n\thooksPath = {hooks}\n\tautocrlf = true\n\texcludesFile = {home}/ignore\n"
        f"[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = false\n[init]\n\ttemplateDir = {home}/template\n"
        "[user]\n\tuseConfigOnly = true\n"
    ))
    write(home, "ignore", "*.txt\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "nowhere-index"))
    write(ws, "crlf.txt", b"a\r\nb\r\n")
    write(ws, ".gitattributes", "*.txt text eol=lf\n*.dat filter=lfs diff=lfs\n")
    write(ws, "blob.dat", "plain\n")
    repo = ShadowRepo(ws, tmp_path / "state")
    assert repo.available(), repo.reason
    checkpoint = repo.take("one")
    files = repo.files_at(checkpoint.id)
    assert files["crlf.txt"].data == b"a\r\nb\r\n"  # stored byte for byte
    assert files["blob.dat"].text == "plain\n"
    assert not (home / "hook-ran").exists() and not (tmp_path / "nowhere").exists()
    write(ws, "blob.dat", "changed\n")
    assert "-plain\n+changed" in repo.diff(checkpoint.id)[0].text  # no diff driver of the user's


def test_without_git_on_path_checkpoints_are_off_with_the_reason(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    repo = ShadowRepo(ws, tmp_path / "state")
    assert not repo.available()
    assert repo.reason == "Checkpoints are off: the git program was not found on PATH (install git to enable them)."
    with pytest.raises(CheckpointsUnavailable, match="git program was not found"):
        repo.take("one")
    assert not (tmp_path / "state").exists()


def test_an_unwritable_state_folder_is_a_reason(ws: Path, tmp_path: Path):
    blocker = tmp_path / "state"
    blocker.write_text("a file where the state folder should be")
    repo = ShadowRepo(ws, blocker)
    assert not repo.available()
    assert repo.reason.startswith("Checkpoints are off: the folder ") and "cannot be written" in repo.reason


def test_paths_limit_diff_files_at_and_restore(ws: Path, repo: ShadowRepo):
    write(ws, "a/one.txt", "1\n")
    write(ws, "b/two.txt", "2\n")
    checkpoint = repo.take("one")
    write(ws, "a/one.txt", "1 changed\n")
    write(ws, "b/two.txt", "2 changed\n")
    assert [d.path for d in repo.diff(checkpoint.id, paths=["a"])] == ["a/one.txt"]
    assert repo.files_at(checkpoint.id, ["b/two.txt", "missing.txt"])["missing.txt"] is None
    assert repo.files_at(checkpoint.id, ["b/two.txt"])["b/two.txt"].text == "2\n"
    repo.restore_on_disk(checkpoint.id, paths=["a/one.txt"])
    assert (ws / "a/one.txt").read_text() == "1\n" and (ws / "b/two.txt").read_text() == "2 changed\n"


def test_unusual_file_names(ws: Path, repo: ShadowRepo):
    names = ["with space.txt", "ünï cödé.md", "-dash.txt", "new\nline.txt", "quote\"s.txt", "*star?.txt", "#hash.txt"]
    for name in names:
        write(ws, f"dir x/{name}", name + "\n")
    checkpoint = repo.take("names")
    assert set(repo.files_at(checkpoint.id)) == {f"dir x/{n}" for n in names}
    for name in names:
        (ws / "dir x" / name).unlink()
    assert len(repo.diff(checkpoint.id)) == len(names)
    repo.restore_on_disk(checkpoint.id)
    assert sorted(os.listdir(ws / "dir x")) == sorted(names)


def test_binary_diff_and_non_utf8_text(ws: Path, repo: ShadowRepo):
    write(ws, "latin.txt", "caf\xe9\n".encode("latin-1"))
    write(ws, "img.bin", b"\0\1\2")
    checkpoint = repo.take("one")
    write(ws, "latin.txt", "th\xe9\n".encode("latin-1"))
    write(ws, "img.bin", b"\0\1\3")
    diffs = {d.path: d for d in repo.diff(checkpoint.id)}
    assert diffs["img.bin"].binary and "Binary files a/img.bin and b/img.bin differ" in diffs["img.bin"].text
    assert not diffs["latin.txt"].binary
    plan = {c.path: c for c in repo.restore(checkpoint.id)}
    assert plan["latin.txt"].new_text is None and not plan["latin.txt"].via_editor  # not UTF-8: on disk only
    repo.restore_on_disk(checkpoint.id, [p for p, c in plan.items() if not c.via_editor])
    assert (ws / "latin.txt").read_bytes() == "caf\xe9\n".encode("latin-1") and (ws / "img.bin").read_bytes() == b"\0\1\2"


def test_a_file_becoming_a_folder_and_back(ws: Path, repo: ShadowRepo):
    write(ws, "thing", "a file\n")
    write(ws, "box/inner.txt", "inside\n")
    first = repo.take("one")
    (ws / "thing").unlink()
    write(ws, "thing/now.txt", "a folder now\n")
    shutil.rmtree(ws / "box")
    write(ws, "box", "a file now\n")
    second = repo.take("two")
    assert set(repo.files_at(second.id)) == {"thing/now.txt", "box"}
    repo.restore_on_disk(first.id)
    assert tree(ws) == {"thing": "a file\n", "box/inner.txt": "inside\n"}
    repo.restore_on_disk(second.id)
    assert tree(ws) == {"thing/now.txt": "a folder now\n", "box": "a file now\n"}


def test_an_empty_workspace_and_compact(ws: Path, repo: ShadowRepo):
    empty = repo.take("nothing yet")
    assert repo.files_at(empty.id) == {}
    write(ws, "a.txt", "a\n")
    assert [d.status for d in repo.diff(empty.id)] == ["added"]
    repo.take("one")
    repo.compact()
    assert [c.message for c in repo.list()] == ["one", "nothing yet"]
    repo.restore_on_disk(empty.id)
    assert tree(ws) == {}


def test_a_linked_worktree_uses_its_repositorys_info_exclude(tmp_path: Path):
    main = tmp_path / "main repo"
    write(main, "a.txt", "a\n")
    user_git(main, "init", "-q")
    user_git(main, "add", "a.txt")
    user_git(main, "commit", "-qm", "one")
    write(main, ".git/info/exclude", "*.local\n")
    linked = tmp_path / "linked ü"
    user_git(main, "worktree", "add", "-q", "--detach", str(linked))
    assert (linked / ".git").is_file()
    write(linked, "notes.local", "mine\n")
    write(linked, "b.txt", "b\n")
    repo = ShadowRepo(linked, tmp_path / "state")
    assert set(repo.files_at(repo.take("one").id)) == {"a.txt", "b.txt"}


def test_takes_from_several_processes_are_serialised(ws: Path, repo: ShadowRepo, tmp_path: Path):
    write(ws, "a.txt", "a\n")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from server.checkpoints import ShadowRepo\n"
        "ws, state, n = Path(sys.argv[1]), sys.argv[2], sys.argv[3]\n"
        "repo = ShadowRepo(ws, state)\n"
        "for i in range(3):\n"
        "    (ws / f'p{n}-{i}.txt').write_text(str(i))\n"
        "    repo.take(f'process {n} take {i}')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(ws), str(tmp_path / "state"), str(n)], env=env,
                              stderr=subprocess.PIPE) for n in range(3)]
    for i in range(3):
        repo.take(f"here {i}")
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read().decode()
    listed = repo.list()
    assert len(listed) == 12
    assert [c.parent for c in listed[:-1]] == [c.id for c in listed[1:]]
    assert {f"p{n}-{i}.txt" for n in range(3) for i in range(3)} <= set(repo.files_at(listed[0].id))


def test_a_huge_or_odd_dot_git_file_of_the_workspace_is_not_read_whole(ws: Path, repo: ShadowRepo):
    write(ws, "a.txt", "a\n")
    (ws / ".git").write_bytes(b"gitdir: " + b"x" * (8 * 1024 * 1024))  # a repository's 8 MiB trap
    assert repo._workspace_exclude_file() is None
    checkpoint = repo.take("with an odd .git file")
    assert repo.files_at(checkpoint.id, ["a.txt"])["a.txt"].text == "a\n"  # the checkpoint still holds the files


# ---------------------------------------------------------------------- untrusted input: the shadow's own config

#: A hostile value for each command-valued key of git's config that a command of the engine
#: could read, written into the shadow repository's own config (as a repository could ship it
#: when the shadow lived at a predictable path in the workspace, or an edit could write it):
#: (id, config text, the workspace's .gitattributes). `{run}` is a script that leaves a marker.
HOSTILE_CONFIG = [
    ("core_fsmonitor", "[core]\n\tfsmonitor = {run}\n", None),
    ("core_hooks_path", "[core]\n\thooksPath = {hooks}\n", None),
    ("hooks_in_the_shadows_own_hooks_folder", "", None),  # $GIT_DIR/hooks: git's default hooksPath
    ("include_path", "[include]\n\tpath = {included}\n", None),
    ("include_if", "[includeIf \"gitdir:/\"]\n\tpath = {included}\n", None),
    ("diff_external", "[diff]\n\texternal = {run}\n", None),
    ("diff_driver_command_and_textconv", "[diff \"evil\"]\n\tcommand = {run}\n\ttextconv = {run}\n", "* diff=evil\n"),
    ("diff_driver_by_attributes_file",
     "[core]\n\tattributesFile = {attributes}\n[diff \"evil\"]\n\tcommand = {run}\n\ttextconv = {run}\n", None),
    ("filter_clean_smudge", "[filter \"evil\"]\n\tclean = {run}\n\tsmudge = {run}\n", "* filter=evil\n"),
    ("filter_process", "[filter \"evil\"]\n\tprocess = {run}\n", "* filter=evil\n"),
    ("filter_by_attributes_file", "[core]\n\tattributesFile = {attributes}\n[filter \"evil\"]\n\tclean = {run}\n", None),
    ("gpg_program", "[commit]\n\tgpgSign = true\n[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {run}\n", None),
    ("pager_editor_askpass", "[core]\n\tpager = {run}\n\teditor = {run}\n\taskPass = {run}\n[pager]\n\tlog = {run}\n"
     "[sequence]\n\teditor = {run}\n[credential]\n\thelper = !{run}\n", None),
    # a promisor remote: git fetches an object it lacks from it (a checkpoint id of 40 digits)
    ("promisor_over_ssh_command", "[core]\n\tsshCommand = {run}\n[remote \"x\"]\n\turl = ssh://example.invalid/r\n"
     "\tpromisor = true\n", None),
    ("promisor_over_ext", "[protocol \"ext\"]\n\tallow = always\n[remote \"x\"]\n\turl = ext::{run} %S\n\tpromisor = true\n",
     None),
    ("promisor_upload_pack", "[protocol]\n\tallow = always\n[remote \"x\"]\n\turl = {folder}\n\tuploadpack = {run}\n"
     "\tpromisor = true\n", None),
]


@pytest.mark.parametrize("config, attributes", [row[1:] for row in HOSTILE_CONFIG], ids=[row[0] for row in HOSTILE_CONFIG])
def test_untrusted_shadow_config_runs_nothing(ws: Path, repo: ShadowRepo, tmp_path: Path, config: str, attributes: str | None):
    marker = tmp_path / "it ran"
    run = write(tmp_path, "evil/run.sh", f"#!/bin/sh\necho \"$0 $*\" >> '{marker}'\n", mode=0o755)
    hooks = tmp_path / "evil" / "hooks"
    for name in ("post-index-change", "reference-transaction", "pre-auto-gc", "post-commit", "post-checkout"):
        write(hooks, name, run.read_text(), mode=0o755)
        write(repo.git_dir, f"hooks/{name}", run.read_text(), mode=0o755)
    write(tmp_path, "evil/included", f"[core]\n\tfsmonitor = {run}\n")
    write(tmp_path, "evil/attributes", "* diff=evil filter=evil\n")
    write(ws, "a.txt", "a\n")
    write(ws, "b.dat", "b\n")
    first = repo.take("one")
    if attributes:
        write(ws, ".gitattributes", attributes)
    with open(repo.git_dir / "config", "a", encoding="utf-8") as shadow_config:
        shadow_config.write(config.format(run=run, hooks=hooks, included=tmp_path / "evil/included",
                                          attributes=tmp_path / "evil/attributes", folder=tmp_path / "evil"))
    write(ws, "a.txt", "a, changed\n")
    write(ws, "c.txt", "new\n")

    second = repo.take("two")
    assert second.changed
    assert {d.path for d in repo.diff(first.id)} >= {"a.txt", "c.txt"}
    assert {c.path for c in repo.restore(first.id)} >= {"a.txt", "c.txt"}
    with pytest.raises(CheckpointError, match="No checkpoint"):
        repo.get("1" * 40)  # an object the shadow repository lacks
    repo.restore_on_disk(first.id)
    repo.list()
    repo.compact()
    assert (ws / "a.txt").read_text() == "a\n"
    assert not marker.exists(), marker.read_text()


# ---------------------------------------------------------------------- untrusted input: FIFOs git would open


def fifo(root: Path, rel: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def quick_take(repo: ShadowRepo, message: str, seconds: float = 5.0):
    """A take that must end within `seconds` (git's open() of a FIFO would wait forever)."""
    started = time.monotonic()
    checkpoint = repo.take(message)
    assert time.monotonic() - started < seconds
    return checkpoint


@pytest.fixture
def impatient(ws: Path, tmp_path: Path) -> ShadowRepo:
    """A shadow repository whose git commands are stopped after 20 s (not 120: a test that fails fails sooner)."""
    shadow = ShadowRepo(ws, tmp_path / "state", timeout=20)
    assert shadow.available(), shadow.reason
    return shadow


def test_untrusted_fifo_gitignore_in_a_subfolder_leaves_that_folder_out(ws: Path, impatient: ShadowRepo):
    repo = impatient
    write(ws, "a.txt", "a\n")
    write(ws, "vendor/lib.py", "lib\n")
    first = repo.take("one")
    fifo(ws, "vendor/.gitignore")
    write(ws, "vendor/new.py", "new\n")
    write(ws, "a.txt", "a, changed\n")

    second = quick_take(repo, "two")
    [left_out] = [s for s in second.skipped if s.path == "vendor/"]
    assert "vendor/.gitignore is a FIFO" in left_out.reason and "git would wait forever" in left_out.reason
    assert set(repo.files_at(second.id)) == {"a.txt"}
    diffs = {d.path: d for d in repo.diff(first.id)}
    assert diffs["a.txt"].status == "modified"
    assert diffs["vendor/lib.py"].status == "modified"  # not "deleted": not compared
    assert "not compared, its folder vendor/ is now left out of checkpoints" in diffs["vendor/lib.py"].text
    assert "vendor/new.py" not in diffs
    assert quick_take(repo, "three").skipped == second.skipped  # the folder stays out while its .gitignore is a FIFO

    (ws / "vendor" / ".gitignore").unlink()
    back = quick_take(repo, "four")
    assert back.skipped == () and set(repo.files_at(back.id)) == {"a.txt", "vendor/lib.py", "vendor/new.py"}
    done = repo.restore_on_disk(second.id)  # it did not hold vendor/: its files are left alone, not deleted
    assert {c.path for c in done} == set() and (ws / "vendor" / "new.py").read_text() == "new\n"


@pytest.mark.parametrize("name", [".gitignore", ".gitattributes"])
def test_untrusted_fifo_at_the_workspace_root_turns_checkpoints_off(ws: Path, impatient: ShadowRepo, name: str):
    repo = impatient
    write(ws, "a.txt", "a\n")
    repo.take("one")
    fifo(ws, name)
    started = time.monotonic()
    assert not repo.available()
    assert repo.reason == (
        f"Checkpoints are off: {ws / name} is a FIFO (a named pipe), not a regular file, and git would wait "
        "forever to read it. Remove it (or make it a regular file) to have checkpoints again."
    )
    with pytest.raises(CheckpointsUnavailable, match="is a FIFO"):
        repo.take("two")
    assert time.monotonic() - started < 5
    (ws / name).unlink()
    assert repo.available() and repo.reason is None
    assert quick_take(repo, "three").parent is not None


def test_untrusted_fifo_gitattributes_in_a_subfolder_leaves_that_folder_out(ws: Path, impatient: ShadowRepo):
    repo = impatient
    write(ws, "a.txt", "a\n")
    write(ws, "sub/b.txt", "b\n")
    first = repo.take("one")
    fifo(ws, "sub/.gitattributes")
    write(ws, "sub/b.txt", "b, changed\n")  # hashed again: git looks up its attributes
    second = quick_take(repo, "two")
    assert [s.path for s in second.skipped] == ["sub/"] and "sub/.gitattributes is a FIFO" in second.skipped[0].reason
    started = time.monotonic()
    diffs = {d.path: d for d in repo.diff(first.id)}  # the patch of sub/b.txt reads no attributes of the workspace
    assert diffs["sub/b.txt"].status == "modified" and "not compared" in diffs["sub/b.txt"].text
    assert {c.path for c in repo.restore(first.id)} == {"sub/b.txt"}  # the checkpoint's text over what is there
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("nested", ["head", "commondir", "git file"])
def test_untrusted_fifo_in_a_nested_repository_leaves_it_out(ws: Path, impatient: ShadowRepo, nested: str):
    repo = impatient
    write(ws, "a.txt", "a\n")
    gitdir = ws / "nest" / ("gd" if nested == "git file" else ".git")
    (gitdir / "objects").mkdir(parents=True)
    (gitdir / "refs").mkdir()
    if nested == "git file":
        write(ws, "nest/.git", "gitdir: gd\n")
    if nested == "commondir":
        write(gitdir, "HEAD", "ref: refs/heads/main\n")
    fifo(gitdir, "commondir" if nested == "commondir" else "HEAD")
    write(ws, "nest/n.txt", "n\n")
    checkpoint = quick_take(repo, "one")
    assert [s.path for s in checkpoint.skipped] == ["nest/"] and "is a FIFO" in checkpoint.skipped[0].reason
    assert set(repo.files_at(checkpoint.id)) == {"a.txt"}


def test_untrusted_fifo_info_exclude_is_not_read(ws: Path, impatient: ShadowRepo, caplog: pytest.LogCaptureFixture):
    repo = impatient
    user_git(ws, "init", "-q")
    (ws / ".git" / "info" / "exclude").unlink(missing_ok=True)
    fifo(ws, ".git/info/exclude")
    write(ws, "a.txt", "a\n")
    checkpoint = quick_take(repo, "one")
    assert set(repo.files_at(checkpoint.id)) == {"a.txt"}
    assert "exclude is not read (it is a FIFO, not a regular file)" in caplog.text


def test_untrusted_fifo_where_the_system_cannot_tell_git_waits(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Without /proc (macOS, BSD), git's timeout is what says it waits: then the same."""
    monkeypatch.setattr("server.checkpoints.git.waiting_on_fifo", lambda pid: None)
    repo = ShadowRepo(ws, tmp_path / "state", timeout=2)
    write(ws, "a.txt", "a\n")
    fifo(ws, "vendor/.gitignore")
    checkpoint = quick_take(repo, "one", seconds=10)
    assert [s.path for s in checkpoint.skipped] == ["vendor/"] and set(repo.files_at(checkpoint.id)) == {"a.txt"}


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="Linux's /proc")
def test_waiting_on_fifo_sees_an_open_that_waits_for_a_writer(tmp_path: Path):
    from server.checkpoints.git import waiting_on_fifo

    reader = subprocess.Popen(["cat", str(fifo(tmp_path, "pipe"))], stdout=subprocess.DEVNULL)
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        deadline = time.monotonic() + 5
        while (not waiting_on_fifo(reader.pid) or waiting_on_fifo(sleeper.pid) is None) and time.monotonic() < deadline:
            time.sleep(0.05)  # (each in its place: a process just started runs, its wchan reads "0")
        assert waiting_on_fifo(reader.pid) is True
        assert waiting_on_fifo(sleeper.pid) is False
    finally:
        reader.kill()
        sleeper.kill()
        reader.wait()
        sleeper.wait()
