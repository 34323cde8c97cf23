"""`modus demo --acp`: the offline demo over the Agent Client Protocol.

The same story and the same scripted model as the LSP demo, but the client is an ACP client
(the agent-client-protocol package's client side) driving `python -m server acp`, as Zed or a
JetBrains IDE would: it answers permission requests, writes the files the agent sends with
fs/write_text_file, and prints what happens. A temporary workspace and configuration folder;
nothing is left behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from acp import spawn_agent_process, text_block
from acp import schema as acp

from . import PLAN_REQUEST, REQUEST, SCRIPT, note, say, the_program_runs, verdict

TIMEOUT = 60


class DemoClient:
    """The client's side: renders session updates, answers permissions, reads and writes files."""

    def __init__(self, workspace: Path):
        self.workspace = workspace
        self.text: list[str] = []
        self.titles: dict[str, str] = {}
        self.entries: list[tuple[str, str]] = []
        self.phase = "act"

    def rel(self, path: str) -> str:
        return Path(path).relative_to(self.workspace).as_posix()

    def flush(self) -> None:
        """The agent's words so far, as one paragraph; Modus's own notes (quoted) apart."""
        words: list[str] = []
        for paragraph in "".join(self.text).split("\n\n"):
            if paragraph.startswith("> **Modus:** "):
                if "".join(words).strip():
                    say("modus", "\n\n".join(words))
                words.clear()
                note("ℹ", "\n".join(line.removeprefix("> ") for line in paragraph.removeprefix("> **Modus:** ").splitlines()))
            else:
                words.append(paragraph)
        if "".join(words).strip():
            say("modus", "\n\n".join(words))
        self.text.clear()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        kind = update.session_update
        if kind == "agent_message_chunk":
            self.text.append(update.content.text)
            return
        self.flush()
        if kind == "tool_call":
            self.titles[update.tool_call_id] = update.title
        elif kind == "tool_call_update" and update.status in ("completed", "failed"):
            title = self.titles.get(update.tool_call_id, update.tool_call_id)
            texts = [c.content.text for c in update.content or [] if c.type == "content"]
            lines = [line for line in (texts[-1] if texts else "").splitlines() if not line.startswith("```")]
            if update.status == "completed":
                note("✓", f"{title}: {lines[0] if lines else 'done'}")
            else:
                note("✗", f"{title}: {' '.join(lines)}")
                if lines and lines[0].startswith("FileRestrictionError"):
                    path = title.split(" ", 1)[1]
                    note(" ", f"{path} on disk: {'exists' if (self.workspace / path).exists() else 'not written'}")
        elif kind == "current_mode_update":
            note("⇄", f"mode → {update.current_mode_id} (current_mode_update)")
        elif kind == "config_option_update":
            phase = next(o for o in update.config_options if o.id == "phase").current_value
            if phase != self.phase:
                self.phase = phase
                note("⇆", f"phase → {phase.upper()} (config_option_update)")
        elif kind == "plan":
            marks = {"completed": "✓", "in_progress": "▶", "pending": "○"}
            entries = [(e.content, e.status) for e in update.entries]
            if entries != self.entries:
                self.entries = entries
                note("☑", "plan: " + "  ".join(f"{marks[s]} {c}" for c, s in entries))
        elif kind == "available_commands_update":
            note("/", "commands: " + ", ".join(f"/{c.name}" for c in update.available_commands))

    async def request_permission(self, session_id: str, tool_call: acp.ToolCallUpdate, options: list[acp.PermissionOption], **kwargs: Any):
        self.flush()
        diffs = [c for c in tool_call.content or [] if c.type == "diff"]
        texts = [c.content.text for c in tool_call.content or [] if c.type == "content"]
        shown = f"(a diff of {', '.join(self.rel(d.path) for d in diffs)})" if diffs else ""
        if tool_call.kind == "think" and texts:
            shown = f"(the plan, {len(texts[0].splitlines())} lines of markdown)"
        note("?", f"permission asked: {tool_call.title} {shown}".rstrip())
        note(" ", "options: " + " · ".join(o.name for o in options) + f" → the demo user picks {options[0].name}")
        return acp.RequestPermissionResponse(outcome=acp.AllowedOutcome(outcome="selected", option_id=options[0].option_id))

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(content, encoding="utf-8")
        note("✎", f"client wrote {self.rel(path)} (fs/write_text_file)")
        return acp.WriteTextFileResponse()

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any):
        from acp import RequestError

        try:
            return acp.ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RequestError(-32002, "Resource not found", {"uri": path}) from None


async def run(workspace: Path, config: Path) -> int:
    shutil.copy(SCRIPT, workspace / "script.yaml")
    (workspace / ".modus").mkdir()
    settings = {"models": {"default": {"provider": "scripted", "script": "script.yaml"}}, "modeSwitchDelayMs": 200}
    (workspace / ".modus" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    client = DemoClient(workspace)
    env = {"XDG_CONFIG_HOME": str(config), "XDG_STATE_HOME": str(config / "state")}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    async with spawn_agent_process(client, sys.executable, "-m", "server", "acp", "--log-level", "warning", cwd=str(workspace), env=env) as (conn, _):

        async def prompt(*blocks: Any) -> None:
            answer = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=list(blocks)), TIMEOUT)
            client.flush()
            note("■", f"stopReason: {answer.stop_reason}")

        caps = acp.ClientCapabilities(fs=acp.FileSystemCapabilities(read_text_file=True, write_text_file=True))
        init = await asyncio.wait_for(conn.initialize(protocol_version=1, client_capabilities=caps), TIMEOUT)
        new = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=[]), TIMEOUT)
        sid = new.session_id
        print(f"workspace: {workspace}")
        print(f"agent: {init.agent_info.title} {init.agent_info.version} over ACP, session {sid}")
        modes = ", ".join(m.id for m in new.modes.available_modes)
        phase = next(o for o in new.config_options if o.id == "phase")
        print(f"modes: {modes}; mode {new.modes.current_mode_id}, phase {phase.current_value.upper()}\n")

        say("you", REQUEST)
        await prompt(text_block(REQUEST))

        print()
        say("you", "(flips the Plan/Act selector to Plan: talk first, nothing is written)")
        await asyncio.wait_for(conn.set_config_option(config_id="phase", session_id=sid, value="plan"), TIMEOUT)
        say("you", PLAN_REQUEST)
        await prompt(text_block(PLAN_REQUEST))
        print()
        say("you", "/act   (likes the plan: the agent carries it out)")
        await prompt(text_block("/act"))

        print()
        app = workspace / "src" / "app.py"
        lines = app.read_text(encoding="utf-8").splitlines()
        say("you", "(adds greet() from src/app.py to the prompt, and types /plan-change Let greet() take the greeting word)")
        selection = acp.EmbeddedResourceContentBlock(
            type="resource", resource=acp.TextResourceContents(uri=f"{app.as_uri()}#L4:5", text="\n".join(lines[3:5]), mime_type="text/x-python")
        )
        await prompt(text_block("/plan-change Let greet() take the greeting word"), selection)

        print()
        say("you", "(picks Ask in the mode selector: session/set_mode, no permission needed)")
        await asyncio.wait_for(conn.set_session_mode(session_id=sid, mode_id="ask"), TIMEOUT)
        await asyncio.wait_for(conn.set_config_option(config_id="phase", session_id=sid, value="act"), TIMEOUT)
        client.flush()

    return verdict(the_program_runs(workspace))


def main() -> int:
    print("Modus demo over ACP: a scripted agent, `modus acp` over stdio, a temporary workspace.\n")
    with tempfile.TemporaryDirectory(prefix="modus-demo-acp-") as tmp:
        (Path(tmp) / "ws").mkdir()
        return asyncio.run(run(Path(tmp) / "ws", Path(tmp) / "config"))
