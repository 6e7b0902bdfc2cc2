# Sourced by compat/*/run.sh (not run on its own): starts a fresh server for a test suite.
#
# The first argument, if it does not start with "-", is a server binary to run, and is
# shifted off the caller's arguments. Without one it builds ./examples/server (what
# `go run ./examples/server` would run) into a temp dir first, so the compile time does not
# count against the startup timeout and the PID stopped is the server itself. The server is
# started with
#   -addr 127.0.0.1:<free port> -db <tmpdir>/payments.db -sandbox=true
# and the partner App ID is read from its stdout line `App ID: <value>`. On return BASE_URL,
# APP_ID, SERVER_PID and TMP are set, dump_logs prints the server's logs, and an EXIT trap
# stops the server and removes TMP.
# Env: STARTUP_TIMEOUT (s, default 60), KEEP_TMP=1 keeps the temp dir (db + logs),
# TMP_PREFIX names the temp dir.

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STARTUP_TIMEOUT="${STARTUP_TIMEOUT:-60}"

SERVER_BIN=""
if [[ $# -gt 0 && "${1:0:1}" != "-" ]]; then
  SERVER_BIN="$1"
  shift
  [[ -x "$SERVER_BIN" ]] || { echo "run.sh: $SERVER_BIN is not an executable" >&2; exit 2; }
  SERVER_BIN="$(cd "$(dirname "$SERVER_BIN")" && pwd)/$(basename "$SERVER_BIN")"
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/${TMP_PREFIX:-payments-compat}.XXXXXX")"
SERVER_PID=""

cleanup() {
  local rc=$?
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [[ "${KEEP_TMP:-}" == "1" ]]; then
    echo "run.sh: kept $TMP" >&2
  else
    rm -rf "$TMP"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

dump_logs() {
  echo "---- server stdout ($TMP/server.out) ----" >&2; tail -n 50 "$TMP/server.out" >&2 || true
  echo "---- server stderr ($TMP/server.err) ----" >&2; tail -n 50 "$TMP/server.err" >&2 || true
}

if [[ -z "$SERVER_BIN" ]]; then
  echo "run.sh: building ./examples/server ..." >&2
  (cd "$REPO" && go build -o "$TMP/server" ./examples/server)
  SERVER_BIN="$TMP/server"
fi

PORT="$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
ADDR="127.0.0.1:$PORT"

"$SERVER_BIN" -addr "$ADDR" -db "$TMP/payments.db" -sandbox=true >"$TMP/server.out" 2>"$TMP/server.err" &
SERVER_PID=$!

# 1) App ID line on stdout (bounded wait).
APP_ID=""
deadline=$((SECONDS + STARTUP_TIMEOUT))
while (( SECONDS < deadline )); do
  APP_ID="$(sed -n 's/.*App ID:[[:space:]]*\([^[:space:]]*\).*/\1/p' "$TMP/server.out" | head -n 1)"
  [[ -n "$APP_ID" ]] && break
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "run.sh: server exited before printing 'App ID:'" >&2; dump_logs; exit 1
  fi
  sleep 0.2
done
if [[ -z "$APP_ID" ]]; then
  echo "run.sh: no 'App ID: <value>' line on server stdout within ${STARTUP_TIMEOUT}s" >&2; dump_logs; exit 1
fi

BASE_URL="http://$ADDR"

# 2) GET /health == 200 (bounded wait, same deadline budget restarted).
healthy=0
deadline=$((SECONDS + STARTUP_TIMEOUT))
while (( SECONDS < deadline )); do
  if node -e "fetch(process.argv[1],{signal:AbortSignal.timeout(2000)}).then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))" "$BASE_URL/health"; then
    healthy=1; break
  fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "run.sh: server exited before /health answered" >&2; dump_logs; exit 1
  fi
  sleep 0.2
done
if (( ! healthy )); then
  echo "run.sh: GET $BASE_URL/health did not return 200 within ${STARTUP_TIMEOUT}s" >&2; dump_logs; exit 1
fi

