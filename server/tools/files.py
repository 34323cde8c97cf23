"""The read group: read_file, list_files, search_files (ripgrep), list_code_definition_names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

import errno
import json
import os
import posixpath
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import anyio
from pydantic import Field


if TYPE_CHECKING:
    from ..workspace import Workspace, WorkspacePath

from .. import untrusted
from . import definitions
from .base import Outcome, Params, Prepared, ToolContext, ToolSpec
from ..errors import ToolError
from ..workspace import Walk

MAX_READ_LINES = 2000
MAX_READ_BYTES = 10 * 1024 * 1024
MAX_LIST_ENTRIES = 500
MAX_SEARCH_RESULTS = 300
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache"})
SKIP_GLOBS = tuple(arg for d in sorted(SKIP_DIRS) for arg in ("--glob", f"!{d}"))
#: How ripgrep's JSON lines of a file's begin and end (with its stats) start: most lines of a
#: result, and search_files shows only matches and context. Any other line is parsed and judged.
OTHER_EVENTS = ('{"type":"begin"', '{"type":"end"')
MATCH_EVENT = b'{"type":"match"'


async def read_text(ctx: ToolContext, target: WorkspacePath) -> str | None:
    """The file's current text: the open editor buffer if there is one, else the disk; None
    when the file does not exist. Only a regular file is read (a FIFO would never end)."""
    text = await ctx.host.document_text(target.path)
    if text is not None:
        return text
    if target.path.is_dir():
        raise ToolError(f"'{target.rel}' is a directory, not a file.")
    try:
        data = untrusted.read_bytes(target.path, MAX_READ_BYTES)
    except untrusted.Refused as exc:
        raise ToolError(f"Cannot read '{target.rel}': {exc}.") from None
    if data is not None and b"\0" in data[:8192]:
        raise ToolError(f"'{target.rel}' is a binary file; read_file reads text files only.")
    return None if data is None else data.decode("utf-8", errors="replace")


# ---------------------------------------------------------------- read_file


class ReadFileParams(Params):
    path: str
    start_line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)
    path_fields = ("path",)


def _image_file(target: WorkspacePath, by_content: bool) -> tuple[str, bytes] | None:
    """The file as an image (its type, its bytes) when it is one: a PNG, JPEG, WebP or GIF by its
    name (`by_content`: by its first bytes too); None when it is not. An image larger than a model
    takes: ToolError."""
    from ..images import EXTENSIONS, MAX_IMAGE_BYTES, sniff

    if not by_content and target.path.suffix.lower() not in EXTENSIONS:
        return None
    try:
        with open(target.path, "rb") as f:
            head = f.read(16)
    except OSError:
        return None
    if sniff(head) is None:
        return None
    try:
        data = untrusted.read_bytes(target.path, MAX_IMAGE_BYTES)
    except untrusted.Refused as exc:
        raise ToolError(f"Cannot read the image '{target.rel}': {exc} (a model takes images of at most {MAX_IMAGE_BYTES // 2**20} MiB).") from None
    mime = sniff(data or b"")
    return (mime, data) if mime and data else None


def _image_size(mime: str, data: bytes) -> str:
    """`800×600, ` for a PNG or GIF (read from its header); empty for the others."""
    if mime == "image/png" and len(data) >= 24:
        return f"{int.from_bytes(data[16:20], 'big')}×{int.from_bytes(data[20:24], 'big')} pixels, "
    if mime == "image/gif" and len(data) >= 10:
        return f"{int.from_bytes(data[6:8], 'little')}×{int.from_bytes(data[8:10], 'little')} pixels, "
    return ""


async def _read_file(ctx: ToolContext, p: ReadFileParams, paths: list[WorkspacePath]) -> Prepared:
    target = paths[0]

    def as_image(found: tuple[str, bytes]) -> Outcome:
        """An image file goes to the model as an image (a model without vision gets a note)."""
        mime, data = found
        image_id = ctx.ports.images.put(ctx.conversation_id, mime, data)
        text = f"{target.rel}: an image ({mime}, {_image_size(mime, data)}{len(data):,} bytes), attached to this result."
        return Outcome(text, images=(image_id,))

    async def run() -> Outcome | str:
        if target.path.is_file() and (found := _image_file(target, by_content=False)) is not None:
            return as_image(found)
        try:
            text = await read_text(ctx, target)
        except ToolError:
            if target.path.is_file() and (found := _image_file(target, by_content=True)) is not None:
                return as_image(found)  # an image by its bytes, whatever its name
            raise
        if text is None:
            raise ToolError(f"File not found: {target.rel}")
        lines = text.splitlines()
        total = len(lines)
        start = p.start_line or 1
        end = min(p.end_line or total, total)
        if p.start_line is None and p.end_line is None and total > MAX_READ_LINES:
            end = MAX_READ_LINES
        if total and start > total:
            raise ToolError(f"start_line {start} is past the end of '{target.rel}' ({total} lines).")
        if end < start and total:
            raise ToolError(f"end_line {p.end_line} is before start_line {start}.")
        width = len(str(end))
        body = "\n".join(f"{n:>{width}} | {lines[n - 1]}" for n in range(start, end + 1)) if total else ""
        header = f"{target.rel} (lines {start}-{end} of {total})" if total else f"{target.rel} (empty file)"
        more = f"\n[{total - end} more lines; read them with start_line/end_line]" if end < total else ""
        return f"{header}\n{body}{more}"

    return Prepared(run, f"Read {target.rel}?", target.rel)


# ---------------------------------------------------------------- list_files


class ListFilesParams(Params):
    path: str
    recursive: bool = False
    path_fields = ("path",)


async def _list_files(ctx: ToolContext, p: ListFilesParams, paths: list[WorkspacePath]) -> Prepared:
    target = paths[0]

    async def run() -> str:
        if not target.path.is_dir():
            raise ToolError(f"Not a directory: {target.rel}")
        walk = Walk(ctx.workspace)
        entries = await anyio.to_thread.run_sync(_walk if p.recursive else _scan, walk, target.path)
        if not entries:
            return f"No files found in {target.rel}." + walk.note()
        more = ""
        if len(entries) > MAX_LIST_ENTRIES:
            more = f"\n[{len(entries) - MAX_LIST_ENTRIES} more entries not shown; list a subfolder]"
            entries = entries[:MAX_LIST_ENTRIES]
        return "\n".join(entries) + more + walk.note()

    return Prepared(run, f"List files in {target.rel}?", target.rel)


def _scan(walk: Walk, folder: Path) -> list[str]:
    out = []
    with os.scandir(folder) as it:
        for e in it:
            real = walk.enter(Path(e.path))
            if real is not None:
                out.append(e.name + "/" if real.path.is_dir() else e.name)
    return sorted(out)


def _walk(walk: Walk, folder: Path) -> list[str]:
    """Files (as ripgrep sees them: .gitignore respected), the folders that hold them, and the
    links in those folders that stay inside the workspace (not followed)."""
    files, folders = _rg_files(folder, ["--hidden", *SKIP_GLOBS])
    return sorted({*files, *(f"{d}/" for d in folders - {"."}), *_links(walk, folder, folders)})


def _rg_files(folder: Path, args: Sequence[str]) -> tuple[list[str], set[str]]:
    """The files ripgrep walks under `folder`, and the folders it went through ("." for `folder`).

    During a walk (without --follow) ripgrep neither lists nor opens a symbolic link, to a file
    or to a folder: what it walks stays under `folder`. The links are found by `_links`."""
    files = _rg_lines(["--files", "--no-require-git", *args], folder)
    return files, _folders(files)


def _folders(paths: Iterable[str]) -> set[str]:
    """The folders that hold `paths` (relative, POSIX, as ripgrep prints them) and every folder
    above those, "." for the top. Each folder is named once, however many files it holds."""
    folders = {"."}
    for d in {posixpath.dirname(p) or "." for p in paths}:
        while d not in folders:  # once a folder is in, so are the folders above it
            folders.add(d)
            d = posixpath.dirname(d) or "."
    return folders


def _links(walk: Walk, folder: Path, folders: set[str]) -> list[str]:
    """The links in `folders` (under `folder`), each entered by the walk: those that stay inside
    the workspace, as entries (folders end with /); those that lead outside are skipped."""
    found = []
    for rel in sorted(folders):
        try:
            with os.scandir(folder / rel) as it:
                links = [e for e in it if e.is_symlink() and e.name not in SKIP_DIRS]
        except OSError as exc:
            if exc.errno != errno.ENAMETOOLONG:
                raise
            continue  # deeper than a path may be: ripgrep walked it by a shorter relative path, skipping its links
        for e in links:
            real = walk.enter(Path(e.path))
            if real is not None:
                name = (PurePosixPath(rel) / e.name).as_posix()
                found.append(name + "/" if real.path.is_dir() else name)
    return found


# ---------------------------------------------------------------- search_files


def rg_binary() -> str | None:
    here = Path(sys.executable).parent / "rg"
    if here.exists():
        return str(here)
    return shutil.which("rg")


def _rg_lines(args: list[str], cwd: Path) -> list[str]:
    rg = rg_binary()
    if rg is None:
        raise ToolError("ripgrep (rg) is not installed; Modus lists and searches files with it.")
    proc = subprocess.run([rg, *args], cwd=cwd, capture_output=True, text=True)
    return [line for line in proc.stdout.splitlines() if line]


class SearchFilesParams(Params):
    path: str
    regex: str = Field(min_length=1)
    file_pattern: str | None = None
    path_fields = ("path",)


async def _search_files(ctx: ToolContext, p: SearchFilesParams, paths: list[WorkspacePath]) -> Prepared:
    target = paths[0]
    if rg_binary() is None:
        raise ToolError("search_files needs ripgrep (rg), which is not installed.")

    async def run() -> str:
        return await search(ctx.workspace, target, p.regex, p.file_pattern)

    return Prepared(run, f"Search {target.rel} for /{p.regex}/?", p.regex)


async def search(workspace: Workspace, target: WorkspacePath, regex: str, file_pattern: str | None = None) -> str:
    """search_files' result: ripgrep's matches under `target` (a file or a folder), then the
    note naming the links skipped because they lead outside the workspace.

    ripgrep follows the path it is given, but during its walk it skips every symbolic link, to
    a file or to a folder, and does not say which: nothing outside the workspace is searched.
    The note names the links that lead outside in the folders the result goes through: the
    folder searched and every folder from it down to a file shown. A link in a folder where
    nothing was found is skipped all the same, but not named.

    Why not every folder of the walk (measured on bench/search.py's tree of 20,000 files in
    1,111 folders): ripgrep does not say which folders it walked, so naming every link it
    skipped takes a second walk, `rg --files` for the folders (33 ms) and a scan of each
    (20 ms), against the search's 76 ms: 1.7× raw ripgrep at best, where the target is 1.2×.
    The folders a result goes through are a few hundred at most (MAX_SEARCH_RESULTS files):
    about 6 ms for 300. ripgrep's --debug log names the links to files it skipped, but not
    those to folders, and a log is no interface."""
    rg = rg_binary()
    if rg is None:
        raise ToolError("search_files needs ripgrep (rg), which is not installed.")
    args = [rg, "--json", "--no-require-git", "--context", "1", "--max-columns", "500", "--regexp", regex]
    if file_pattern:
        args += ["--glob", file_pattern]
    # The path is where the target really points (a link given is followed once, here).
    args += ["--", target.rel]  # a folder named like "-x" is a path, not a flag
    output, errors, status = await _run_rg(args, workspace.root)
    found, shown = _format_rg(output.decode(errors="replace"))
    # Exit 2 is an error; with --json stdout still holds a summary, so judge by the matches.
    if status == 2 and found == "Found 0 results.":
        raise ToolError(f"search_files failed: {errors.decode(errors='replace').strip()}")
    walk = Walk(workspace)
    if target.path.is_dir():
        prefix = "" if target.rel == "." else target.rel + "/"  # shown paths are the workspace's
        folders = _folders(f.removeprefix(prefix) for f in shown if f.startswith(prefix))
        await anyio.to_thread.run_sync(_links, walk, target.path, folders)
    return found + walk.note()


async def _run_rg(args: list[str], cwd: Path) -> tuple[bytes, bytes, int | None]:
    """ripgrep's output, its errors and its exit status, None when it was stopped: once the
    output holds one match more than a result shows (MAX_SEARCH_RESULTS), it is read no further
    and ripgrep is killed. A word common in a large tree makes megabytes of JSON that no result
    shows, and reading them all took longer than the search (bench/search.py)."""
    output, errors = bytearray(), bytearray()
    stopped = False
    process = await anyio.open_process(
        args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )

    async def drain() -> None:
        assert process.stderr is not None
        async for data in process.stderr:
            errors.extend(data)

    async with process:  # leaving it: the pipes closed, ripgrep waited for (killed if cancelled)
        assert process.stdout is not None
        async with anyio.create_task_group() as tg:
            tg.start_soon(drain)  # read alongside: a full pipe of errors would stall ripgrep
            matches = read = 0  # the match events in output[:read], whole lines
            async for data in process.stdout:
                output += data
                end = output.rfind(b"\n") + 1
                matches += output.count(MATCH_EVENT, read, end)  # an event starts a line
                read = end
                if matches > MAX_SEARCH_RESULTS:
                    stopped = True
                    process.kill()  # its errors end with it
                    break
    if stopped:
        return bytes(output[:read]), bytes(errors), None
    return bytes(output), bytes(errors), process.returncode


def _format_rg(output: str) -> tuple[str, list[str]]:
    """ripgrep's JSON lines as `# file` sections of numbered lines, matches and context; and
    the files of those sections (paths as ripgrep prints them, without "./")."""
    sections: dict[str, list[tuple[int, str]]] = {}
    matches = 0
    for line in _json_lines(output):
        if line.startswith(OTHER_EVENTS):  # not even parsed
            continue
        event = json.loads(line)
        if event["type"] not in ("match", "context"):
            continue
        data = event["data"]
        path = data["path"].get("text", "").removeprefix("./")  # rg prints "./x" when searching "."
        if event["type"] == "match":
            matches += 1
            if matches > MAX_SEARCH_RESULTS:
                break
        text = data["lines"].get("text", "").rstrip("\n")
        sections.setdefault(path, []).append((data["line_number"], text))
    if not matches:
        return "Found 0 results.", []
    shown = min(matches, MAX_SEARCH_RESULTS)
    out = [f"Found {shown} result{'s' if shown != 1 else ''}" + (" (more were cut off)." if matches > shown else ".")]
    for path, rows in sections.items():
        out.append(f"\n# {path}")
        previous = None
        for number, text in rows:
            if previous is not None and number > previous + 1:
                out.append("----")
            out.append(f"{number:>4} | {text}")
            previous = number
        out.append("----")
    return "\n".join(out), list(sections)


def _json_lines(output: str) -> Iterator[str]:
    """ripgrep's JSON lines, one at a time: split at "\n" only (JSON escapes it in a string, but
    not U+2028 or U+0085, where str.splitlines would split a line), and as they are read, so
    that the rest of a large output is not split once MAX_SEARCH_RESULTS matches are found."""
    start = 0
    while start < len(output):
        end = output.find("\n", start)
        end = len(output) if end < 0 else end
        if end > start:
            yield output[start:end]
        start = end + 1


# ---------------------------------------------------------------- list_code_definition_names


class ListDefinitionsParams(Params):
    path: str
    path_fields = ("path",)


async def _list_definitions(ctx: ToolContext, p: ListDefinitionsParams, paths: list[WorkspacePath]) -> Prepared:
    target = paths[0]

    async def run() -> str:
        walk = Walk(ctx.workspace)
        if target.path.is_dir():  # its files, each entered by the walk: (shown as, really read)
            entered = ((f, walk.enter(f)) for f in sorted(target.path.iterdir()))
            files = [(f, real) for f, real in entered if real is not None and real.path.is_file()]
        elif target.path.exists():
            files = [(target.path, target)]
        else:
            raise ToolError(f"File not found: {target.rel}")
        sections = []
        for shown, real in files:
            try:
                text = await read_text(ctx, real)
            except ToolError:  # binary, too large, not a regular file: no definitions to show
                continue
            found = definitions.outline(real.path.name, text or "")
            if found:
                sections.append(f"# {ctx.workspace.relative(shown)}\n" + "\n".join(found))
        body = "\n\n".join(sections) if sections else f"No definitions found in {target.rel}."
        return body + walk.note()

    return Prepared(run, f"List definitions in {target.rel}?", target.rel)


TOOLS = (
    ToolSpec(
        "read_file",
        "Read a file's contents, with line numbers. Optional start_line/end_line (1-based, inclusive).",
        ReadFileParams,
        _read_file,
        group="read",
        approval="read",
    ),
    ToolSpec(
        "list_files",
        "List files and folders in a directory (recursive: true to descend, .gitignore respected).",
        ListFilesParams,
        _list_files,
        group="read",
        approval="read",
    ),
    ToolSpec(
        "search_files",
        "Search files under a directory with a regular expression (ripgrep syntax); optional file_pattern glob.",
        SearchFilesParams,
        _search_files,
        group="read",
        approval="read",
    ),
    ToolSpec(
        "list_code_definition_names",
        "List the classes, functions and methods defined in a file, or in the files of a directory.",
        ListDefinitionsParams,
        _list_definitions,
        group="read",
        approval="read",
    ),
)
