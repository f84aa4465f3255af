#!/usr/bin/env bash
# cluster.sh: redis-benchmark --cluster GET/SET against a 3-node Lavik cluster and a 3-node
# redis-server cluster on the same machine, in the same run (doc/cluster.md, issue #15).
#
# Each cluster is made by `redis-cli --cluster create` (3 masters, no replicas) on fixed ports
# (the bus is port + 10000, so the kernel cannot pick them): Lavik on BASE_PORT..+2, redis-server
# on BASE_PORT+10..+12. Both clusters run for the whole script; the points alternate between
# them (Lavik first in odd rounds, redis first in even ones) so background load hits both alike.
# Per point: ops/s from redis-benchmark's CSV, and server CPU per request = the utime+stime the
# three servers' processes gained during the point (/proc/<pid>/stat, as bench/compare.sh), in µs,
# divided by the requests. The keys are pre-written once per cluster, so GET reads 1 KiB values.
#
# Environment (defaults in brackets):
#   LAVIK_BIN [build/lavik]  LAVIK_THREADS [1]  BASE_PORT [7200]  BENCH_REQUESTS [200000]
#   BENCH_CLIENTS [50]  BENCH_VALUE_SIZE [1024]  BENCH_KEYSPACE [10000]  ROUNDS [2]
#   SERVER_CPUS [all]  CLIENT_CPUS [all]  RESULTS_DIR [bench/results]
# Output: a Markdown table on stdout and in RESULTS_DIR/cluster-<stamp>.md. Servers are tracked by
# PID and stopped on every exit path.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=cluster
LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
LAVIK_THREADS=${LAVIK_THREADS:-1}
BASE_PORT=${BASE_PORT:-7200}
BENCH_REQUESTS=${BENCH_REQUESTS:-200000}
BENCH_CLIENTS=${BENCH_CLIENTS:-50}
BENCH_VALUE_SIZE=${BENCH_VALUE_SIZE:-1024}
BENCH_KEYSPACE=${BENCH_KEYSPACE:-10000}
ROUNDS=${ROUNDS:-2}
ALL_CPUS=$(nproc --all)
SERVER_CPUS=${SERVER_CPUS:-0-$((ALL_CPUS - 1))}
CLIENT_CPUS=${CLIENT_CPUS:-0-$((ALL_CPUS - 1))}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

require_tools "$REDIS_SERVER" "$REDIS_CLI" "$REDIS_BENCHMARK" taskset
[[ -x $LAVIK_BIN ]] || die "no $LAVIK_BIN: build first"
for v in LAVIK_THREADS BASE_PORT BENCH_REQUESTS BENCH_CLIENTS BENCH_VALUE_SIZE BENCH_KEYSPACE \
  ROUNDS; do
  require_uint "$v" "${!v}"
done
CLK_TCK=$(getconf CLK_TCK)

TMP=$(mktemp -d /tmp/lavik-cluster-bench.XXXXXX)
RAW_DIR=$TMP
track_nodes "$TMP"

cluster_ports() {  # server -> its three ports
  local base=$BASE_PORT
  [[ $1 == redis ]] && base=$((BASE_PORT + 10))
  echo "$base $((base + 1)) $((base + 2))"
}

start_cluster() {
  local server=$1 p
  local -a endpoints=()
  for p in $(cluster_ports "$server"); do
    start_cluster_node "$server" "$p" "$TMP/$server-$p" "$LAVIK_BIN"
    endpoints+=("$HOST:$p")
  done
  "$REDIS_CLI" --cluster create "${endpoints[@]}" --cluster-yes >"$TMP/$server-create.txt" 2>&1 ||
    die "redis-cli --cluster create failed for $server: $(tail -5 "$TMP/$server-create.txt")"
  local i ok
  for ((i = 0; i < 300; i++)); do
    ok=0
    for p in $(cluster_ports "$server"); do
      "$REDIS_CLI" -p "$p" CLUSTER INFO 2>/dev/null | grep -q '^cluster_state:ok' && ok=$((ok + 1))
    done
    ((ok == 3)) && break
    sleep 0.1
  done
  ((ok == 3)) || die "$server cluster not ok after 30 s"
  local first
  first=$(cluster_ports "$server" | cut -d' ' -f1)
  "$REDIS_CLI" --cluster check "$HOST:$first" >"$TMP/$server-check.txt" 2>&1 ||
    die "$server cluster check failed: $(tail -5 "$TMP/$server-check.txt")"
  log "$server cluster formed and checked"
}

cluster_ticks() {  # server -> summed CPU ticks of its three processes
  local p total=0
  for p in $(cluster_ports "$1"); do
    total=$((total + $(cpu_ticks "${NODE_PIDS["$1 $p"]}")))
  done
  echo "$total"
}

declare -A RPS CPU_US
run_point() {  # server test round
  local server=$1 test=$2 round=$3 first out before after rc=0
  first=$(cluster_ports "$server" | cut -d' ' -f1)
  out=$TMP/$server-$test-r$round.csv
  log "$server: $test, $BENCH_CLIENTS connections, $BENCH_REQUESTS requests (round $round)"
  before=$(cluster_ticks "$server")
  taskset -c "$CLIENT_CPUS" "$REDIS_BENCHMARK" --cluster -h "$HOST" -p "$first" -t "$test" \
    -d "$BENCH_VALUE_SIZE" -r "$BENCH_KEYSPACE" -n "$BENCH_REQUESTS" -c "$BENCH_CLIENTS" -P 1 \
    --csv >"$out" 2>&1 || rc=$?
  ((rc == 0)) || die "redis-benchmark failed ($rc) for $server $test: $(tail -5 "$out")"
  sleep 0.5  # the servers close the benchmark's connections inside the window
  after=$(cluster_ticks "$server")
  if grep -Eqi 'error|could not connect' "$out"; then
    die "redis-benchmark reported errors for $server $test: $(grep -Ei 'error' "$out" | head -3)"
  fi
  local row
  row=$(grep "^\"${test^^}\"," "$out" | tail -n 1) || die "no CSV row for $test in $out"
  local -a f
  IFS=, read -r -a f <<<"${row//\"/}"
  awk -v r="${f[1]}" 'BEGIN { exit !(r > 0) }' || die "zero rps for $server $test"
  local key="$server|$test|$round"
  RPS[$key]=${f[1]}
  CPU_US[$key]=$(awk -v t=$((after - before)) -v hz="$CLK_TCK" -v n="$BENCH_REQUESTS" \
    'BEGIN { printf "%.2f", t * 1e6 / hz / n }')
}

start_cluster lavik
start_cluster redis
for server in lavik redis; do  # every key written once, so GETs read 1 KiB values
  first=$(cluster_ports "$server" | cut -d' ' -f1)
  "$REDIS_BENCHMARK" --cluster -h "$HOST" -p "$first" -t set -d "$BENCH_VALUE_SIZE" \
    -r "$BENCH_KEYSPACE" -n $((BENCH_KEYSPACE * 3)) -c "$BENCH_CLIENTS" -q >/dev/null 2>&1 ||
    die "preload of $server failed"
done

for ((round = 1; round <= ROUNDS; round++)); do
  order="lavik redis"
  ((round % 2 == 0)) && order="redis lavik"
  for test in set get; do
    for server in $order; do
      run_point "$server" "$test" "$round"
    done
  done
done

STAMP=$(date +%Y%m%d-%H%M%S)
mkdir -p "$RESULTS_DIR"
REPORT=$RESULTS_DIR/cluster-$STAMP.md
{
  echo "# redis-benchmark --cluster: 3 Lavik nodes vs 3 redis-server nodes"
  echo
  echo "$(date '+%Y-%m-%d %H:%M:%S %Z'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
    "git $(git_rev "$ROOT"); lavik --threads $LAVIK_THREADS per node;" \
    "$BENCH_CLIENTS connections, -d $BENCH_VALUE_SIZE, -r $BENCH_KEYSPACE, -n $BENCH_REQUESTS," \
    "$ROUNDS rounds (medians); server CPU = the three nodes' utime+stime per request."
  echo
  echo "| test | lavik ops/s | redis ops/s | ops l/r | lavik CPU µs/req | redis CPU µs/req | CPU l/r |"
  echo "|---|---|---|---|---|---|---|"
  for test in set get; do
    lr=() rr=() lc=() rc=()
    for ((round = 1; round <= ROUNDS; round++)); do
      lr+=("${RPS[lavik|$test|$round]}") rr+=("${RPS[redis|$test|$round]}")
      lc+=("${CPU_US[lavik|$test|$round]}") rc+=("${CPU_US[redis|$test|$round]}")
    done
    l=$(median "${lr[@]}") r=$(median "${rr[@]}") a=$(median "${lc[@]}") b=$(median "${rc[@]}")
    echo "| ${test^^} | $l | $r | $(awk -v x="$l" -v y="$r" 'BEGIN { printf "%.2f", x / y }') |" \
      "$a | $b | $(awk -v x="$a" -v y="$b" 'BEGIN { printf "%.2f", (y > 0 ? x / y : 0) }') |"
  done
  echo
  echo "Per round (ops/s, CPU µs/req):"
  echo
  for key in $(printf '%s\n' "${!RPS[@]}" | sort); do
    echo "- $key: ${RPS[$key]} ops/s, ${CPU_US[$key]} µs/req"
  done
} | tee "$REPORT"
log "report: $REPORT"
