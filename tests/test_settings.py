"""The settings in effect: the client's over the workspace's file over the global file over the
defaults, each bad key named with its file, and the workspace's risky keys waiting for trust."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from helpers import make_session
from protocol import Settings
from memory_host import MemoryHost


def write(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def workspace_file(root: Path) -> Path:
    return root / ".modus" / "settings.json"


def global_file(root: Path) -> Path:
    return root / "settings.json"  # helpers.make_session puts the global modes file in the root


def test_client_over_workspace_over_global_over_defaults_objects_merging_by_key(tmp_path):
    write(workspace_file(tmp_path), {"commandTimeoutSeconds": 100, "members": [{"handle": "ws", "name": "W"}], "models": {"phases": {"plan": {"provider": "scripted", "script": "plan.yaml"}}}})
    write(global_file(tmp_path), {"commandTimeoutSeconds": 200, "maxRetries": 7, "models": {"phases": {"act": {"provider": "scripted", "script": "act.yaml"}}}})
    session = make_session(tmp_path, maxRequestsPerTurn=9)
    try:
        s = session.settings
        assert (s.command_timeout_seconds, s.max_retries, s.max_requests_per_turn, s.max_consecutive_mistakes) == (100, 7, 9, 3)
        assert s.models.phases.plan.script == "plan.yaml" and s.models.phases.act.script == "act.yaml"  # merged by key
        assert [m.handle for m in s.members] == ["ws"]
    finally:
        session.close()


def test_a_bad_key_is_named_with_its_file_and_the_rest_applies(tmp_path):
    write(workspace_file(tmp_path), {"commandTimeoutSeconds": -5, "maxRetries": 1, "colour": "blue"})
    write(global_file(tmp_path), "{not json")
    host = MemoryHost()
    session = make_session(tmp_path, host)
    try:
        assert session.settings.max_retries == 1 and session.settings.command_timeout_seconds == 120
        shown = [text for _, text in host.messages]
        ws = workspace_file(tmp_path)
        assert f"{ws}: commandTimeoutSeconds: Input should be greater than 0" in shown
        assert f"{ws}: colour: not a Modus setting" in shown
        assert any(t.startswith(f"{global_file(tmp_path)}: not JSON: ") for t in shown)
    finally:
        session.close()


def test_the_workspace_files_risky_keys_wait_for_the_users_trust(tmp_path):
    risky = {"yolo": True, "autoApprove": {"command": True}, "maxRetries": 2}
    write(workspace_file(tmp_path), risky)
    host = MemoryHost()
    session = make_session(tmp_path, host)
    try:
        assert session.settings.max_retries == 2  # the rest applies at once
        assert not session.settings.yolo and not session.settings.auto_approve.command
        [note] = [t for _, t in host.messages if "not applied" in t]
        assert note == f"{workspace_file(tmp_path)} sets yolo, autoApprove: not applied until you trust this workspace's settings (command 'Modus: Trust Workspace Settings'; /trust in an ACP client)."
        session.trust_workspace_settings()
        assert session.settings.yolo and session.settings.auto_approve.command
    finally:
        session.close()
    again = make_session(tmp_path)  # trusted: kept outside the workspace, across restarts
    try:
        assert again.settings.yolo
    finally:
        again.close()
    write(workspace_file(tmp_path), {**risky, "autoApprove": {"command": True, "edit": True}})
    changed = make_session(tmp_path)  # other content: it waits for the user again
    try:
        assert not changed.settings.yolo and not changed.settings.auto_approve.edit
    finally:
        changed.close()


def test_a_model_endpoint_from_the_workspace_waits_for_trust_the_global_files_does_not(tmp_path):
    endpoint = {"models": {"default": {"provider": "openai", "baseUrl": "http://127.0.0.1:9", "apiKeyEnv": "MY_KEY"}}}
    write(workspace_file(tmp_path), endpoint)
    session = make_session(tmp_path)
    try:
        assert session.settings.models.default.base_url is None
    finally:
        session.close()
    workspace_file(tmp_path).unlink()
    write(global_file(tmp_path), endpoint)
    session = make_session(tmp_path)
    try:
        assert session.settings.models.default.base_url == "http://127.0.0.1:9"
    finally:
        session.close()


async def test_a_changed_file_applies_without_a_restart(tmp_path):
    session = make_session(tmp_path)
    async with session.running():
        assert session.settings.max_retries == 3
        write(workspace_file(tmp_path), {"maxRetries": 0, "members": [{"handle": "sam", "name": "Sam"}]})
        assert session.stale()
        await session.refresh()
        assert session.settings.max_retries == 0 and session.list_agents().members[0].handle == "sam"
    session.close()


# ---------------------------------------------------------------- globalModesFile: Roo's global modes

ROO_CUSTOM_MODES = """customModes:
  - slug: roo-mine
    name: No
    roleDefinition: You are mine. Only mine.
    groups:
      - read
      - - edit
        - fileRegex: \\.md$
    source: global
  - slug: shared
    name: Roo's Shared
    roleDefinition: r
    groups: [read]
"""


def roo_global_file(home: Path) -> Path:
    """Where Roo Code keeps its global modes: VS Code's globalStorage of its extension."""
    path = home / ".config" / "Code" / "User" / "globalStorage" / "rooveterinaryinc.roo-cline" / "settings" / "custom_modes.yaml"
    write(path, ROO_CUSTOM_MODES)
    return path


async def test_global_modes_file_reads_roos_global_modes_below_modus_own(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    roo = roo_global_file(tmp_path / "home")
    write(tmp_path / ".global-modes.yaml", "customModes:\n  - {slug: shared, name: Modus's Shared, roleDefinition: r, groups: []}\n")
    session = make_session(tmp_path, globalModesFile="~/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/custom_modes.yaml")
    async with session.running():
        await session.refresh()
        mine = session.modes.get("roo-mine")
        assert (mine.name, mine.source, mine.origin) == ("No", "global", str(roo))
        assert mine.group("edit").file_regex.search("a.md") and not mine.group("edit").file_regex.search("a.py")
        assert session.modes.get("shared").name == "Modus's Shared"  # Modus's own global file comes first
        assert session.modes.diagnostics(roo) == ()

        session.update_settings(Settings())  # unset: its modes go at once
        assert session.modes.get("roo-mine") is None and session.modes.get("shared").name == "Modus's Shared"
    session.close()


async def test_global_modes_file_from_the_workspace_waits_for_trust_and_a_relative_path_is_refused(tmp_path):
    roo = roo_global_file(tmp_path / "home")
    write(workspace_file(tmp_path), {"globalModesFile": str(roo)})
    host = MemoryHost()
    session = make_session(tmp_path, host)
    async with session.running():
        await session.refresh()
        assert session.modes.get("roo-mine") is None  # a repository does not pick a file of your machine
        assert any("sets globalModesFile: not applied until you trust" in t for _, t in host.messages)
        session.trust_workspace_settings()
        await session.refresh()
        assert session.modes.get("roo-mine") is not None

        session.update_settings(Settings(global_modes_file="custom_modes.yaml"))  # the client's value wins
        await session.refresh()
        assert session.modes.get("roo-mine") is None
        assert ("warning", "globalModesFile: 'custom_modes.yaml' is not an absolute path (nor starts with ~): not read") in host.messages
    session.close()


# ---------------------------------------------------------------- what decides what runs (issue 19)

#: Every setting, reviewed: what does not decide what runs or where requests go. A new setting
#: must be added here or declared `Annotated[T, DECIDES]` in protocol/models.py: the test below fails until it is.
DECIDES_NOTHING = {
    "models.default.provider", "models.default.model", "models.default.reasoningEffort", "models.default.thinkingBudgetTokens",
    "models.default.maxTokens", "models.default.script", "models.default.contextWindow", "models.default.vision", "models.default.pricing.input",
    "models.default.pricing.output", "models.default.pricing.cacheRead", "models.default.pricing.cacheWrite",
    "models.modes.*.provider", "models.modes.*.model", "models.modes.*.reasoningEffort", "models.modes.*.thinkingBudgetTokens",
    "models.modes.*.maxTokens", "models.modes.*.script", "models.modes.*.contextWindow", "models.modes.*.vision", "models.modes.*.pricing.input",
    "models.modes.*.pricing.output", "models.modes.*.pricing.cacheRead", "models.modes.*.pricing.cacheWrite",
    "agents.*.name", "agents.*.topLevel", "agents.*.instructions", "agents.*.mode", "members.*.handle", "members.*.name",
    "modeSwitchDelayMs", "commandTimeoutSeconds", "modelFirstByteTimeoutSeconds", "modelIdleTimeoutSeconds", "maxRetries",
    "maxRetryWaitSeconds", "maxConsecutiveMistakes", "checkpoints", "condenseThreshold", "rulesDisabled", "maxHookContinuations",
    "diagnostics.enabled", "diagnostics.delayMs", "diagnostics.severity", "diagnostics.max",
    "browser.viewport", "browser.timeoutSeconds",
    "space.name", "space.member", "space.displayName",
}
DECIDES_WHAT_RUNS = {
    "models.default.baseUrl", "models.default.apiKeyEnv", "models.modes.*.baseUrl", "models.modes.*.apiKeyEnv",
    "autoApprove", "yolo", "stateDir", "mcpStartAtLaunch", "maxRequestsPerTurn", "globalModesFile", "hooks",
    "browser.allowedHosts",  # where the browser's requests go
    "space.url", "space.passwordEnv",  # where conversations are stored, which variable's secret is sent there
}


def _leaves(model: type, prefix: str = "") -> dict[str, bool]:
    """Every setting's path (a model's fields as `default`, a list's or dict's items as `*`) → marked."""
    import typing

    from pydantic import BaseModel

    from protocol.models import DECIDES

    out: dict[str, bool] = {}
    for name, field in model.model_fields.items():
        path = prefix + (field.alias or name)
        marked = any(m is DECIDES for m in field.metadata)
        inner = [a for a in typing.get_args(field.annotation) or (field.annotation,)]
        inner = [t for a in inner for t in (typing.get_args(a) or (a,))]
        models = [t for t in inner if isinstance(t, type) and issubclass(t, BaseModel)]
        if marked or not models:
            out[path] = bool(marked)
            continue
        for sub in models:
            many = typing.get_origin(field.annotation) in (list, dict)
            out |= _leaves(sub, path + (".*." if many else "."))
    return out


def test_untrusted_every_setting_is_declared_as_deciding_what_runs_or_not():
    from protocol import Settings

    leaves = _leaves(Settings)
    # models.phases.* and agents.*.model are Models like models.default: one row for the Model's fields
    folded = {p.replace("models.phases.plan.", "models.default.").replace("models.phases.act.", "models.default.")
              .replace("models.modes.*.plan.", "models.default.").replace("models.modes.*.act.", "models.default.")
              .replace("agents.*.model.", "models.default."): m for p, m in leaves.items()}
    assert {p for p, marked in folded.items() if marked} == DECIDES_WHAT_RUNS
    assert {p for p, marked in folded.items() if not marked} == DECIDES_NOTHING


def test_untrusted_what_waits_is_found_on_the_validated_settings_whatever_the_spelling():
    from server.settings import parse

    camel = parse(json.dumps({"models": {"default": {"provider": "openai", "baseUrl": "http://x", "apiKeyEnv": "K"}}, "maxRetries": 1}), "f")
    snake = parse(json.dumps({"models": {"default": {"provider": "openai", "base_url": "http://x", "api_key_env": "K"}}, "maxRetries": 1}), "f")
    assert camel == snake
    assert camel.waiting == {"models": {"default": {"provider": "openai", "baseUrl": "http://x", "apiKeyEnv": "K"}}}
    assert camel.data["maxRetries"] == 1 and camel.problems == []
    nested = parse(json.dumps({"agents": [{"name": "a", "model": {"base_url": "http://x"}}], "mcpStartAtLaunch": False}), "f")
    assert list(nested.waiting) == ["mcpStartAtLaunch", "agents"]  # even false: the repository does not decide it
    assert parse(json.dumps({"models": {"default": {"provider": "openai", "model": "m"}}}), "f").waiting == {}


def test_untrusted_a_rule_written_keeps_trust_only_for_content_trusted_before(tmp_path):
    from server.settings import LayeredSettings

    layers = LayeredSettings(tmp_path, tmp_path / "config")
    rule = json.dumps({"autoApprove": {"modes": {"code": {"edit": True}}}})
    assert layers.trusted_text(json.dumps({"maxRetries": 2}))  # nothing in it decides what runs
    assert not layers.trusted_text(json.dumps({"yolo": True}))  # written by someone: not trusted
    layers.trust_text(rule)
    assert layers.trusted_text(rule) and not layers.trusted_text(json.dumps({"yolo": True, **json.loads(rule)}))


def test_a_bad_space_setting_is_named_by_its_field():
    from server.settings import read_settings

    settings, problems = read_settings({"space": {"url": "mysql://x/y", "name": "team"}})
    assert settings.space is None
    assert sorted(p.split(":")[0] for p in problems) == ["modus.space.member", "modus.space.url"]
    good, problems = read_settings({"space": {"url": "postgresql://h/db", "name": "team", "member": "alice", "passwordEnv": "PW"}})
    assert problems == [] and (good.space.url, good.space.password_env) == ("postgresql://h/db", "PW")
