"""The VS Code extension forwards `modus.<key>` settings to the server as initializationOptions,
which the server trusts wholly. So every forwarded setting that holds something marked DECIDES
(what runs, where requests go: protocol/models.py) must be one VS Code ignores in a workspace the
user has not trusted (package.json, capabilities.untrustedWorkspaces.restrictedConfigurations):
else a cloned repository's .vscode/settings.json would decide it."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

from pydantic import BaseModel

from protocol.models import DECIDES, Settings

CLIENT = Path(__file__).resolve().parent.parent / "editor-client"


def holds_decides(annotation, seen: set) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in seen:
            return False
        seen.add(annotation)
        return any(
            any(m is DECIDES for m in field.metadata) or holds_decides(field.annotation, seen) for field in annotation.model_fields.values()
        )
    return any(holds_decides(arg, seen) for arg in typing.get_args(annotation))


def test_every_forwarded_setting_that_decides_waits_for_vs_code_s_workspace_trust():
    source = (CLIENT / "src" / "protocol" / "settings.ts").read_text(encoding="utf-8")
    block = re.search(r"SERVER_SETTING_KEYS = \[(.*?)\] as const", source, re.S)
    assert block, "SERVER_SETTING_KEYS not found in settings.ts"
    forwarded = re.findall(r"'(\w+)'", block.group(1))
    assert "space" in forwarded and "models" in forwarded
    fields = {field.alias or name: field for name, field in Settings.model_fields.items()}
    deciding = {
        key for key in forwarded
        if any(m is DECIDES for m in fields[key].metadata) or holds_decides(fields[key].annotation, set())
    }
    assert {"models", "autoApprove", "yolo", "stateDir", "globalModesFile", "browser", "space"} <= deciding
    manifest = json.loads((CLIENT / "package.json").read_text(encoding="utf-8"))
    restricted = set(manifest["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"])
    assert {f"modus.{key}" for key in deciding} <= restricted
