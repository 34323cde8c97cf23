"""The server process itself: what it sets up for its own start stays its own."""

from __future__ import annotations

import os

from .conftest import script


async def test_commands_do_not_inherit_what_the_server_set_for_itself(editor, workspace):
    assert "PYDANTIC_DISABLE_PLUGINS" not in os.environ
    echo = "echo plugins=${PYDANTIC_DISABLE_PLUGINS-unset}"
    settings = script(workspace, {"toolCalls": [{"name": "execute_command", "arguments": {"command": echo}}]}, {"text": "ok"})
    await editor.start({**settings, "autoApprove": {"command": True}})
    ended = await editor.chat("run it")
    assert ended["outcome"] == "completed"
    [done] = [u for u in editor.of_kind("tool_call") if u["status"] == "completed"]
    assert done["result"].endswith("Output:\nplugins=unset")
