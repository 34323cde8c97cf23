"""The workspace's agents file, `.modus/agents.yaml`: agents a repository brings along.

    agents:
      - name: architect
        mode: architect          # the mode it starts in (optional)
        instructions: Design first; write the design to docs/.
      - name: coder
        topLevel: false          # a subordinate: called in by the others
        model: {provider: anthropic, model: claude-sonnet-4-5}

It is untrusted input (a cloned repository): read with `server.untrusted` (a regular file inside
the workspace, bounded in size, off the event loop) and checked entry by entry; a bad entry is a
diagnostic where it goes wrong and is skipped, the others load. An agent given here may not set
what decides where requests go or which key they carry (a model's `baseUrl`, `apiKeyEnv`, in any
spelling: a repository could send your key anywhere; protocol's `DECIDES` mark, found on the
validated entry) and its model's `script` must be a relative path inside the workspace; those
belong in the settings.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from pydantic import ValidationError

from protocol import AgentConfig
from protocol.models import decisive

from ..modes.model import Diagnostic
from ..untrusted import Refused, Signature, read_text, signature

#: The file, relative to the workspace.
AGENTS_FILE = (".modus", "agents.yaml")
#: A larger file is not read (a roster is a few hundred bytes).
MAX_FILE_BYTES = 64 * 1024
NAME_RULE = "a name can be mentioned only if it is made of letters, digits, '_' and '-'"


class AgentsFile(NamedTuple):
    agents: tuple[AgentConfig, ...]
    diagnostics: tuple[Diagnostic, ...]


def parse_agents(text: str, modes: frozenset[str] = frozenset()) -> AgentsFile:
    """The agents of the file and its problems. `modes`: the slugs known now (an unknown mode
    is reported; the agent still loads, and starts in the default mode)."""
    import yaml  # loaded when there is a file to read

    from .. import yamldoc

    root, problem = yamldoc.parse_root(text, "agents file")
    if problem is not None:
        return AgentsFile((), (problem,))
    if root is None:
        return AgentsFile((), ())
    listed = yamldoc.child(root, "agents") if isinstance(root, yaml.MappingNode) else None
    if not isinstance(listed, yaml.SequenceNode):
        return AgentsFile((), (yamldoc.at(listed or root, "An agents file needs an 'agents' list"),))
    return _entries(listed, modes)


def _entries(listed, modes: frozenset[str]) -> AgentsFile:
    from .. import yamldoc

    found, diagnostics = yamldoc.entries(listed, _validate, what="Agent", name="name", key=lambda a: a.name.casefold())
    for agent, node in found:
        if agent.mode is not None and modes and agent.mode not in modes:
            where = yamldoc.node_at(node, ("mode",))
            diagnostics.append(yamldoc.at(where, f"Agent {agent.name!r}: unknown mode {agent.mode!r}; it starts in the default mode"))
    return AgentsFile(tuple(agent for agent, _ in found), tuple(diagnostics))


def _validate(data: Any) -> tuple[AgentConfig | None, list[tuple[tuple, str]]]:
    if not isinstance(data, dict):
        return None, [((), "an agent must be a mapping with at least a name")]
    name = data.get("name")
    if isinstance(name, str) and not _mentionable(name):
        return None, [(("name",), f"name: {name!r}: {NAME_RULE}")]
    try:
        agent = AgentConfig.model_validate(data)
    except ValidationError as exc:
        out = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "agent"
            out.append((err["loc"] if err["type"] != "missing" else (), f"{where}: {err['msg'][:1].lower()}{err['msg'][1:]}"))
        return None, out
    problems = [
        (_as_written(data, path), f"{'.'.join(path)}: not allowed in the workspace's agents file (set it in the settings)")
        for path in decisive(agent)
    ] + _script_problems(data.get("model"))
    return (None, problems) if problems else (agent, [])


def _mentionable(name: str) -> bool:
    return bool(name) and all(c.isalnum() or c in "_-" for c in name)


def _as_written(data: Any, path: tuple[str, ...]) -> tuple[str, ...]:
    """A path of camelCase keys as the file spells it (`base_url` or `baseUrl`), for its line."""
    from pydantic.alias_generators import to_snake

    out: list[str] = []
    for key in path:
        key = key if not isinstance(data, dict) or key in data else to_snake(key)
        out.append(key)
        data = data.get(key) if isinstance(data, dict) else None
    return tuple(out)


def _script_problems(model: Any) -> list[tuple[tuple, str]]:
    if not isinstance(model, dict):
        return []
    problems = []
    script = model.get("script")
    if isinstance(script, str):
        path = PurePosixPath(script.replace("\\", "/"))
        if path.is_absolute() or ".." in path.parts:
            problems.append((("model", "script"), "model.script: must be a relative path inside the workspace"))
    return problems


class WorkspaceAgents:
    """The agents file of one workspace, read again when its signature changes (a stat call)."""

    def __init__(self, root: Path):
        self.root = root
        self.path = root.joinpath(*AGENTS_FILE)
        self.result = AgentsFile((), ())
        self._signature: Signature | None | bool = False  # False: never read

    def stale(self) -> bool:
        return self._signature != signature(self.path)

    def load(self, modes: frozenset[str]) -> AgentsFile:
        """Read and parse the file (blocking), remembering the signature it had."""
        self._signature = signature(self.path)
        try:
            text = read_text(self.path, MAX_FILE_BYTES, inside=self.root)
        except Refused as exc:
            return AgentsFile((), (Diagnostic(0, 0, 0, 1, f"Agents file not read: {exc}"),))
        return parse_agents(text, modes) if text is not None else AgentsFile((), ())
