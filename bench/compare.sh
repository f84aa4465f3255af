#!/usr/bin/env bash
# compare.sh: side-by-side redis-benchmark run of build/lavik against redis-server.
#
# Both servers are started on free loopback ports and filled with every key of the key space (so
# GETs hit), then measured with identical redis-benchmark settings: 1 KiB values, random keys over
# a 1M key space, GET and SET, pipeline 1 at 50, 200 and 1000 connections, and pipelined (-P 16)
# at 50 connections. Points are measured one server at a time, interleaved (lavik then redis for
# one point, redis then lavik for the next), so a change in the machine's background load hits
# both alike; the idle server uses ~0 CPU.
#
# On 2 cores the client saturates first (see /work/shared/ARCHITECTURE.md), so ops/s alone hardly
# separates servers. Next to ops/s and p50/p99/p99.9 the script therefore reports the server's CPU time
# per request: utime+stime of the whole server process (all threads) from /proc/PID/stat, taken
# before and after each point, divided by the number of requests; and the client's (its rusage),
# which says which side's core is the limit.
#
# In flight (BENCH_INFLIGHT=16): memtier-style pipelining, with build/lavik-bench as a second,
# different load generator. redis-benchmark's -P 16 sends 16 requests and waits for all 16
# replies; lavik-bench --pipeline 16 keeps 16 requests in flight on each connection, sending the
# next as each reply arrives, as memtier_benchmark --pipeline does. GET and SET (1:0, 0:1) at
# INFLIGHT_CLIENTS connections for INFLIGHT_SECONDS each, over lavik-bench's own keys "1".."N"
# (N = BENCH_KEYSPACE, filled first with lavik-bench --fill), in rounds like the main points.
#
# Device path (BENCH_DEVICE=1): a second lavik with --cache-mb DEVICE_CACHE_MB holds
# DEVICE_FACTOR times that in 1 KiB values (so nearly every GET reads the data file), measured
# with GET at each of DEVICE_CLIENTS connection counts (pipeline 1: at most that many device reads
# in flight, fewer while replies and next requests travel) against redis-server (all in DRAM) and
# against the same lavik's cached GETs (DEVICE_HOT_KEYS keys, half its cache, measured right after
# the device point); then fio reads 4 KiB at random from lavik's data file at the same iodepth
# (io_uring, O_DIRECT, pinned to SERVER_CPUS like the server). All of it BENCH_ROUNDS times.
# Printed per count: lavik GET/s as a share of fio's IOPS, device-GET CPU over cached-GET CPU,
# device reads per GET and bytes per device read (INFO storage), and how busy each core was
# (CPU per request x requests per second: the server's and the load generator's). fio is
# installed with apt-get when missing (as scripts/install-deps.sh does; root needed).
#
# Two workers (BENCH_TWO_WORKERS=1, with LAVIK_THREADS 1): a third lavik with --threads 2 on
# SERVER_CPUS and CLIENT_CPUS together, GET and SET at TWO_WORKER_CLIENTS connections, pipeline 1
# and BENCH_PIPELINE; printed as ratios to the one-worker lavik's same points (ops/s, server CPU
# per request). TWO_WORKER_PIN=no starts it with --no-pin-workers (the scheduler places the two
# workers; with the load generator on the same cores that is much cheaper: doc/threading.md).
#
# Rounds (BENCH_ROUNDS, default 3): the main points are measured that many times, round after
# round (every point once, then every point again), so that a spell of load from other users of
# the machine lands in one round, not in every sample of one point. The table shows each
# server's median over the rounds (ops/s, latencies, CPU per request, each taken separately),
# the ratios of those medians, and the lowest and highest of the per-round ratios. The device
# and two-worker sections run in rounds too; the two-worker medians are set against the main
# table's one-worker medians.
#
# Pinning: server on SERVER_CPUS (default 1), client on CLIENT_CPUS (default 0). LAVIK_THREADS
# defaults to 1 so that lavik, like redis-server, executes commands on one core: that is the
# apples-to-apples comparison. With more lavik threads than server CPUs, --no-pin-workers is
# passed and the workers share the CPUs. For a 2-worker run use
#   LAVIK_THREADS=2 SERVER_CPUS=0,1 bench/compare.sh
# (server and client then share CPU 0; the output records it).
#
# Environment (defaults in brackets):
#   LAVIK_BIN [build/lavik]      LAVIK_THREADS [1]       SERVER_CPUS [1]   CLIENT_CPUS [0]
#   BENCH_ROUNDS [3]
#   BENCH_REQUESTS [600000]      BENCH_CLIENTS ["50 200 1000"]  BENCH_TESTS ["set get"]
#   BENCH_PIPELINE [16: "" skips the pipelined points]  BENCH_PIPELINE_CLIENTS ["50"]
#   BENCH_KEYSPACE [1000000]     BENCH_VALUE_SIZE [1024]   BENCH_SERVERS ["lavik redis"]
#   BENCH_INFLIGHT [16: "" skips]  INFLIGHT_CLIENTS [50]  INFLIGHT_SECONDS [8]
#   LAVIK_BENCH [lavik-bench next to LAVIK_BIN]
#   BENCH_DEVICE [1]  DEVICE_CACHE_MB [64]  DEVICE_FACTOR [10]  DEVICE_CLIENTS ["32 256"]
#   DEVICE_REQUESTS [300000]  DEVICE_HOT_KEYS [half DEVICE_CACHE_MB in values]  FIO_SECONDS [10]
#   BENCH_TWO_WORKERS [1]  TWO_WORKER_CLIENTS [50]  TWO_WORKER_PIN [yes]
#   LAVIK_LEGACY_IO / LAVIK_FIXED_FILES: passed to lavik (older I/O paths; doc/threading.md)
#   RESULTS_DIR [bench/results]  KEEP_TMP [0: the temporary directory is deleted on exit]
#
# Output: a table on stdout, the same table as Markdown in RESULTS_DIR/compare-<stamp>.md, and
# raw redis-benchmark/server output in RESULTS_DIR/compare-<stamp>/raw/. Any failed check (server
# does not start or dies, fill incomplete, redis-benchmark error, DBSIZE 0, wrong value length)
# makes the script exit non-zero. Servers are stopped on every exit path.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
LAVIK_THREADS=${LAVIK_THREADS:-1}
SERVER_CPUS=${SERVER_CPUS:-1}
CLIENT_CPUS=${CLIENT_CPUS:-0}
BENCH_REQUESTS=${BENCH_REQUESTS:-600000}
BENCH_ROUNDS=${BENCH_ROUNDS:-3}
BENCH_CLIENTS=${BENCH_CLIENTS:-50 200 1000}
BENCH_PIPELINE=${BENCH_PIPELINE-16}
BENCH_PIPELINE_CLIENTS=${BENCH_PIPELINE_CLIENTS:-50}
BENCH_TWO_WORKERS=${BENCH_TWO_WORKERS:-1}
TWO_WORKER_CLIENTS=${TWO_WORKER_CLIENTS:-50}
TWO_WORKER_PIN=${TWO_WORKER_PIN:-yes}
BENCH_INFLIGHT=${BENCH_INFLIGHT-16}
INFLIGHT_CLIENTS=${INFLIGHT_CLIENTS:-50}
INFLIGHT_SECONDS=${INFLIGHT_SECONDS:-8}
LAVIK_BENCH=${LAVIK_BENCH:-$(dirname "$LAVIK_BIN")/lavik-bench}
BENCH_DEVICE=${BENCH_DEVICE:-1}
DEVICE_CACHE_MB=${DEVICE_CACHE_MB:-64}
DEVICE_FACTOR=${DEVICE_FACTOR:-10}
DEVICE_CLIENTS=${DEVICE_CLIENTS:-32 256}
DEVICE_REQUESTS=${DEVICE_REQUESTS:-300000}
FIO_SECONDS=${FIO_SECONDS:-10}
BENCH_TESTS=${BENCH_TESTS:-set get}
BENCH_KEYSPACE=${BENCH_KEYSPACE:-1000000}
BENCH_VALUE_SIZE=${BENCH_VALUE_SIZE:-1024}
BENCH_SERVERS=${BENCH_SERVERS:-lavik redis}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
KEEP_TMP=${KEEP_TMP:-0}
BENCH_NAME=compare
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

require_tools "$REDIS_SERVER" "$REDIS_CLI" "$REDIS_BENCHMARK" "$PYTHON" taskset getconf
[[ -x $LAVIK_BIN ]] || die "$LAVIK_BIN not built (cmake --build build)"
require_uint LAVIK_THREADS "$LAVIK_THREADS"
require_uint BENCH_REQUESTS "$BENCH_REQUESTS"
require_uint BENCH_ROUNDS "$BENCH_ROUNDS"
((BENCH_ROUNDS >= 1)) || die "BENCH_ROUNDS must be at least 1"
require_uint BENCH_KEYSPACE "$BENCH_KEYSPACE"
require_uint BENCH_VALUE_SIZE "$BENCH_VALUE_SIZE"
[[ -z $BENCH_PIPELINE ]] || require_uint BENCH_PIPELINE "$BENCH_PIPELINE"
if [[ -n $BENCH_INFLIGHT ]]; then
  require_uint BENCH_INFLIGHT "$BENCH_INFLIGHT"
  require_uint INFLIGHT_CLIENTS "$INFLIGHT_CLIENTS"
  require_uint INFLIGHT_SECONDS "$INFLIGHT_SECONDS"
  [[ -x $LAVIK_BENCH ]] || die "$LAVIK_BENCH not built (cmake --build build --target lavik-bench)"
fi
require_uint TWO_WORKER_CLIENTS "$TWO_WORKER_CLIENTS"
[[ $TWO_WORKER_PIN == yes || $TWO_WORKER_PIN == no ]] ||
  die "TWO_WORKER_PIN must be yes or no, not '$TWO_WORKER_PIN'"
TWO_PIN_ARGS=()
[[ $TWO_WORKER_PIN == yes ]] || TWO_PIN_ARGS=(--no-pin-workers)
if [[ $BENCH_DEVICE == 1 ]]; then
  require_uint DEVICE_CACHE_MB "$DEVICE_CACHE_MB"
  require_uint DEVICE_FACTOR "$DEVICE_FACTOR"
  for c in $DEVICE_CLIENTS; do require_uint DEVICE_CLIENTS "$c"; done
  [[ -n ${DEVICE_CLIENTS// /} ]] || die "DEVICE_CLIENTS is empty"
  require_uint DEVICE_REQUESTS "$DEVICE_REQUESTS"
  # Half the cache's bytes in values: the cached GETs' keys all fit with room to spare.
  DEVICE_HOT_KEYS=${DEVICE_HOT_KEYS:-$((DEVICE_CACHE_MB * 1048576 / 2 / BENCH_VALUE_SIZE))}
  require_uint DEVICE_HOT_KEYS "$DEVICE_HOT_KEYS"
  ((DEVICE_HOT_KEYS > 0)) || die "DEVICE_HOT_KEYS must be at least 1"
  require_uint FIO_SECONDS "$FIO_SECONDS"
  if ! command -v fio >/dev/null; then
    [[ $(id -u) == 0 ]] || die "fio is missing (sudo apt-get install fio, or BENCH_DEVICE=0)"
    log "installing fio"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends fio >/dev/null; } ||
      die "apt-get could not install fio"
  fi
fi
taskset -c "$SERVER_CPUS" true 2>/dev/null || die "SERVER_CPUS=$SERVER_CPUS is not a usable CPU list"
taskset -c "$CLIENT_CPUS" true 2>/dev/null || die "CLIENT_CPUS=$CLIENT_CPUS is not a usable CPU list"

CLK_TCK=$(getconf CLK_TCK)
STAMP=$(date +%Y%m%d-%H%M%S)
OUT_MD=$RESULTS_DIR/compare-$STAMP.md
RAW_DIR=$RESULTS_DIR/compare-$STAMP/raw
mkdir -p "$RAW_DIR"
TMP=$(mktemp -d /tmp/lavik-compare.XXXXXX)

# Started servers by name; the "current" server the functions below act on is SERVER_NAME,
# SERVER_PID and PORT (see use_server).
declare -A PIDS PORTS
SERVER_PID=""
SERVER_NAME=""
PORT=""
CLIENT_PID=""

use_server() {
  SERVER_NAME=$1
  SERVER_PID=${PIDS[$1]}
  PORT=${PORTS[$1]}
}

# Stops server $1 if it runs: SIGTERM, then SIGKILL after 10 s.
stop_server() {
  local name=$1
  [[ -n ${PIDS[$name]:-} ]] || return 0
  local pid=${PIDS[$name]}
  unset "PIDS[$name]"
  stop_lavik "$pid" 10 "$name"
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n $CLIENT_PID ]]; then
    kill -TERM "$CLIENT_PID" 2>/dev/null || true
    wait "$CLIENT_PID" 2>/dev/null || true
  fi
  local name
  for name in "${!PIDS[@]}"; do
    stop_server "$name"
  done
  # lavik's own log (stdout/stderr of both servers are already in RAW_DIR).
  if [[ -f $TMP/logs/lavik.log ]]; then
    cp "$TMP/logs/lavik.log" "$RAW_DIR/lavik.log" || true
  fi
  if [[ $KEEP_TMP == 1 ]]; then
    log "temporary files kept in $TMP"
  else
    rm -rf -- "$TMP"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_server() {
  SERVER_NAME=$1
  PORT=$(free_port)
  [[ -z ${PIDS[$SERVER_NAME]:-} ]] || die "$SERVER_NAME listed twice in BENCH_SERVERS"
  case $SERVER_NAME in
    lavik) lavik_command "$LAVIK_BIN" "$TMP" "$LAVIK_THREADS" ;;
    lavik-dev) lavik_command "$LAVIK_BIN" "$TMP/dev" "$LAVIK_THREADS" --cache-mb "$DEVICE_CACHE_MB" ;;
    lavik-two) lavik_command "$LAVIK_BIN" "$TMP/two" 2 "${TWO_PIN_ARGS[@]}" ;;
    redis) redis_command "$REDIS_SERVER" "$TMP/redis" ;;
    *) die "unknown server '$SERVER_NAME' in BENCH_SERVERS" ;;
  esac
  log "starting $SERVER_NAME on $HOST:$PORT, CPUs $SERVER_CPUS: ${SERVER_CMD[*]}"
  printf '%s\n' "taskset -c $SERVER_CPUS ${SERVER_CMD[*]}" >"$RAW_DIR/$SERVER_NAME-cmdline.txt"
  launch_server "$RAW_DIR/$SERVER_NAME-server.log"
  PIDS[$SERVER_NAME]=$SERVER_PID
  PORTS[$SERVER_NAME]=$PORT
  log "$SERVER_NAME pid $SERVER_PID"
  wait_ready start-up
}

# Writes every key of the key space once (key:%012d, the names redis-benchmark -r generates) so
# every GET of the benchmark hits. Not measured.
fill() {
  local keys=${1:-$BENCH_KEYSPACE}
  local out="$RAW_DIR/$SERVER_NAME-fill-$keys.txt"
  log "$SERVER_NAME: filling $keys keys of $BENCH_VALUE_SIZE bytes"
  "$PYTHON" - "$keys" "$BENCH_VALUE_SIZE" <<'EOF' | cli --pipe >"$out" 2>&1 ||
import sys
n, size = int(sys.argv[1]), int(sys.argv[2])
tail = b"\r\n$%d\r\n%s\r\n" % (size, b"x" * size)
out = sys.stdout.buffer
batch = []
for i in range(n):
    key = b"key:%012d" % i
    batch.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s%s" % (len(key), key, tail))
    if len(batch) == 4096:
        out.write(b"".join(batch))
        batch = []
out.write(b"".join(batch))
EOF
    die "$SERVER_NAME: fill failed; see $out"
  grep -q "errors: 0, replies: $keys\$" "$out" || die "$SERVER_NAME: fill reported errors; see $out"
  local dbsize
  dbsize=$(cli DBSIZE)
  ((dbsize >= keys)) || die "$SERVER_NAME: DBSIZE after fill is '$dbsize', want $keys"
}

# The sanity checks run after every point: the server is alive, holds keys, and a random key's
# value has the benchmark's size both by STRLEN and by the bytes GET returns.
check_server() {
  local what=$1
  kill -0 "$SERVER_PID" 2>/dev/null || die "$SERVER_NAME died during $what"
  local dbsize key len got
  dbsize=$(cli DBSIZE) || die "$SERVER_NAME: DBSIZE failed after $what"
  if ! [[ $dbsize =~ ^[0-9]+$ ]] || ((dbsize == 0)); then
    die "$SERVER_NAME: DBSIZE is '$dbsize' after $what"
  fi
  key=$(cli --raw RANDOMKEY) || die "$SERVER_NAME: RANDOMKEY failed after $what"
  # key:N from fill, or N from lavik-bench --fill (the in-flight points).
  [[ $key =~ ^(key:)?[0-9]+$ ]] || die "$SERVER_NAME: RANDOMKEY returned '$key' after $what"
  len=$(cli STRLEN "$key")
  [[ $len == "$BENCH_VALUE_SIZE" ]] || die "$SERVER_NAME: STRLEN $key is '$len', want $BENCH_VALUE_SIZE after $what"
  # --raw appends one newline to the value.
  got=$(cli --raw GET "$key" | wc -c)
  ((got - 1 == BENCH_VALUE_SIZE)) || die "$SERVER_NAME: GET $key returned $((got - 1)) bytes, want $BENCH_VALUE_SIZE after $what"
}

# Results, keyed by "<server>|<test>|<clients>|<pipeline>": rps, p50, p99, p99.9 (ms), server and
# client CPU us/request.
declare -A RPS P50 P99 P999 CPU_US CLIENT_US

# run_client CPU_FILE OUT ERR COMMAND...: runs the load generator COMMAND on CLIENT_CPUS, stdout to
# OUT and stderr to ERR (the same file for both is fine), its own CPU seconds (utime+stime) to
# CPU_FILE; its exit status in CLIENT_RC. In the background so that a signal to this script runs the
# cleanup trap at once (bash defers traps while a foreground child runs).
CLIENT_RC=0
run_client() {
  local cpu_file=$1 out=$2 err=$3
  shift 3
  if [[ $err == "$out" ]]; then
    taskset -c "$CLIENT_CPUS" "$PYTHON" -c "$CLIENT_WRAPPER" "$cpu_file" "$@" >"$out" 2>&1 &
  else
    taskset -c "$CLIENT_CPUS" "$PYTHON" -c "$CLIENT_WRAPPER" "$cpu_file" "$@" >"$out" 2>"$err" &
  fi
  CLIENT_PID=$!
  CLIENT_RC=0
  wait "$CLIENT_PID" || CLIENT_RC=$?
  CLIENT_PID=""
}
CLIENT_WRAPPER='import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.6f\n" % (u.ru_utime + u.ru_stime))
sys.exit(rc)'

# record_point KEY RPS P50 P99 P999 SERVER_TICKS REQUESTS CLIENT_CPU_FILE: one point's results
# under KEY; CPU per request from the server's ticks and the client's CPU seconds.
record_point() {
  local key=$1 ticks=$6 requests=$7 client_cpu=$8
  RPS[$key]=$2
  P50[$key]=$3
  P99[$key]=$4
  P999[$key]=$5
  CPU_US[$key]=$(awk -v t="$ticks" -v hz="$CLK_TCK" -v n="$requests" \
    'BEGIN { printf "%.2f", t * 1e6 / hz / n }')
  CLIENT_US[$key]=$(awk -v s="$(<"$client_cpu")" -v n="$requests" \
    'BEGIN { printf "%.2f", s * 1e6 / n }')
}

# run_point TEST CLIENTS PIPELINE [KEYSPACE [REQUESTS [LABEL]]]: results under LABEL (default
# SERVER_NAME).
run_point() {
  local test=$1 clients=$2 pipe=$3 keys=${4:-$BENCH_KEYSPACE} requests=${5:-$BENCH_REQUESTS}
  local label=${6:-$SERVER_NAME}
  local name="$label-$test-c$clients-P$pipe-n$requests"
  local out="$RAW_DIR/$name.txt"
  log "$SERVER_NAME: $test, $clients connections, pipeline $pipe, $requests requests"
  local before after
  before=$(cpu_ticks "$SERVER_PID")
  run_client "$out.client-cpu" "$out" "$out" "$REDIS_BENCHMARK" -h "$HOST" -p "$PORT" -t "$test" \
    -d "$BENCH_VALUE_SIZE" -r "$keys" -n "$requests" -c "$clients" -P "$pipe"
  local rc=$CLIENT_RC
  ((rc == 0)) || die "redis-benchmark exited with status $rc for $name; see $out"
  # Let the server finish closing the benchmark's connections inside the window.
  sleep 0.5
  after=$(cpu_ticks "$SERVER_PID")
  if grep -Eqi 'error|could not connect' "$out"; then
    grep -Ei 'error|could not connect' "$out" | head -5 >&2
    die "redis-benchmark reported errors for $name; see $out"
  fi
  # The full report (not --csv, which has no percentile above p99): "throughput summary: N
  # requests per second", the "latency summary" line (avg min p50 p95 p99 max), and "Latency by
  # percentile distribution", whose first line at or above 99.9% (HdrHistogram's 99.902% step)
  # is reported as p99.9 (an upper bound of it; the step below, 99.805%, bounds it from below).
  local rps p50 p99 p999
  rps=$(tr '\r' '\n' <"$out" | awk '/throughput summary:/ { v = $3 } END { print v }')
  read -r p50 p99 < <(tr '\r' '\n' <"$out" | awk '
    !done && /latency summary/ { getline; getline; print $3, $5; done = 1 }')
  # (awk reads to the end rather than exit: an early exit would end tr with SIGPIPE, which
  # pipefail turns into the script's death.)
  p999=$(tr '\r' '\n' <"$out" | awk 'done { next } /^Latency by percentile/ { on = 1; next }
    on && /^[0-9.]+% <=/ { pct = $1; sub(/%/, "", pct); if (pct + 0 >= 99.9) { print $3; done = 1 } }
    on && /^$/ { done = 1 }')
  [[ -n $rps && -n $p50 && -n $p99 && -n $p999 ]] || die "cannot read the summary of $out"
  awk -v r="$rps" 'BEGIN { exit !(r > 0) }' || die "zero rps for $name"
  record_point "$label|$test|$clients|$pipe" "$rps" "$p50" "$p99" "$p999" $((after - before)) \
    "$requests" "$out.client-cpu"
  check_server "$name"
}

SERVER_NCPUS=$(count_cpus "$SERVER_CPUS")

# --- Run -------------------------------------------------------------------------------------

LAVIK_VERSION=$("$LAVIK_BIN" --version 2>&1 | head -n 1)
REDIS_VERSION="redis-server $("$REDIS_SERVER" --version | grep -o 'v=[^ ]*' | head -n 1)"
BENCH_VERSION=$("$REDIS_BENCHMARK" --version 2>&1 | head -n 1)
GIT_REV=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $(git -C "$ROOT" status --porcelain 2>/dev/null | head -c 1) != "" ]]; then
  GIT_REV+=" (dirty tree)"
fi
LAVIK_PIN="workers pinned inside the mask"
if ((LAVIK_THREADS > SERVER_NCPUS)); then
  LAVIK_PIN="--no-pin-workers"
fi
PINNING="server CPUs $SERVER_CPUS, client (redis-benchmark) CPUs $CLIENT_CPUS; lavik --threads $LAVIK_THREADS ($LAVIK_PIN)"
OVERLAP=$(cpu_overlap "$SERVER_CPUS" "$CLIENT_CPUS")
if [[ -n $OVERLAP ]]; then
  PINNING+="; WARNING: server and client share CPU(s) $OVERLAP"
fi
log "$PINNING"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
log "raw output in $RAW_DIR"

read -r -a SERVERS <<<"$BENCH_SERVERS"
((${#SERVERS[@]} > 0)) || die "BENCH_SERVERS is empty"
for server in "${SERVERS[@]}"; do
  start_server "$server"
  fill
  check_server fill
done
# The points, as TEST:CONNECTIONS:PIPELINE.
POINTS=()
for clients in $BENCH_CLIENTS; do
  for test in $BENCH_TESTS; do
    POINTS+=("$test:$clients:1")
  done
done
if [[ -n $BENCH_PIPELINE ]]; then
  for clients in $BENCH_PIPELINE_CLIENTS; do
    for test in $BENCH_TESTS; do
      POINTS+=("$test:$clients:$BENCH_PIPELINE")
    done
  done
fi

have_server() { [[ " $BENCH_SERVERS " == *" $1 "* ]]; }

# in_order N: SERVERS, reversed for odd N (so neither server always runs right after the other).
in_order() {
  ORDER=("${SERVERS[@]}")
  if (($1 % 2 == 1)); then
    ORDER=()
    for ((i = ${#SERVERS[@]} - 1; i >= 0; i--)); do
      ORDER+=("${SERVERS[i]}")
    done
  fi
}

# Each round's results are labelled SERVER@ROUND; the medians go under SERVER (below).
point=0
for ((round = 1; round <= BENCH_ROUNDS; round++)); do
  for p in "${POINTS[@]}"; do
    IFS=: read -r test clients pipe <<<"$p"
    in_order "$point"
    for server in "${ORDER[@]}"; do
      use_server "$server"
      log "round $round of $BENCH_ROUNDS"
      run_point "$test" "$clients" "$pipe" "$BENCH_KEYSPACE" "$BENCH_REQUESTS" "$server@$round"
    done
    point=$((point + 1))
  done
done

# take_medians LABEL KEY ARRAY...: ARRAY[LABEL|KEY] = the median of ARRAY[LABEL@ROUND|KEY] over
# the rounds, for each ARRAY.
take_medians() {
  local label=$1 key=$2 arr r
  shift 2
  for arr in "$@"; do
    declare -n a=$arr
    local vals=()
    for ((r = 1; r <= BENCH_ROUNDS; r++)); do
      vals+=("${a[$label@$r|$key]}")
    done
    a["$label|$key"]=$(median "${vals[@]}")
    unset -n a
  done
}
# ratio_range ARRAY_A LABEL_A ARRAY_B LABEL_B KEY: "lowest-highest" over the rounds of
# ARRAY_A[LABEL_A@ROUND|KEY] / ARRAY_B[LABEL_B@ROUND|KEY].
ratio_range() {
  local -n num=$1 den=$3
  local num_label=$2 den_label=$4 key=$5 r list=()
  for ((r = 1; r <= BENCH_ROUNDS; r++)); do
    list+=("${num[$num_label@$r|$key]}" "${den[$den_label@$r|$key]}")
  done
  printf '%s\n' "${list[@]}" | paste - - | awk '
    { q = $1 / $2; if (NR == 1 || q < lo) lo = q; if (NR == 1 || q > hi) hi = q }
    END { printf "%.2f-%.2f\n", lo, hi }'
}
declare -A OPS_RANGE CPU_RANGE
for p in "${POINTS[@]}"; do
  IFS=: read -r test clients pipe <<<"$p"
  for server in "${SERVERS[@]}"; do
    take_medians "$server" "$test|$clients|$pipe" RPS P50 P99 P999 CPU_US CLIENT_US
  done
  if have_server lavik && have_server redis; then
    OPS_RANGE[$test|$clients|$pipe]=$(ratio_range RPS lavik RPS redis "$test|$clients|$pipe")
    CPU_RANGE[$test|$clients|$pipe]=$(ratio_range CPU_US lavik CPU_US redis "$test|$clients|$pipe")
  fi
done

# --- In flight (memtier-style pipelining) ---------------------------------------------------

# run_inflight TEST LABEL: lavik-bench --pipeline BENCH_INFLIGHT against the current server, GET
# or SET over keys 1..BENCH_KEYSPACE for INFLIGHT_SECONDS; results under "LABEL|TEST|clients|iP".
run_inflight() {
  local test=$1 label=$2 ratio=1:0
  [[ $test == set ]] && ratio=0:1
  local name="$label-inflight-$test-c$INFLIGHT_CLIENTS-P$BENCH_INFLIGHT"
  local out="$RAW_DIR/$name.json"
  log "$SERVER_NAME: lavik-bench $test, $INFLIGHT_CLIENTS connections, $BENCH_INFLIGHT in flight each, ${INFLIGHT_SECONDS} s"
  local before after
  before=$(cpu_ticks "$SERVER_PID")
  run_client "$out.client-cpu" "$out" "$out.err" "$LAVIK_BENCH" --host "$HOST" --port "$PORT" \
    --connections "$INFLIGHT_CLIENTS" --threads 1 --pipeline "$BENCH_INFLIGHT" --ratio "$ratio" \
    --key-min 1 --key-max "$BENCH_KEYSPACE" --value-size "$BENCH_VALUE_SIZE" \
    --duration "$INFLIGHT_SECONDS" --json
  local rc=$CLIENT_RC
  ((rc == 0)) || die "lavik-bench exited with status $rc for $name; see $out and $out.err"
  sleep 0.5
  after=$(cpu_ticks "$SERVER_PID")
  local fields
  # Every GET must hit (the keys were filled) and nothing may fail.
  fields=$("$PYTHON" -c 'import json, sys
j = json.load(open(sys.argv[1]))
bad = j["errors"] + j["error_replies"] + j["connection_errors"] + (j["misses"] if sys.argv[2] == "get" else 0)
if bad or not j["requests"]:
    sys.exit("errors %d, error replies %d, connection errors %d, misses %d, requests %d" % (
        j["errors"], j["error_replies"], j["connection_errors"], j["misses"], j["requests"]))
print("%.0f %.3f %.3f %.3f %d" % (j["ops_per_sec"], j["p50_ms"], j["p99_ms"], j["p999_ms"], j["requests"]))' \
    "$out" "$test") || die "lavik-bench run $name failed its checks; see $out"
  local rps p50 p99 p999 requests
  read -r rps p50 p99 p999 requests <<<"$fields"
  # Requests answered in the window; the few still in flight at its end (connections x
  # BENCH_INFLIGHT) are served but not counted.
  record_point "$label|$test|$INFLIGHT_CLIENTS|i$BENCH_INFLIGHT" "$rps" "$p50" "$p99" "$p999" \
    $((after - before)) "$requests" "$out.client-cpu"
  check_server "$name"
}

# lavik-bench sends GET and SET only: the in-flight points are BENCH_TESTS' get and set.
INFLIGHT_TESTS=""
for test in $BENCH_TESTS; do
  if [[ $test == get || $test == set ]]; then INFLIGHT_TESTS+=" $test"; fi
done
INFLIGHT_DONE=0
if [[ -n $BENCH_INFLIGHT && -n $INFLIGHT_TESTS ]] && have_server lavik && have_server redis; then
  for server in "${SERVERS[@]}"; do
    use_server "$server"
    log "$SERVER_NAME: lavik-bench --fill of keys 1..$BENCH_KEYSPACE"
    "$LAVIK_BENCH" --host "$HOST" --port "$PORT" --fill --key-min 1 --key-max "$BENCH_KEYSPACE" \
      --value-size "$BENCH_VALUE_SIZE" --pipeline 32 >"$RAW_DIR/$server-inflight-fill.txt" 2>&1 ||
      die "$server: lavik-bench --fill failed; see $RAW_DIR/$server-inflight-fill.txt"
  done
  declare -A IN_OPS_RANGE IN_CPU_RANGE
  for ((round = 1; round <= BENCH_ROUNDS; round++)); do
    for test in $INFLIGHT_TESTS; do
      in_order "$point"
      for server in "${ORDER[@]}"; do
        use_server "$server"
        log "in flight, round $round of $BENCH_ROUNDS"
        run_inflight "$test" "$server@$round"
      done
      point=$((point + 1))
    done
  done
  for test in $INFLIGHT_TESTS; do
    key="$test|$INFLIGHT_CLIENTS|i$BENCH_INFLIGHT"
    for server in lavik redis; do
      take_medians "$server" "$key" RPS P50 P99 P999 CPU_US CLIENT_US
    done
    IN_OPS_RANGE[$test]=$(ratio_range RPS lavik RPS redis "$key")
    IN_CPU_RANGE[$test]=$(ratio_range CPU_US lavik CPU_US redis "$key")
  done
  INFLIGHT_DONE=1
fi

# --- Device path -----------------------------------------------------------------------------

DEVICE_KEYS=$((DEVICE_FACTOR * DEVICE_CACHE_MB * 1048576 / BENCH_VALUE_SIZE))
DEVICE_DONE=0
# storage_field NAME: INFO storage field NAME of the current server.
storage_field() { info_get "$(cli INFO storage)" "$1"; }
if [[ $BENCH_DEVICE == 1 ]] && have_server lavik && have_server redis; then
  read -r -a DEV_CONNS <<<"$DEVICE_CLIENTS"
  # A freed DRAM lavik leaves the page cache and memory to the device-path one.
  stop_server lavik
  if ((DEVICE_KEYS > BENCH_KEYSPACE)); then
    use_server redis
    fill "$DEVICE_KEYS"
  fi
  start_server lavik-dev
  fill "$DEVICE_KEYS"
  check_server fill
  DEV_DATA_FILE=$TMP/dev/data/lavik.data
  DEV_FILE_BYTES=$(stat -c %s "$DEV_DATA_FILE")
  # Warm-up (not reported): the value cache reaches its steady state.
  run_point get "${DEV_CONNS[0]}" 1 "$DEVICE_KEYS" $((DEVICE_REQUESTS / 4)) warmup
  declare -A DEV_READS DEV_BYTES HOT_READS FIO_IOPS FIO_CPU_US
  for c in "${DEV_CONNS[@]}"; do
    DEV_READS[$c]=0
    DEV_BYTES[$c]=0
    HOT_READS[$c]=0
  done
  for ((round = 1; round <= BENCH_ROUNDS; round++)); do
    for c in "${DEV_CONNS[@]}"; do
      key="get|$c|1"
      use_server lavik-dev
      log "device path, round $round of $BENCH_ROUNDS"
      reads0=$(storage_field device_reads)
      bytes0=$(storage_field device_bytes_read)
      run_point get "$c" 1 "$DEVICE_KEYS" "$DEVICE_REQUESTS" "lavik-dev@$round"
      DEV_READS[$c]=$((DEV_READS[$c] + $(storage_field device_reads) - reads0))
      DEV_BYTES[$c]=$((DEV_BYTES[$c] + $(storage_field device_bytes_read) - bytes0))
      # The same lavik's cached GETs, right after: DEVICE_HOT_KEYS keys that fit its cache,
      # brought back into it first (the device point above evicted some of them).
      run_point get "$c" 1 "$DEVICE_HOT_KEYS" $((DEVICE_HOT_KEYS * 2)) hot-warmup
      reads0=$(storage_field device_reads)
      run_point get "$c" 1 "$DEVICE_HOT_KEYS" "$DEVICE_REQUESTS" "lavik-hot@$round"
      HOT_READS[$c]=$((HOT_READS[$c] + $(storage_field device_reads) - reads0))
      use_server redis
      run_point get "$c" 1 "$DEVICE_KEYS" "$DEVICE_REQUESTS" "redis-dev@$round"
      # fio on lavik's own data file (read-only; lavik idles meanwhile): same CPUs, same file
      # system, same queue depth.
      log "fio: 4 KiB random reads, iodepth $c, ${FIO_SECONDS} s on $DEV_DATA_FILE"
      fio_json="$RAW_DIR/fio-$c-round$round.json"
      taskset -c "$SERVER_CPUS" fio --name=randread --filename="$DEV_DATA_FILE" --readonly \
        --size="$DEV_FILE_BYTES" --rw=randread --bs=4k --direct=1 --ioengine=io_uring \
        --iodepth="$c" --numjobs=1 --time_based --runtime="$FIO_SECONDS" \
        --output-format=json >"$fio_json" 2>"$fio_json.err" ||
        die "fio failed; see $fio_json.err"
      read -r "FIO_IOPS[fio@$round|$key]" "FIO_CPU_US[fio@$round|$key]" <<<"$("$PYTHON" -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
iops = j["read"]["iops"]
# usr_cpu/sys_cpu: percent of one CPU over the run.
print("%.0f %.2f" % (iops, (j["usr_cpu"] + j["sys_cpu"]) / 100 * 1e6 / iops if iops else 0))' \
        "$fio_json")"
    done
  done
  stop_server lavik-dev
  declare -A DEV_OPS_RANGE DEV_CPU_RANGE DEV_HOT_RANGE DEV_FIO_RANGE
  for c in "${DEV_CONNS[@]}"; do
    key="get|$c|1"
    for label in lavik-dev lavik-hot redis-dev; do
      take_medians "$label" "$key" RPS P50 P99 P999 CPU_US CLIENT_US
    done
    take_medians fio "$key" FIO_IOPS FIO_CPU_US
    DEV_OPS_RANGE[$c]=$(ratio_range RPS lavik-dev RPS redis-dev "$key")
    DEV_CPU_RANGE[$c]=$(ratio_range CPU_US lavik-dev CPU_US redis-dev "$key")
    DEV_HOT_RANGE[$c]=$(ratio_range CPU_US lavik-dev CPU_US lavik-hot "$key")
    DEV_FIO_RANGE[$c]=$(ratio_range RPS lavik-dev FIO_IOPS fio "$key")
  done
  DEVICE_DONE=1
fi
for server in "${SERVERS[@]}"; do
  stop_server "$server"
done

# --- Two workers -----------------------------------------------------------------------------

# lavik --threads 2 on the server's and the client's CPUs together (a worker then shares the
# client's core), at TWO_WORKER_CLIENTS connections, pipeline 1 and BENCH_PIPELINE, against the
# one-worker points above: what a second worker costs per request (issue #17).
TWO_DONE=0
TWO_CPUS=""
if [[ $BENCH_TWO_WORKERS == 1 ]] && have_server lavik && ((LAVIK_THREADS == 1)); then
  TWO_CPUS="$SERVER_CPUS,$CLIENT_CPUS"
  saved_cpus=$SERVER_CPUS
  SERVER_CPUS=$TWO_CPUS
  SERVER_NCPUS=$(count_cpus "$SERVER_CPUS")
  start_server lavik-two
  SERVER_CPUS=$saved_cpus
  SERVER_NCPUS=$(count_cpus "$SERVER_CPUS")
  fill
  check_server fill
  for ((round = 1; round <= BENCH_ROUNDS; round++)); do
    for test in $BENCH_TESTS; do
      for pipe in 1 $BENCH_PIPELINE; do
        log "two workers, round $round of $BENCH_ROUNDS"
        run_point "$test" "$TWO_WORKER_CLIENTS" "$pipe" "$BENCH_KEYSPACE" "$BENCH_REQUESTS" \
          "lavik-two@$round"
      done
    done
  done
  stop_server lavik-two
  for test in $BENCH_TESTS; do
    for pipe in 1 $BENCH_PIPELINE; do
      take_medians lavik-two "$test|$TWO_WORKER_CLIENTS|$pipe" RPS P50 P99 P999 CPU_US CLIENT_US
    done
  done
  TWO_DONE=1
fi

LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# --- Report ----------------------------------------------------------------------------------

# ratio A B: A/B with two decimals, "-" when either is missing or B is zero.
ratio() {
  awk -v a="${1:-}" -v b="${2:-}" 'BEGIN {
    if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'
}

HEADERS=(test conns P "lavik ops/s" "redis ops/s" "ops ratio l/r" "lavik p50 ms" "lavik p99 ms"
  "lavik p99.9 ms" "redis p50 ms" "redis p99 ms" "redis p99.9 ms" "lavik CPU us/req" "redis CPU us/req" "CPU ratio l/r"
  "client CPU us/req l/r" "ops ratio per round" "CPU ratio per round")
ROWS=()
for p in "${POINTS[@]}"; do
  IFS=: read -r test clients pipe <<<"$p"
  l="lavik|$test|$clients|$pipe"
  r="redis|$test|$clients|$pipe"
  ROWS+=("${test^^}|$clients|$pipe|${RPS[$l]:--}|${RPS[$r]:--}|$(ratio "${RPS[$l]:-}" "${RPS[$r]:-}")|${P50[$l]:--}|${P99[$l]:--}|${P999[$l]:--}|${P50[$r]:--}|${P99[$r]:--}|${P999[$r]:--}|${CPU_US[$l]:--}|${CPU_US[$r]:--}|$(ratio "${CPU_US[$l]:-}" "${CPU_US[$r]:-}")|${CLIENT_US[$l]:--}/${CLIENT_US[$r]:--}|${OPS_RANGE[$test|$clients|$pipe]:--}|${CPU_RANGE[$test|$clients|$pipe]:--}")
done
# busy CPU_US RPS: the share of one core a process used (CPU us per request x requests per second).
busy() { awk -v u="${1:-}" -v r="${2:-}" 'BEGIN { if (u == "" || r == "") print "-"; else printf "%.2f", u * r / 1e6 }'; }
INFLIGHT_ROWS=()
if ((INFLIGHT_DONE)); then
  for test in $INFLIGHT_TESTS; do
    l="lavik|$test|$INFLIGHT_CLIENTS|i$BENCH_INFLIGHT"
    r="redis|$test|$INFLIGHT_CLIENTS|i$BENCH_INFLIGHT"
    INFLIGHT_ROWS+=(
      "${test^^}: lavik / redis ops/s (rounds)|${RPS[$l]} / ${RPS[$r]} = $(ratio "${RPS[$l]}" "${RPS[$r]}") (${IN_OPS_RANGE[$test]})"
      "${test^^}: server CPU us/req, lavik / redis (rounds)|${CPU_US[$l]} / ${CPU_US[$r]} = $(ratio "${CPU_US[$l]}" "${CPU_US[$r]}") (${IN_CPU_RANGE[$test]})"
      "${test^^}: p50 / p99 / p99.9 ms, lavik; redis|${P50[$l]} / ${P99[$l]} / ${P999[$l]}; ${P50[$r]} / ${P99[$r]} / ${P999[$r]}"
      "${test^^}: cores busy, server / client: lavik's run; redis's run|$(busy "${CPU_US[$l]}" "${RPS[$l]}") / $(busy "${CLIENT_US[$l]}" "${RPS[$l]}"); $(busy "${CPU_US[$r]}" "${RPS[$r]}") / $(busy "${CLIENT_US[$r]}" "${RPS[$r]}")"
    )
  done
fi
DEVICE_ROWS=()
if ((DEVICE_DONE)); then
  DEVICE_ROWS=("data set|$DEVICE_KEYS keys x $BENCH_VALUE_SIZE B ($DEVICE_FACTOR x lavik --cache-mb $DEVICE_CACHE_MB); data file $(human_bytes "$DEV_FILE_BYTES")")
  for n in "${DEV_CONNS[@]}"; do
    l="lavik-dev|get|$n|1"
    r="redis-dev|get|$n|1"
    h="lavik-hot|get|$n|1"
    f="fio|get|$n|1"
    total=$((DEVICE_REQUESTS * BENCH_ROUNDS))
    DEVICE_ROWS+=(
      "GET, $n connections: lavik / redis ops/s (rounds)|${RPS[$l]} / ${RPS[$r]} = $(ratio "${RPS[$l]}" "${RPS[$r]}") (${DEV_OPS_RANGE[$n]})"
      "server CPU us/GET: lavik / redis (rounds)|${CPU_US[$l]} / ${CPU_US[$r]} = $(ratio "${CPU_US[$l]}" "${CPU_US[$r]}") (${DEV_CPU_RANGE[$n]})"
      "client CPU us/GET: lavik run / redis run|${CLIENT_US[$l]} / ${CLIENT_US[$r]}"
      "cores busy in lavik's run: server / client|$(busy "${CPU_US[$l]}" "${RPS[$l]}") / $(busy "${CLIENT_US[$l]}" "${RPS[$l]}")"
      "p50 / p99 / p99.9 ms: lavik; redis|${P50[$l]} / ${P99[$l]} / ${P999[$l]}; ${P50[$r]} / ${P99[$r]} / ${P999[$r]}"
      "lavik device GET CPU / cached GET CPU (rounds)|${CPU_US[$l]} / ${CPU_US[$h]} = $(ratio "${CPU_US[$l]}" "${CPU_US[$h]}") (${DEV_HOT_RANGE[$n]})"
      "cached GETs: ops/s; device reads per GET|${RPS[$h]}; $(calc "int(${HOT_READS[$n]} * 1000 / $total) / 1000")"
      "device reads per GET; bytes per read|$(calc "int(${DEV_READS[$n]} * 1000 / $total) / 1000"); $(calc "${DEV_READS[$n]} ? int(${DEV_BYTES[$n]} / ${DEV_READS[$n]}) : 0")"
      "fio 4 KiB randread iodepth $n: IOPS; CPU us/IO|${FIO_IOPS[$f]}; ${FIO_CPU_US[$f]}"
      "lavik GET/s / fio IOPS at iodepth $n (rounds)|$(ratio "${RPS[$l]}" "${FIO_IOPS[$f]}") (${DEV_FIO_RANGE[$n]})"
    )
  done
fi

TWO_ROWS=()
if ((TWO_DONE)); then
  for test in $BENCH_TESTS; do
    for pipe in 1 $BENCH_PIPELINE; do
      t="lavik-two|$test|$TWO_WORKER_CLIENTS|$pipe"
      o="lavik|$test|$TWO_WORKER_CLIENTS|$pipe"
      TWO_ROWS+=(
        "${test^^}, $TWO_WORKER_CLIENTS connections, P $pipe: ops/s two / one worker|${RPS[$t]} / ${RPS[$o]:--} = $(ratio "${RPS[$t]}" "${RPS[$o]:-}")"
        "${test^^}, $TWO_WORKER_CLIENTS connections, P $pipe: server CPU us/req two / one worker|${CPU_US[$t]} / ${CPU_US[$o]:--} = $(ratio "${CPU_US[$t]}" "${CPU_US[$o]:-}")"
      )
    done
  done
fi

# The I/O switches lavik reads from the environment (doc/threading.md): a run with one of them set
# measures the older path of the same binary.
LAVIK_ENV=$(env | grep -E '^LAVIK_(LEGACY_IO|FIXED_FILES)=' | sort | tr '\n' ' ' || true)
LAVIK_ENV=${LAVIK_ENV:-none}
SETTINGS="redis-benchmark -t <test> -d $BENCH_VALUE_SIZE -r $BENCH_KEYSPACE -n $BENCH_REQUESTS -c <conns> -P <P>; key space pre-filled (every GET hits)"

{
  echo
  echo "lavik vs redis-server, $(date '+%Y-%m-%d %H:%M:%S %Z'), $(nproc) CPUs"
  echo "lavik: $LAVIK_VERSION (git $GIT_REV); redis: $REDIS_VERSION; $BENCH_VERSION"
  echo "pinning: $PINNING"
  echo "lavik I/O switches: $LAVIK_ENV"
  echo "settings: $SETTINGS"
  echo "load average (other users of the machine skew ops/s): $LOAD_START at start, $LOAD_END at end"
  echo
  printf '%-5s %5s %3s %11s %11s %6s %7s %7s %7s %7s %7s %7s %9s %9s %8s %13s %10s %10s\n' \
    test conns P "lavik op/s" "redis op/s" ratio "l p50" "l p99" "l p99.9" "r p50" "r p99" \
    "r p99.9" "l us/req" \
    "r us/req" "CPU l/r" "client us l/r" "ops rounds" "CPU rounds"
  for row in "${ROWS[@]}"; do
    IFS='|' read -r -a f <<<"$row"
    printf '%-5s %5s %3s %11s %11s %6s %7s %7s %7s %7s %7s %7s %9s %9s %8s %13s %10s %10s\n' "${f[@]}"
  done
  echo
  echo "p50/p99/p99.9 in ms; us/req = server utime+stime (all threads) per request; client us = the"
  echo "load generator's CPU per request in each server's run; ratios are lavik/redis"
  echo "(ops: higher is better for lavik; CPU: lower is better for lavik). Every figure is the median"
  echo "of $BENCH_ROUNDS rounds; 'rounds' is the lowest-highest of the per-round ratios."
  if ((INFLIGHT_DONE)); then
    echo
    echo "In flight (lavik-bench --pipeline $BENCH_INFLIGHT, memtier-style, $INFLIGHT_CLIENTS connections, ${INFLIGHT_SECONDS} s per point):"
    text_table "${INFLIGHT_ROWS[@]}"
  fi
  if ((DEVICE_DONE)); then
    echo
    echo "Device path (lavik-dev: --cache-mb $DEVICE_CACHE_MB; redis-server holds it all in DRAM):"
    text_table "${DEVICE_ROWS[@]}"
  fi
  if ((TWO_DONE)); then
    echo
    echo "Two workers (lavik-two: --threads 2 on CPUs $TWO_CPUS, sharing the client's, pinned: $TWO_WORKER_PIN) against one:"
    text_table "${TWO_ROWS[@]}"
  fi
  echo "Markdown: $OUT_MD"
}

{
  echo "# lavik vs redis-server, $(date '+%Y-%m-%d %H:%M:%S %Z')"
  echo
  echo "- lavik: $LAVIK_VERSION (git $GIT_REV)"
  echo "- redis: $REDIS_VERSION"
  echo "- client: $BENCH_VERSION"
  echo "- machine: $(nproc) CPUs, $(uname -r)"
  echo "- pinning: $PINNING"
  echo "- lavik I/O switches (environment): $LAVIK_ENV"
  echo "- settings: \`$SETTINGS\`"
  echo "- load average: $LOAD_START at start, $LOAD_END at end (other users of the machine skew ops/s)"
  echo "- $BENCH_ROUNDS rounds of every point; each figure is the median over the rounds, the ratios are of the medians,"
  echo "  and 'per round' gives the lowest and highest of the rounds' own ratios"
  echo "- servers measured one at a time (interleaved per point); CPU = utime+stime of the server process (all threads)"
  echo "  from /proc/PID/stat over each point, divided by requests (CLK_TCK $CLK_TCK)"
  echo
  line="|"
  sep="|"
  for h in "${HEADERS[@]}"; do
    line+=" $h |"
    sep+=" --- |"
  done
  echo "$line"
  echo "$sep"
  for row in "${ROWS[@]}"; do
    echo "| ${row//|/ | } |"
  done
  echo
  echo "Ratios are lavik/redis: above 1 is better for lavik in ops/s, below 1 is better in CPU."
  if ((INFLIGHT_DONE)); then
    echo
    echo "## In flight (memtier-style pipelining)"
    echo
    echo "\`lavik-bench --connections $INFLIGHT_CLIENTS --pipeline $BENCH_INFLIGHT --duration $INFLIGHT_SECONDS\` (GET: \`--ratio 1:0\`,"
    echo "SET: \`--ratio 0:1\`) over keys 1..$BENCH_KEYSPACE of $BENCH_VALUE_SIZE B, filled first: each connection keeps"
    echo "$BENCH_INFLIGHT requests in flight and sends the next as a reply arrives, as memtier_benchmark's --pipeline"
    echo "does (redis-benchmark's -P sends $BENCH_PIPELINE and waits for all). Same CPUs as above; medians of"
    echo "$BENCH_ROUNDS rounds; (rounds) is the lowest-highest of the rounds' own ratios."
    echo
    md_table "measure|value" "${INFLIGHT_ROWS[@]}"
  fi
  if ((DEVICE_DONE)); then
    echo
    echo "## Device path"
    echo
    echo "lavik with \`--cache-mb $DEVICE_CACHE_MB\` and $DEVICE_FACTOR times that in values (most GETs read"
    echo "the data file); redis-server holds the same keys in DRAM; fio on lavik's data file. Cached GETs:"
    echo "the same lavik, GETs over $DEVICE_HOT_KEYS keys that fit its cache, measured right after each device point."
    echo "Medians of $BENCH_ROUNDS rounds; (rounds) is the lowest-highest of the rounds' own ratios."
    echo
    md_table "measure|value" "${DEVICE_ROWS[@]}"
  fi
  if ((TWO_DONE)); then
    echo
    echo "## Two workers"
    echo
    echo "lavik \`--threads 2\` on CPUs $TWO_CPUS (one worker shares the load generator's core) against"
    echo "the one-worker lavik above, same points."
    echo
    md_table "measure|value" "${TWO_ROWS[@]}"
  fi
  echo "Raw redis-benchmark output: \`compare-$STAMP/raw/\` (not committed)."
} >"$OUT_MD"
