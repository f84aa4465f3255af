#!/usr/bin/env bash
# tracking.sh: SET throughput with client-side caching in use, build/lavik side by side with
# redis-server (doc/tracking.md).
#
# For each server, two points: SETs alone, then SETs while TRACKERS RESP3 connections have
# CLIENT TRACKING on and have each read READS random keys of the KEYS the SETs write
# (bench/tracking_clients.py; every invalidation it gets makes it read those keys again, so the
# server keeps tracking). The load is redis-benchmark -t set -r KEYS -c BENCH_CLIENTS -P PIPELINE.
# Reported: SET/s, server CPU per SET (all the server's CPU during the run, the trackers' reads
# included, divided by the SETs), the invalidation pushes the trackers received and their
# re-reads, and INFO's tracking_total_items after the run. Points alternate which server goes
# first.
#
# Environment (defaults in brackets):
#   LAVIK_BIN [build/lavik]  LAVIK_THREADS [2]  TRACKERS [1000]  READS [10]  KEYS [10000]
#   BENCH_REQUESTS [200000]  BENCH_CLIENTS [50]  PIPELINE [16]
#   REREAD [1] (0: the trackers do not read invalidated keys again, so after the first write of
#   each key the SETs find it untracked)
#   SERVER_CPUS [all]  CLIENT_CPUS [all]  RESULTS_DIR [bench/results]
# Output: a Markdown table on stdout and in RESULTS_DIR/tracking-<stamp>.md. Servers and the
# tracker process are tracked by PID and stopped on every exit path.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=tracking
LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
LAVIK_THREADS=${LAVIK_THREADS:-2}
TRACKERS=${TRACKERS:-1000}
READS=${READS:-10}
KEYS=${KEYS:-10000}
BENCH_REQUESTS=${BENCH_REQUESTS:-200000}
BENCH_CLIENTS=${BENCH_CLIENTS:-50}
PIPELINE=${PIPELINE:-16}
REREAD=${REREAD:-1}
ALL_CPUS=$(nproc --all)
SERVER_CPUS=${SERVER_CPUS:-0-$((ALL_CPUS - 1))}
CLIENT_CPUS=${CLIENT_CPUS:-0-$((ALL_CPUS - 1))}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

require_tools "$REDIS_SERVER" "$REDIS_CLI" "$REDIS_BENCHMARK" "$PYTHON" taskset getconf
[[ -x $LAVIK_BIN ]] || die "no $LAVIK_BIN: build first"
for v in TRACKERS READS KEYS BENCH_REQUESTS BENCH_CLIENTS PIPELINE; do require_uint "$v" "${!v}"; done
CLK_TCK=$(getconf CLK_TCK)

TMP=$(mktemp -d /tmp/lavik-tracking-bench.XXXXXX)
RAW_DIR=$TMP
SERVER_PID=""
TRACKERS_PID=""
cleanup() {
  if [[ -n $TRACKERS_PID ]]; then kill -TERM "$TRACKERS_PID" 2>/dev/null || true; fi
  stop_lavik "$SERVER_PID"
  rm -rf "$TMP"
}
trap cleanup EXIT

start_server() {
  PORT=$(free_port)
  if [[ $1 == lavik ]]; then
    lavik_command "$LAVIK_BIN" "$TMP/lavik" "$LAVIK_THREADS" --no-pin-workers
  else
    redis_command "$REDIS_SERVER" "$TMP/redis" --maxclients 20000
  fi
  SERVER_NAME=$1
  launch_server "$TMP/$1.out"
  wait_ready "start of $1"
}

# run_point SERVER TRACKERS -> "rps cpu_us invalidations rereads items"
run_point() {
  local server=$1 trackers=$2 inv="-" rereads="-"
  start_server "$server"
  if ((trackers > 0)); then
    coproc TRK { exec taskset -c "$CLIENT_CPUS" "$PYTHON" "$ROOT/bench/tracking_clients.py" \
      "$PORT" "$trackers" "$KEYS" "$READS" "$REREAD" 2>&1; }
    TRACKERS_PID=$TRK_PID
    local line=""
    read -r -t 120 line <&"${TRK[0]}" || die "tracking clients did not get ready"
    [[ $line == ready ]] || die "tracking clients: $line"
  fi
  local out=$TMP/$server-$trackers.csv before after
  before=$(cpu_ticks "$SERVER_PID")
  taskset -c "$CLIENT_CPUS" "$REDIS_BENCHMARK" -h "$HOST" -p "$PORT" -t set -r "$KEYS" \
    -n "$BENCH_REQUESTS" -c "$BENCH_CLIENTS" -P "$PIPELINE" --csv >"$out" 2>&1 ||
    die "redis-benchmark failed against $server; see $out"
  sleep 0.3  # the last invalidations and re-reads land inside the window
  after=$(cpu_ticks "$SERVER_PID")
  local items
  items=$(info_get "$(cli INFO stats)" tracking_total_items)
  if ((trackers > 0)); then
    kill -TERM "$TRACKERS_PID"
    local stats=""
    read -r -t 30 stats <&"${TRK[0]}" || die "tracking clients did not report"
    wait "$TRACKERS_PID" 2>/dev/null || true
    TRACKERS_PID=""
    inv=$(sed -n 's/.*invalidations=\([0-9]*\).*/\1/p' <<<"$stats")
    rereads=$(sed -n 's/.*rereads=\([0-9]*\).*/\1/p' <<<"$stats")
  fi
  alive "the $server run"
  stop_lavik "$SERVER_PID"
  SERVER_PID=""
  local row rps
  row=$(grep '^"SET",' "$out" | tail -n 1) || die "no SET row in $out"
  rps=$(cut -d, -f2 <<<"${row//\"/}")
  echo "$rps $(calc 't * 1e6 / hz / n' t=$((after - before)) hz="$CLK_TCK" \
    n="$BENCH_REQUESTS") $inv $rereads $items"
}

STAMP=$(date +%Y%m%d-%H%M%S)
mkdir -p "$RESULTS_DIR"
OUT=$RESULTS_DIR/tracking-$STAMP.md
{
  echo "# SET throughput with client-side caching ($STAMP)"
  echo
  echo "redis-benchmark -t set -r $KEYS -n $BENCH_REQUESTS -c $BENCH_CLIENTS -P $PIPELINE; trackers:"
  echo "$TRACKERS RESP3 connections with CLIENT TRACKING on, $READS random keys read each, re-read"
  echo "on invalidation: $( ((REREAD)) && echo yes || echo no). lavik --threads $LAVIK_THREADS; server CPUs $SERVER_CPUS, client CPUs"
  echo "$CLIENT_CPUS; $(nproc) CPUs visible, shared machine. CPU/SET is all server CPU in the run"
  echo "(the trackers' re-reads included) over the SETs."
  echo
  echo "| server | trackers | SET/s | server CPU µs/SET | invalidations received | re-reads | tracking_total_items after |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
} >"$OUT"
for trackers in 0 "$TRACKERS"; do
  if [[ $trackers == 0 ]]; then order="lavik redis"; else order="redis lavik"; fi
  for server in $order; do
    log "$server with $trackers tracking clients"
    read -r rps cpu inv rereads items <<<"$(run_point "$server" "$trackers")"
    printf '| %s | %s | %s | %.2f | %s | %s | %s |\n' "$server" "$trackers" "$rps" "$cpu" "$inv" \
      "$rereads" "$items" >>"$OUT"
  done
done
cat "$OUT"
log "written to $OUT"
