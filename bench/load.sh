#!/usr/bin/env bash
# Load benchmark of examples/server on bbolt against a bare net/http JSON handler
# (bench/bare), in the same run: create charge and get charge at 1, 16 and 64 connections,
# with wrk (Debian package). Each case runs RUNS times, the server and the bare handler one
# after the other, so that both see the same machine; it prints the medians of requests/s,
# the server's p50 and p99 latency, and the ratio server/bare with its range over the runs.
# Both cases also run the floor (bench/bare -durable: the bare handler committing what a
# create must keep to a bbolt file, synced, in group commits, and reading a charge back
# from it by its correlationID) and print floor/bare, what bbolt alone leaves of the bare
# handler, and server/floor. The floor writes four keys per create; the keys floor
# (bench/bare -durable -keys) writes every key the server's create writes, in store/bolt's
# shapes and sizes, so server/keys is what the service adds to keeping them, and
# keys/floor what keeping them costs.
# It also prints the CPU time each process used per request (from /proc), with the ratio
# of the bare handler's to the server's (the floors' are the "floor µs" and "keys µs"
# columns): on a machine
# shared with other work, requests/s moves with the load of the others while CPU time per
# request mostly does not.
#
#   bash bench/load.sh                       # 5 s per measurement, 3 runs
#   DURATION=10s RUNS=5 CONNS=64 bash bench/load.sh
#   CASES=get_charge CONNS=64 bash bench/load.sh   # one case
#   DB=memory: CASES=create_charge CONNS=64 bash bench/load.sh   # the server on memory
#   TABLE=1 CONNS=64 bash bench/load.sh      # and the rest of issue 31's table, below
#
# TABLE=1 then runs, in the same sitting and RUNS times each, the root package's
# benchmarks for the table's other rows: in process, CreateCharge at 64 callers on the
# group-committing store against plain bbolt committing one 600-byte record per call
# (BenchmarkCreateChargeCallers, the two alternating, INPROC_BENCHTIME each, default 3s,
# with the same creates never synced as the ceiling); reads at the sizes in SCALE, with
# the store's own look-ups as their floor (default 10000,200000,1000000: seeding 1M takes
# minutes and about 6 GB under the temporary directory, kept for the next run;
# BenchmarkScale); and webhook deliveries against the RSA signing floor and against the
# sending floor, signing and sending with no store, and against the recording floor,
# which also keeps each delivery's attempt record in a synced bbolt file
# (BenchmarkWebhookDeliveryFloor). It prints medians with their ranges.
#
# DB is the server's -db (default a bbolt file in the temporary directory); memory: keeps
# everything in memory, which shows what the service costs without a disk.
#
# Everything runs on 127.0.0.1; the servers and the database live in a temporary directory
# and are removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-5s}"
CONNS="${CONNS:-1 16 64}"
RUNS="${RUNS:-3}"
CASES="${CASES:-create_charge get_charge}"
DB="${DB:-}"
INPROC_BENCHTIME="${INPROC_BENCHTIME:-3s}" # each in-process run (TABLE=1): 1 s moved with the machine's load

if ! command -v wrk >/dev/null; then
  echo "installing wrk (Debian package)" >&2
  apt-get install -y -qq wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
fi

tmp=$(mktemp -d)
server_pid=""
bare_pid=""
floor_pid=""
keys_pid=""
cleanup() {
  for pid in $server_pid $bare_pid $floor_pid $keys_pid; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

go build -o "$tmp/server" ./examples/server
go build -o "$tmp/bare" ./bench/bare
port=$(freeport)
base="http://127.0.0.1:$port"
"$tmp/server" -addr "127.0.0.1:$port" -db "${DB:-$tmp/payments.db}" >"$tmp/out" 2>"$tmp/err" &
server_pid=$!
bare_port=$(freeport)
bare_base="http://127.0.0.1:$bare_port"
"$tmp/bare" -addr "127.0.0.1:$bare_port" 2>"$tmp/bare-err" &
bare_pid=$!
floor_port=$(freeport)
floor_base="http://127.0.0.1:$floor_port"
"$tmp/bare" -addr "127.0.0.1:$floor_port" -durable "$tmp/floor.db" 2>"$tmp/floor-err" &
floor_pid=$!
keys_port=$(freeport)
keys_base="http://127.0.0.1:$keys_port"
"$tmp/bare" -addr "127.0.0.1:$keys_port" -durable "$tmp/keys.db" -keys 2>"$tmp/keys-err" &
keys_pid=$!

for _ in $(seq 1 100); do
  grep -q '^App ID: ' "$tmp/out" 2>/dev/null && curl -fsS "$base/health" >/dev/null 2>&1 && break
  sleep 0.1
done
APP_ID=$(sed -n 's/^App ID: //p' "$tmp/out" | head -1)
[ -n "$APP_ID" ] || { echo "server did not start:"; cat "$tmp/err"; exit 1; }
for b in "$bare_base" "$floor_base" "$keys_base"; do
  for _ in $(seq 1 100); do
    curl -sS -o /dev/null "$b/api/v1/charge/x" -H "Authorization: x" 2>/dev/null && break
    sleep 0.1
  done
done
export APP_ID RUN="$(date +%s)"

# One charge for the read benchmark, on the server and on the floor.
export CHARGE_ID="load-get-$RUN"
for b in "$base" "$floor_base" "$keys_base"; do
  curl -fsS -X POST "$b/api/v1/charge" -H "Authorization: $APP_ID" -H 'Content-Type: application/json' \
    -d "{\"correlationID\":\"$CHARGE_ID\",\"value\":1990}" >/dev/null
done

# cputicks PID: user+system CPU time the process has used, in clock ticks.
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

# measure URL PID SCRIPT CONNS: one wrk run; prints "req/s p50 p99 non-200 cpu-µs/request",
# the last from the CPU time the serving process used during the run.
measure() {
  local url=$1 pid=$2 script=$3 c=$4 t out before after
  t=$(( c < 2 ? c : 2 ))
  export RUN="$(date +%s%N)" # correlationIDs unique to this run
  before=$(cputicks "$pid")
  out=$(wrk -t"$t" -c"$c" -d"$DURATION" --latency -s "bench/$script.lua" "$url" 2>"$tmp/wrk-err")
  after=$(cputicks "$pid")
  echo "$(echo "$out" | awk '/Requests\/sec/ {print $2}')" \
    "$(echo "$out" | awk '$1=="50%" {print $2}')" \
    "$(echo "$out" | awk '$1=="99%" {print $2}')" \
    "$(grep -c 'unexpected status' "$tmp/wrk-err" || true)" \
    "$(echo "$out" | awk -v d=$((after - before)) -v hz="$hz" '/requests in/ {printf "%.1f", d * 1e6 / hz / $1}')"
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
# spread: the median of numbers, one per line, with their range: "0.34 (0.32-0.38)".
spread() { sort -g | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.2f (%.2f-%.2f)", m, v[1], v[NR]}'; }

echo "server -db ${DB:-bbolt file}; runs=$RUNS duration=$DURATION per measurement; medians; ratio = server/bare requests/s (min-max over runs);"
echo "cpu µs/req = CPU time of the serving process per request; cpu ratio = bare/server CPU per request;"
echo "floor = bench/bare -durable: floor/bare and server/floor requests/s, with their ranges;"
echo "keys = bench/bare -durable -keys, the floor writing every key the server's create writes: keys/floor and server/keys"
printf '%-13s %5s %11s %9s %9s %11s %7s %11s %9s %9s %9s %10s %16s %16s %9s %10s %16s %16s %9s\n' case conns "server r/s" p50 p99 "bare r/s" ratio "ratio range" "srv µs" "bare µs" "cpu ratio" "floor r/s" "floor/bare" "srv/floor" "floor µs" \
  "keys r/s" "keys/floor" "srv/keys" "keys µs"
for script in $CASES; do
  for c in $CONNS; do
    : >"$tmp/runs"
    for _ in $(seq 1 "$RUNS"); do
      read -r rps p50 p99 errs cpu < <(measure "$base" "$server_pid" "$script" "$c")
      read -r brps _ _ berrs bcpu < <(measure "$bare_base" "$bare_pid" "$script" "$c")
      read -r frps _ _ ferrs fcpu < <(measure "$floor_base" "$floor_pid" "$script" "$c")
      read -r krps _ _ kerrs kcpu < <(measure "$keys_base" "$keys_pid" "$script" "$c")
      echo "$rps $p50 $p99 $errs $brps $berrs $cpu $bcpu $frps $ferrs $fcpu $krps $kerrs $kcpu" >>"$tmp/runs"
    done
    rps=$(awk '{print $1}' "$tmp/runs" | median)
    brps=$(awk '{print $5}' "$tmp/runs" | median)
    p50=$(awk '{print $2}' "$tmp/runs" | sed 's/us$/ 0.001/; s/ms$/ 1/; s/s$/ 1000/' | awk '{print $1*$2}' | median)
    p99=$(awk '{print $3}' "$tmp/runs" | sed 's/us$/ 0.001/; s/ms$/ 1/; s/s$/ 1000/' | awk '{print $1*$2}' | median)
    errs=$(awk '{s+=$4+$6+$10+$13} END {print s}' "$tmp/runs")
    floor=$(awk '{print $9}' "$tmp/runs" | median | xargs printf '%.0f')
    fratio=$(awk '{print $9/$5}' "$tmp/runs" | spread)
    sfratio=$(awk '{print $1/$9}' "$tmp/runs" | spread)
    fcpu=$(awk '{print $11}' "$tmp/runs" | median)
    keys=$(awk '{print $12}' "$tmp/runs" | median | xargs printf '%.0f')
    skratio=$(awk '{print $1/$12}' "$tmp/runs" | spread)
    kfratio=$(awk '{print $12/$9}' "$tmp/runs" | spread)
    kcpu=$(awk '{print $14}' "$tmp/runs" | median)
    range=$(awk '{r=$1/$5; if (NR==1||r<lo) lo=r; if (NR==1||r>hi) hi=r} END {printf "%.2f-%.2f", lo, hi}' "$tmp/runs")
    cpu=$(awk '{print $7}' "$tmp/runs" | median)
    bcpu=$(awk '{print $8}' "$tmp/runs" | median)
    printf '%-13s %5s %11.0f %7.2fms %7.2fms %11.0f %7.2f %11s %9.1f %9.1f %9.2f %10s %16s %16s %9.1f %10s %16s %16s %9.1f%s\n' "$script" "$c" "$rps" "$p50" "$p99" "$brps" \
      "$(awk -v a="$rps" -v b="$brps" 'BEGIN {print a/b}')" "$range" "$cpu" "$bcpu" \
      "$(awk -v a="$bcpu" -v b="$cpu" 'BEGIN {print a/b}')" "$floor" "$fratio" "$sfratio" "$fcpu" \
      "$keys" "$kfratio" "$skratio" "$kcpu" "$([ "$errs" != 0 ] && echo "  ($errs non-200)")"
  done
done

[ "${TABLE:-}" = 1 ] || exit 0

# The rest of the table: the root package's benchmarks, compiled once, each run RUNS times.
echo
echo "== the rest of issue 31's table (RUNS=$RUNS; medians, ranges in brackets)"
go test -c -o "$tmp/payments.test" .
bench() {
  "$tmp/payments.test" -test.run '^$' "$@" >"$tmp/bench.out" 2>&1 || { cat "$tmp/bench.out" >&2; exit 1; }
  cat "$tmp/bench.out"
}
# metric NAME: the value before NAME on each line of a benchmark's output.
metric() { awk -v m="$1" '{for (i = 2; i <= NF; i++) if ($i == m) print $(i - 1)}'; }

: >"$tmp/inproc"
for _ in $(seq 1 "$RUNS"); do
  out=$(bench -test.bench 'CreateChargeCallers/^(bolt|bolt-nosync|bbolt-update)$/^callers=64$' -test.count=1 -test.benchtime="$INPROC_BENCHTIME")
  echo "$(echo "$out" | grep '/bolt/' | metric ops/s) $(echo "$out" | grep '/bbolt-update/' | metric ops/s) $(echo "$out" | grep '/bolt/' | metric cpu-µs/op) $(echo "$out" | grep '/bolt-nosync/' | metric ops/s)" >>"$tmp/inproc"
done
printf 'in process, 64 callers: CreateCharge %.0f/s, plain bbolt %.0f/s, ratio %s; %.1f µs of CPU per create\n' \
  "$(awk '{print $1}' "$tmp/inproc" | median)" "$(awk '{print $2}' "$tmp/inproc" | median)" \
  "$(awk '{print $1/$2}' "$tmp/inproc" | spread)" "$(awk '{print $3}' "$tmp/inproc" | median)"
# The ceiling in the same runs: the same creates on the same store never syncing
# (bolt-nosync), what they would reach if the disk took no time.
printf '  without syncing (bolt-nosync) %.0f/s, %s of plain bbolt; synced / unsynced %s\n' \
  "$(awk '{print $4}' "$tmp/inproc" | median)" "$(awk '{print $4/$2}' "$tmp/inproc" | spread)" \
  "$(awk '{print $1/$4}' "$tmp/inproc" | spread)"

scale="${SCALE:-10000,200000,1000000}"
out=$(PAYMENTS_SCALE="$scale" bench -test.bench '^BenchmarkScale$' -test.count="$RUNS" -test.timeout 90m)
sizes=$(echo "$scale" | tr ',' ' ')
first=${scale%%,*}
echo "reads by size (µs per read at $sizes charges; each size against the first, with its range over runs):"
for op in $(echo "$out" | sed -n 's#^BenchmarkScale/\([A-Za-z]*\)/charges=.*#\1#p' | uniq); do
  line=$(printf '  %-24s' "$op")
  atfirst=$(echo "$out" | grep "^BenchmarkScale/$op/charges=$first-" | awk '{print $3 / 1000}')
  for n in $sizes; do
    at=$(echo "$out" | grep "^BenchmarkScale/$op/charges=$n-" | awk '{print $3 / 1000}')
    line="$line $(printf '%8.1f' "$(echo "$at" | median)")"
    [ "$n" = "$first" ] || line="$line $(paste <(echo "$at") <(echo "$atfirst") | awk '{print $1/$2}' | spread)"
  done
  echo "$line"
done
for n in $sizes; do
  printf '  at %s: file %s MB\n' "$n" "$(echo "$out" | grep "charges=$n-" | metric file-MB | tail -1)"
done
echo "  $(echo "$out" | metric rss-MB | tail -1) MB resident at the end (every size's file is mapped)"

out=$(bench -test.bench '^BenchmarkWebhookDeliveryFloor$' -test.benchtime=1x -test.count="$RUNS")
printf 'webhooks: %.0f deliveries/s against %.0f signatures/s, ratio %s; %.0f µs of CPU per delivery, %.0f per signature\n' \
  "$(echo "$out" | metric deliveries/s | median)" "$(echo "$out" | metric floor-sig/s | median)" \
  "$(echo "$out" | metric ratio | spread)" "$(echo "$out" | metric cpu-µs/delivery | median)" \
  "$(echo "$out" | metric cpu-µs/sig | median)"
printf '  against signing and sending alone (no store): %.0f/s, ratio %s; %.0f µs of CPU per send\n' \
  "$(echo "$out" | metric floor-send/s | median)" "$(echo "$out" | metric ratio-send | spread)" \
  "$(echo "$out" | metric cpu-µs/send | median)"
printf '  against signing, sending and keeping each attempt record (synced, a window of sends a commit): %.0f/s, ratio %s; %s of the signing floor; %.0f µs of CPU per delivery\n' \
  "$(echo "$out" | metric floor-rec/s | median)" "$(echo "$out" | metric ratio-rec | spread)" \
  "$(echo "$out" | metric rec/sig | spread)" "$(echo "$out" | metric cpu-µs/rec | median)"
# The ratio is exactly the product of two: the CPU of a signature over that of a delivery,
# and the cores the deliveries used over those the signing floor used (a run's CPU per item
# times its items per second; two for a process that never leaves a core idle).
split=$(echo "$out" | awk '/^BenchmarkWebhookDeliveryFloor/ {
  for (i = 2; i <= NF; i++) v[$i] = $(i - 1)
  printf "%f %f %f %f\n", v["cpu-µs/sig"] / v["cpu-µs/delivery"], v["cpu-µs/delivery"] * v["deliveries/s"] / 1e6,
    v["cpu-µs/sig"] * v["floor-sig/s"] / 1e6, v["cpu-µs/rec"] * v["floor-rec/s"] / 1e6 }')
printf '  the ratio split: CPU of a signature / of a delivery %s; cores used by the deliveries %.2f, the signing floor %.2f, the recording floor %.2f\n' \
  "$(echo "$split" | awk '{print $1}' | spread)" "$(echo "$split" | awk '{print $2}' | median)" \
  "$(echo "$split" | awk '{print $3}' | median)" "$(echo "$split" | awk '{print $4}' | median)"
