"""The edit group: write_to_file, apply_diff, insert_content, search_and_replace.

Each tool computes the whole new text of its file(s) before the user is asked, so the approval
shows a diff and a change that cannot apply fails before anything is sent. The change goes to
the editor as one `workspace/applyEdit` when it can apply edits, else it is written to disk
atomically by the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import difflib
import os
import re
import tempfile
from typing import Any, Sequence

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError


if TYPE_CHECKING:
    from ..workspace import WorkspacePath

from ..providers.xmlcalls import parse_params
from ..host import FileChange
from .base import Outcome, Params, Prepared, ToolContext, ToolSpec
from .problems import ProblemWatch
from ..errors import EditFailed, InvalidParams, ToolError
from .files import read_text

REGEX_TIMEOUT_S = 1.0


def _keep_line_endings(old: str | None, new: str) -> str:
    if old is not None and "\r\n" in old and "\r\n" not in new:
        return new.replace("\n", "\r\n")
    return new


def unified_diff(changes: Sequence[FileChange]) -> str:
    out: list[str] = []
    for c in changes:
        before = "/dev/null" if c.old_text is None else f"a/{c.target.rel}"
        for line in difflib.unified_diff(
            (c.old_text or "").splitlines(keepends=True),
            c.new_text.splitlines(keepends=True),
            before,
            f"b/{c.target.rel}",
        ):
            out.append(line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n")
    return "".join(out)


def write_atomically(change: FileChange) -> None:
    path = change.target.path
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".modus-tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(change.new_text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


async def apply_changes(ctx: ToolContext, changes: Sequence[FileChange]) -> None:
    if ctx.host.can_apply_edits:
        outcome = await ctx.host.apply_edit(changes, ctx.call_id)
        if not outcome.applied:
            reason = f": {outcome.reason}" if outcome.reason else "."
            raise EditFailed(f"The editor did not apply the edit to {', '.join(c.target.rel for c in changes)}{reason}")
        return
    for change in changes:
        try:
            write_atomically(change)
        except OSError as exc:
            raise ToolError(f"Cannot write '{change.target.rel}': {exc.strerror or exc}") from None


USER_EDITED = "The user edited your proposal before saving it:"


def _prepared_edit(ctx: ToolContext, tool: str, changes: list[FileChange], done: str) -> Prepared:
    """The approval of an edit and what runs once approved: the changes applied, then the
    problems the editor reports that they caused (problems.py). An edit of one file is offered
    for review (the approval's `file`): the user may approve their own text instead."""

    async def run() -> Outcome:
        watch = ProblemWatch.of(ctx.host, ctx.ports.config.settings.diagnostics, [c.target for c in changes])
        if watch is not None:
            await watch.before()
        await apply_changes(ctx, changes)
        found = await watch.after() if watch is not None else None
        if found is None:
            return Outcome(done)
        return Outcome(f"{done}\n\n{found.text}", metadata={"problems": [d.wire() for d in found.problems]})

    names = ", ".join(c.target.rel for c in changes)
    verb = "Create" if all(c.old_text is None for c in changes) else "Edit"
    from protocol.messages import REVIEW_MAX_CHARS, ReviewFile  # with the first edit: start-up need not load them

    fields: dict[str, Any] = {}
    revise = None
    if len(changes) == 1 and max(len(changes[0].old_text or ""), len(changes[0].new_text)) <= REVIEW_MAX_CHARS:
        proposal = changes[0]
        fields["file"] = ReviewFile(path=proposal.target.rel, original=proposal.old_text, proposed=proposal.new_text)

        def revise(content: str) -> Prepared:
            if content == proposal.new_text:
                return prepared
            saved = FileChange(proposal.target, proposal.old_text, content)
            said = unified_diff([FileChange(proposal.target, proposal.new_text, content)])
            return _prepared_edit(ctx, tool, [saved], f"{done}\n\n{USER_EDITED}\n{said}")

    prepared = Prepared(run, f"{verb} {names}?", unified_diff(changes), fields, changes=tuple(changes), revise=revise)
    return prepared


# ---------------------------------------------------------------- write_to_file


class WriteToFileParams(Params):
    path: str
    content: str
    path_fields = ("path",)


async def _write_to_file(ctx: ToolContext, p: WriteToFileParams, paths: list[WorkspacePath]) -> Prepared:
    target = paths[0]
    if target.path.is_dir():
        raise ToolError(f"'{target.rel}' is a directory.")
    old = await read_text(ctx, target)
    content = p.content if p.content.endswith("\n") or not p.content else p.content + "\n"
    change = FileChange(target, old, _keep_line_endings(old, content))
    lines = content.count("\n")
    return _prepared_edit(ctx, "write_to_file", [change], f"The content was successfully saved to {target.rel} ({lines} line{'' if lines == 1 else 's'}).")


# ---------------------------------------------------------------- apply_diff


class DiffFile(Params):
    path: str
    diff: str


class ApplyDiffParams(Params):
    """One file (`path`, `diff`) or several (`files`: [{path, diff}], or Roo's XML `args`).

    All files of one call apply together or not at all.
    """

    path: str | None = None
    diff: str | None = None
    files: list[DiffFile] | None = None

    @model_validator(mode="before")
    @classmethod
    def _roo_args(cls, data: Any) -> Any:
        """`<args><file><path>a</path><diff><content>...</content></diff></file>...</args>`."""
        if isinstance(data, dict) and isinstance(data.get("args"), str) and not data.get("files"):
            files = []
            for block in re.findall(r"<file>(.*?)</file>", data["args"], re.DOTALL):
                item = parse_params(block)
                # A file may carry several <diff> elements; each one's blocks apply in order.
                diffs = re.findall(r"<diff>(.*?)</diff>(?=\s*(?:<diff>|<path>|\Z))", block, re.DOTALL) or [item.get("diff", "")]
                contents = [parse_params(d).get("content", "") if "<content>" in d else d for d in diffs]
                files.append({"path": item.get("path"), "diff": "\n".join(contents)})
            data = {**data, "files": files}
        return data

    @model_validator(mode="after")
    def _one_form(self) -> "ApplyDiffParams":
        if not self.files:
            for name in ("path", "diff"):
                if getattr(self, name) is None:
                    raise PydanticCustomError("missing_param", "Missing value for required parameter '{name}'", {"name": name})
        return self

    def targets(self) -> list[DiffFile]:
        if self.files:
            return self.files
        assert self.path is not None and self.diff is not None
        return [DiffFile(path=self.path, diff=self.diff)]

    def paths(self) -> list[str]:
        return [t.path for t in self.targets()]


_SEARCH, _SEP, _REPLACE = "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"


def parse_blocks(diff: str) -> list[tuple[int | None, str, str]]:
    """SEARCH/REPLACE blocks as (start_line hint, search text, replace text)."""
    blocks = []
    lines = diff.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() != _SEARCH:
            i += 1
            continue
        i += 1
        hint = None
        if i < len(lines) and (m := re.fullmatch(r"\s*:start_line:\s*(\d+)\s*", lines[i])):
            hint = int(m.group(1))
            i += 1
        # Roo's separator is exactly 7 dashes; a shorter run is only taken for one right after a
        # hint, so a search that starts with a `---` line (YAML front matter) keeps it.
        if i < len(lines) and re.fullmatch(r"\s*-{3,}\s*" if hint else r"\s*-{7}\s*", lines[i]):
            i += 1
        search: list[str] = []
        while i < len(lines) and lines[i].strip() != _SEP:
            search.append(lines[i])
            i += 1
        if i >= len(lines):
            raise ToolError(f"SEARCH block {len(blocks) + 1} has no '{_SEP}' separator.")
        i += 1
        replace: list[str] = []
        while i < len(lines) and lines[i].strip() != _REPLACE:
            replace.append(lines[i])
            i += 1
        if i >= len(lines):
            raise ToolError(f"SEARCH block {len(blocks) + 1} has no '{_REPLACE}' marker.")
        i += 1
        blocks.append((hint, "\n".join(search), "\n".join(replace)))
    if not blocks:
        raise ToolError(
            "The diff has no SEARCH/REPLACE block. Use:\n<<<<<<< SEARCH\n:start_line:N\n-------\n"
            "[exact lines to find]\n=======\n[new lines]\n>>>>>>> REPLACE"
        )
    return blocks


def _find(lines: list[str], search: list[str], hint: int | None) -> int | None:
    """Index of the first line of `search` in `lines`: exact first, then ignoring surrounding blanks."""
    n = len(search)
    for norm in (lambda s: s, lambda s: s.rstrip(), lambda s: s.strip()):
        wanted = [norm(s) for s in search]
        hits = [i for i in range(len(lines) - n + 1) if [norm(s) for s in lines[i : i + n]] == wanted]
        if hits:
            if hint is None:
                return hits[0]
            return min(hits, key=lambda i: abs(i + 1 - hint))
    return None


def apply_blocks(text: str, blocks: list[tuple[int | None, str, str]], rel: str) -> str:
    lines = text.split("\n")
    offset = 0
    for number, (hint, search, replace) in enumerate(blocks, 1):
        search_lines = search.split("\n") if search else []
        if not search_lines:
            raise ToolError(f"SEARCH block {number} for {rel} is empty.")
        at = _find(lines, search_lines, hint + offset if hint else None)
        if at is None:
            near = f" near line {hint}" if hint else ""
            raise ToolError(
                f"No match for SEARCH block {number}{near} in {rel}. The SEARCH text must match the file's "
                "current lines exactly (read the file again with read_file). No change was applied."
            )
        replace_lines = replace.split("\n") if replace else []
        lines[at : at + len(search_lines)] = replace_lines
        offset += len(replace_lines) - len(search_lines)
    return "\n".join(lines)


async def _apply_diff(ctx: ToolContext, p: ApplyDiffParams, paths: list[WorkspacePath]) -> Prepared:
    edited: dict[Any, tuple[WorkspacePath, str, str]] = {}  # by real path: a file named twice gets both diffs
    for target, item in zip(paths, p.targets(), strict=True):
        if target.path in edited:
            _, old, text = edited[target.path]
        else:
            old = await read_text(ctx, target)
            if old is None:
                raise ToolError(f"File not found: {target.rel} (apply_diff edits existing files; use write_to_file to create one).")
            text = old.replace("\r\n", "\n")
        blocks = parse_blocks(item.diff)
        edited[target.path] = (target, old, apply_blocks(text, blocks, target.rel))
    changes = [FileChange(target, old, _keep_line_endings(old, new)) for target, old, new in edited.values()]
    names = ", ".join(c.target.rel for c in changes)
    return _prepared_edit(ctx, "apply_diff", changes, f"Changes successfully applied to {names}.")


# ---------------------------------------------------------------- insert_content


class InsertContentParams(Params):
    path: str
    line: int = Field(ge=0)
    content: str
    path_fields = ("path",)


async def _insert_content(ctx: ToolContext, p: InsertContentParams, paths: list[WorkspacePath]) -> Prepared:
    target = paths[0]
    old = await read_text(ctx, target)
    if old is None and p.line > 1:
        raise ToolError(f"File not found: {target.rel} (a new file can only be started at line 0 or 1).")
    text = (old or "").replace("\r\n", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline is not a line
    if p.line > len(lines) + 1:
        raise ToolError(f"line {p.line} is past the end of {target.rel} ({len(lines)} lines); use 0 to append.")
    at = len(lines) if p.line == 0 else p.line - 1
    inserted = p.content.removesuffix("\n").split("\n")
    lines[at:at] = inserted
    new = "\n".join(lines) + "\n"
    where = "at the end" if p.line == 0 else f"at line {p.line}"
    return _prepared_edit(
        ctx,
        "insert_content",
        [FileChange(target, old, _keep_line_endings(old, new))],
        f"Inserted {len(inserted)} line(s) {where} of {target.rel}.",
    )


# ---------------------------------------------------------------- search_and_replace


class SearchAndReplaceParams(Params):
    path: str
    search: str = Field(min_length=1)
    replace: str
    use_regex: bool = False
    ignore_case: bool = False
    start_line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)
    path_fields = ("path",)


async def _search_and_replace(ctx: ToolContext, p: SearchAndReplaceParams, paths: list[WorkspacePath]) -> Prepared:
    target = paths[0]
    old = await read_text(ctx, target)
    if old is None:
        raise ToolError(f"File not found: {target.rel}")
    import regex  # its time-bounded matching, loaded on the first use

    flags = regex.IGNORECASE if p.ignore_case else 0
    try:
        pattern = regex.compile(p.search if p.use_regex else regex.escape(p.search), flags | regex.MULTILINE)
    except regex.error as exc:
        raise InvalidParams(f"Invalid value for parameter 'search': {exc}.") from None
    lines = old.split("\n")
    start = (p.start_line or 1) - 1
    end = p.end_line or len(lines)
    head, body, tail = lines[:start], "\n".join(lines[start:end]), lines[end:]
    replacement = p.replace if p.use_regex else p.replace.replace("\\", "\\\\")
    try:
        new_body, count = pattern.subn(replacement, body, timeout=REGEX_TIMEOUT_S)
    except TimeoutError:
        raise ToolError(f"The search pattern took too long on {target.rel}; simplify it.") from None
    except (regex.error, IndexError) as exc:
        raise InvalidParams(f"Invalid value for parameter 'replace': {exc}.") from None
    if count == 0:
        raise ToolError(f"No match for '{p.search}' in {target.rel}; nothing was changed.")
    new = "\n".join([*head, new_body, *tail]) if head or tail else new_body
    return _prepared_edit(
        ctx,
        "search_and_replace",
        [FileChange(target, old, new)],
        f"Replaced {count} occurrence(s) in {target.rel}.",
    )


TOOLS = (
    ToolSpec(
        "write_to_file",
        "Create a file or replace its whole content. Give the complete content, never a fragment.",
        WriteToFileParams,
        _write_to_file,
        group="edit",
        approval="edit",
        edits=True,
    ),
    ToolSpec(
        "apply_diff",
        "Change an existing file with SEARCH/REPLACE blocks: <<<<<<< SEARCH, :start_line:N, -------, "
        "the exact current lines, =======, the new lines, >>>>>>> REPLACE. Several blocks may follow each other.",
        ApplyDiffParams,
        _apply_diff,
        group="edit",
        approval="edit",
        edits=True,
    ),
    ToolSpec(
        "insert_content",
        "Insert lines before the given 1-based line of a file (line 0 appends at the end).",
        InsertContentParams,
        _insert_content,
        group="edit",
        approval="edit",
        edits=True,
    ),
    ToolSpec(
        "search_and_replace",
        "Replace every occurrence of a text (or a regex with use_regex) in a file, optionally within start_line..end_line.",
        SearchAndReplaceParams,
        _search_and_replace,
        group="edit",
        approval="edit",
        edits=True,
    ),
)
