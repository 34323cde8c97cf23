"""The server's handlers by feature area, each a few lines that call the core.

`requests.request` registers a `modus/*` request (params validated against the contract, the
repository's files read again when they changed); `requests.command` a `workspace/executeCommand`.
"""

from . import chat, checkpoints, code_actions, mcp, modes, plan, todos, workspace

FEATURES = (workspace, chat, modes, plan, code_actions, todos, checkpoints, mcp)
