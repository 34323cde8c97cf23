"""The server's handlers by feature area, each a few lines that call the core.

`workspace.register(server)` registers the life cycle, which starts the session; every other
area's `register(routes)` its `modus/*` requests (params validated against the contract, the
repository's files read again when they changed) and `workspace/executeCommand` commands, each
called with the session (`requests.Routes`).
"""

from . import chat, checkpoints, code_actions, commands, mcp, modes, plan, rules, todos, workspace
from .requests import Routes

#: The areas registered with `Routes`, in order (after `workspace`).
ROUTED = (chat, modes, plan, code_actions, todos, checkpoints, mcp, rules, commands)

__all__ = ["ROUTED", "Routes", "workspace"]
