#!/usr/bin/env bash
# compare.sh: side-by-side redis-benchmark run of build/lavik against redis-server.
#
# Both servers are started on free loopback ports and filled with every key of the key space (so
# GETs hit), then measured with identical redis-benchmark settings: 1 KiB values, random keys over
# a 1M key space, GET and SET, pipeline 1, 50 and 200 connections. Points are measured one server
# at a time, interleaved (lavik then redis for one point, redis then lavik for the next), so a
# change in the machine's background load hits both alike; the idle server uses ~0 CPU.
#
# On 2 cores the client saturates first (see /work/shared/ARCHITECTURE.md), so ops/s alone hardly
# separates servers. Next to ops/s and p50/p99 the script therefore reports the server's CPU time
# per request: utime+stime of the whole server process (all threads) from /proc/PID/stat, taken
# before and after each point, divided by the number of requests.
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
#   BENCH_REQUESTS [600000]      BENCH_CLIENTS ["50 200"]  BENCH_TESTS ["set get"]
#   BENCH_KEYSPACE [1000000]     BENCH_VALUE_SIZE [1024]   BENCH_SERVERS ["lavik redis"]
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
BENCH_CLIENTS=${BENCH_CLIENTS:-50 200}
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
require_uint BENCH_KEYSPACE "$BENCH_KEYSPACE"
require_uint BENCH_VALUE_SIZE "$BENCH_VALUE_SIZE"
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
  local out="$RAW_DIR/$SERVER_NAME-fill.txt"
  log "$SERVER_NAME: filling $BENCH_KEYSPACE keys of $BENCH_VALUE_SIZE bytes"
  "$PYTHON" - "$BENCH_KEYSPACE" "$BENCH_VALUE_SIZE" <<'EOF' | cli --pipe >"$out" 2>&1 ||
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
  grep -q "errors: 0, replies: $BENCH_KEYSPACE\$" "$out" || die "$SERVER_NAME: fill reported errors; see $out"
  local dbsize
  dbsize=$(cli DBSIZE)
  [[ $dbsize == "$BENCH_KEYSPACE" ]] || die "$SERVER_NAME: DBSIZE after fill is '$dbsize', want $BENCH_KEYSPACE"
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
  [[ $key == key:* ]] || die "$SERVER_NAME: RANDOMKEY returned '$key' after $what"
  len=$(cli STRLEN "$key")
  [[ $len == "$BENCH_VALUE_SIZE" ]] || die "$SERVER_NAME: STRLEN $key is '$len', want $BENCH_VALUE_SIZE after $what"
  # --raw appends one newline to the value.
  got=$(cli --raw GET "$key" | wc -c)
  ((got - 1 == BENCH_VALUE_SIZE)) || die "$SERVER_NAME: GET $key returned $((got - 1)) bytes, want $BENCH_VALUE_SIZE after $what"
}

# Results, keyed by "<server>|<test>|<clients>": rps, p50 (ms), p99 (ms), server CPU us/request.
declare -A RPS P50 P99 CPU_US

run_point() {
  local test=$1 clients=$2
  local name="$SERVER_NAME-$test-c$clients"
  local out="$RAW_DIR/$name.csv"
  log "$SERVER_NAME: $test, $clients connections, $BENCH_REQUESTS requests"
  local before after
  before=$(cpu_ticks "$SERVER_PID")
  # In the background so that a signal to this script runs the cleanup trap at once (bash defers
  # traps while a foreground child runs).
  taskset -c "$CLIENT_CPUS" "$REDIS_BENCHMARK" -h "$HOST" -p "$PORT" -t "$test" \
    -d "$BENCH_VALUE_SIZE" -r "$BENCH_KEYSPACE" -n "$BENCH_REQUESTS" -c "$clients" -P 1 --csv \
    >"$out" 2>&1 &
  CLIENT_PID=$!
  local rc=0
  wait "$CLIENT_PID" || rc=$?
  CLIENT_PID=""
  ((rc == 0)) || die "redis-benchmark exited with status $rc for $name; see $out"
  # Let the server finish closing the benchmark's connections inside the window.
  sleep 0.5
  after=$(cpu_ticks "$SERVER_PID")
  if grep -Eqi 'error|could not connect' "$out"; then
    grep -Ei 'error|could not connect' "$out" | head -5 >&2
    die "redis-benchmark reported errors for $name; see $out"
  fi
  local label=${test^^}
  local row
  row=$(grep "^\"$label\"," "$out" | tail -n 1) || die "no CSV row for $label in $out"
  # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms",
  # "p99_latency_ms","max_latency_ms"
  local -a f
  IFS=, read -r -a f <<<"${row//\"/}"
  ((${#f[@]} >= 8)) || die "unexpected CSV row in $out: $row"
  awk -v r="${f[1]}" 'BEGIN { exit !(r > 0) }' || die "zero rps for $name"
  local key="$SERVER_NAME|$test|$clients"
  RPS[$key]=${f[1]}
  P50[$key]=${f[4]}
  P99[$key]=${f[6]}
  CPU_US[$key]=$(awk -v t=$((after - before)) -v hz="$CLK_TCK" -v n="$BENCH_REQUESTS" \
    'BEGIN { printf "%.2f", t * 1e6 / hz / n }')
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
point=0
for clients in $BENCH_CLIENTS; do
  for test in $BENCH_TESTS; do
    # Alternate which server goes first, so neither always runs right after the other.
    order=("${SERVERS[@]}")
    if ((point % 2 == 1)); then
      order=()
      for ((i = ${#SERVERS[@]} - 1; i >= 0; i--)); do
        order+=("${SERVERS[i]}")
      done
    fi
    for server in "${order[@]}"; do
      use_server "$server"
      run_point "$test" "$clients"
    done
    point=$((point + 1))
  done
done
for server in "${SERVERS[@]}"; do
  stop_server "$server"
done

LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# --- Report ----------------------------------------------------------------------------------

# ratio A B: A/B with two decimals, "-" when either is missing or B is zero.
ratio() {
  awk -v a="${1:-}" -v b="${2:-}" 'BEGIN {
    if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'
}

HEADERS=(test conns "lavik ops/s" "redis ops/s" "ops ratio l/r" "lavik p50 ms" "lavik p99 ms"
  "redis p50 ms" "redis p99 ms" "lavik CPU us/req" "redis CPU us/req" "CPU ratio l/r")
ROWS=()
for clients in $BENCH_CLIENTS; do
  for test in $BENCH_TESTS; do
    l="lavik|$test|$clients"
    r="redis|$test|$clients"
    ROWS+=("${test^^}|$clients|${RPS[$l]:--}|${RPS[$r]:--}|$(ratio "${RPS[$l]:-}" "${RPS[$r]:-}")|${P50[$l]:--}|${P99[$l]:--}|${P50[$r]:--}|${P99[$r]:--}|${CPU_US[$l]:--}|${CPU_US[$r]:--}|$(ratio "${CPU_US[$l]:-}" "${CPU_US[$r]:-}")")
  done
done

SETTINGS="redis-benchmark -t <test> -d $BENCH_VALUE_SIZE -r $BENCH_KEYSPACE -n $BENCH_REQUESTS -c <conns> -P 1 --csv; key space pre-filled (every GET hits)"

{
  echo
  echo "lavik vs redis-server, $(date '+%Y-%m-%d %H:%M:%S %Z'), $(nproc) CPUs"
  echo "lavik: $LAVIK_VERSION (git $GIT_REV); redis: $REDIS_VERSION; $BENCH_VERSION"
  echo "pinning: $PINNING"
  echo "settings: $SETTINGS"
  echo "load average (other users of the machine skew ops/s): $LOAD_START at start, $LOAD_END at end"
  echo
  printf '%-5s %5s %11s %11s %6s %8s %8s %8s %8s %9s %9s %9s\n' \
    test conns "lavik op/s" "redis op/s" ratio "l p50" "l p99" "r p50" "r p99" "l us/req" \
    "r us/req" "CPU l/r"
  for row in "${ROWS[@]}"; do
    IFS='|' read -r -a f <<<"$row"
    printf '%-5s %5s %11s %11s %6s %8s %8s %8s %8s %9s %9s %9s\n' "${f[@]}"
  done
  echo
  echo "p50/p99 in ms; us/req = server utime+stime (all threads) per request; ratios are lavik/redis"
  echo "(ops: higher is better for lavik; CPU: lower is better for lavik)."
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
  echo "- settings: \`$SETTINGS\`"
  echo "- load average: $LOAD_START at start, $LOAD_END at end (other users of the machine skew ops/s)"
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
  echo "Raw redis-benchmark output: \`compare-$STAMP/raw/\` (not committed)."
} >"$OUT_MD"
