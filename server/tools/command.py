"""The command group: execute_command, run by the user's shell in the workspace folder (in the
editor's terminal when it offers one, else by the server)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import os
import signal
import subprocess

import anyio
from pydantic import Field


if TYPE_CHECKING:
    from ..workspace import WorkspacePath

from .base import Params, Prepared, ToolContext, ToolSpec
from ..errors import ToolError

MAX_OUTPUT = 50_000  # characters kept: the head and the tail of longer output
SHELL = "/bin/sh"
DRAIN_S = 0.2  # after the shell exits, how long its last output may take to arrive


class ExecuteCommandParams(Params):
    command: str = Field(min_length=1)
    cwd: str | None = None
    timeout: float | None = Field(default=None, gt=0, description="seconds")
    path_fields = ("cwd",)


def _clip(text: str) -> str:
    if len(text) <= MAX_OUTPUT:
        return text
    half = MAX_OUTPUT // 2
    return f"{text[:half]}\n[... {len(text) - MAX_OUTPUT} characters cut ...]\n{text[-half:]}"


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def run_command(command: str, cwd: str, timeout: float) -> tuple[int | None, str]:
    """(exit code or None on timeout, combined stdout/stderr). Cancelling kills the process group.

    The result comes when the shell exits: a background job it started (`server &`) keeps
    running, and what it prints after that moment is not waited for.
    """
    chunks: list[bytes] = []
    drained = anyio.Event()
    process = await anyio.open_process(
        [SHELL, "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )

    async def read() -> None:
        assert process.stdout is not None
        async for data in process.stdout:
            chunks.append(data)
        drained.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            with anyio.move_on_after(timeout) as waiting:
                await process.wait()
                with anyio.move_on_after(DRAIN_S):  # what the shell wrote just before exiting
                    await drained.wait()
            tg.cancel_scope.cancel()
        if waiting.cancelled_caught:
            _kill_group(process.pid)
            return None, b"".join(chunks).decode(errors="replace")
        return process.returncode, b"".join(chunks).decode(errors="replace")
    finally:
        if process.returncode is None:
            _kill_group(process.pid)
        with anyio.CancelScope(shield=True):
            await process.aclose()  # our end of the pipes; a background job may still hold its own


async def _execute_command(ctx: ToolContext, p: ExecuteCommandParams, paths: list[WorkspacePath]) -> Prepared:
    where = paths[0] if paths else ctx.workspace.resolve(".")
    if not where.path.is_dir():
        raise ToolError(f"cwd is not a directory: {where.rel}")
    timeout = p.timeout or ctx.ports.config.settings.command_timeout_seconds

    async def run() -> str:
        try:
            if ctx.host.can_run_commands:  # in the editor's terminal, where the user sees it run
                code, output = await ctx.host.run_command(p.command, where.path, timeout, ctx.call_id)
            else:
                code, output = await run_command(p.command, str(where.path), timeout)
        except OSError as exc:
            raise ToolError(f"Cannot start the command: {exc.strerror or exc}") from None
        output = _clip(output).rstrip("\n")
        shown = output if output else "(no output)"
        if code is None:
            raise ToolError(f"Command timed out after {timeout:g}s and was stopped: {p.command}\nOutput so far:\n{shown}")
        return f"Command executed in '{where.rel}'. Exit code: {code}\nOutput:\n{shown}"

    return Prepared(run, f"Run `{p.command}`?", f"$ {p.command}\n(in {where.rel})")


TOOLS = (
    ToolSpec(
        "execute_command",
        "Run a shell command (/bin/sh -c) in the workspace folder or in cwd; output and exit code come back. "
        "Optional timeout in seconds.",
        ExecuteCommandParams,
        _execute_command,
        group="command",
        approval="command",
    ),
)
