#!/usr/bin/env bash
# Debian's chromium, installed when missing (apt; sudo unless root): the browser of the chat
# webview's tests, of the real VS Code tests, and of browser_action's tests (Playwright drives
# the system's Chromium: nothing is downloaded at run time). `make test` runs it before the
# Python tests; editor-client/scripts/test.sh before its own.
#   CHROMIUM_PATH  default /usr/bin/chromium
set -euo pipefail
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  echo "installing chromium (apt)"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi
