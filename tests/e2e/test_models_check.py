"""`modus/models/check` over the wire: the chat's set-up tries a model's settings before it saves
them — the server's model list through the real SDK, a wrong key or no key said in words that
never hold the key, the scripted model without a server."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from fake_models import FakeAnthropic, FakeOpenAI
from protocol import methods

from .editor import Editor


async def check(editor: Editor, **model) -> dict:
    return await editor.request(methods.MODELS_CHECK, {"model": model})


async def test_a_model_is_tried_before_it_is_saved(workspace: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MODUS_TEST_ANTHROPIC_KEY", "sk-wrong-key-123")
    (workspace / "script.yaml").write_text("turns: [{text: hi}]\n")
    editor = Editor(workspace, tmp_path / "config")
    with FakeOpenAI() as ollama, FakeAnthropic() as anthropic:
        ollama.models = ["llama3.1", "qwen3"]
        anthropic.key = "sk-right-key"
        await editor.start()
        try:
            listed = await check(editor, provider="openai", model="llama3.1", baseUrl=ollama.url)
            absent = await check(editor, provider="openai", model="mistral", baseUrl=ollama.url)
            refused = await check(editor, provider="anthropic", model="claude-sonnet-4-5", baseUrl=anthropic.url, apiKeyEnv="MODUS_TEST_ANTHROPIC_KEY")
            no_key = await check(editor, provider="anthropic", apiKeyEnv="MODUS_TEST_NO_SUCH_VARIABLE")
            scripted = await check(editor, provider="scripted", script="script.yaml")
            missing = await check(editor, provider="scripted", script="nosuch.yaml")
            with pytest.raises(JsonRpcException, match="model.provider") as bad:
                await check(editor, provider="gemini")
            state = await editor.request(methods.STATE)
        finally:
            await editor.stop()
    assert listed == {"ok": True, "message": f"Connected: openai model llama3.1 at {ollama.url}/ answered with 2 models.", "models": ["llama3.1", "qwen3"]}
    assert absent["ok"] and absent["message"].endswith("answered with 2 models; mistral is not among them.")
    assert refused["ok"] is False and "HTTP 401 (authentication_error): invalid x-api-key" in refused["message"]
    assert "sk-wrong-key-123" not in refused["message"]
    assert no_key == {"ok": False, "message": "anthropic: no API key: the environment variable MODUS_TEST_NO_SUCH_VARIABLE is not set (apiKeyEnv names the variable to read).", "models": []}
    assert scripted == {"ok": True, "message": "The script script.yaml is readable.", "models": []}
    assert missing["ok"] is False and "there is no such file" in missing["message"]
    assert bad.value.code == -32602
    assert state["task"]["model"]["provider"] == "scripted", "nothing was saved: the settings did not change"


async def test_what_a_server_lists_is_bounded(workspace: Path, tmp_path: Path):
    editor = Editor(workspace, tmp_path / "config")
    with FakeOpenAI() as server:
        server.models = ["x" * 1000] + [f"model-{i}" for i in range(600)]
        await editor.start()
        try:
            got = await check(editor, provider="openai", model="model-0", baseUrl=server.url)
        finally:
            await editor.stop()
    assert got["ok"] and got["models"] == ["x" * 200] + [f"model-{i}" for i in range(499)]
    assert got["message"].endswith("answered with 500 models.")
