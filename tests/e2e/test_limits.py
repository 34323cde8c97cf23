"""The limits of a turn, as an editor meets them."""

from __future__ import annotations

from pathlib import Path

from .conftest import script
from .editor import Editor


async def test_at_the_request_limit_the_editor_is_asked_whether_to_go_on(workspace: Path, tmp_path: Path):
    (workspace / "a.txt").write_text("x\n")
    read = {"toolCalls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}
    editor = Editor(workspace, tmp_path / "config")
    answers = iter(["approve", "deny"])
    editor.decide = lambda request: {"decision": next(answers)}
    await editor.start({**script(workspace, *[read] * 6, {"text": "done"}), "maxRequestsPerTurn": 2})
    try:
        ended = await editor.chat("read it often")
    finally:
        await editor.stop()
    asked = [a for a in editor.approvals if a["kind"] == "continue"]
    assert [a["title"] for a in asked] == ["modus has made 2 model requests in this turn. Continue?"] * 2
    assert ended["outcome"] == "cancelled"
    assert len([u for u in editor.of_kind("tool_call") if u["status"] == "completed"]) == 4
