"""Which of a workspace's MCP servers the user allowed to start, and what that covers.

A server that a workspace file configures (a cloned repository's `.modus/mcp.json`, `.roo/mcp.json`,
`.mcp.json`) runs a program as the user, or sends the agent's calls to an address: it starts only
once the user approved that very entry. The approval covers what runs (the command line, its
environment and folder, or the address and headers) and what the entry lets run without asking
(`alwaysAllow`): a change of either asks again.

The approvals live where no repository can write them: in the user's state folder
(`$XDG_STATE_HOME/modus/mcp-approvals.json`), per workspace by its real path, one key per
approved entry. (They used to be kept in the workspace's state database, which a repository
could ship with its own approvals in it; those are not read.)
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..userdirs import UserRecord, state_dir
from .config import ServerConfig

#: Approvals kept per workspace; the oldest are let go first (they are asked again).
MAX_PER_WORKSPACE = 256


def approval_key(config: ServerConfig) -> str:
    """What an approval of this entry is for: its name, what runs or where it connects, and the
    tools it lets run without asking."""
    what = [config.name, config.fingerprint(), sorted(config.always_allow)]
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()


class ServerApprovals:
    def __init__(self, workspace: Path, path: Path | None = None):
        self.workspace = str(workspace)
        self.record = UserRecord(path or state_dir() / "mcp-approvals.json")

    def approved(self, config: ServerConfig) -> bool:
        """The user's own servers (and the editor's) need no approval; a workspace's, this one."""
        if config.trusted:
            return True
        keys = self.record.load().get(self.workspace)
        return isinstance(keys, list) and approval_key(config) in keys

    def approve(self, config: ServerConfig) -> None:
        key = approval_key(config)

        def add(entries: dict) -> None:
            keys = entries.get(self.workspace)
            keys = [k for k in keys if k != key] if isinstance(keys, list) else []
            entries[self.workspace] = [*keys, key][-MAX_PER_WORKSPACE:]

        self.record.update(add)
