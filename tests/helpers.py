"""Building blocks for tests of the core: a session on a temporary workspace with a script."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import yaml

from memory_host import MemoryHost
from protocol import ChatSendParams, Settings
from server.agent import Session
from server.providers import ToolCallRequest
from server.tools import TOOLS, ToolContext, run_tool
from server.workspace import Workspace


def write_script(root: Path, turns: list[dict[str, Any]], name: str = "script.yaml") -> str:
    (root / name).write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    return name


def settings(script: str | None = None, **overrides: Any) -> Settings:
    data: dict[str, Any] = {"modeSwitchDelayMs": 0}
    if script:
        data["models"] = {"default": {"provider": "scripted", "script": script}}
    data.update(overrides)
    return Settings.model_validate(data)


def make_session(root: Path, host: MemoryHost | None = None, **setting_overrides: Any) -> Session:
    return Session(
        workspace=Workspace(root),
        host=host or MemoryHost(),
        settings=settings(**setting_overrides),
        global_modes=root / ".global-modes.yaml",
    )


@asynccontextmanager
async def running(root: Path, turns: list[dict[str, Any]] | None = None, host: MemoryHost | None = None, **overrides: Any):
    """A running session; `turns` become its scripted model."""
    script = write_script(root, turns) if turns is not None else None
    session = make_session(root, host, script=script, **overrides)
    try:
        async with session.running():
            yield session
    finally:
        session.close()


async def chat(session: Session, text: str, conversation_id: str | None = None) -> str:
    """Send a message and wait for the turn to end; returns its outcome."""
    host: MemoryHost = session.host  # type: ignore[assignment]
    before = len(host.of_kind("turn_ended"))
    await session.send(ChatSendParams(text=text, conversation_id=conversation_id))
    with anyio.fail_after(10):
        while len(host.of_kind("turn_ended")) == before:
            await anyio.sleep(0.005)
    return host.of_kind("turn_ended")[-1].outcome


async def call_tool(session: Session, name: str, agent: str = "modus", **arguments: Any):
    """Run one call through the gate, as the loop would, in the session's current task."""
    ctx = ToolContext(session.ports, session.task_for(agent), agent, session.conversation_id, "turn-test", "call-test")
    return await run_tool(ctx, ToolCallRequest("call-test", name, arguments), TOOLS)


async def until(predicate, seconds: float = 5) -> None:
    """Wait for `predicate()` to hold, polling; fail after `seconds`."""
    with anyio.fail_after(seconds):
        while not predicate():
            await anyio.sleep(0.01)
