"""A test ACP client: `modus acp` as a real subprocess, driven with the agent-client-protocol
package's client side. It records every session/update, answers permission requests by a
per-session policy, reads and writes files (with buffers of its own, like an editor's unsaved
ones) and runs commands in terminals of its own, and records each of those requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml
from acp import RequestError, spawn_agent_process, text_block
from acp import schema as acp

TIMEOUT = 30  # seconds any single wait may take before the test fails (never reached when it passes)


@dataclass
class Terminal:
    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    reader: asyncio.Task | None = None
    killed: bool = False
    released: bool = False


class Client:
    def __init__(self) -> None:
        self.updates: dict[str, list[Any]] = defaultdict(list)
        self.permissions: list[tuple[str, acp.ToolCallUpdate, list[acp.PermissionOption]]] = []
        #: a session's answer to each permission request: an option id, or None (cancelled)
        self.policy: dict[str, Callable[[acp.ToolCallUpdate, list[acp.PermissionOption]], str | None]] = {}
        self.writes: list[tuple[str, str]] = []
        self.refuse_writes: set[str] = set()  # sessions whose writes fail
        self.reads: list[str] = []
        self.buffers: dict[str, str] = {}
        self.terminals: dict[str, Terminal] = {}
        self.terminal_calls: list[tuple[str, str]] = []  # (method, terminal id or command)
        self._changed = asyncio.Condition()

    async def _touch(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, predicate: Callable[[], Any], what: str = "the condition") -> Any:
        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(predicate), TIMEOUT)
            except asyncio.TimeoutError:
                raise AssertionError(f"timed out waiting for {what}") from None
        return predicate()

    # ------------------------------------------------------------ what the agent asks

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates[session_id].append(update)
        await self._touch()

    async def request_permission(self, session_id: str, tool_call: acp.ToolCallUpdate, options: list[acp.PermissionOption], **kwargs: Any):
        self.permissions.append((session_id, tool_call, options))
        await self._touch()
        decide = self.policy.get(session_id, lambda call, opts: "allow")
        choice = decide(tool_call, options)
        if asyncio.iscoroutine(choice):
            choice = await choice
        if choice is None:
            return acp.RequestPermissionResponse(outcome=acp.DeniedOutcome(outcome="cancelled"))
        return acp.RequestPermissionResponse(outcome=acp.AllowedOutcome(outcome="selected", option_id=choice))

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any):
        if session_id in self.refuse_writes:
            raise RequestError(-32603, "Internal error", {"details": "the disk is full"})
        self.writes.append((path, content))
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(content, encoding="utf-8")
        self.buffers.pop(path, None)
        await self._touch()
        return acp.WriteTextFileResponse()

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any):
        self.reads.append(path)
        if path in self.buffers:
            return acp.ReadTextFileResponse(content=self.buffers[path])
        try:
            return acp.ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RequestError(-32002, "Resource not found", {"uri": path}) from None

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None, env=None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **kwargs: Any):
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        terminal = self.terminals[terminal_id] = Terminal(process)

        async def read() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(4096):
                terminal.output += chunk
                await self._touch()

        terminal.reader = asyncio.create_task(read())
        self.terminal_calls.append(("create", " ".join([command, *(args or [])])))
        await self._touch()
        return acp.CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any):
        terminal = self.terminals[terminal_id]
        code = await terminal.process.wait()
        assert terminal.reader is not None
        await terminal.reader
        return acp.WaitForTerminalExitResponse(exit_code=code if code >= 0 else None, signal=f"signal {-code}" if code < 0 else None)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any):
        terminal = self.terminals[terminal_id]
        return acp.TerminalOutputResponse(output=terminal.output.decode(errors="replace"), truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any):
        self.terminal_calls.append(("kill", terminal_id))
        self._kill(self.terminals[terminal_id])
        await self._touch()
        return acp.KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any):
        self.terminal_calls.append(("release", terminal_id))
        terminal = self.terminals[terminal_id]
        self._kill(terminal)
        terminal.released = True
        await self._touch()
        return acp.ReleaseTerminalResponse()

    @staticmethod
    def _kill(terminal: Terminal) -> None:
        if terminal.process.returncode is None:
            terminal.killed = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(terminal.process.pid, 9)

    async def ext_method(self, method: str, params: dict) -> dict:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict) -> None:
        pass

    # ------------------------------------------------------------ reading what came

    def of(self, session_id: str, kind: str) -> list[Any]:
        return [u for u in self.updates[session_id] if u.session_update == kind]

    def text(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(session_id, kind))

    def calls(self, session_id: str) -> dict[str, dict[str, Any]]:
        """Each tool call's card as the client holds it: the start, then every update merged in."""
        cards: dict[str, dict[str, Any]] = {}
        for u in self.updates[session_id]:
            if u.session_update in ("tool_call", "tool_call_update"):
                card = cards.setdefault(u.tool_call_id, {"statuses": []})
                fields = u.model_dump(exclude_none=True, exclude={"session_update", "field_meta"})
                if "status" in fields:
                    card["statuses"].append(fields["status"])
                card.update({k: v for k, v in fields.items() if k != "status"})
                card["status"] = card["statuses"][-1] if card["statuses"] else None
        return cards


def workspace_with(root: Path, turns: list[dict[str, Any]], **settings: Any) -> Path:
    """A workspace whose settings file (`.modus/settings.json`) runs the scripted model on `turns`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "script.yaml").write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    (root / ".modus").mkdir(exist_ok=True)
    data = {"models": {"default": {"provider": "scripted", "script": "script.yaml"}}, "modeSwitchDelayMs": 0, **settings}
    (root / ".modus" / "settings.json").write_text(json.dumps(data), encoding="utf-8")
    return root


@contextlib.asynccontextmanager
async def modus_acp(config_home: Path, capabilities: acp.ClientCapabilities | None = None, cwd: Path | None = None):
    """`python -m server acp` with a client of these capabilities, initialized."""
    client = Client()
    root = Path(__file__).resolve().parents[2]
    env = {
        "PYTHONPATH": os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p),
        "XDG_CONFIG_HOME": str(config_home),
        "XDG_STATE_HOME": str(config_home / "state"),
        "CLAUDE_CONFIG_DIR": str(config_home / "claude"),  # no hook of this machine's user runs
    }
    async with spawn_agent_process(client, sys.executable, "-m", "server", "acp", cwd=str(cwd or config_home), env=env) as (conn, process):
        stderr: list[str] = []

        async def drain() -> None:  # its log lines: read, or a full pipe would stop the agent
            assert process.stderr is not None
            while line := await process.stderr.readline():
                stderr.append(line.decode(errors="replace"))

        reader = asyncio.create_task(drain())
        answer = await asyncio.wait_for(
            conn.initialize(protocol_version=1, client_capabilities=capabilities or acp.ClientCapabilities(),
                            client_info=acp.Implementation(name="modus-tests", version="1")),
            TIMEOUT,
        )
        agent = Agent(conn, client, process, answer, stderr)
        try:
            yield agent
        finally:
            if os.environ.get("MODUS_ACP_STDERR"):
                sys.stderr.write("".join(stderr))
            reader.cancel()
        assert not [line for line in stderr if "Traceback" in line], "".join(stderr)


@dataclass
class Agent:
    conn: Any
    client: Client
    process: asyncio.subprocess.Process
    initialized: acp.InitializeResponse
    stderr: list[str]

    async def new(self, workspace: Path) -> acp.NewSessionResponse:
        return await asyncio.wait_for(self.conn.new_session(cwd=str(workspace), mcp_servers=[]), TIMEOUT)

    async def prompt(self, session_id: str, text: str) -> str:
        answer = await asyncio.wait_for(self.conn.prompt(session_id=session_id, prompt=[text_block(text)]), TIMEOUT)
        return answer.stop_reason
