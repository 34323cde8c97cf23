"""The offline demo: a scripted agent driven through the real server over stdio.

It plays the editor: starts `python -m server` in a temporary workspace, approves what the agent
asks, applies the workspace edits it receives, and prints what happens as a transcript.
Nothing is left behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from pygls.uris import to_fs_path

from protocol import Command, methods

from ..lsp.server import converter

SCRIPT = Path(__file__).with_name("script.yaml")
REQUEST = "Build a tiny greeting app: design it first, then write the code."
PLAN_REQUEST = "Add a --shout option that prints the greeting in capitals."
MCP_REQUEST = "How does --shout work? Check the Python docs."
CHECK_REQUEST = "/check Ada"
#: The project's own files, as a Claude Code user has them: a prompt file and a PreToolUse hook.
CHECK_COMMAND = (
    "---\ndescription: Run the program with a name and say what it printed\nargument-hint: <name>\nmode: code\n---\n"
    "Run `python3 src/app.py $1 --shout` and tell me what it printed.\n"
)
GUARD = """import json, sys

call = json.load(sys.stdin)
if call["tool_name"] == "Bash" and call["tool_input"]["command"].lstrip().startswith("rm "):
    print("No rm in this project: leave the files where they are.", file=sys.stderr)
    sys.exit(2)
"""
WIDTH = 100


def say(who: str, text: str) -> None:
    lines = [part for line in text.strip().splitlines() for part in textwrap.wrap(line, WIDTH - 12) or [""]] or [""]
    print(f"{who:<9}▸ {lines[0]}")
    for line in lines[1:]:
        print(f"{'':<11}{line}")


def note(symbol: str, text: str) -> None:
    lines = text.splitlines() or [""]
    print(f"    {symbol} {lines[0]}")
    for line in lines[1:]:
        print(f"      {line}")


def apply_to_disk(edit: lsp.WorkspaceEdit) -> list[str]:
    """Apply a workspace edit as VS Code would, then save: create the files, then apply each
    document's edits. Returns the URIs of the edited documents."""
    edited = []
    for change in edit.document_changes or []:
        if isinstance(change, lsp.CreateFile):
            path = Path(to_fs_path(change.uri))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        elif isinstance(change, lsp.TextDocumentEdit):
            path = Path(to_fs_path(change.text_document.uri))
            text = path.read_bytes().decode()
            spans = [(_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in change.edits]
            for start, end, new_text in sorted(spans, key=lambda span: span[0], reverse=True):
                text = text[:start] + new_text + text[end:]
            path.write_bytes(text.encode())
            edited.append(change.text_document.uri)
    return edited


def _offset(text: str, position: lsp.Position) -> int:
    """Where an LSP position (UTF-16 columns) falls in `text`, clamped as VS Code clamps it: past
    the last line is the end of the text, past the end of a line is the end of that line."""
    breaks = list(re.finditer(r"\r\n|\r|\n", text))
    if position.line > len(breaks):
        return len(text)
    start = breaks[position.line - 1].end() if position.line else 0
    line = text[start : breaks[position.line].start() if position.line < len(breaks) else len(text)]
    units = line.encode("utf-16-le")[: 2 * position.character]
    return start + len(units.decode("utf-16-le", errors="ignore"))


class DemoEditor:
    """The editor's side: renders updates, answers approvals, applies edits to disk."""

    def __init__(self, workspace: Path):
        self.workspace = workspace
        self.client = LanguageClient("modus-demo", "1", converter_factory=converter)
        self.turn_done = asyncio.Event()
        self.streamed: list[str] = []
        self.mcp_answers: list[str] = []
        #: the shell commands a hook refused, and what the others printed
        self.blocked: list[str] = []
        self.command_output = ""
        handlers = {
            methods.UPDATE: self.on_update,
            methods.APPROVAL: self.on_approval,
            lsp.WORKSPACE_APPLY_EDIT: self.on_apply_edit,
            lsp.WINDOW_LOG_MESSAGE: lambda params: None,
            lsp.WINDOW_SHOW_MESSAGE: lambda params: note("⚠", params.message),  # what an editor shows as a notification
            lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: lambda params: None,
        }
        for method, handler in handlers.items():
            self.client.feature(method)(lambda params, handler=handler: handler(params))

    def rel(self, uri: str) -> str:
        return Path(to_fs_path(uri) or uri).relative_to(self.workspace).as_posix()

    def on_update(self, u: dict[str, Any]) -> None:
        kind = u["kind"]
        if kind == "message_delta":
            self.streamed.append(u["text"])
        elif kind == "message" and u["role"] == "assistant":
            self.streamed.clear()
            say(u.get("agent", "modus"), u["text"])
        elif kind == "message" and u["role"] == "system":
            note("ℹ", u["text"])
        elif kind == "phase_changed":
            note("⇆", f"phase {u['from'].upper()} → {u['to'].upper()} (by the {u['by']}, new task {u['taskId']})")
        elif kind == "plan":
            status = next((line for line in (u.get("markdown") or "").splitlines() if line.startswith("Status:")), "")
            note("▤", f"plan {u['state']}" + (f" — {status}" if status else ""))
        elif kind == "todos":
            marks = {"completed": "✓", "in_progress": "▶", "pending": "○"}
            note("☑", "todos: " + "  ".join(f"{marks[t['status']]} {t['content']}" for t in u["todos"]))
        elif kind == "mode_changed":
            why = f" — {u['reason']}" if u.get("reason") else ""
            note("⇄", f"mode {u['from']} → {u['to']} (by the {u['by']}, new task {u['taskId']}){why}")
        elif kind == "tool_call" and u["status"] == "completed" and u["name"].endswith("_mode_respond"):
            pass  # its response came as the assistant's message
        elif kind == "tool_call" and u["status"] == "completed":
            result = u.get("result", "")
            if u["name"] == "use_mcp_tool":
                self.mcp_answers.append(result)
            elif u["name"] == "execute_command":
                self.command_output += result
            note("✓", f"{u['name']}: {result}")
        elif kind == "tool_call" and u["status"] == "failed":
            error = u["error"]
            note("✗", f"{u['name']}: {error['type']}: {error['message']}")
            if error["type"] == "HookBlocked":
                self.blocked.append(u["params"].get("command", ""))
            path = u["params"].get("path")
            if path and error["type"] == "FileRestrictionError":
                exists = (self.workspace / path).exists()
                note(" ", f"{path} on disk: {'exists' if exists else 'not written'}")
        elif kind == "hook" and u["outcome"] != "ok" and (u["event"], u["outcome"]) != ("PreToolUse", "blocked"):
            # a blocked call says so on its own line, as its card does in the sidebar
            note("⚓", f"{u['event']} hook {u['outcome']}: {u.get('output') or u['command']}")
        elif kind == "message" and u["role"] == "user" and u["text"].startswith("/"):
            note("/", "the model gets the command's text, the chat shows what was typed")
        elif kind == "turn_ended":
            note("■", f"turn ended: {u['outcome']}")
            self.turn_done.set()

    def on_approval(self, request: dict[str, Any]) -> dict[str, Any]:
        detail = request.get("detail") or ""
        if request["kind"] == "tool" and detail.startswith(("---", "diff")):
            detail = f"({len(detail.splitlines())} lines of diff)"
        elif request["kind"] == "plan":
            detail = f"(the plan, {len(detail.splitlines())} lines of markdown)"
        elif request["kind"] == "mcp_server":
            detail = ""  # the title names the server, its command and the file
        note("?", f"approval asked: {request['title']} {detail}".rstrip())
        note(" ", "→ the demo user clicks Approve")
        return {"decision": "approve"}

    def on_apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        for uri in apply_to_disk(params.edit):
            note("✎", f"editor applied the edit to {self.rel(uri)}")
        return lsp.ApplyWorkspaceEditResult(applied=True)

    async def request(self, method: str, params: Any) -> Any:
        return await self.client.protocol.send_request_async(method, params)

    async def chat(self, text: str) -> None:
        """Send a message and wait for the turn it starts to end."""
        self.turn_done.clear()
        await self.request(methods.CHAT_SEND, {"text": text})
        await asyncio.wait_for(self.turn_done.wait(), 60)


async def run(workspace: Path, user_state: Path) -> int:
    shutil.copy(SCRIPT, workspace / "script.yaml")
    # the repository's MCP server (asked for once): the demo's bundled docs lookup
    (workspace / ".modus").mkdir()
    # the repository's Claude Code files: a slash command, and a hook that refuses `rm`
    (workspace / ".claude" / "commands").mkdir(parents=True)
    (workspace / ".claude" / "hooks").mkdir()
    (workspace / ".claude" / "commands" / "check.md").write_text(CHECK_COMMAND)
    (workspace / ".claude" / "hooks" / "guard.py").write_text(GUARD)
    guard = f'{shlex.quote(sys.executable)} "$CLAUDE_PROJECT_DIR/.claude/hooks/guard.py"'
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": guard, "timeout": 10}]}]}
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    docs = {"command": sys.executable, "args": ["-m", "server.demo.docs_server"]}
    (workspace / ".modus" / "mcp.json").write_text(json.dumps({"mcpServers": {"docs": docs}}))
    editor = DemoEditor(workspace)
    # the user's state (the approvals given, the checkpoints) of the demo's own: nothing is left behind
    env = {**os.environ, "XDG_STATE_HOME": str(user_state)}
    await editor.client.start_io(sys.executable, "-m", "server", cwd=str(workspace), env=env)
    caps = lsp.ClientCapabilities(
        workspace=lsp.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=lsp.WorkspaceEditClientCapabilities(
                document_changes=True, resource_operations=[lsp.ResourceOperationKind.Create]
            ),
        ),
        experimental={"modus": {"approvals": True}},
    )
    await editor.client.initialize_async(
        lsp.InitializeParams(
            capabilities=caps,
            root_uri=workspace.as_uri(),
            initialization_options={
                "modus": {
                    "models": {"default": {"provider": "scripted", "script": "script.yaml"}},
                    "modeSwitchDelayMs": 200,
                }
            },
        )
    )
    editor.client.initialized(lsp.InitializedParams())
    state = await editor.request(methods.STATE, {})
    print(f"workspace: {workspace}")
    print(f"mode: {state['mode']['name']}, task {state['task']['id']}, model: {state['task']['model']['provider']}\n")

    say("you", REQUEST)
    await editor.chat(REQUEST)

    print()
    say("you", "(flips to PLAN with Modus: Toggle Plan/Act: talk first, nothing is written)")
    await editor.request(lsp.WORKSPACE_EXECUTE_COMMAND, lsp.ExecuteCommandParams(Command.TOGGLE_PHASE, []))
    say("you", PLAN_REQUEST)
    await editor.chat(PLAN_REQUEST)
    print()
    say("you", "(likes the plan and flips to ACT: the agent carries it out)")
    editor.turn_done.clear()
    await editor.request(lsp.WORKSPACE_EXECUTE_COMMAND, lsp.ExecuteCommandParams(Command.TOGGLE_PHASE, []))
    await asyncio.wait_for(editor.turn_done.wait(), 60)

    print()
    say("you", '(selects greet() in src/app.py; the light bulb offers "Plan a change here")')
    uri = (workspace / "src" / "app.py").as_uri()
    selection = lsp.Range(start=lsp.Position(line=3, character=0), end=lsp.Position(line=5, character=0))
    actions = await editor.client.text_document_code_action_async(
        lsp.CodeActionParams(lsp.TextDocumentIdentifier(uri=uri), selection, lsp.CodeActionContext(diagnostics=[]))
    )
    plan_here = next(a for a in actions if a.title == "Plan a change here")
    note("💡", f"light bulb: {', '.join(a.title for a in actions)}")
    argument = {**plan_here.command.arguments[0], "goal": "Let greet() take the greeting word"}
    editor.turn_done.clear()
    await editor.request(lsp.WORKSPACE_EXECUTE_COMMAND, lsp.ExecuteCommandParams(plan_here.command.command, [argument]))
    await asyncio.wait_for(editor.turn_done.wait(), 60)

    print()
    say("you", "(switches to Ask mode from the command palette: no approval needed)")
    state = await editor.request(lsp.WORKSPACE_EXECUTE_COMMAND, lsp.ExecuteCommandParams(Command.SWITCH_MODE, ["ask"]))
    note("⇄", f"now in {state['mode']['name']} mode, task {state['task']['id']}")

    print()
    say("you", MCP_REQUEST)
    await editor.chat(MCP_REQUEST)

    print()
    say("you", "(a long session: clicks the context bar to condense the conversation)")
    condensed = await editor.request(methods.CHAT_CONDENSE, {})
    state = await editor.request(methods.STATE, {})
    window = state["context"]
    note("▭", f"context: {window['used']:,} of {window['window']:,} tokens (condensed by itself at {window['threshold']:,})")

    print()
    say("you", "(trusts the repository's settings, with Modus's own /trust: its .claude hooks may run now)")
    await editor.request(methods.CHAT_SEND, {"text": "/trust"})
    say("you", f"{CHECK_REQUEST}   (the repository's .claude/commands/check.md)")
    await editor.chat(CHECK_REQUEST)

    built = the_program_runs(workspace)
    await editor.client.shutdown_async(None)
    editor.client.exit(None)
    await editor.client.stop()
    asked_docs = any("store_true" in answer for answer in editor.mcp_answers)
    checked = editor.blocked == ["rm -rf src/__pycache__"] and "HELLO, ADA!" in editor.command_output
    return verdict(built and asked_docs and condensed["after"] < condensed["before"] and checked)


def the_program_runs(workspace: Path) -> bool:
    """What the demo's agent built: the files, and the program run as the story says it runs."""
    files = sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*") if p.is_file() and ".modus" not in p.parts)
    print(f"\nfiles in the workspace: {', '.join(files)}")
    outputs = []
    for args in (["Ada"], ["Ada", "--shout"]):
        ran = subprocess.run([sys.executable, "src/app.py", *args], cwd=workspace, capture_output=True, text=True)
        print(f"$ python src/app.py {' '.join(args)}\n{ran.stdout.strip()}")
        outputs.append(ran.stdout.strip())
    planned = 'greeting: str = "Hello"' in (workspace / "src" / "app.py").read_text(encoding="utf-8")
    return outputs == ["Hello, Ada!", "HELLO, ADA!"] and planned


def verdict(ok: bool) -> int:
    print("\nThe demo ran as expected." if ok else "\nThe demo did not produce the expected program.")
    return 0 if ok else 1


def main() -> int:
    print("Modus demo: a scripted agent, the real server over stdio, a temporary workspace.\n")
    with tempfile.TemporaryDirectory(prefix="modus-demo-") as tmp, tempfile.TemporaryDirectory(prefix="modus-demo-state-") as state:
        return asyncio.run(run(Path(tmp), Path(state)))
