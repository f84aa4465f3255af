#!/usr/bin/env bash
# notify.sh: SET throughput with keyspace notifications on, build/lavik side by side with
# redis-server (doc/keyspace-events.md).
#
# For each server and each notify-keyspace-events value in BENCH_FLAGS ("off" = "", the baseline),
# SUBSCRIBERS redis-cli processes PSUBSCRIBE __key*__:* (every SET then sends 2 messages to each),
# then redis-benchmark runs SET with BENCH_VALUE_SIZE-byte values over BENCH_KEYSPACE random keys,
# BENCH_CLIENTS connections, pipeline 1. Reported: ops/s, and server CPU µs per SET (utime+stime of
# the server process from /proc over the run ÷ requests: it includes delivering the messages).
# Each subscriber's output is counted afterwards: with notifications on every one must have
# received 2 messages per SET, or the run fails. Points run one server at a time, alternating
# which goes first, so background load hits both alike.
#
# Environment (defaults in brackets):
#   LAVIK_BIN [build/lavik]  LAVIK_THREADS [2]  BENCH_FLAGS ["off KEA"]  SUBSCRIBERS [10]
#   BENCH_REQUESTS [200000]  BENCH_CLIENTS [50]  BENCH_VALUE_SIZE [64]  BENCH_KEYSPACE [100000]
#   SERVER_CPUS [all]  CLIENT_CPUS [all]  RESULTS_DIR [bench/results]
# Output: a Markdown table on stdout and in RESULTS_DIR/notify-<stamp>.md. Servers and
# subscribers are tracked by PID and stopped on every exit path.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=notify
LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
LAVIK_THREADS=${LAVIK_THREADS:-2}
BENCH_FLAGS=${BENCH_FLAGS:-"off KEA"}
SUBSCRIBERS=${SUBSCRIBERS:-10}
BENCH_REQUESTS=${BENCH_REQUESTS:-200000}
BENCH_CLIENTS=${BENCH_CLIENTS:-50}
BENCH_VALUE_SIZE=${BENCH_VALUE_SIZE:-64}
BENCH_KEYSPACE=${BENCH_KEYSPACE:-100000}
ALL_CPUS=$(nproc --all)
SERVER_CPUS=${SERVER_CPUS:-0-$((ALL_CPUS - 1))}
CLIENT_CPUS=${CLIENT_CPUS:-0-$((ALL_CPUS - 1))}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

require_tools "$REDIS_SERVER" "$REDIS_CLI" "$REDIS_BENCHMARK" taskset getconf
[[ -x $LAVIK_BIN ]] || die "no $LAVIK_BIN: build first"
require_uint SUBSCRIBERS "$SUBSCRIBERS"
require_uint BENCH_REQUESTS "$BENCH_REQUESTS"
TICKS_PER_S=$(getconf CLK_TCK)

TMP=$(mktemp -d /tmp/lavik-notify-bench.XXXXXX)
RAW_DIR=$TMP
SERVER_PID=""
SUB_PIDS=()
stop_subscribers() {
  local pid
  for pid in "${SUB_PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  SUB_PIDS=()
}
cleanup() {
  stop_subscribers
  stop_lavik "$SERVER_PID"
  rm -rf "$TMP"
}
trap cleanup EXIT


# Starts the subscribers and waits until the server counts them all (PUBSUB NUMPAT counts
# patterns, so the pattern's subscribers are counted by CLIENT LIST's psub field).
start_subscribers() {
  local i
  for ((i = 0; i < SUBSCRIBERS; i++)); do
    taskset -c "$CLIENT_CPUS" "$REDIS_CLI" -h "$HOST" -p "$PORT" --csv psubscribe '__key*__:*' \
      >"$TMP/sub-$i.out" 2>&1 &
    SUB_PIDS+=($!)
  done
  for ((i = 0; i < 100; i++)); do
    (($(cli CLIENT LIST | grep -c 'psub=1') == SUBSCRIBERS)) && return 0
    sleep 0.05
  done
  die "the $SUBSCRIBERS subscribers did not all subscribe"
}

run_point() {  # server flags -> "ops_per_s cpu_us_per_set"
  local server=$1 flags=$2 before after rc=0 out
  start_bench_server "$server" "$TMP" "$LAVIK_THREADS"
  cli CONFIG SET notify-keyspace-events "$flags" >/dev/null
  start_subscribers
  out="$TMP/$server-${flags:-off}.csv"
  before=$(cpu_ticks "$SERVER_PID")
  taskset -c "$CLIENT_CPUS" "$REDIS_BENCHMARK" -h "$HOST" -p "$PORT" -t set \
    -d "$BENCH_VALUE_SIZE" -r "$BENCH_KEYSPACE" -n "$BENCH_REQUESTS" -c "$BENCH_CLIENTS" -P 1 \
    --csv >"$out" 2>&1 || rc=$?
  ((rc == 0)) || die "redis-benchmark exited with status $rc against $server; see $out"
  sleep 0.5  # the last messages and the benchmark's disconnects land inside the window
  after=$(cpu_ticks "$SERVER_PID")
  alive "the $server run"
  if [[ -n $flags ]]; then
    local i got want=$((2 * BENCH_REQUESTS))
    for ((i = 0; i < SUBSCRIBERS; i++)); do
      got=$(grep -c '^"pmessage"' "$TMP/sub-$i.out" || true)
      ((got == want)) || die "subscriber $i of $server got $got messages, not $want"
    done
  fi
  stop_subscribers
  stop_lavik "$SERVER_PID"
  SERVER_PID=""
  local rps
  rps=$(grep '^"SET",' "$out" | tail -n 1 | cut -d, -f2 | tr -d '"')
  [[ -n $rps ]] || die "no SET row in $out"
  echo "$rps $(calc "(a - b) / t * 1000000 / n" a="$after" b="$before" t="$TICKS_PER_S" \
    n="$BENCH_REQUESTS")"
}

STAMP=$(date +%Y%m%d-%H%M%S)
mkdir -p "$RESULTS_DIR"
OUT=$RESULTS_DIR/notify-$STAMP.md
{
  echo "# SET with keyspace notifications ($STAMP)"
  echo
  echo "redis-benchmark -t set -d $BENCH_VALUE_SIZE -r $BENCH_KEYSPACE -n $BENCH_REQUESTS -c $BENCH_CLIENTS -P 1;"
  echo "$SUBSCRIBERS redis-cli subscribers on PSUBSCRIBE __key*__:* (2 messages each per SET when on);"
  echo "lavik $(git_rev) --threads $LAVIK_THREADS; server CPUs $SERVER_CPUS, client CPUs $CLIENT_CPUS;"
  echo "$(nproc) CPUs visible, shared machine."
  echo
  echo "| server | notify-keyspace-events | SET ops/s | server CPU µs / SET |"
  echo "|---|---|---:|---:|"
} >"$OUT"
flip=0
for flags in $BENCH_FLAGS; do
  [[ $flags == off ]] && flags=""
  if ((flip == 0)); then order="lavik redis"; else order="redis lavik"; fi
  flip=$((1 - flip))
  for server in $order; do
    log "$server, notify-keyspace-events '${flags}'"
    read -r rps cpu <<<"$(run_point "$server" "$flags")"
    printf '| %s | %s | %s | %.2f |\n' "$server" "${flags:-(off)}" "$rps" "$cpu" >>"$OUT"
  done
done
cat "$OUT"
log "written to $OUT"
