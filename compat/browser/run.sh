#!/usr/bin/env bash
# Run the browser tests (Debian's chromium driven by playwright-core) against a freshly
# started server in sandbox mode: the payment link page (paylink.test.mjs), and CORS
# (cors.test.mjs: a page of another origin calling the API; it starts servers of its own
# with -cors-origins from the same binary, SERVER_BIN), and the page under a path prefix
# (mount.test.mjs: a host in node forwards /payments/... to the server, prefix stripped).
#
#   compat/browser/run.sh [path/to/server-binary] [extra node --test args, e.g. --test-name-pattern=expired]
#
# The server is started by ../start-server.sh (a binary given, or ./examples/server built).
# Env: STARTUP_TIMEOUT (s, default 60), KEEP_TMP=1 keeps the temp dir (db + logs and the browser
# profile), CHROMIUM (default /usr/bin/chromium), SCREENSHOT_DIR (default compat/browser/screenshots,
# gitignored: the test writes paylink-375.png and paylink-1280.png there).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TMP_PREFIX=payments-browser
# shellcheck source=../start-server.sh
source "$HERE/../start-server.sh"

cd "$HERE"
if [[ ! -d node_modules ]]; then
  npm ci --no-audit --no-fund
fi

CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
[[ -x "$CHROMIUM" ]] || { echo "run.sh: no chromium at $CHROMIUM (apt-get install -y chromium)" >&2; exit 1; }
SCREENSHOT_DIR="${SCREENSHOT_DIR:-$HERE/screenshots}"
mkdir -p "$SCREENSHOT_DIR" "$TMP/profile"
USER_DATA_DIR="$TMP/profile"
export BASE_URL APP_ID CHROMIUM SCREENSHOT_DIR USER_DATA_DIR SERVER_BIN
echo "run.sh: server pid $SERVER_PID at $BASE_URL" >&2
REPORTER=(--test-reporter=spec)
for a in "$@"; do [[ "$a" == --test-reporter* ]] && REPORTER=(); done
set +e
node --test "${REPORTER[@]}" "$@" paylink.test.mjs cors.test.mjs mount.test.mjs
status=$?
set -e
if (( status != 0 )); then dump_logs; fi
exit "$status"
