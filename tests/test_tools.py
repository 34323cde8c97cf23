"""The tools of the read, edit and command groups, run through the gate as the agent loop would.

Table-driven: one row per case, with the exact text the model sees. Files are written into a
temporary workspace; `MemoryHost` records approvals and edits and applies edits to disk.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from helpers import call_tool, running, until
from memory_host import MemoryHost
from protocol import ApprovalResponse
from server.host import CommandOutcome
from server.providers.xmlcalls import XmlCallParser
from server.tools import TOOLS
from server.tools.definitions import outline
from server.tools.files import _folders

RETRY = " Please retry with a complete and valid tool call."


def put(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())


def text_of(root: Path, rel: str) -> str:
    return (root / rel).read_bytes().decode()


def check(result, error: str | None, text: str) -> None:
    """The call failed with `error` (a type name) or succeeded (None), and the model sees `text`."""
    assert (result.error.type if result.error else None) == error, result.text
    assert result.text == text


def denying(feedback: str = "no") -> MemoryHost:
    return MemoryHost(approve=lambda req: ApprovalResponse(decision="deny", feedback=feedback))


def edits_of(host: MemoryHost) -> list[list[tuple[str, str | None, str]]]:
    return [[(c.target.rel, c.old_text, c.new_text) for c in edit] for edit in host.edits]


# ================================================================ read_file

FOUR = "alpha\nbeta\ngamma\ndelta\n"
MORE = "[{n} more lines; read them with start_line/end_line]"

READ_FILE = [
    ("whole file", "a.txt", {}, None, "a.txt (lines 1-4 of 4)\n1 | alpha\n2 | beta\n3 | gamma\n4 | delta"),
    ("range", "a.txt", {"start_line": 2, "end_line": 3}, None, "a.txt (lines 2-3 of 4)\n2 | beta\n3 | gamma\n" + MORE.format(n=1)),
    ("start only", "a.txt", {"start_line": 3}, None, "a.txt (lines 3-4 of 4)\n3 | gamma\n4 | delta"),
    ("end only", "a.txt", {"end_line": 1}, None, "a.txt (lines 1-1 of 4)\n1 | alpha\n" + MORE.format(n=3)),
    ("end past the end is clamped", "a.txt", {"start_line": 4, "end_line": 99}, None, "a.txt (lines 4-4 of 4)\n4 | delta"),
    ("single line", "a.txt", {"start_line": 2, "end_line": 2}, None, "a.txt (lines 2-2 of 4)\n2 | beta\n" + MORE.format(n=2)),
    ("numbers right-aligned", "ten.txt", {"start_line": 8}, None, "ten.txt (lines 8-10 of 10)\n 8 | l8\n 9 | l9\n10 | l10"),
    ("CRLF lines", "crlf.txt", {}, None, "crlf.txt (lines 1-2 of 2)\n1 | one\n2 | two"),
    ("empty file", "empty.txt", {}, None, "empty.txt (empty file)\n"),
    ("nested path", "sub/deep.txt", {}, None, "sub/deep.txt (lines 1-1 of 1)\n1 | deep"),
    ("start past the end", "a.txt", {"start_line": 5}, "ToolError", "start_line 5 is past the end of 'a.txt' (4 lines)."),
    ("end before start", "a.txt", {"start_line": 3, "end_line": 2}, "ToolError", "end_line 2 is before start_line 3."),
    ("missing file", "x", {}, "ToolError", "File not found: x"),
    ("directory", "sub", {}, "ToolError", "'sub' is a directory, not a file."),
    ("binary file", "blob.bin", {}, "ToolError", "'blob.bin' is a binary file; read_file reads text files only."),
    (
        "start_line 0",
        "a.txt",
        {"start_line": 0},
        "InvalidParams",
        "Invalid value for parameter 'start_line': Input should be greater than or equal to 1." + RETRY,
    ),
]


@pytest.mark.parametrize("path, params, error, text", [r[1:] for r in READ_FILE], ids=[r[0] for r in READ_FILE])
async def test_read_file(tmp_path, path, params, error, text):
    put(
        tmp_path,
        {
            "a.txt": FOUR,
            "ten.txt": "".join(f"l{n}\n" for n in range(1, 11)),
            "crlf.txt": "one\r\ntwo\r\n",
            "empty.txt": "",
            "sub/deep.txt": "deep\n",
            "blob.bin": b"PK\x03\x04\x00\x00binary",
        },
    )
    async with running(tmp_path) as session:
        check(await call_tool(session, "read_file", path=path, **params), error, text)


async def test_read_file_caps_a_long_file_without_a_range(tmp_path):
    put(tmp_path, {"big.txt": "".join(f"{n}\n" for n in range(1, 2002))})
    async with running(tmp_path) as session:
        result = await call_tool(session, "read_file", path="big.txt")
    lines = result.text.split("\n")
    assert lines[0] == "big.txt (lines 1-2000 of 2001)"
    assert lines[1] == "   1 | 1"
    assert lines[-2] == "2000 | 2000"
    assert lines[-1] == MORE.format(n=1)


async def test_read_file_open_buffer_wins_over_disk(tmp_path):
    put(tmp_path, {"a.txt": "on disk\n"})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        host.buffers[session.workspace.root / "a.txt"] = "unsaved one\nunsaved two"
        host.buffers[session.workspace.root / "new.txt"] = "never saved"
        check(await call_tool(session, "read_file", path="a.txt"), None, "a.txt (lines 1-2 of 2)\n1 | unsaved one\n2 | unsaved two")
        check(await call_tool(session, "read_file", path="new.txt"), None, "new.txt (lines 1-1 of 1)\n1 | never saved")


async def test_read_file_outside_the_workspace_is_refused(tmp_path):
    (tmp_path / "ws").mkdir()
    put(tmp_path, {"secret.txt": "s\n"})
    os.symlink(tmp_path / "secret.txt", tmp_path / "ws" / "link.txt")
    async with running(tmp_path / "ws") as session:
        for path in ("../secret.txt", "link.txt", str(tmp_path / "secret.txt")):
            result = await call_tool(session, "read_file", path=path)
            assert result.error is not None and result.error.type == "OutsideWorkspace"
            assert result.text.startswith(f"Access to '{path}' is denied: it resolves to ")


async def test_reads_need_no_approval_by_default(tmp_path):
    put(tmp_path, {"a.txt": FOUR})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        assert (await call_tool(session, "read_file", path="a.txt")).error is None
        assert (await call_tool(session, "list_files", path=".")).error is None
    assert host.approvals == []


# ================================================================ list_files

PROJECT = {
    "proj/.gitignore": "build/\n*.log\n",
    "proj/.hidden": "h\n",
    "proj/a.py": "print(1)\n",
    "proj/b.txt": "b\n",
    "proj/debug.log": "log\n",
    "proj/build/out.o": "o\n",
    "proj/docs/guide.md": "# guide\n",
    "proj/docs/deep/er/x.txt": "x\n",
}

LIST_FILES = [
    (
        "top level, folders end with /",
        {"path": "proj"},
        None,
        ".gitignore\n.hidden\na.py\nb.txt\nbuild/\ndebug.log\ndocs/\nempty/",
    ),
    (
        "recursive: .gitignore respected, intermediate folders listed",
        {"path": "proj", "recursive": True},
        None,
        ".gitignore\n.hidden\na.py\nb.txt\ndocs/\ndocs/deep/\ndocs/deep/er/\ndocs/deep/er/x.txt\ndocs/guide.md",
    ),
    ("recursive in a subfolder", {"path": "proj/docs", "recursive": True}, None, "deep/\ndeep/er/\ndeep/er/x.txt\nguide.md"),
    ("not a directory", {"path": "proj/a.py"}, "ToolError", "Not a directory: proj/a.py"),
    ("missing folder", {"path": "nope", "recursive": True}, "ToolError", "Not a directory: nope"),
    ("empty folder", {"path": "proj/empty"}, None, "No files found in proj/empty."),
    ("empty folder, recursive", {"path": "proj/empty", "recursive": True}, None, "No files found in proj/empty."),
    ("outside the workspace", {"path": ".."}, "OutsideWorkspace", None),
]


@pytest.mark.parametrize("params, error, text", [r[1:] for r in LIST_FILES], ids=[r[0] for r in LIST_FILES])
async def test_list_files(tmp_path, params, error, text):
    (tmp_path / "ws").mkdir()
    root = tmp_path / "ws"
    put(root, PROJECT)
    (root / "proj" / "empty").mkdir()
    async with running(root) as session:
        result = await call_tool(session, "list_files", **params)
    assert (result.error.type if result.error else None) == error, result.text
    if text is not None:
        assert result.text == text


async def test_list_files_recursive_skips_git_and_dependency_folders(tmp_path):
    put(tmp_path, {"proj/.git/HEAD": "ref\n", "proj/.git/objects/ab": "x", "proj/main.py": "", "proj/out.bin": ""})
    put(tmp_path, {"proj/.gitignore": "*.bin\n", "proj/node_modules/m/index.js": "", "proj/web/node_modules/x.js": ""})
    put(tmp_path, {"proj/.venv/lib/site.py": "", "proj/pkg/__pycache__/a.pyc": "", "proj/pkg/a.py": ""})
    async with running(tmp_path) as session:
        check(await call_tool(session, "list_files", path="proj", recursive=True), None, ".gitignore\nmain.py\npkg/\npkg/a.py")
        # ...unless the listing starts inside one
        check(await call_tool(session, "list_files", path="proj/node_modules", recursive=True), None, "m/\nm/index.js")


FOLDERS = [
    ("none: the top only", [], {"."}),
    ("files at the top", ["a.py", "b.py"], {"."}),
    ("every folder above, each once", ["x/y/z.py", "x/y/w.py", "x/v.py", "q/r/s/t.py"], {".", "x", "x/y", "q", "q/r", "q/r/s"}),
    ("a folder named like its parent", ["a/a/a.py"], {".", "a", "a/a"}),
]


@pytest.mark.parametrize("paths, expected", [r[1:] for r in FOLDERS], ids=[r[0] for r in FOLDERS])
def test_the_folders_that_hold_files(paths, expected):
    assert _folders(paths) == expected


# ================================================================ search_files

APP = 'import os\ndef main():\n    print("needle one")\n    return 0\n\n\ndef helper():\n    return "needle two"\n'
APP_SECTION = (
    "# src/app.py\n"
    "   2 | def main():\n"
    '   3 |     print("needle one")\n'
    "   4 |     return 0\n"
    "----\n"
    "   7 | def helper():\n"
    '   8 |     return "needle two"\n'
    "----"
)
SEARCH_TREE = {
    ".gitignore": "*.log\n",
    "src/app.py": APP,
    "src/notes.txt": "first\nsecond\na needle\n",
    "src/skip.log": "needle in an ignored file\n",
    "other/far.txt": "needle elsewhere\n",
    "-v/dash.txt": "needle\n",
    "odd/seps.txt": "a needle \u2028 and \x85 inside\n",
}


def sections(text: str) -> tuple[str, set[str]]:
    """The header line and the `# file` sections (their order across files is ripgrep's)."""
    header, *rest = text.split("\n\n")
    return header, set(rest)


SEARCH_FILES = [
    (
        "matches with context, grouped by file",
        {"path": "src", "regex": "needle"},
        "Found 3 results.",
        {APP_SECTION, "# src/notes.txt\n   2 | second\n   3 | a needle\n----"},
    ),
    ("file_pattern glob", {"path": "src", "regex": "needle", "file_pattern": "*.py"}, "Found 2 results.", {APP_SECTION}),
    (
        "whole workspace, paths without ./",
        {"path": ".", "regex": "needle (one|elsewhere)"},
        "Found 2 results.",
        {
            "# src/app.py\n   2 | def main():\n   3 |     print(\"needle one\")\n   4 |     return 0\n----",
            "# other/far.txt\n   1 | needle elsewhere\n----",
        },
    ),
    ("one result", {"path": "src", "regex": "^first$"}, "Found 1 result.", {"# src/notes.txt\n   1 | first\n   2 | second\n----"}),
    (
        "adjacent matches share their context",
        {"path": "src", "regex": "first|second"},
        "Found 2 results.",
        {"# src/notes.txt\n   1 | first\n   2 | second\n   3 | a needle\n----"},
    ),
    ("a folder whose name starts with -", {"path": "-v", "regex": "needle"}, "Found 1 result.", {"# -v/dash.txt\n   1 | needle\n----"}),
    (
        "a line with Unicode line separators in it",
        {"path": "odd", "regex": "needle"},
        "Found 1 result.",
        {"# odd/seps.txt\n   1 | a needle \u2028 and \x85 inside\n----"},
    ),
    ("zero results", {"path": "src", "regex": "haystack"}, "Found 0 results.", set()),
    ("glob that matches nothing", {"path": "src", "regex": "needle", "file_pattern": "*.rs"}, "Found 0 results.", set()),
]


@pytest.mark.parametrize("params, header, found", [r[1:] for r in SEARCH_FILES], ids=[r[0] for r in SEARCH_FILES])
async def test_search_files(tmp_path, params, header, found):
    put(tmp_path, SEARCH_TREE)
    async with running(tmp_path) as session:
        result = await call_tool(session, "search_files", **params)
    assert result.error is None, result.text
    assert sections(result.text) == (header, found)


async def test_search_files_one_file_exact_text(tmp_path):
    put(tmp_path, SEARCH_TREE)
    async with running(tmp_path) as session:
        check(await call_tool(session, "search_files", path="src/app.py", regex="needle"), None, "Found 2 results.\n\n" + APP_SECTION)


async def test_search_files_shows_300_results_and_says_more_were_cut_off(tmp_path):
    """ripgrep is read up to the match past the last one shown (and stopped there)."""
    put(tmp_path, {"many.txt": "".join(f"needle {n}\n" for n in range(1, 2001))})
    put(tmp_path, {f"more/m{k}.txt": "needle\n" * 10 for k in range(100)})
    rows = "\n".join(f"{n:>4} | needle {n}" for n in range(1, 301))
    async with running(tmp_path) as session:
        one = await call_tool(session, "search_files", path=".", regex="needle \\d+")
        many = await call_tool(session, "search_files", path="more", regex="needle")
    check(one, None, f"Found 300 results (more were cut off).\n\n# many.txt\n{rows}\n----")
    assert many.error is None and many.text.startswith("Found 300 results (more were cut off).\n\n# more/m")
    assert many.text.count(" | needle") == 300


SEARCH_ERRORS = [
    ("invalid regex", {"path": "src", "regex": "(unclosed"}, "ToolError", "search_files failed: rg: regex parse error:"),
    ("missing folder", {"path": "nope", "regex": "x"}, "ToolError", "search_files failed: rg: nope: "),
    ("empty regex", {"path": "src", "regex": ""}, "InvalidParams", "Invalid value for parameter 'regex': String should have at least 1 character."),
    ("outside the workspace", {"path": "../", "regex": "x"}, "OutsideWorkspace", "Access to '../' is denied"),
]


@pytest.mark.parametrize("params, error, starts", [r[1:] for r in SEARCH_ERRORS], ids=[r[0] for r in SEARCH_ERRORS])
async def test_search_files_errors(tmp_path, params, error, starts):
    put(tmp_path, SEARCH_TREE)
    async with running(tmp_path) as session:
        result = await call_tool(session, "search_files", **params)
    assert result.error is not None and result.error.type == error
    assert result.text.startswith(starts), result.text


# ================================================================ list_code_definition_names

SHAPES = '''import os


class Shape:
    """A shape."""

    def area(self):
        return 0

    @property
    def name(self):
        return "shape"


@cache
async def load(path):
    def inner():
        pass
    return inner
'''
SHAPES_OUTLINE = "4--12 | class Shape:\n7--8 |     def area(self):\n10--12 |     def name(self):\n15--19 | async def load(path):"
WIDGET = """import x from "y";
export interface Props {
  name: string;
}
export type Id = string;
export default class Widget {
  render() {}
}
export async function load(id: Id) {}
const add = (a, b) => a + b;
let n = 5;
enum Color { Red }
export const handler = async (req) => {};
"""
WIDGET_OUTLINE = (
    "2 | export interface Props {\n5 | export type Id = string;\n6 | export default class Widget {\n"
    "9 | export async function load(id: Id) {}\n10 | const add = (a, b) => a + b;\n12 | enum Color { Red }\n"
    "13 | export const handler = async (req) => {};"
)

DEFINITIONS = [
    ("python: ast ranges, methods nested, decorators included", {"path": "lib/shapes.py"}, None, "# lib/shapes.py\n" + SHAPES_OUTLINE),
    ("typescript", {"path": "lib/widget.ts"}, None, "# lib/widget.ts\n" + WIDGET_OUTLINE),
    (
        "a directory: its files, not its subfolders",
        {"path": "lib"},
        None,
        f"# lib/shapes.py\n{SHAPES_OUTLINE}\n\n# lib/widget.ts\n{WIDGET_OUTLINE}",
    ),
    ("no definitions", {"path": "lib/consts.py"}, None, "No definitions found in lib/consts.py."),
    ("python that does not parse", {"path": "lib/broken.py"}, None, "No definitions found in lib/broken.py."),
    ("unknown language", {"path": "lib/README.md"}, None, "No definitions found in lib/README.md."),
    ("a subfolder", {"path": "lib/sub"}, None, "# lib/sub/deeper.py\n1--2 | def deeper():"),
    ("directory without definitions", {"path": "docs"}, None, "No definitions found in docs."),
    ("missing file", {"path": "lib/nope.py"}, "ToolError", "File not found: lib/nope.py"),
]


@pytest.mark.parametrize("params, error, text", [r[1:] for r in DEFINITIONS], ids=[r[0] for r in DEFINITIONS])
async def test_list_code_definition_names(tmp_path, params, error, text):
    put(
        tmp_path,
        {
            "lib/shapes.py": SHAPES,
            "lib/widget.ts": WIDGET,
            "lib/consts.py": "X = 1\nY = [X]\n",
            "lib/broken.py": "def broken(:\n",
            "lib/README.md": "# class Nope\n",
            "lib/sub/deeper.py": "def deeper():\n    pass\n",
            "docs/notes.md": "def not_code():\n",
        },
    )
    async with running(tmp_path) as session:
        check(await call_tool(session, "list_code_definition_names", **params), error, text)


async def test_list_code_definition_names_reads_the_open_buffer(tmp_path):
    put(tmp_path, {"m.py": "def on_disk():\n    pass\n"})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        host.buffers[session.workspace.root / "m.py"] = "class Unsaved:\n    pass\n"
        check(await call_tool(session, "list_code_definition_names", path="m.py"), None, "# m.py\n1--2 | class Unsaved:")


OUTLINES = [
    ("go", "m.go", "package m\n\nfunc Run() {}\nfunc (s *S) Stop() {}\ntype S struct {}\nvar x = 1\n",
     ["3 | func Run() {}", "4 | func (s *S) Stop() {}", "5 | type S struct {}"]),
    ("rust", "m.rs", "use std::io;\npub struct A;\nimpl A {\n    pub async fn go(&self) {}\n}\nlet x = 1;\n",
     ["2 | pub struct A;", "3 | impl A {", "4 | pub async fn go(&self) {}"]),
    ("ruby", "m.rb", "module M\n  class C\n    def run; end\n  end\nend\n", ["1 | module M", "2 | class C", "3 | def run; end"]),
    ("java", "M.java", "package p;\npublic final class M {\n  private int x;\n}\n", ["2 | public final class M {"]),
    ("jsx arrow", "c.jsx", "export const C = () => <div/>;\nconst n = 1;\n", ["1 | export const C = () => <div/>;"]),
    ("plain text", "notes.txt", "def f():\n", []),
]


@pytest.mark.parametrize("filename, text, expected", [r[1:] for r in OUTLINES], ids=[r[0] for r in OUTLINES])
def test_outline_other_languages(filename, text, expected):
    assert outline(filename, text) == expected


# ================================================================ walks stay inside the workspace

SKIPPED = "[skipped {n} {entries} that lead{s} outside the workspace: {names}]"


def skipped(*names: str) -> str:
    one = len(names) == 1
    return SKIPPED.format(n=len(names), entries="entry" if one else "entries", s="s" if one else "", names=", ".join(names))


@pytest.fixture
def linked(tmp_path) -> Path:
    """A workspace whose links lead outside (to a file, to a folder, from a subfolder) or stay inside."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    put(outside, {"secret.py": "def secret_fn():\n    return 'needle'\n", "dir/hidden.py": "def hidden_fn():\n    return 'needle'\n"})
    put(root, {"p/a.py": "def inside_fn():\n    return 'needle'\n", "p/sub/b.py": "def deep_fn():\n    return 'needle'\n"})
    os.symlink(outside / "secret.py", root / "p" / "link.py")
    os.symlink(outside / "dir", root / "p" / "linkdir")
    os.symlink(outside / "secret.py", root / "p" / "sub" / "deep.py")
    os.symlink(root / "p" / "a.py", root / "p" / "alias.py")  # stays inside
    os.symlink(root / "p" / "sub", root / "p" / "subalias")  # stays inside
    return root


INSIDE_FN = "1--2 | def inside_fn():"
NEEDLE_A = "# p/a.py\n   1 | def inside_fn():\n   2 |     return 'needle'\n----"
NEEDLE_B = "# p/sub/b.py\n   1 | def deep_fn():\n   2 |     return 'needle'\n----"
ALL_OUT = skipped("p/link.py", "p/linkdir", "p/sub/deep.py")

WALKS = [
    (
        "definitions of a folder: inside links read, outside ones skipped",
        "list_code_definition_names",
        {"path": "p"},
        f"# p/a.py\n{INSIDE_FN}\n\n# p/alias.py\n{INSIDE_FN}\n\n" + skipped("p/link.py", "p/linkdir"),
    ),
    ("definitions of a subfolder", "list_code_definition_names", {"path": "p/sub"}, "# p/sub/b.py\n1--2 | def deep_fn():\n\n" + skipped("p/sub/deep.py")),
    (
        "list_files: inside links listed, outside ones skipped",
        "list_files",
        {"path": "p"},
        "a.py\nalias.py\nsub/\nsubalias/\n\n" + skipped("p/link.py", "p/linkdir"),
    ),
    ("list_files recursive", "list_files", {"path": "p", "recursive": True}, "a.py\nalias.py\nsub/\nsub/b.py\nsubalias/\n\n" + ALL_OUT),
    ("list_files recursive in a subfolder", "list_files", {"path": "p/sub", "recursive": True}, "b.py\n\n" + skipped("p/sub/deep.py")),
    ("search_files", "search_files", {"path": "p", "regex": "needle"}, f"Found 2 results.\n\n{NEEDLE_A}\n\n{NEEDLE_B}\n\n{ALL_OUT}"),
    ("search_files, whole workspace", "search_files", {"path": ".", "regex": "needle"}, f"Found 2 results.\n\n{NEEDLE_A}\n\n{NEEDLE_B}\n\n{ALL_OUT}"),
    ("search_files in a subfolder", "search_files", {"path": "p/sub", "regex": "needle"}, f"Found 1 result.\n\n{NEEDLE_B}\n\n" + skipped("p/sub/deep.py")),
    ("search_files through an inside link", "search_files", {"path": "p/subalias", "regex": "needle"}, f"Found 1 result.\n\n{NEEDLE_B}\n\n" + skipped("p/sub/deep.py")),
]


@pytest.mark.parametrize("tool, params, text", [r[1:] for r in WALKS], ids=[r[0] for r in WALKS])
async def test_a_walk_skips_and_names_what_leads_outside(linked, tool, params, text):
    async with running(linked) as session:
        result = await call_tool(session, tool, **params)
    assert result.error is None, result.text
    for outside in ("secret", "hidden", str(linked.parent / "outside")):
        assert outside not in result.text
    if tool == "search_files":  # the order of the files is ripgrep's
        header, *found = result.text.split("\n\n")
        expected_header, *expected = text.split("\n\n")
        assert (header, found[-1], set(found)) == (expected_header, expected[-1], set(expected))
    else:
        assert result.text == text


@pytest.fixture
def quiet(tmp_path) -> Path:
    """Links that lead outside: one on the way to a match, two in a folder where nothing matches."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    put(outside, {"secret.py": "needle = 'secret'\n", "dir/hidden.py": "needle = 'hidden'\n"})
    put(root, {"a/b/c.py": "needle = 1\n", "q/quiet.txt": "nothing here\n"})
    os.symlink(outside / "secret.py", root / "a" / "up.py")
    os.symlink(outside / "secret.py", root / "q" / "far.py")
    os.symlink(outside / "dir", root / "q" / "farther")
    return root


C_PY = "# a/b/c.py\n   1 | needle = 1\n----"

SEARCH_LINKS = [
    ("the links on the way to a match named, those in a folder without one not", ".", f"Found 1 result.\n\n{C_PY}\n\n" + skipped("a/up.py")),
    ("the folder searched: its links named, with no result", "q", "Found 0 results.\n\n" + skipped("q/far.py", "q/farther")),
    ("a folder above the one searched: not scanned", "a/b", f"Found 1 result.\n\n{C_PY}"),
]


@pytest.mark.parametrize("path, text", [r[1:] for r in SEARCH_LINKS], ids=[r[0] for r in SEARCH_LINKS])
async def test_search_files_names_the_links_outside_where_its_result_goes(quiet, path, text):
    """search_files names the links that lead outside in the folder searched and the folders
    down to each file shown (files.search says why); every link is skipped, named or not."""
    async with running(quiet) as session:
        check(await call_tool(session, "search_files", path=path, regex="needle"), None, text)


async def test_the_skipped_entries_are_named_up_to_a_cap(tmp_path):
    put(tmp_path, {"outside.txt": "x\n", "ws/links/real.txt": "y\n"})
    for n in range(25):
        os.symlink(tmp_path / "outside.txt", tmp_path / "ws" / "links" / f"l{n:02}.txt")
    async with running(tmp_path / "ws") as session:
        result = await call_tool(session, "list_files", path="links")
    names = ", ".join(f"links/l{n:02}.txt" for n in range(10))
    check(result, None, f"real.txt\n\n[skipped 25 entries that lead outside the workspace: {names} and 15 more]")


def deep_folder(root: Path, length: int) -> str:
    """A folder under `root` whose absolute path has `length` characters, made by relative opens
    (the OS refuses longer absolute paths), holding module.py; returns its relative path."""
    names, left = [], length - len(str(root))  # what each name adds: "/" + name
    while left > 201:
        names.append("d" * 199)
        left -= 200
    names.append("d" * (left - 1))
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for name in names:
        os.mkdir(name, dir_fd=fd)
        fd, parent = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), fd
        os.close(parent)
    module = os.open("module.py", os.O_WRONLY | os.O_CREAT, dir_fd=fd)
    os.write(module, b"def f():\n    pass\n")
    os.close(module)
    os.close(fd)
    return "/".join(names)


async def test_a_walk_through_a_folder_past_the_systems_path_length(tmp_path):
    deep = deep_folder(tmp_path, os.pathconf(tmp_path, "PC_PATH_MAX") + 20)  # ripgrep opens it by a shorter relative path
    async with running(tmp_path) as session:
        listed = await call_tool(session, "list_files", path=deep.split("/")[0], recursive=True)
        found = await call_tool(session, "search_files", path=".", regex="def f")
    assert listed.error is None and listed.text.endswith("/module.py"), listed.text[-200:]
    assert found.error is None and found.text.startswith("Found 1 result.\n\n# " + deep + "/module.py"), found.text[-200:]


# ================================================================ write_to_file


async def test_write_to_file_creates_a_file_and_its_folders(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        result = await call_tool(session, "write_to_file", path="new/dir/b.txt", content="one\ntwo")
    check(result, None, "The content was successfully saved to new/dir/b.txt (2 lines).")
    assert text_of(tmp_path, "new/dir/b.txt") == "one\ntwo\n"  # a final newline is added
    assert edits_of(host) == [[("new/dir/b.txt", None, "one\ntwo\n")]]
    [request] = host.approvals
    assert (request.kind, request.tool, request.title) == ("tool", "write_to_file", "Create new/dir/b.txt?")
    assert request.params == {"path": "new/dir/b.txt", "content": "one\ntwo"}
    assert request.detail == "--- /dev/null\n+++ b/new/dir/b.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    # the host gets the change with the approval (a client may show its own diff) and the call with the edit
    assert [[(c.target.rel, c.old_text, c.new_text) for c in changes] for changes in host.approval_changes] == edits_of(host)
    assert host.edit_calls == ["call-test"]


WRITE_TO_FILE = [
    ("replaces an existing file", "a\nb\n", "a\nc\n", "a\nc\n", "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"),
    ("keeps CRLF line endings", "a\r\nb\r\n", "a\nc\n", "a\r\nc\r\n", None),
    ("content already CRLF", "a\r\nb\r\n", "x\r\n", "x\r\n", None),
    ("LF file stays LF", "a\nb\n", "a\r\nz\r\n", "a\r\nz\r\n", None),
    ("empty content empties the file", "a\n", "", "", "--- a/f.txt\n+++ b/f.txt\n@@ -1 +0,0 @@\n-a\n"),
]


@pytest.mark.parametrize("old, content, new, detail", [r[1:] for r in WRITE_TO_FILE], ids=[r[0] for r in WRITE_TO_FILE])
async def test_write_to_file_replaces(tmp_path, old, content, new, detail):
    put(tmp_path, {"f.txt": old})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        result = await call_tool(session, "write_to_file", path="f.txt", content=content)
    assert result.error is None, result.text
    assert text_of(tmp_path, "f.txt") == new
    assert edits_of(host) == [[("f.txt", old, new)]]
    assert host.approvals[0].title == "Edit f.txt?"
    if detail is not None:
        assert host.approvals[0].detail == detail


async def test_write_to_file_diffs_against_the_open_buffer(tmp_path):
    put(tmp_path, {"f.txt": "disk\n"})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        host.buffers[session.workspace.root / "f.txt"] = "buffer\n"
        assert (await call_tool(session, "write_to_file", path="f.txt", content="new\n")).error is None
    assert edits_of(host) == [[("f.txt", "buffer\n", "new\n")]]
    assert host.approvals[0].detail == "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-buffer\n+new\n"


async def test_write_to_file_written_by_the_server_when_the_editor_cannot(tmp_path):
    put(tmp_path, {"run.sh": "echo old\n"})
    (tmp_path / "run.sh").chmod(0o755)
    host = MemoryHost(applies_edits=False)
    async with running(tmp_path, host=host) as session:
        check(await call_tool(session, "write_to_file", path="run.sh", content="echo new\n"), None,
              "The content was successfully saved to run.sh (1 line).")
        check(await call_tool(session, "write_to_file", path="made/here.txt", content="x"), None,
              "The content was successfully saved to made/here.txt (1 line).")
    assert host.edits == []
    assert text_of(tmp_path, "run.sh") == "echo new\n"
    assert (tmp_path / "run.sh").stat().st_mode & 0o777 == 0o755  # the mode survives the rename
    assert text_of(tmp_path, "made/here.txt") == "x\n"
    assert not list(tmp_path.rglob("*.modus-tmp"))


async def test_write_to_file_declined_by_the_editor(tmp_path):
    put(tmp_path, {"f.txt": "keep\n"})
    host = MemoryHost(accept_edits=False)
    async with running(tmp_path, host=host) as session:
        result = await call_tool(session, "write_to_file", path="f.txt", content="lost\n")
    check(result, "EditFailed", "The editor did not apply the edit to f.txt: the user rejected the edit")
    assert len(host.edits) == 1
    assert text_of(tmp_path, "f.txt") == "keep\n"


async def test_write_to_file_denied(tmp_path):
    put(tmp_path, {"f.txt": "keep\n"})
    host = denying("use apply_diff instead")
    async with running(tmp_path, host=host) as session:
        result = await call_tool(session, "write_to_file", path="f.txt", content="lost\n")
    check(result, "Denied", "The user denied this operation.\n<feedback>\nuse apply_diff instead\n</feedback>")
    assert result.text.startswith("The user denied this operation.")
    assert host.edits == []
    assert text_of(tmp_path, "f.txt") == "keep\n"


async def test_write_to_file_auto_approved_edits_ask_nothing(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host, autoApprove={"edit": True}) as session:
        assert (await call_tool(session, "write_to_file", path="f.txt", content="x\n")).error is None
    assert host.approvals == []
    assert text_of(tmp_path, "f.txt") == "x\n"


WRITE_ERRORS = [
    ("a directory", {"path": "sub", "content": "x"}, "ToolError", "'sub' is a directory."),
    ("missing content", {"path": "f.txt"}, "InvalidParams", "Missing value for required parameter 'content'." + RETRY),
    ("missing path", {"content": "x"}, "InvalidParams", "Missing value for required parameter 'path'." + RETRY),
    ("empty path", {"path": " ", "content": "x"}, "InvalidParams", "The path must be a non-empty string."),
]


@pytest.mark.parametrize("params, error, text", [r[1:] for r in WRITE_ERRORS], ids=[r[0] for r in WRITE_ERRORS])
async def test_write_to_file_errors(tmp_path, params, error, text):
    (tmp_path / "sub").mkdir()
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        check(await call_tool(session, "write_to_file", **params), error, text)
    assert host.approvals == [] and host.edits == []


async def test_write_to_file_outside_the_workspace(tmp_path):
    (tmp_path / "ws").mkdir()
    host = MemoryHost()
    async with running(tmp_path / "ws", host=host) as session:
        result = await call_tool(session, "write_to_file", path="../escape.txt", content="x")
    assert result.error is not None and result.error.type == "OutsideWorkspace"
    assert not (tmp_path / "escape.txt").exists()
    assert host.approvals == [] and host.edits == []


# ================================================================ apply_diff


def sr(search: str, replace: str, start: int | None = None) -> str:
    """One SEARCH/REPLACE block, with a `:start_line:` hint when given."""
    hint = f":start_line:{start}\n-------\n" if start else ""
    return f"<<<<<<< SEARCH\n{hint}{search}\n=======\n{replace}\n>>>>>>> REPLACE"


TWINS = "x = 1\nfoo\nbar\nx = 1\n"

APPLY_DIFF = [
    ("one block", "a\nb\nc\n", sr("b", "B"), "a\nB\nc\n"),
    ("several blocks", "a\nb\nc\nd\n", sr("a", "A") + "\n" + sr("c\nd", "C"), "A\nb\nC\n"),
    ("a block may add lines", "a\nb\n", sr("a", "a1\na2\na3"), "a1\na2\na3\nb\n"),
    ("a block may delete lines", "a\nb\nc\n", sr("b", ""), "a\nc\n"),
    ("without a hint the first match", TWINS, sr("x = 1", "x = 2"), "x = 2\nfoo\nbar\nx = 1\n"),
    ("hint picks the nearest of two matches", TWINS, sr("x = 1", "x = 2", start=4), "x = 1\nfoo\nbar\nx = 2\n"),
    ("hint near the first match", TWINS, sr("x = 1", "x = 2", start=2), "x = 2\nfoo\nbar\nx = 1\n"),
    (
        "later hints shift by the lines an earlier block added",
        "a\nx = 1\nb\nc\nd\nx = 1\ne\n",
        sr("a", "a1\na2\na3\na4\na5\na6", start=1) + "\n" + sr("x = 1", "x = 2", start=6),
        "a1\na2\na3\na4\na5\na6\nx = 1\nb\nc\nd\nx = 2\ne\n",
    ),
    (
        "later hints shift by the lines an earlier block removed",
        "a\nb\nc\nd\nx = 1\ny\nz\nx = 1\n",
        sr("a\nb\nc\nd", "", start=1) + "\n" + sr("x = 1", "x = 2", start=8),
        "x = 1\ny\nz\nx = 2\n",
    ),
    ("trailing whitespace tolerated", "def f():\n    return 1   \n", sr("def f():\n    return 1", "def f():\n    return 2"), "def f():\n    return 2\n"),
    ("indentation tolerated", "if x:\n    go()\n", sr("if x:\ngo()", "if x:\n    stop()"), "if x:\n    stop()\n"),
    ("exact match preferred over a loose one", "  k\nk\n", sr("k", "K"), "  k\nK\n"),
    ("dash separator without a hint", "a\nb\n", "<<<<<<< SEARCH\n-------\nb\n=======\nB\n>>>>>>> REPLACE", "a\nB\n"),
    ("short dash separator after a hint", "a\nb\n", "<<<<<<< SEARCH\n:start_line:2\n---\nb\n=======\nB\n>>>>>>> REPLACE", "a\nB\n"),
    (
        "a search starting with --- (front matter)",
        "---\ntitle: a\n---\nbody\n",
        sr("---\ntitle: a\n---", "---\ntitle: b\n---"),
        "---\ntitle: b\n---\nbody\n",
    ),
    ("text around the blocks is ignored", "a\nb\n", "Here is the change:\n" + sr("a", "A") + "\nDone.", "A\nb\n"),
    ("keeps CRLF line endings", "a\r\nb\r\n", sr("b", "B"), "a\r\nB\r\n"),
    ("CRLF diff on an LF file", "a\nb\n", sr("b", "B").replace("\n", "\r\n"), "a\nB\n"),
]


@pytest.mark.parametrize("old, diff, new", [r[1:] for r in APPLY_DIFF], ids=[r[0] for r in APPLY_DIFF])
async def test_apply_diff(tmp_path, old, diff, new):
    put(tmp_path, {"f.txt": old})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        check(await call_tool(session, "apply_diff", path="f.txt", diff=diff), None, "Changes successfully applied to f.txt.")
    assert text_of(tmp_path, "f.txt") == new
    assert edits_of(host) == [[("f.txt", old, new)]]
    assert host.approvals[0].title == "Edit f.txt?"


NO_MATCH = (
    "No match for SEARCH block {n}{near} in f.txt. The SEARCH text must match the file's current lines exactly "
    "(read the file again with read_file). No change was applied."
)

APPLY_DIFF_ERRORS = [
    ("no match", sr("zzz", "y"), "ToolError", NO_MATCH.format(n=1, near="")),
    ("no match near a hint", sr("zzz", "y", start=2), "ToolError", NO_MATCH.format(n=1, near=" near line 2")),
    ("second block fails: nothing applied", sr("a", "A") + "\n" + sr("zzz", "y"), "ToolError", NO_MATCH.format(n=2, near="")),
    ("missing =======", "<<<<<<< SEARCH\na\n>>>>>>> REPLACE", "ToolError", "SEARCH block 1 has no '=======' separator."),
    ("missing >>>>>>> REPLACE", "<<<<<<< SEARCH\na\n=======\nA", "ToolError", "SEARCH block 1 has no '>>>>>>> REPLACE' marker."),
    ("second block malformed", sr("a", "A") + "\n<<<<<<< SEARCH\nb\n", "ToolError", "SEARCH block 2 has no '=======' separator."),
    ("empty search", "<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE", "ToolError", "SEARCH block 1 for f.txt is empty."),
    (
        "no block at all",
        "a -> A",
        "ToolError",
        "The diff has no SEARCH/REPLACE block. Use:\n<<<<<<< SEARCH\n:start_line:N\n-------\n"
        "[exact lines to find]\n=======\n[new lines]\n>>>>>>> REPLACE",
    ),
]


@pytest.mark.parametrize("diff, error, text", [r[1:] for r in APPLY_DIFF_ERRORS], ids=[r[0] for r in APPLY_DIFF_ERRORS])
async def test_apply_diff_errors_change_nothing(tmp_path, diff, error, text):
    put(tmp_path, {"f.txt": "a\nb\n"})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        check(await call_tool(session, "apply_diff", path="f.txt", diff=diff), error, text)
    assert text_of(tmp_path, "f.txt") == "a\nb\n"
    assert host.approvals == [] and host.edits == []  # refused before the user is asked


APPLY_DIFF_PARAM_ERRORS = [
    ("missing diff", {"path": "f.txt"}, "InvalidParams", "Missing value for required parameter 'diff'." + RETRY),
    ("missing everything", {}, "InvalidParams", "Missing value for required parameter 'path'." + RETRY),
    (
        "missing file",
        {"path": "nope.txt", "diff": sr("a", "b")},
        "ToolError",
        "File not found: nope.txt (apply_diff edits existing files; use write_to_file to create one).",
    ),
]


@pytest.mark.parametrize("params, error, text", [r[1:] for r in APPLY_DIFF_PARAM_ERRORS], ids=[r[0] for r in APPLY_DIFF_PARAM_ERRORS])
async def test_apply_diff_param_errors(tmp_path, params, error, text):
    put(tmp_path, {"f.txt": "a\n"})
    async with running(tmp_path) as session:
        check(await call_tool(session, "apply_diff", **params), error, text)


async def test_apply_diff_edits_the_open_buffer_text(tmp_path):
    put(tmp_path, {"f.txt": "disk\n"})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        host.buffers[session.workspace.root / "f.txt"] = "unsaved\n"
        assert (await call_tool(session, "apply_diff", path="f.txt", diff=sr("unsaved", "saved"))).error is None
    assert edits_of(host) == [[("f.txt", "unsaved\n", "saved\n")]]


async def test_apply_diff_several_files_as_one_edit(tmp_path):
    put(tmp_path, {"a.txt": "a\nb\n", "b.txt": "x\n"})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        result = await call_tool(
            session, "apply_diff", files=[{"path": "a.txt", "diff": sr("a", "A")}, {"path": "b.txt", "diff": sr("x", "X")}]
        )
    check(result, None, "Changes successfully applied to a.txt, b.txt.")
    assert edits_of(host) == [[("a.txt", "a\nb\n", "A\nb\n"), ("b.txt", "x\n", "X\n")]]
    [request] = host.approvals
    assert request.title == "Edit a.txt, b.txt?"
    assert request.detail == (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-x\n+X\n"
    )
    assert (text_of(tmp_path, "a.txt"), text_of(tmp_path, "b.txt")) == ("A\nb\n", "X\n")


MULTI_FILE_ERRORS = [
    ("second block does not match", [{"path": "a.txt", "diff": sr("a", "A")}, {"path": "b.txt", "diff": sr("zzz", "y")}],
     "ToolError", NO_MATCH.replace("f.txt", "b.txt").format(n=1, near="")),
    ("second file missing", [{"path": "a.txt", "diff": sr("a", "A")}, {"path": "c.txt", "diff": sr("a", "A")}],
     "ToolError", "File not found: c.txt (apply_diff edits existing files; use write_to_file to create one)."),
    ("second path outside", [{"path": "a.txt", "diff": sr("a", "A")}, {"path": "../c.txt", "diff": sr("a", "A")}],
     "OutsideWorkspace", None),
    ("second entry without diff", [{"path": "a.txt", "diff": sr("a", "A")}, {"path": "b.txt"}],
     "InvalidParams", "Missing value for required parameter 'files.1.diff'." + RETRY),
]


@pytest.mark.parametrize("files, error, text", [r[1:] for r in MULTI_FILE_ERRORS], ids=[r[0] for r in MULTI_FILE_ERRORS])
async def test_apply_diff_several_files_all_or_nothing(tmp_path, files, error, text):
    (tmp_path / "ws").mkdir()
    root = tmp_path / "ws"
    put(root, {"a.txt": "a\nb\n", "b.txt": "x\n"})
    host = MemoryHost()
    async with running(root, host=host) as session:
        result = await call_tool(session, "apply_diff", files=files)
    assert (result.error.type if result.error else None) == error, result.text
    if text is not None:
        assert result.text == text
    assert (text_of(root, "a.txt"), text_of(root, "b.txt")) == ("a\nb\n", "x\n")
    assert host.approvals == [] and host.edits == []


async def test_apply_diff_same_file_twice_applies_both(tmp_path):
    put(tmp_path, {"a.txt": "a\nb\n"})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        result = await call_tool(
            session, "apply_diff", files=[{"path": "a.txt", "diff": sr("a", "A")}, {"path": "./a.txt", "diff": sr("b", "B")}]
        )
    assert result.error is None, result.text
    assert edits_of(host) == [[("a.txt", "a\nb\n", "A\nB\n")]]


ROO_ARGS = """
<file>
  <path>a.txt</path>
  <diff>
    <content>
<<<<<<< SEARCH
:start_line:1
-------
a
=======
A
>>>>>>> REPLACE
</content>
    <start_line>1</start_line>
  </diff>
  <diff>
    <content>
<<<<<<< SEARCH
b
=======
B
>>>>>>> REPLACE
</content>
  </diff>
</file>
<file>
  <path>b.txt</path>
  <diff>
    <content>
<<<<<<< SEARCH
    indented
=======
    changed
>>>>>>> REPLACE
</content>
  </diff>
</file>
"""


async def test_apply_diff_roo_xml_args(tmp_path):
    put(tmp_path, {"a.txt": "a\nb\nc\n", "b.txt": "    indented\n"})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        check(await call_tool(session, "apply_diff", args=ROO_ARGS), None, "Changes successfully applied to a.txt, b.txt.")
    assert edits_of(host) == [[("a.txt", "a\nb\nc\n", "A\nB\nc\n"), ("b.txt", "    indented\n", "    changed\n")]]


async def test_apply_diff_roo_xml_args_streamed_from_model_text(tmp_path):
    """The whole path: model text → XmlCallParser → gate → apply_diff."""
    put(tmp_path, {"a.txt": "a\nb\nc\n", "b.txt": "    indented\n"})
    parser = XmlCallParser(TOOLS, lambda: "xml-1")
    text = f"I'll edit both files.\n<apply_diff>\n<args>{ROO_ARGS}</args>\n</apply_diff>"
    visible = "".join(parser.feed(text[i : i + 7]) for i in range(0, len(text), 7)) + parser.finish()
    assert visible == "I'll edit both files.\n"
    [call] = parser.calls
    async with running(tmp_path) as session:
        check(await call_tool(session, call.name, **call.arguments), None, "Changes successfully applied to a.txt, b.txt.")
    assert (text_of(tmp_path, "a.txt"), text_of(tmp_path, "b.txt")) == ("A\nB\nc\n", "    changed\n")


async def test_apply_diff_roo_xml_args_failing_file_applies_nothing(tmp_path):
    put(tmp_path, {"a.txt": "a\nb\nc\n", "b.txt": "something else\n"})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        result = await call_tool(session, "apply_diff", args=ROO_ARGS)
    assert result.error is not None and result.error.type == "ToolError"
    assert result.text.startswith("No match for SEARCH block 1 in b.txt.")
    assert host.edits == [] and text_of(tmp_path, "a.txt") == "a\nb\nc\n"


# ================================================================ insert_content

INSERT = [
    ("line 1", "a\nb\nc\n", 1, "x", "a line 1", "x\na\nb\nc\n", "Inserted 1 line(s) at line 1 of f.txt."),
    ("a middle line", "a\nb\nc\n", 2, "x\ny", "", "a\nx\ny\nb\nc\n", "Inserted 2 line(s) at line 2 of f.txt."),
    ("line 0 appends", "a\nb\n", 0, "x", "", "a\nb\nx\n", "Inserted 1 line(s) at the end of f.txt."),
    ("one past the last line appends", "a\nb\n", 3, "x", "", "a\nb\nx\n", "Inserted 1 line(s) at line 3 of f.txt."),
    ("a final newline in the content is not an extra line", "a\n", 1, "x\n", "", "x\na\n", "Inserted 1 line(s) at line 1 of f.txt."),
    ("indentation kept", "def f():\n    pass\n", 2, "    x = 1", "", "def f():\n    x = 1\n    pass\n", "Inserted 1 line(s) at line 2 of f.txt."),
    ("file without a final newline", "a\nb", 0, "c", "", "a\nb\nc\n", "Inserted 1 line(s) at the end of f.txt."),
    ("keeps CRLF line endings", "a\r\nb\r\n", 2, "x", "", "a\r\nx\r\nb\r\n", "Inserted 1 line(s) at line 2 of f.txt."),
]


@pytest.mark.parametrize("old, line, content, _, new, text", [r[1:] for r in INSERT], ids=[r[0] for r in INSERT])
async def test_insert_content(tmp_path, old, line, content, _, new, text):
    put(tmp_path, {"f.txt": old})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        check(await call_tool(session, "insert_content", path="f.txt", line=line, content=content), None, text)
    assert text_of(tmp_path, "f.txt") == new
    assert edits_of(host) == [[("f.txt", old, new)]]


async def test_insert_content_starts_a_new_file_at_line_0(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        check(await call_tool(session, "insert_content", path="new/f.txt", line=0, content="first"), None,
              "Inserted 1 line(s) at the end of new/f.txt.")
    assert text_of(tmp_path, "new/f.txt") == "first\n"
    assert edits_of(host) == [[("new/f.txt", None, "first\n")]]
    assert host.approvals[0].title == "Create new/f.txt?"


INSERT_ERRORS = [
    ("past the end", "f.txt", 9, "ToolError", "line 9 is past the end of f.txt (3 lines); use 0 to append."),
    ("new file at line 2", "new.txt", 2, "ToolError", "File not found: new.txt (a new file can only be started at line 0 or 1)."),
    ("negative line", "f.txt", -1, "InvalidParams", "Invalid value for parameter 'line': Input should be greater than or equal to 0." + RETRY),
]


@pytest.mark.parametrize("path, line, error, text", [r[1:] for r in INSERT_ERRORS], ids=[r[0] for r in INSERT_ERRORS])
async def test_insert_content_errors(tmp_path, path, line, error, text):
    put(tmp_path, {"f.txt": "a\nb\nc\n"})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        check(await call_tool(session, "insert_content", path=path, line=line, content="x"), error, text)
    assert text_of(tmp_path, "f.txt") == "a\nb\nc\n"
    assert not (tmp_path / "new.txt").exists()
    assert host.approvals == [] and host.edits == []


# ================================================================ search_and_replace

SEARCH_AND_REPLACE: list[tuple[str, str, dict[str, Any], str, str]] = [
    ("literal: regex characters are literal", "x = a.b(c)\ny = axb(c)\n", {"search": "a.b(c)", "replace": "Z"},
     "x = Z\ny = axb(c)\n", "Replaced 1 occurrence(s) in f.txt."),
    ("literal: backslashes in the replacement are literal", "path\n", {"search": "path", "replace": r"C:\new\1"},
     "C:\\new\\1\n", "Replaced 1 occurrence(s) in f.txt."),
    ("every occurrence", "a a\na\n", {"search": "a", "replace": "b"}, "b b\nb\n", "Replaced 3 occurrence(s) in f.txt."),
    ("use_regex with groups", "width=10\nheight=20\n", {"search": r"(\w+)=(\d+)", "replace": r"\2=\1", "use_regex": True},
     "10=width\n20=height\n", "Replaced 2 occurrence(s) in f.txt."),
    ("use_regex with anchors per line", "a1\nb1\n", {"search": r"^(\w)", "replace": r"<\1>", "use_regex": True},
     "<a>1\n<b>1\n", "Replaced 2 occurrence(s) in f.txt."),
    ("ignore_case", "Hello hello HELLO help\n", {"search": "hello", "replace": "bye", "ignore_case": True},
     "bye bye bye help\n", "Replaced 3 occurrence(s) in f.txt."),
    ("case matters by default", "Hello hello\n", {"search": "hello", "replace": "bye"}, "Hello bye\n", "Replaced 1 occurrence(s) in f.txt."),
    ("start_line and end_line limit the lines", "x\nx\nx\nx\n", {"search": "x", "replace": "y", "start_line": 2, "end_line": 3},
     "x\ny\ny\nx\n", "Replaced 2 occurrence(s) in f.txt."),
    ("start_line only", "x\nx\nx\n", {"search": "x", "replace": "y", "start_line": 3}, "x\nx\ny\n", "Replaced 1 occurrence(s) in f.txt."),
    ("end_line only", "x\nx\nx\n", {"search": "x", "replace": "y", "end_line": 1}, "y\nx\nx\n", "Replaced 1 occurrence(s) in f.txt."),
    ("keeps CRLF line endings", "a\r\nb\r\n", {"search": "b", "replace": "c"}, "a\r\nc\r\n", "Replaced 1 occurrence(s) in f.txt."),
    ("a match across lines", "a\nb\n", {"search": "a\nb", "replace": "ab"}, "ab\n", "Replaced 1 occurrence(s) in f.txt."),
]


@pytest.mark.parametrize("old, params, new, text", [r[1:] for r in SEARCH_AND_REPLACE], ids=[r[0] for r in SEARCH_AND_REPLACE])
async def test_search_and_replace(tmp_path, old, params, new, text):
    put(tmp_path, {"f.txt": old})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        check(await call_tool(session, "search_and_replace", path="f.txt", **params), None, text)
    assert text_of(tmp_path, "f.txt") == new
    assert edits_of(host) == [[("f.txt", old, new)]]


SEARCH_AND_REPLACE_ERRORS = [
    ("no match", {"search": "zzz", "replace": "y"}, "ToolError", "No match for 'zzz' in f.txt; nothing was changed."),
    ("match only outside the line range", {"search": "a", "replace": "y", "start_line": 2}, "ToolError",
     "No match for 'a' in f.txt; nothing was changed."),
    ("invalid regex", {"search": "(a", "replace": "y", "use_regex": True}, "InvalidParams",
     "Invalid value for parameter 'search': missing ) at position 2."),
    ("bad group in the replacement", {"search": "a", "replace": r"\9", "use_regex": True}, "InvalidParams", None),
    ("empty search", {"search": "", "replace": "y"}, "InvalidParams",
     "Invalid value for parameter 'search': String should have at least 1 character." + RETRY),
    ("missing file", {"path": "nope.txt", "search": "a", "replace": "y"}, "ToolError", "File not found: nope.txt"),
]


@pytest.mark.parametrize("params, error, text", [r[1:] for r in SEARCH_AND_REPLACE_ERRORS], ids=[r[0] for r in SEARCH_AND_REPLACE_ERRORS])
async def test_search_and_replace_errors(tmp_path, params, error, text):
    put(tmp_path, {"f.txt": "a\nb\n"})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        result = await call_tool(session, "search_and_replace", **{"path": "f.txt", **params})
    assert (result.error.type if result.error else None) == error, result.text
    if text is not None:
        assert result.text == text
    if error == "InvalidParams":
        assert "parameter 'search'" in result.text or "parameter 'replace'" in result.text
    assert text_of(tmp_path, "f.txt") == "a\nb\n"
    assert host.approvals == [] and host.edits == []


# ================================================================ execute_command

COMMANDS = [
    ("output and exit code", {"command": "echo hi"}, "Command executed in '.'. Exit code: 0\nOutput:\nhi"),
    ("a non-zero exit is not a tool error", {"command": "echo oops; exit 3"}, "Command executed in '.'. Exit code: 3\nOutput:\noops"),
    ("stderr is captured", {"command": "echo out; echo err >&2"}, "Command executed in '.'. Exit code: 0\nOutput:\nout\nerr"),
    ("no output", {"command": "true"}, "Command executed in '.'. Exit code: 0\nOutput:\n(no output)"),
    ("runs in the workspace folder", {"command": "cat marker.txt"}, "Command executed in '.'. Exit code: 0\nOutput:\nroot"),
    ("cwd parameter", {"command": "cat marker.txt", "cwd": "sub"}, "Command executed in 'sub'. Exit code: 0\nOutput:\nsub"),
    ("shell syntax (sh -c)", {"command": "for i in 1 2; do echo $i; done | tr '\\n' ,"}, "Command executed in '.'. Exit code: 0\nOutput:\n1,2,"),
    ("stdin is empty", {"command": "cat; echo done"}, "Command executed in '.'. Exit code: 0\nOutput:\ndone"),
]


@pytest.mark.parametrize("params, text", [r[1:] for r in COMMANDS], ids=[r[0] for r in COMMANDS])
async def test_execute_command(tmp_path, params, text):
    put(tmp_path, {"marker.txt": "root\n", "sub/marker.txt": "sub\n"})
    host = MemoryHost()
    async with running(tmp_path, host=host) as session:
        check(await call_tool(session, "execute_command", **params), None, text)
    [request] = host.approvals
    assert (request.kind, request.tool) == ("tool", "execute_command")
    assert request.title == f"Run `{params['command']}`?"
    assert request.detail == f"$ {params['command']}\n(in {params.get('cwd', '.')})"


COMMAND_ERRORS = [
    ("cwd outside the workspace", {"command": "touch ran", "cwd": ".."}, "OutsideWorkspace", "Access to '..' is denied"),
    ("cwd not a directory", {"command": "touch ran", "cwd": "f.txt"}, "ToolError", "cwd is not a directory: f.txt"),
    ("cwd missing", {"command": "touch ran", "cwd": "nope"}, "ToolError", "cwd is not a directory: nope"),
    ("empty command", {"command": ""}, "InvalidParams", "Invalid value for parameter 'command': String should have at least 1 character."),
    ("zero timeout", {"command": "touch ran", "timeout": 0}, "InvalidParams", "Invalid value for parameter 'timeout': Input should be greater than 0."),
]


@pytest.mark.parametrize("params, error, starts", [r[1:] for r in COMMAND_ERRORS], ids=[r[0] for r in COMMAND_ERRORS])
async def test_execute_command_refused_before_asking(tmp_path, params, error, starts):
    (tmp_path / "ws").mkdir()
    root = tmp_path / "ws"
    put(root, {"f.txt": "x\n"})
    host = MemoryHost()
    async with running(root, host=host) as session:
        result = await call_tool(session, "execute_command", **params)
    assert result.error is not None and result.error.type == error
    assert result.text.startswith(starts), result.text
    assert host.approvals == []
    assert not (root / "ran").exists() and not (tmp_path / "ran").exists()


async def test_execute_command_denied_does_not_run(tmp_path):
    host = denying("not now")
    async with running(tmp_path, host=host) as session:
        result = await call_tool(session, "execute_command", command="touch ran")
    check(result, "Denied", "The user denied this operation.\n<feedback>\nnot now\n</feedback>")
    assert not (tmp_path / "ran").exists()


async def test_execute_command_auto_approved(tmp_path):
    host = MemoryHost()
    async with running(tmp_path, host=host, autoApprove={"command": True}) as session:
        check(await call_tool(session, "execute_command", command="echo ok"), None, "Command executed in '.'. Exit code: 0\nOutput:\nok")
    assert host.approvals == []


async def test_execute_command_runs_in_the_editors_terminal_when_it_offers_one(tmp_path):
    """A host that runs commands itself (ACP's terminal/*) gets the command, the folder and the
    call; nothing runs on the server's side."""
    put(tmp_path, {"sub/marker.txt": "sub\n"})
    host = MemoryHost()
    host.terminal = lambda command, cwd: CommandOutcome(4, f"ran {command} in {cwd.name}\n")
    async with running(tmp_path, host=host) as session:
        result = await call_tool(session, "execute_command", command="touch ran", cwd="sub")
    check(result, None, "Command executed in 'sub'. Exit code: 4\nOutput:\nran touch ran in sub")
    assert host.commands == [("touch ran", tmp_path / "sub", "call-test")]
    assert not (tmp_path / "sub" / "ran").exists()


async def test_execute_command_timeout_in_the_editors_terminal(tmp_path):
    host = MemoryHost()
    host.terminal = lambda command, cwd: CommandOutcome(None, "partial")
    async with running(tmp_path, host=host, autoApprove={"command": True}) as session:
        result = await call_tool(session, "execute_command", command="sleep 9", timeout=2)
    check(result, "ToolError", "Command timed out after 2s and was stopped: sleep 9\nOutput so far:\npartial")


def _gone(pid: int) -> bool:
    """The process has exited (a zombie that nobody reaped yet counts as exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


async def test_execute_command_timeout_kills_the_process_group(tmp_path):
    command = "sleep 30 & echo $! > child.pid; echo started; wait"
    async with running(tmp_path) as session:
        result = await call_tool(session, "execute_command", command=command, timeout=0.5)
    check(result, "ToolError", f"Command timed out after 0.5s and was stopped: {command}\nOutput so far:\nstarted")
    child = int(text_of(tmp_path, "child.pid"))
    await until(lambda: _gone(child))  # SIGKILL was sent to the group; give the kernel a moment to deliver it


async def test_execute_command_default_timeout_from_settings(tmp_path):
    async with running(tmp_path, commandTimeoutSeconds=0.3) as session:
        result = await call_tool(session, "execute_command", command="sleep 30")
    check(result, "ToolError", "Command timed out after 0.3s and was stopped: sleep 30\nOutput so far:\n(no output)")


async def test_execute_command_long_output_keeps_head_and_tail(tmp_path):
    async with running(tmp_path) as session:
        result = await call_tool(session, "execute_command", command="yes x | head -n 40000")  # 80,000 characters
    half = "x\n" * 12_500
    output = half + "\n[... 30000 characters cut ...]\n" + half.rstrip("\n")
    check(result, None, "Command executed in '.'. Exit code: 0\nOutput:\n" + output)


async def test_execute_command_returns_when_the_shell_exits_and_leaves_background_jobs_running(tmp_path):
    command = "sleep 30 & echo $! > job.pid; echo started"
    async with running(tmp_path) as session:
        result = await call_tool(session, "execute_command", command=command, timeout=20)
    check(result, None, "Command executed in '.'. Exit code: 0\nOutput:\nstarted")
    job = int(text_of(tmp_path, "job.pid"))
    assert not _gone(job)  # the server started it in the background: it is still running
    os.kill(job, 9)
