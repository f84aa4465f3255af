#!/usr/bin/env bash
# pubsub.sh: PUBLISH → subscriber delivery latency, build/lavik side by side with redis-server.
#
# build/lavik-pubsub-bench (src/tools/pubsub_latency) opens SUBSCRIBERS connections, each
# subscribed to its own channel, and PUBLISHERS connections that publish 128-byte payloads
# round-robin over those channels at a fixed total rate (open loop), so every message is
# delivered once and "messages/s" is both the publish and the delivery rate. Each payload carries
# its send time; the tool reports p50/p90/p99/p99.9/max of send → receive. Points run one server
# at a time, alternating which server goes first, so background load hits both alike.
#
# Environment (defaults in brackets):
#   LAVIK_BIN [build/lavik]   LAVIK_THREADS [2]   BENCH_RATES ["20000 100000 200000"]
#   PUBLISHERS [64]  SUBSCRIBERS [100]  PAYLOAD [128]  BENCH_SECONDS [10]  WARMUP [2]
#   (not SECONDS: bash sets that one itself, to the seconds since the shell started)
#   SERVER_CPUS [all]  CLIENT_CPUS [all]  RESULTS_DIR [bench/results]
# Output: a Markdown table on stdout and in RESULTS_DIR/pubsub-<stamp>.md. Servers are tracked
# by PID and stopped on every exit path.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=pubsub
LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
TOOL=${TOOL:-$ROOT/build/lavik-pubsub-bench}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
LAVIK_THREADS=${LAVIK_THREADS:-2}
BENCH_RATES=${BENCH_RATES:-"20000 100000 200000"}
PUBLISHERS=${PUBLISHERS:-64}
SUBSCRIBERS=${SUBSCRIBERS:-100}
PAYLOAD=${PAYLOAD:-128}
SECONDS_PER_POINT=${BENCH_SECONDS:-10}
WARMUP=${WARMUP:-2}
ALL_CPUS=$(nproc --all)
SERVER_CPUS=${SERVER_CPUS:-0-$((ALL_CPUS - 1))}
CLIENT_CPUS=${CLIENT_CPUS:-0-$((ALL_CPUS - 1))}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

require_tools "$REDIS_SERVER" "$REDIS_CLI" taskset
[[ -x $LAVIK_BIN ]] || die "no $LAVIK_BIN: build first"
[[ -x $TOOL ]] || die "no $TOOL: build first"

TMP=$(mktemp -d /tmp/lavik-pubsub-bench.XXXXXX)
RAW_DIR=$TMP
SERVER_PID=""
cleanup() {
  stop_lavik "$SERVER_PID"
  rm -rf "$TMP"
}
trap cleanup EXIT


run_point() {  # server rate -> one result line
  local server=$1 rate=$2 line
  start_bench_server "$server" "$TMP" "$LAVIK_THREADS"
  line=$(taskset -c "$CLIENT_CPUS" "$TOOL" --port "$PORT" --publishers "$PUBLISHERS" \
    --subscribers "$SUBSCRIBERS" --size "$PAYLOAD" --rate "$rate" --seconds "$SECONDS_PER_POINT" \
    --warmup "$WARMUP") || die "$TOOL failed against $server at $rate/s"
  alive "the $server run at $rate/s"
  stop_lavik "$SERVER_PID"
  SERVER_PID=""
  echo "$line"
}

field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" $1"; }

STAMP=$(date +%Y%m%d-%H%M%S)
mkdir -p "$RESULTS_DIR"
OUT=$RESULTS_DIR/pubsub-$STAMP.md
{
  echo "# PUBLISH → subscriber delivery latency ($STAMP)"
  echo
  echo "$PUBLISHERS publishers, $SUBSCRIBERS subscribers (one channel each), $PAYLOAD-byte payloads,"
  echo "${SECONDS_PER_POINT} s measured after ${WARMUP} s warm-up per point; lavik --threads $LAVIK_THREADS;"
  echo "server CPUs $SERVER_CPUS, client CPUs $CLIENT_CPUS; $(nproc) CPUs visible, shared machine."
  echo
  echo "| server | target msg/s | achieved msg/s | received | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$OUT"
flip=0
for rate in $BENCH_RATES; do
  if ((flip == 0)); then order="lavik redis"; else order="redis lavik"; fi
  flip=$((1 - flip))
  for server in $order; do
    log "$server at $rate msg/s"
    line=$(run_point "$server" "$rate")
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$server" "$rate" \
      "$(field "$line" achieved_per_s)" "$(field "$line" received)" "$(field "$line" p50_us)" \
      "$(field "$line" p90_us)" "$(field "$line" p99_us)" "$(field "$line" p999_us)" \
      "$(field "$line" max_us)" >>"$OUT"
  done
done
cat "$OUT"
log "written to $OUT"
