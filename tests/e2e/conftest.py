from pathlib import Path

import pytest
import yaml

from .editor import Editor


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
async def editor(workspace: Path, tmp_path: Path):
    ed = Editor(workspace, tmp_path / "config")
    yield ed
    if ed.client.capabilities is not None:
        await ed.stop()
    else:
        await ed.client.stop()


def script(workspace: Path, *turns: dict) -> dict:
    """Settings for a scripted model with these turns."""
    (workspace / "script.yaml").write_text(yaml.safe_dump({"turns": list(turns)}), encoding="utf-8")
    return {"models": {"default": {"provider": "scripted", "script": "script.yaml"}}}
