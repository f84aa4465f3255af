#!/usr/bin/env bash
# replication.sh: a Lavik replica against a redis-server replica of the same master, in the same
# run (doc/replication.md).
#
# The master (redis-server, or Lavik with BENCH_MASTER=lavik; diskless sync, no delay) is
# loaded with BENCH_KEYS keys of BENCH_VALUE_SIZE bytes (bench/loadgen.py through redis-cli
# --pipe). Then, for each replica in
# turn (alone, the other one stopped, so they never share the CPUs):
#   full sync    REPLICAOF, until INFO says master_link_status:up and DBSIZE is BENCH_KEYS:
#                seconds and keys/s;
#   apply        redis-benchmark SETs BENCH_WRITES random keys of the same key space (same value
#                size, pipeline BENCH_PIPELINE, BENCH_CLIENTS connections) on the master; the
#                time from its start until the replica's slave_repl_offset reaches the master's
#                master_repl_offset: writes/s applied (and the master's own write rate, the
#                ceiling), and the replica's CPU time (user + system) over it per write.
# Ratios are Lavik / redis-server (full sync time: lower is better; rates: higher is better).
#
# Environment (defaults in brackets):
#   LAVIK_BIN [build/lavik]  LAVIK_THREADS [1]  BENCH_KEYS [200000]  BENCH_VALUE_SIZE [1024]
#   BENCH_WRITES [BENCH_KEYS]  BENCH_PIPELINE [64]  BENCH_CLIENTS [8]  RESULTS_DIR [bench/results]
#   BENCH_MASTER [redis]: lavik runs a Lavik master instead (--cache-mb MASTER_CACHE_MB [1024]),
#   for data sets a redis-server master and a redis-server replica could not both hold in RAM
# 1M keys of 1 KiB (the full-size run): BENCH_KEYS=1000000 (about 1 GiB on the master).
# Output: a Markdown table on stdout and in RESULTS_DIR/replication-<stamp>.md. Servers are
# tracked by PID and stopped on every exit path.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=replication
LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
LAVIK_THREADS=${LAVIK_THREADS:-1}
BENCH_KEYS=${BENCH_KEYS:-200000}
BENCH_VALUE_SIZE=${BENCH_VALUE_SIZE:-1024}
BENCH_WRITES=${BENCH_WRITES:-$BENCH_KEYS}
BENCH_PIPELINE=${BENCH_PIPELINE:-64}
BENCH_CLIENTS=${BENCH_CLIENTS:-8}
BENCH_MASTER=${BENCH_MASTER:-redis}
MASTER_CACHE_MB=${MASTER_CACHE_MB:-1024}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

require_tools "$REDIS_SERVER" "$REDIS_CLI" "$REDIS_BENCHMARK" "$PYTHON"
[[ -x $LAVIK_BIN ]] || die "no $LAVIK_BIN: build first"
require_uint BENCH_KEYS "$BENCH_KEYS"
require_uint BENCH_VALUE_SIZE "$BENCH_VALUE_SIZE"
require_uint BENCH_WRITES "$BENCH_WRITES"
require_uint LAVIK_THREADS "$LAVIK_THREADS"

TMP=$(mktemp -d /tmp/lavik-replication-bench.XXXXXX)
RAW_DIR=$TMP
MASTER_PID=""
SERVER_PID=""
cleanup() {
  stop_lavik "$SERVER_PID" 30 replica
  stop_lavik "$MASTER_PID" 30 master
  rm -rf "$TMP"
}
trap cleanup EXIT

now_ms() { echo $(($(date +%s%N) / 1000000)); }
field() { info_get "$("$REDIS_CLI" -h "$HOST" -p "$1" INFO replication)" "$2"; }

# The master.
MASTER_PORT=$(free_port)
mkdir -p "$TMP/master"
MASTER_ARGS=(--port "$MASTER_PORT" --bind "$HOST" --save '' --appendonly no --dir "$TMP/master"
  --repl-diskless-sync yes --repl-diskless-sync-delay 0 --repl-backlog-size 64mb
  --client-output-buffer-limit "replica 0 0 0")
if [[ $BENCH_MASTER == lavik ]]; then
  "$LAVIK_BIN" "${MASTER_ARGS[@]}" --threads "$LAVIK_THREADS" --cache-mb "$MASTER_CACHE_MB" \
    --data-file "$TMP/master/lavik.data" --log-dir "$TMP/master/logs" >"$TMP/master.log" 2>&1 &
else
  "$REDIS_SERVER" "${MASTER_ARGS[@]}" >"$TMP/master.log" 2>&1 &
fi
MASTER_PID=$!
SERVER_PID=$MASTER_PID PORT=$MASTER_PORT SERVER_NAME=master wait_ready "start-up"
log "loading $BENCH_KEYS keys of $BENCH_VALUE_SIZE bytes into the master"
"$PYTHON" "$ROOT/bench/loadgen.py" resp "$BENCH_KEYS" "$BENCH_VALUE_SIZE" |
  "$REDIS_CLI" -h "$HOST" -p "$MASTER_PORT" --pipe >"$TMP/load.out" 2>&1 ||
  die "loading failed: $(tail -3 "$TMP/load.out")"
[[ $(PORT=$MASTER_PORT cli DBSIZE) == "$BENCH_KEYS" ]] ||
  die "the master does not hold $BENCH_KEYS keys"

# run_replica NAME: starts that replica, syncs it, applies the writes, stops it; sets SYNC_MS,
# APPLY_MS, MASTER_WRITE_MS.
run_replica() {
  local name=$1 port
  port=$(free_port)
  mkdir -p "$TMP/$name"
  if [[ $name == lavik ]]; then
    "$LAVIK_BIN" --port "$port" --threads "$LAVIK_THREADS" --data-file "$TMP/lavik/lavik.data" \
      --dir "$TMP/lavik" --log-dir "$TMP/lavik/logs" >"$TMP/lavik.log" 2>&1 &
  else
    "$REDIS_SERVER" --port "$port" --bind "$HOST" --save '' --appendonly no --dir "$TMP/redis" \
      >"$TMP/redis.log" 2>&1 &
  fi
  SERVER_PID=$!
  PORT=$port SERVER_NAME=$name wait_ready "start-up"
  local start end
  start=$(now_ms)
  PORT=$port cli REPLICAOF "$HOST" "$MASTER_PORT" >/dev/null
  while [[ $(field "$port" master_link_status 2>/dev/null) != up ]]; do
    kill -0 "$SERVER_PID" 2>/dev/null || die "$name exited during the sync; see $TMP/$name.log"
    (($(now_ms) - start < 3600000)) || die "$name did not sync within an hour"
    sleep 0.05
  done
  end=$(now_ms)
  SYNC_MS=$((end - start))
  [[ $(PORT=$port cli DBSIZE) == "$BENCH_KEYS" ]] || die "$name does not hold $BENCH_KEYS keys"
  log "$name: full sync of $BENCH_KEYS keys in $SYNC_MS ms"

  local ticks0
  ticks0=$(cpu_ticks "$SERVER_PID")
  start=$(now_ms)
  "$REDIS_BENCHMARK" -h "$HOST" -p "$MASTER_PORT" -t set -n "$BENCH_WRITES" -r "$BENCH_KEYS" \
    -d "$BENCH_VALUE_SIZE" -P "$BENCH_PIPELINE" -c "$BENCH_CLIENTS" -q \
    >"$TMP/$name-bench.out" 2>&1 ||
    die "redis-benchmark failed: $(tail -3 "$TMP/$name-bench.out")"
  MASTER_WRITE_MS=$(($(now_ms) - start))
  local want
  want=$(field "$MASTER_PORT" master_repl_offset)
  while (($(field "$port" slave_repl_offset) < want)); do
    kill -0 "$SERVER_PID" 2>/dev/null || die "$name exited while applying; see $TMP/$name.log"
    (($(now_ms) - start < 3600000)) || die "$name did not catch up within an hour"
    sleep 0.02
  done
  APPLY_MS=$(($(now_ms) - start))
  APPLY_TICKS=$(($(cpu_ticks "$SERVER_PID") - ticks0))
  log "$name: $BENCH_WRITES writes applied in $APPLY_MS ms (the master took $MASTER_WRITE_MS ms)"
  stop_lavik "$SERVER_PID" 30 "$name"
  SERVER_PID=""
}

run_replica lavik
LAVIK_SYNC_MS=$SYNC_MS LAVIK_APPLY_MS=$APPLY_MS LAVIK_MASTER_MS=$MASTER_WRITE_MS
LAVIK_APPLY_TICKS=$APPLY_TICKS
run_replica redis
REDIS_SYNC_MS=$SYNC_MS REDIS_APPLY_MS=$APPLY_MS REDIS_MASTER_MS=$MASTER_WRITE_MS
REDIS_APPLY_TICKS=$APPLY_TICKS
HZ=$(getconf CLK_TCK)
# The replica's CPU (user + system) from the benchmark's start until it caught up, per write.
cpu_us() { calc 't * 1000000 / hz / n' "t=$1" "hz=$HZ" "n=$BENCH_WRITES" | awk '{ printf "%.1f", $1 }'; }

rate() { calc 'n * 1000 / ms' "n=$1" "ms=$2" | awk '{ printf "%.0f", $1 }'; }
ratio() { calc 'a / b' "a=$1" "b=$2" | awk '{ printf "%.2f", $1 }'; }
mkdir -p "$RESULTS_DIR"
OUT="$RESULTS_DIR/replication-$(date +%Y%m%d-%H%M%S).md"
{
  echo "Replication: $BENCH_KEYS keys of $BENCH_VALUE_SIZE B on a $BENCH_MASTER master;" \
    "apply: $BENCH_WRITES SETs, pipeline $BENCH_PIPELINE, $BENCH_CLIENTS clients;" \
    "lavik --threads $LAVIK_THREADS"
  echo
  echo "| | lavik | redis-server | lavik / redis |"
  echo "|---|---|---|---|"
  row() { printf '| %s | %s | %s | %s |\n' "$@"; }
  row "full sync (s)" "$(calc 'ms / 1000' "ms=$LAVIK_SYNC_MS")" \
    "$(calc 'ms / 1000' "ms=$REDIS_SYNC_MS")" "$(ratio "$LAVIK_SYNC_MS" "$REDIS_SYNC_MS")"
  row "full sync (keys/s)" "$(rate "$BENCH_KEYS" "$LAVIK_SYNC_MS")" \
    "$(rate "$BENCH_KEYS" "$REDIS_SYNC_MS")" "$(ratio "$REDIS_SYNC_MS" "$LAVIK_SYNC_MS")"
  row "applied (writes/s)" "$(rate "$BENCH_WRITES" "$LAVIK_APPLY_MS")" \
    "$(rate "$BENCH_WRITES" "$REDIS_APPLY_MS")" "$(ratio "$REDIS_APPLY_MS" "$LAVIK_APPLY_MS")"
  row "the master's own write rate (writes/s)" "$(rate "$BENCH_WRITES" "$LAVIK_MASTER_MS")" \
    "$(rate "$BENCH_WRITES" "$REDIS_MASTER_MS")" ""
  row "replica CPU per applied write (µs)" "$(cpu_us "$LAVIK_APPLY_TICKS")" \
    "$(cpu_us "$REDIS_APPLY_TICKS")" "$(ratio "$LAVIK_APPLY_TICKS" "$REDIS_APPLY_TICKS")"
} | tee "$OUT"
log "written to $OUT"
