"""Code actions: on a selection, "Plan a change here" (enter planning with the file as scope)
and "Explain this" (Ask mode); on a diagnostic, "Fix this with the agent" (Debug mode). Each
command starts a turn in the current conversation and answers at once; the work streams as
`modus/update`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from lsprotocol import types as lsp
from pygls.uris import to_fs_path

from protocol.names import CODE_ACTION_PLAN_KIND, CODE_ACTION_PLAN_TITLE, Command

from ...errors import BadRequest, ToolFailure
from .requests import Routes, validate

if TYPE_CHECKING:
    from pygls.workspace import Workspace as Documents

    from ...agent import Session

EXPLAIN_KIND = "refactor.modus.explain"
FIX_KIND = "quickfix.modus.fix"
KINDS = [CODE_ACTION_PLAN_KIND, EXPLAIN_KIND, FIX_KIND]
#: The most lines of a selection quoted in the message.
MAX_LINES = 400
MAX_FILE = 10 * 1024 * 1024


def register(routes: Routes) -> None:
    @routes.server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=KINDS))
    def code_actions(params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return actions(params)

    async def start_in_mode(session: "Session", args: tuple) -> Any:
        from protocol import StartInModeArgs

        a = validate(StartInModeArgs, one_argument(args, Command.START_IN_MODE), Command.START_IN_MODE)
        quoted = excerpt(routes.server.workspace, session, a.uri, a.range)
        return (await session.start_in_mode(a.mode, f"{a.prompt.strip()}\n\n{quoted.text}", (quoted.rel,))).wire()

    routes.command(Command.START_IN_MODE, start_in_mode)


def actions(params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    uri, rng = params.text_document.uri, params.range
    found = []
    # on a selection, or when asked (Ctrl+., or a client that does not say): not a light bulb on
    # every line the cursor visits (VS Code asks then with triggerKind Automatic)
    if rng.start != rng.end or params.context.trigger_kind != lsp.CodeActionTriggerKind.Automatic:
        found += [
            _action(CODE_ACTION_PLAN_TITLE, CODE_ACTION_PLAN_KIND, Command.PLAN_SELECTION, {"uri": uri, "range": _wire(rng)}),
            _action("Explain this", EXPLAIN_KIND, Command.START_IN_MODE, _start("ask", uri, rng, "Explain this code.")),
        ]
    for d in params.context.diagnostics:
        source = f" ({d.source})" if d.source else ""
        prompt = f"Fix this problem{source}: {d.message}"
        found.append(_action("Fix this with the agent", FIX_KIND, Command.START_IN_MODE, _start("debug", uri, d.range, prompt), d))
    wanted = params.context.only
    return [a for a in found if not wanted or any(a.kind == k or a.kind.startswith(k + ".") for k in wanted)]


def _action(title: str, kind: str, name: str, argument: dict, diagnostic: lsp.Diagnostic | None = None) -> lsp.CodeAction:
    return lsp.CodeAction(
        title=title,
        kind=kind,
        command=lsp.Command(title=title, command=name, arguments=[argument]),
        diagnostics=[diagnostic] if diagnostic else None,
    )


def _start(mode: str, uri: str, rng: lsp.Range, prompt: str) -> dict:
    return {"mode": mode, "uri": uri, "range": _wire(rng), "prompt": prompt}


def _wire(rng: lsp.Range) -> dict:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def one_argument(args: tuple, name: str) -> Any:
    if len(args) != 1:
        raise BadRequest(f"{name} takes one argument, an object: [{{...}}]")
    return args[0]


class Excerpt(NamedTuple):
    rel: str  # the file, workspace-relative
    text: str  # `File: …, lines a-b:` and the numbered lines


def lines_of(rng: dict) -> tuple[int, int]:
    """The 0-based first and last line a range covers (an end at column 0 ends the line before)."""
    try:
        start, end = int(rng["start"]["line"]), int(rng["end"]["line"])
        end_char = int(rng["end"].get("character", 0))
    except (KeyError, TypeError, ValueError, AttributeError):
        raise BadRequest("range: must be {start: {line, character}, end: {line, character}}") from None
    if start < 0 or end < start:
        raise BadRequest(f"range: lines {start}..{end} are not a range")
    if end > start and end_char == 0:
        end -= 1
    return start, end


def excerpt(documents: "Documents", session: "Session", uri: str, rng: dict) -> "Excerpt":
    """`File: <path>, lines a-b:` and the selected lines, numbered: from the editor's buffer when
    the file is open there (`documents`: pygls's, the editor's open files), else from disk (a
    workspace file only)."""
    from ...untrusted import Refused, read_text

    first, last = lines_of(rng)
    path = to_fs_path(uri) if uri.startswith("file:") else None
    if not path:
        raise BadRequest(f"uri: not a file: {uri}")
    try:
        target = session.workspace.resolve(path)
    except ToolFailure as exc:
        raise BadRequest(f"uri: {exc.message}") from None
    if uri in documents.text_documents:
        text = documents.get_text_document(uri).source
    else:
        try:
            text = read_text(Path(target.path), MAX_FILE, inside=session.workspace.root)
        except Refused as exc:
            raise BadRequest(f"uri: {target.rel}: {exc}") from None
        if text is None:
            raise BadRequest(f"uri: no such file: {target.rel}")
    lines = text.splitlines()
    chosen = lines[first : min(last + 1, first + MAX_LINES)]
    cut = f"\n(the selection goes on to line {last + 1}; {MAX_LINES} lines shown)" if last + 1 - first > MAX_LINES else ""
    width = len(str(first + len(chosen)))
    numbered = "\n".join(f"{n:>{width}} | {line}" for n, line in enumerate(chosen, first + 1))
    return Excerpt(target.rel, f"File: {target.rel}, lines {first + 1}-{first + len(chosen)}:\n{numbered}{cut}")
