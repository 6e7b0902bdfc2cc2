#!/usr/bin/env bash
# Load benchmark of examples/server on bbolt against a bare net/http JSON handler
# (bench/bare), in the same run: create charge and get charge at 1, 16 and 64 connections,
# with wrk (Debian package). Each case runs RUNS times, the server and the bare handler one
# after the other, so that both see the same machine; it prints the medians of requests/s,
# the server's p50 and p99 latency, and the ratio server/bare with its range over the runs.
#
#   bash bench/load.sh                       # 5 s per measurement, 3 runs
#   DURATION=10s RUNS=5 CONNS=64 bash bench/load.sh
#
# Everything runs on 127.0.0.1; the servers and the database live in a temporary directory
# and are removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-5s}"
CONNS="${CONNS:-1 16 64}"
RUNS="${RUNS:-3}"

if ! command -v wrk >/dev/null; then
  echo "installing wrk (Debian package)" >&2
  apt-get install -y -qq wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
fi

tmp=$(mktemp -d)
server_pid=""
bare_pid=""
cleanup() {
  for pid in $server_pid $bare_pid; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

go build -o "$tmp/server" ./examples/server
go build -o "$tmp/bare" ./bench/bare
port=$(freeport)
base="http://127.0.0.1:$port"
"$tmp/server" -addr "127.0.0.1:$port" -db "$tmp/payments.db" -sandbox=false >"$tmp/out" 2>"$tmp/err" &
server_pid=$!
bare_port=$(freeport)
bare_base="http://127.0.0.1:$bare_port"
"$tmp/bare" -addr "127.0.0.1:$bare_port" 2>"$tmp/bare-err" &
bare_pid=$!

for _ in $(seq 1 100); do
  grep -q '^App ID: ' "$tmp/out" 2>/dev/null && curl -fsS "$base/health" >/dev/null 2>&1 && break
  sleep 0.1
done
APP_ID=$(sed -n 's/^App ID: //p' "$tmp/out" | head -1)
[ -n "$APP_ID" ] || { echo "server did not start:"; cat "$tmp/err"; exit 1; }
for _ in $(seq 1 100); do
  curl -sS -o /dev/null "$bare_base/api/v1/charge/x" -H "Authorization: x" 2>/dev/null && break
  sleep 0.1
done
export APP_ID RUN="$(date +%s)"

# One charge for the read benchmark.
export CHARGE_ID="load-get-$RUN"
curl -fsS -X POST "$base/api/v1/charge" -H "Authorization: $APP_ID" -H 'Content-Type: application/json' \
  -d "{\"correlationID\":\"$CHARGE_ID\",\"value\":1990}" >/dev/null

# measure URL SCRIPT CONNS: one wrk run; prints "req/s p50 p99 non-200".
measure() {
  local url=$1 script=$2 c=$3 t out
  t=$(( c < 2 ? c : 2 ))
  export RUN="$(date +%s%N)" # correlationIDs unique to this run
  out=$(wrk -t"$t" -c"$c" -d"$DURATION" --latency -s "bench/$script.lua" "$url" 2>"$tmp/wrk-err")
  echo "$(echo "$out" | awk '/Requests\/sec/ {print $2}')" \
    "$(echo "$out" | awk '$1=="50%" {print $2}')" \
    "$(echo "$out" | awk '$1=="99%" {print $2}')" \
    "$(grep -c 'unexpected status' "$tmp/wrk-err" || true)"
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

echo "runs=$RUNS duration=$DURATION per measurement; medians, ratio = server/bare (min-max over runs)"
printf '%-13s %5s %11s %9s %9s %11s %7s %13s\n' case conns "server r/s" p50 p99 "bare r/s" ratio "ratio range"
for script in create_charge get_charge; do
  for c in $CONNS; do
    : >"$tmp/runs"
    for _ in $(seq 1 "$RUNS"); do
      read -r rps p50 p99 errs < <(measure "$base" "$script" "$c")
      read -r brps _ _ berrs < <(measure "$bare_base" "$script" "$c")
      echo "$rps $p50 $p99 $errs $brps $berrs" >>"$tmp/runs"
    done
    rps=$(awk '{print $1}' "$tmp/runs" | median)
    brps=$(awk '{print $5}' "$tmp/runs" | median)
    p50=$(awk '{print $2}' "$tmp/runs" | sed 's/us$/ 0.001/; s/ms$/ 1/; s/s$/ 1000/' | awk '{print $1*$2}' | median)
    p99=$(awk '{print $3}' "$tmp/runs" | sed 's/us$/ 0.001/; s/ms$/ 1/; s/s$/ 1000/' | awk '{print $1*$2}' | median)
    errs=$(awk '{s+=$4+$6} END {print s}' "$tmp/runs")
    range=$(awk '{r=$1/$5; if (NR==1||r<lo) lo=r; if (NR==1||r>hi) hi=r} END {printf "%.2f-%.2f", lo, hi}' "$tmp/runs")
    printf '%-13s %5s %11.0f %7.2fms %7.2fms %11.0f %7.2f %13s%s\n' "$script" "$c" "$rps" "$p50" "$p99" "$brps" \
      "$(awk -v a="$rps" -v b="$brps" 'BEGIN {print a/b}')" "$range" "$([ "$errs" != 0 ] && echo "  ($errs non-200)")"
  done
done
