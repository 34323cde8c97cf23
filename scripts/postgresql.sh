#!/usr/bin/env bash
# Debian's PostgreSQL server binaries, installed when missing (apt; sudo unless root): the team
# space tests start a throwaway cluster of their own with initdb and pg_ctl (tests/pg_cluster.py),
# never a PostgreSQL already running (on a free port: a cluster the package may start is left
# alone). `make test` runs this before the Python tests.
set -euo pipefail
if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then exit 0; fi
if compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null && compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then exit 0; fi
echo "installing postgresql (apt)"
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql >/dev/null
