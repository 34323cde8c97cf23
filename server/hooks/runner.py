"""Running a hook: `/bin/sh -c <command>` in the workspace, the event's JSON on stdin (Claude
Code's field names, plus `modus`), within its time limit; its answer read as Claude Code's are.

Exit 0: go on (stdout is context for UserPromptSubmit and SessionStart; a JSON object on stdout
is a decision). Exit 2: block, stderr says why. Any other exit, or no exit in time: the hook
failed — reported, never blocking.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio

from . import HookCommand

SHELL = "/bin/sh"
#: what of a hook's stdout and stderr is kept (the rest is cut)
MAX_OUTPUT = 64 * 1024

Outcome = Literal["ok", "blocked", "failed", "timeout"]


@dataclass(frozen=True)
class HookRun:
    command: str
    outcome: Outcome
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    #: the JSON object it printed on stdout, if it printed one
    decision: dict[str, Any] = field(default_factory=dict)

    @property
    def reason(self) -> str:
        """Why it blocked (or what it said): its JSON `reason`, else stderr, else stdout."""
        specific = self.decision.get("hookSpecificOutput")
        if isinstance(specific, dict) and isinstance(specific.get("permissionDecisionReason"), str):
            return specific["permissionDecisionReason"]
        if isinstance(self.decision.get("reason"), str):
            return self.decision["reason"]
        return (self.stderr or self.stdout).strip()

    @property
    def permission(self) -> str | None:
        """PreToolUse's `hookSpecificOutput.permissionDecision`: "allow", "deny" or "ask"."""
        specific = self.decision.get("hookSpecificOutput")
        value = specific.get("permissionDecision") if isinstance(specific, dict) else None
        return value if value in ("allow", "deny", "ask") else None

    @property
    def blocks(self) -> bool:
        """Exit 2, `"decision": "block"`, or a PreToolUse `permissionDecision: "deny"`."""
        return self.outcome == "blocked" or self.decision.get("decision") == "block" or self.permission == "deny"

    @property
    def context(self) -> str:
        """What it adds to the model's input: `hookSpecificOutput.additionalContext`, else its
        plain stdout (exit 0)."""
        specific = self.decision.get("hookSpecificOutput")
        if isinstance(specific, dict) and isinstance(specific.get("additionalContext"), str):
            return specific["additionalContext"]
        return "" if self.decision or self.outcome != "ok" else self.stdout.strip()


async def run_hook(hook: HookCommand, payload: dict[str, Any], cwd: Path, env: dict[str, str] | None = None) -> HookRun:
    """Run one hook to its end (or its time limit: then its process group is killed)."""
    data = json.dumps(payload, ensure_ascii=False).encode()
    try:
        process = await anyio.open_process(
            [SHELL, "-c", hook.command], cwd=str(cwd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True, env={**os.environ, "CLAUDE_PROJECT_DIR": str(cwd), **(env or {})},
        )
    except OSError as exc:
        return HookRun(hook.command, "failed", stderr=f"cannot start: {exc.strerror or exc}")
    out: list[bytes] = []
    err: list[bytes] = []

    async def feed() -> None:
        assert process.stdin is not None
        try:
            await process.stdin.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # a hook that reads nothing
        finally:
            await process.stdin.aclose()

    async def read(stream, into: list[bytes]) -> None:
        size = 0
        async for chunk in stream:
            if size < MAX_OUTPUT:
                into.append(chunk[: MAX_OUTPUT - size])
            size += len(chunk)

    try:
        with anyio.move_on_after(hook.timeout) as waiting:
            async with anyio.create_task_group() as tg:
                tg.start_soon(feed)
                tg.start_soon(read, process.stdout, out)
                tg.start_soon(read, process.stderr, err)
                await process.wait()
    finally:
        if process.returncode is None:
            _kill(process.pid)
        with anyio.CancelScope(shield=True):
            await process.aclose()
    stdout, stderr = b"".join(out).decode(errors="replace"), b"".join(err).decode(errors="replace")
    if waiting.cancelled_caught:
        return HookRun(hook.command, "timeout", None, stdout, stderr)
    code = process.returncode
    outcome: Outcome = "ok" if code == 0 else "blocked" if code == 2 else "failed"
    return HookRun(hook.command, outcome, code, stdout, stderr, _decision(stdout) if code == 0 else {})


def _decision(stdout: str) -> dict[str, Any]:
    text = stdout.strip()
    if not text.startswith("{"):
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
