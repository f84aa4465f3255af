#!/usr/bin/env bash
# scripting.sh: EVALSHA of a GET-and-INCR script, lavik against redis-server, side by side.
#
# Each server is started alone on a free loopback port, the script is loaded with SCRIPT LOAD, and
# redis-benchmark sends BENCH_REQUESTS `EVALSHA <sha> 1 key` calls (one key, so every call runs
# GET and INCR on it) from BENCH_CLIENTS connections. Reported: ops/s, and the server's CPU time
# per call (utime+stime of the whole process from /proc/PID/stat, as bench/compare.sh measures
# it). LAVIK_THREADS defaults to 1 (like redis-server, one core executes the commands); with more
# workers every script also locks every shard (doc/threading.md), which the second row shows.
# Not part of `make test`.
#
# Environment (defaults in brackets):
#   LAVIK_BIN [build/lavik]   LAVIK_THREADS ["1 2"]   BENCH_REQUESTS [200000]
#   BENCH_CLIENTS [50]        SERVER_CPUS [1]         CLIENT_CPUS [0]
#   BENCH_PORT [a free port]  RESULTS_DIR [bench/results]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=scripting
LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
LAVIK_THREADS=${LAVIK_THREADS:-1 2}
BENCH_REQUESTS=${BENCH_REQUESTS:-200000}
BENCH_CLIENTS=${BENCH_CLIENTS:-50}
SERVER_CPUS=${SERVER_CPUS:-1}
CLIENT_CPUS=${CLIENT_CPUS:-0}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

require_tools "$REDIS_SERVER" "$REDIS_CLI" "$REDIS_BENCHMARK" taskset getconf
[[ -x $LAVIK_BIN ]] || die "no $LAVIK_BIN: build first"
require_uint BENCH_REQUESTS "$BENCH_REQUESTS"

SCRIPT="local v = redis.call('get', KEYS[1]) redis.call('incr', KEYS[1]) return v"
TMP=$(mktemp -d /tmp/lavik-scripting-bench.XXXXXX)
SERVER_PID=""
cleanup() {
  stop_lavik "$SERVER_PID"
  rm -rf "$TMP"
}
trap cleanup EXIT
TICKS=$(getconf CLK_TCK)

# run_point SERVER THREADS -> "ops_per_s cpu_us_per_call"
run_point() {
  local server=$1 threads=$2 sha before after start end
  PORT=${BENCH_PORT:-$(free_port)}
  if [[ $server == lavik ]]; then
    lavik_command "$LAVIK_BIN" "$TMP/lavik$threads" "$threads" --no-pin-workers
  else
    redis_command "$REDIS_SERVER" "$TMP/redis"
  fi
  launch_server "$TMP/$server$threads.out"
  wait_ready "start of $server"
  sha=$(cli SCRIPT LOAD "$SCRIPT")
  [[ ${#sha} -eq 40 ]] || die "SCRIPT LOAD failed on $server: $sha"
  cli SET key 0 >/dev/null
  before=$(cpu_ticks "$SERVER_PID")
  start=$(date +%s.%N)
  taskset -c "$CLIENT_CPUS" "$REDIS_BENCHMARK" -h "$HOST" -p "$PORT" -n "$BENCH_REQUESTS" \
    -c "$BENCH_CLIENTS" -q EVALSHA "$sha" 1 key >"$TMP/$server$threads.bench" 2>&1 ||
    die "redis-benchmark failed against $server"
  end=$(date +%s.%N)
  after=$(cpu_ticks "$SERVER_PID")
  alive "the $server run"
  local count
  count=$(cli GET key)
  ((count == BENCH_REQUESTS)) || die "$server: key is $count after $BENCH_REQUESTS calls"
  stop_lavik "$SERVER_PID"
  SERVER_PID=""
  awk -v n="$BENCH_REQUESTS" -v s="$start" -v e="$end" -v b="$before" -v a="$after" \
    -v hz="$TICKS" 'BEGIN { printf "%.0f %.2f\n", n / (e - s), (a - b) * 1000000 / hz / n }'
}

STAMP=$(date +%Y%m%d-%H%M%S)
mkdir -p "$RESULTS_DIR"
OUT=$RESULTS_DIR/scripting-$STAMP.md
{
  echo "# EVALSHA GET+INCR, lavik vs redis-server ($STAMP)"
  echo
  echo "$BENCH_REQUESTS calls, $BENCH_CLIENTS connections, one key; server CPUs $SERVER_CPUS,"
  echo "client CPUs $CLIENT_CPUS; $(nproc) CPUs visible, shared machine; $(git_rev)."
  echo
  echo "| server | threads | ops/s | server CPU µs/call |"
  echo "|---|---:|---:|---:|"
} >"$OUT"
read -r ops cpu <<<"$(run_point redis 1)"
echo "| redis-server 7.0.15 | 1 | $ops | $cpu |" >>"$OUT"
for t in $LAVIK_THREADS; do
  read -r ops cpu <<<"$(run_point lavik "$t")"
  echo "| lavik | $t | $ops | $cpu |" >>"$OUT"
done
cat "$OUT"
log "written to $OUT"
