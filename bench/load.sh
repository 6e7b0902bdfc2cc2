#!/usr/bin/env bash
# Load benchmark of examples/server on bbolt: create charge and get charge at 1, 16 and 64
# connections, with wrk (Debian package). Prints requests/s and p99 latency per case.
#
#   bash bench/load.sh            # 10 s per case
#   DURATION=30s bash bench/load.sh
#
# Everything runs on 127.0.0.1; the server and its database live in a temporary directory
# and are removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-10s}"
CONNS="${CONNS:-1 16 64}"

if ! command -v wrk >/dev/null; then
  echo "installing wrk (Debian package)" >&2
  apt-get install -y -qq wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
fi

tmp=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/server" ./examples/server
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
"$tmp/server" -addr "127.0.0.1:$port" -db "$tmp/payments.db" -sandbox=false >"$tmp/out" 2>"$tmp/err" &
server_pid=$!

for _ in $(seq 1 100); do
  grep -q '^App ID: ' "$tmp/out" 2>/dev/null && curl -fsS "$base/health" >/dev/null 2>&1 && break
  sleep 0.1
done
APP_ID=$(sed -n 's/^App ID: //p' "$tmp/out" | head -1)
[ -n "$APP_ID" ] || { echo "server did not start:"; cat "$tmp/err"; exit 1; }
export APP_ID RUN="$(date +%s)"

# One charge for the read benchmark.
export CHARGE_ID="load-get-$RUN"
curl -fsS -X POST "$base/api/v1/charge" -H "Authorization: $APP_ID" -H 'Content-Type: application/json' \
  -d "{\"correlationID\":\"$CHARGE_ID\",\"value\":1990}" >/dev/null

printf '%-14s %6s %12s %10s %10s\n' case conns "req/s" p50 p99
for script in create_charge get_charge; do
  for c in $CONNS; do
    t=$(( c < 2 ? c : 2 ))
    export RUN="$(date +%s%N)" # correlationIDs unique to this case
    out=$(wrk -t"$t" -c"$c" -d"$DURATION" --latency -s "bench/$script.lua" "$base" 2>"$tmp/wrk-err")
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    p50=$(echo "$out" | awk '$1=="50%" {print $2}')
    p99=$(echo "$out" | awk '$1=="99%" {print $2}')
    errs=$(grep -c 'unexpected status' "$tmp/wrk-err" || true)
    printf '%-14s %6s %12s %10s %10s%s\n' "$script" "$c" "$rps" "$p50" "$p99" "$([ "$errs" != 0 ] && echo "  ($errs non-200)")"
  done
done
