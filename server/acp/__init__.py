"""Modus over the Agent Client Protocol (Zed, JetBrains IDEs, the ACP plugins of Neovim and
Emacs): a sibling of `server/lsp/`, reaching the core through the same Host interface.

- run.py: `modus acp`, the agent over stdio (newline-delimited JSON-RPC)
- agent.py: the ACP methods, each a few lines over the core's Session
- host.py: the Host of one ACP session (updates, permissions, fs/*, terminal/*)
- translate.py: Modus's tool calls, plans, todos, modes and phase in ACP's words
- replay.py: a loaded session's history as updates
"""
