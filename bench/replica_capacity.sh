#!/usr/bin/env bash
# replica_capacity.sh: a Lavik replica full-syncs a data set larger than the memory it may use
# (doc/replication.md, "A data set larger than the replica's RAM").
#
# A redis-server master (no persistence, diskless sync, no delay) is loaded with KEYS keys of
# VALUE_SIZE bytes (bench/loadgen.py through redis-cli --pipe). A Lavik replica (--cache-mb
# CACHE_MB, LAVIK_THREADS workers, repl-diskless-load REPL_DISKLESS_LOAD) runs inside a cgroup v1
# memory cgroup limited to MEM_LIMIT — a wrapper joins the cgroup and execs lavik, so every page
# it touches is charged from its first byte — and runs REPLICAOF. Reports the sync's duration
# (until master_link_status:up and DBSIZE = KEYS), keys/s, the replica's RSS, the cgroup's
# max_usage_in_bytes, failcnt and OOM kills, and checks SAMPLES random values read back from the
# replica against their keys. Fails on an OOM kill, a short DBSIZE or a wrong value.
#
# Environment (defaults in brackets): LAVIK_BIN [build/lavik]  KEYS [3000000]  VALUE_SIZE [1024]
#   MEM_LIMIT [1G]  CACHE_MB [256]  LAVIK_THREADS [1]  REPL_DISKLESS_LOAD [disabled]
#   SAMPLES [200]  RESULTS_DIR [bench/results]  BENCH_TMP [bench/tmp-<pid>]
# Must run as root (cgroups). Needs KEYS x VALUE_SIZE bytes of RAM for the master, and about
# twice that of disk under BENCH_TMP (the replica's data file, and its copy of the RDB unless
# REPL_DISKLESS_LOAD is on-empty-db). Output: RESULTS_DIR/replica-capacity-<stamp>.md.
set -euo pipefail

BENCH_NAME=replica-capacity
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
KEYS=${KEYS:-3000000}
VALUE_SIZE=${VALUE_SIZE:-1024}
MEM_LIMIT=${MEM_LIMIT:-1G}
CACHE_MB=${CACHE_MB:-256}
LAVIK_THREADS=${LAVIK_THREADS:-1}
REPL_DISKLESS_LOAD=${REPL_DISKLESS_LOAD:-disabled}
SAMPLES=${SAMPLES:-200}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
BENCH_TMP=${BENCH_TMP:-$ROOT/bench/tmp-$$}
CG_ROOT=${CG_ROOT:-/sys/fs/cgroup/memory}
CG=$CG_ROOT/lavik-replica-bench-$$

require_tools redis-server "$REDIS_CLI" "$PYTHON" numfmt
[[ -x $LAVIK_BIN ]] || die "$LAVIK_BIN not built (cmake --build build)"
for v in KEYS VALUE_SIZE LAVIK_THREADS SAMPLES; do require_uint "$v" "${!v}"; done
((VALUE_SIZE >= 17)) || die "VALUE_SIZE must be at least 17 so values carry their key"
MEM_LIMIT_BYTES=$(numfmt --from=iec "$MEM_LIMIT") || die "MEM_LIMIT '$MEM_LIMIT' is not a size"
(($(id -u) == 0)) || die "must run as root (memory cgroup)"
[[ -f $CG_ROOT/memory.limit_in_bytes ]] || die "no cgroup v1 memory controller at $CG_ROOT"
[[ ! -e $BENCH_TMP ]] || die "$BENCH_TMP already exists"

STAMP=$(date +%Y%m%d-%H%M%S)
RAW_DIR=$BENCH_TMP
MASTER_PID=""
SERVER_PID=""
cleanup() {
  stop_lavik "$SERVER_PID" 60 replica
  stop_lavik "$MASTER_PID" 30 master
  local i
  for ((i = 0; i < 50; i++)); do
    [[ ! -d $CG ]] || rmdir "$CG" 2>/dev/null || true
    [[ -d $CG ]] || break
    sleep 0.1
  done
  rm -rf -- "$BENCH_TMP"
}
trap cleanup EXIT
mkdir -p "$BENCH_TMP/master"

# The master, loaded.
PORT=$(free_port)
MASTER_PORT=$PORT
redis_command redis-server "$BENCH_TMP/master" --repl-diskless-sync yes --repl-diskless-sync-delay 0
"${SERVER_CMD[@]}" >"$BENCH_TMP/master.out" 2>&1 &
MASTER_PID=$!
SERVER_PID=$MASTER_PID SERVER_NAME=redis-server wait_ready "the master's start"
log "loading $KEYS keys of $VALUE_SIZE bytes into the master"
"$PYTHON" "$ROOT/bench/loadgen.py" resp "$KEYS" "$VALUE_SIZE" |
  "$REDIS_CLI" -h "$HOST" -p "$MASTER_PORT" --pipe >"$BENCH_TMP/load.out" 2>&1 ||
  die "loading the master failed: $(tail -3 "$BENCH_TMP/load.out")"
[[ $(cli DBSIZE) == "$KEYS" ]] || die "the master holds $(cli DBSIZE) keys, not $KEYS"

# The replica, in the memory cgroup from its first byte.
mkdir "$CG"
echo "$MEM_LIMIT_BYTES" >"$CG/memory.limit_in_bytes"
PORT=$(free_port)
lavik_command "$LAVIK_BIN" "$BENCH_TMP/replica" "$LAVIK_THREADS" --cache-mb "$CACHE_MB" \
  --no-pin-workers --repl-diskless-load "$REPL_DISKLESS_LOAD"
# shellcheck disable=SC2016
sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "${SERVER_CMD[@]}" \
  >"$BENCH_TMP/replica.out" 2>&1 &
SERVER_PID=$!
wait_ready "the replica's start"
grep -q ":memory:/${CG#"$CG_ROOT"/}\$" "/proc/$SERVER_PID/cgroup" || die "lavik is not in $CG"
RSS_EMPTY=$(rss_bytes "$SERVER_PID")

log "REPLICAOF in a $MEM_LIMIT cgroup: $KEYS keys x $VALUE_SIZE B"
t0=$(date +%s%N)
cli REPLICAOF "$HOST" "$MASTER_PORT" >/dev/null
while :; do
  alive "the full sync"
  if [[ $(info_get "$(cli INFO replication 2>/dev/null)" master_link_status) == up ]] &&
    [[ $(cli DBSIZE 2>/dev/null) == "$KEYS" ]]; then
    break
  fi
  (($(date +%s%N) - t0 < 3600000000000)) || die "the full sync did not finish within an hour"
  sleep 0.2
done
t1=$(date +%s%N)
SYNC_S=$(calc "($t1 - $t0) / 1e9")
RSS=$(rss_bytes "$SERVER_PID")
CHECK=$("$PYTHON" "$ROOT/bench/loadgen.py" verify "$PORT" "$KEYS" "$VALUE_SIZE" "$SAMPLES") ||
  die "values read back from the replica are wrong: $CHECK"
MAX_USAGE=$(cat "$CG/memory.max_usage_in_bytes")
FAILCNT=$(cat "$CG/memory.failcnt")
OOM_KILLS=$(awk '/^oom_kill /{print $2}' "$CG/memory.oom_control")
DATA_SIZE=$(stat -c %s "$BENCH_TMP/replica/data/lavik.data")
[[ ${OOM_KILLS:-0} == 0 ]] || die "the replica was OOM-killed"

mkdir -p "$RESULTS_DIR"
OUT=$RESULTS_DIR/replica-capacity-$STAMP.md
{
  echo "# A Lavik replica syncing more than its memory, $(date -u '+%Y-%m-%d %H:%M:%S') UTC"
  echo
  echo "- lavik: $("$LAVIK_BIN" --version 2>&1 | head -n 1); --threads $LAVIK_THREADS --cache-mb $CACHE_MB, repl-diskless-load $REPL_DISKLESS_LOAD"
  echo "- master: $(redis-server --version | head -n 1)"
  echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| measure | value |"
  echo "| --- | --- |"
  echo "| data set | $KEYS keys x $VALUE_SIZE B = $(human_bytes $((KEYS * VALUE_SIZE))) |"
  echo "| memory cgroup limit | $MEM_LIMIT ($(calc "$KEYS * $VALUE_SIZE / $MEM_LIMIT_BYTES")x less than the data) |"
  echo "| full sync | $SYNC_S s ($(calc "$KEYS / $SYNC_S") keys/s) |"
  echo "| replica RSS empty / after the sync | $(human_bytes "$RSS_EMPTY") / $(human_bytes "$RSS") |"
  echo "| cgroup max usage (RSS + page cache) | $(human_bytes "$MAX_USAGE") |"
  echo "| cgroup failcnt (reclaim at the limit) / OOM kills | $FAILCNT / ${OOM_KILLS:-0} |"
  echo "| replica data file | $(human_bytes "$DATA_SIZE") |"
  echo "| values checked | $CHECK |"
} | tee "$OUT"
log "written to $OUT"
