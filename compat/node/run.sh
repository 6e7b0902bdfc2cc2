#!/usr/bin/env bash
# Run the Node SDK compatibility suite against a freshly started server.
#
#   compat/node/run.sh [path/to/server-binary] [extra node --test args, e.g. --test-name-pattern=charge]
#
# The server is started by ../start-server.sh (a binary given, or ./examples/server built).
# Env: STARTUP_TIMEOUT (s, default 60), KEEP_TMP=1 keeps the temp dir (db + logs).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TMP_PREFIX=woovi-compat-node
# shellcheck source=../start-server.sh
source "$HERE/../start-server.sh"

cd "$HERE"
if [[ ! -d node_modules ]]; then
  npm ci --no-audit --no-fund
fi

export BASE_URL APP_ID
echo "run.sh: server pid $SERVER_PID at $BASE_URL" >&2
REPORTER=(--test-reporter=spec)
for a in "$@"; do [[ "$a" == --test-reporter* ]] && REPORTER=(); done
set +e
node --test "${REPORTER[@]}" "$@" sdk.test.mjs
status=$?
set -e
if (( status != 0 )); then dump_logs; fi
exit "$status"
