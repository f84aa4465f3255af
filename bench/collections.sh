#!/usr/bin/env bash
# collections.sh: redis-benchmark's collection tests, build/lavik side by side with redis-server.
#
# Two variants, each on a fresh pair of servers:
#   one-key    redis-benchmark's own tests (-t lpush, ...): every write grows ONE key ("mylist",
#              "myset", "myhash", "myzset", "mystream") to about ONE_KEY_REQUESTS elements, members
#              random over ONE_KEY_REQUESTS (-r). Lavik rewrites a collection stored as one record
#              on every change (doc/collections.md), so this variant shows that cost.
#   many-keys  the same commands as custom command lines whose key is "<type>:__rand_int__" with
#              -r MANY_KEYS: many small collections (BENCH_REQUESTS / MANY_KEYS elements each).
# Tests, in this order (pops after pushes, so they find elements): LPUSH RPUSH LRANGE_100 LPOP
# RPOP SADD SPOP HSET ZADD ZPOPMIN XADD. LRANGE_100 is "LRANGE <list> 0 99" as a custom command
# (the built-in lrange_100 first runs its own LPUSH phase, which would mix into its CPU figure).
# XADD uses `-t xadd` where redis-benchmark has it (7.2+); Debian's 7.0.15 has not, so it runs as
# the custom command "XADD mystream * myfield <value>", which is what 7.2's built-in sends.
# Before each test every server gets the command once on a probe key: a server that answers
# "unknown command" is reported "unsupported" for that test (the other is still measured).
#
# Per point: ops/s and p50 from redis-benchmark's CSV, and the server's CPU time per request
# (utime+stime of all threads from /proc/PID/stat around the point, divided by requests). Points
# are measured one server at a time, alternating which goes first. Server on SERVER_CPUS, client
# on CLIENT_CPUS; lavik --threads LAVIK_THREADS (1: one core each, like redis-server).
#
# Environment (defaults in brackets):
#   BENCH_REQUESTS [100000]  ONE_KEY_REQUESTS [BENCH_REQUESTS: -n of the one-key variant]
#   MANY_KEYS [10000]  BENCH_CLIENTS [50]  BENCH_VALUE_SIZE [3]
#   BENCH_VARIANTS ["one-key many-keys"]  BENCH_TESTS [all of the above, lowercase]
#   POINT_TIMEOUT [600: seconds before a point is reported "timeout" and skipped]
#   LAVIK_BIN [build/lavik]  LAVIK_THREADS [1]  SERVER_CPUS [1]  CLIENT_CPUS [0]
#   RESULTS_DIR [bench/results]
# Output: a Markdown table on stdout and in RESULTS_DIR/collections-<stamp>.md. Any failure (a
# server does not start or dies, redis-benchmark errors on a supported command) exits non-zero.
# Servers are tracked by PID and stopped on every exit path.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC2034  # BENCH_NAME and RAW_DIR are read by lib.sh
BENCH_NAME=collections
LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
LAVIK_THREADS=${LAVIK_THREADS:-1}
SERVER_CPUS=${SERVER_CPUS:-1}
CLIENT_CPUS=${CLIENT_CPUS:-0}
BENCH_REQUESTS=${BENCH_REQUESTS:-100000}
ONE_KEY_REQUESTS=${ONE_KEY_REQUESTS:-$BENCH_REQUESTS}
MANY_KEYS=${MANY_KEYS:-10000}
BENCH_CLIENTS=${BENCH_CLIENTS:-50}
BENCH_VALUE_SIZE=${BENCH_VALUE_SIZE:-3}
BENCH_VARIANTS=${BENCH_VARIANTS:-one-key many-keys}
BENCH_TESTS=${BENCH_TESTS:-lpush rpush lrange_100 lpop rpop sadd spop hset zadd zpopmin xadd}
POINT_TIMEOUT=${POINT_TIMEOUT:-600}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

require_tools "$REDIS_SERVER" "$REDIS_CLI" "$REDIS_BENCHMARK" taskset timeout getconf
[[ -x $LAVIK_BIN ]] || die "no $LAVIK_BIN: build first"
for v in BENCH_REQUESTS ONE_KEY_REQUESTS MANY_KEYS BENCH_CLIENTS BENCH_VALUE_SIZE LAVIK_THREADS POINT_TIMEOUT; do
  require_uint "$v" "${!v}"
done
taskset -c "$SERVER_CPUS" true 2>/dev/null || die "SERVER_CPUS=$SERVER_CPUS is not a usable CPU list"
taskset -c "$CLIENT_CPUS" true 2>/dev/null || die "CLIENT_CPUS=$CLIENT_CPUS is not a usable CPU list"

CLK_TCK=$(getconf CLK_TCK)
TMP=$(mktemp -d /tmp/lavik-collections.XXXXXX)
# shellcheck disable=SC2034  # lib.sh names RAW_DIR in its messages
RAW_DIR=$TMP
VALUE=$(printf 'x%.0s' $(seq "$BENCH_VALUE_SIZE"))
declare -A PIDS PORTS
CLIENT_PID=""
cleanup() {
  local rc=$? name
  trap - EXIT INT TERM
  if [[ -n $CLIENT_PID ]]; then
    kill -TERM "$CLIENT_PID" 2>/dev/null || true
    wait "$CLIENT_PID" 2>/dev/null || true
  fi
  for name in "${!PIDS[@]}"; do
    stop_lavik "${PIDS[$name]}"
  done
  rm -rf -- "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_server() {  # name
  local name=$1
  PORT=$(free_port)
  if [[ $name == lavik ]]; then
    rm -rf "$TMP/lavik"
    local pin=()
    # More workers than CPUs in the mask: let the kernel place them inside it.
    if ((LAVIK_THREADS > 1)); then pin=(--no-pin-workers); fi
    lavik_command "$LAVIK_BIN" "$TMP/lavik" "$LAVIK_THREADS" "${pin[@]}"
  else
    rm -rf "$TMP/redis"
    redis_command "$REDIS_SERVER" "$TMP/redis"
  fi
  launch_server "$TMP/$name.out"
  PIDS[$name]=$SERVER_PID
  PORTS[$name]=$PORT
  wait_ready "start of $name"
}

use_server() {
  SERVER_PID=${PIDS[$1]}
  PORT=${PORTS[$1]}
}

stop_servers() {
  local name
  for name in "${!PIDS[@]}"; do
    stop_lavik "${PIDS[$name]}"
    unset "PIDS[$name]"
  done
}

# The command line of test $1 in variant $2, as redis-benchmark arguments: "-t <name>" for a
# built-in test, else the custom command.
HAS_BUILTIN_XADD=0
test_args() {
  local t=$1 variant=$2
  if [[ $variant == one-key ]]; then
    case $t in
      lrange_100) echo "LRANGE mylist 0 99" ;;
      xadd) if ((HAS_BUILTIN_XADD)); then echo "-t xadd"; else echo "XADD mystream * myfield $VALUE"; fi ;;
      *) echo "-t $t" ;;
    esac
    return
  fi
  case $t in
    lpush) echo "LPUSH list:__rand_int__ $VALUE" ;;
    rpush) echo "RPUSH list:__rand_int__ $VALUE" ;;
    lrange_100) echo "LRANGE list:__rand_int__ 0 99" ;;
    lpop) echo "LPOP list:__rand_int__" ;;
    rpop) echo "RPOP list:__rand_int__" ;;
    sadd) echo "SADD set:__rand_int__ element:__rand_int__" ;;
    spop) echo "SPOP set:__rand_int__" ;;
    hset) echo "HSET hash:__rand_int__ element:__rand_int__ $VALUE" ;;
    zadd) echo "ZADD zset:__rand_int__ __rand_int__ element:__rand_int__" ;;
    zpopmin) echo "ZPOPMIN zset:__rand_int__" ;;
    xadd) echo "XADD stream:__rand_int__ * myfield $VALUE" ;;
    *) die "unknown test '$t'" ;;
  esac
}

# The command test $1 sends, once, on a probe key: whether the server knows it.
probe_args() {
  case $1 in
    lpush) echo "LPUSH collections:probe:l $VALUE" ;;
    rpush) echo "RPUSH collections:probe:l $VALUE" ;;
    lrange_100) echo "LRANGE collections:probe:l 0 99" ;;
    lpop) echo "LPOP collections:probe:l" ;;
    rpop) echo "RPOP collections:probe:l" ;;
    sadd) echo "SADD collections:probe:s a" ;;
    spop) echo "SPOP collections:probe:s" ;;
    hset) echo "HSET collections:probe:h f $VALUE" ;;
    zadd) echo "ZADD collections:probe:z 1 a" ;;
    zpopmin) echo "ZPOPMIN collections:probe:z" ;;
    xadd) echo "XADD collections:probe:x * myfield $VALUE" ;;
    *) die "unknown test '$1'" ;;
  esac
}

supported() {  # test -> 0 if the current server knows its command
  local reply
  local -a probe
  read -r -a probe <<<"$(probe_args "$1")"  # an array: the "*" of XADD must not glob
  reply=$(cli "${probe[@]}" 2>&1) || die "redis-cli failed probing $1: $reply"
  cli DEL collections:probe:l collections:probe:s collections:probe:h collections:probe:z \
    collections:probe:x >/dev/null
  [[ $reply != *"unknown command"* ]]
}

declare -A RPS P50 CPU_US
run_point() {  # server variant test
  local server=$1 variant=$2 t=$3 key="$1|$2|$3"
  use_server "$server"
  if ! supported "$t"; then
    RPS[$key]=unsupported
    return
  fi
  local out="$TMP/$server-$variant-$t.csv" before after rc=0
  local -a args
  read -r -a args <<<"$(test_args "$t" "$variant")"
  local requests=$ONE_KEY_REQUESTS range=$ONE_KEY_REQUESTS
  if [[ $variant == many-keys ]]; then
    requests=$BENCH_REQUESTS
    range=$MANY_KEYS
  fi
  log "$server $variant $t: ${args[*]}"
  before=$(cpu_ticks "$SERVER_PID")
  # In the background so that a signal runs the cleanup trap at once.
  timeout "$POINT_TIMEOUT" taskset -c "$CLIENT_CPUS" "$REDIS_BENCHMARK" -h "$HOST" -p "$PORT" \
    -n "$requests" -c "$BENCH_CLIENTS" -r "$range" -d "$BENCH_VALUE_SIZE" -P 1 --csv \
    "${args[@]}" >"$out" 2>&1 &
  CLIENT_PID=$!
  wait "$CLIENT_PID" || rc=$?
  CLIENT_PID=""
  after=$(cpu_ticks "$SERVER_PID")
  alive "$server $variant $t"
  if ((rc == 124)); then
    log "$server $variant $t: not done after $POINT_TIMEOUT s"
    RPS[$key]="timeout"
    return
  fi
  ((rc == 0)) || die "redis-benchmark exited with status $rc ($server $variant $t); $(tail -n 3 "$out")"
  if grep -Eqi 'error|could not connect' "$out"; then
    die "redis-benchmark reported errors ($server $variant $t): $(grep -Ei 'error|could not' "$out" | head -3)"
  fi
  # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",...: the last data row.
  local row
  row=$(grep -v '^"test"' "$out" | grep '^"' | tail -n 1) || die "no CSV row in $out"
  local -a f
  IFS=, read -r -a f <<<"$(sed 's/^"[^"]*",//; s/"//g' <<<"$row")"
  ((${#f[@]} >= 7)) || die "unexpected CSV row ($server $variant $t): $row"
  RPS[$key]=${f[0]}
  P50[$key]=${f[3]}
  CPU_US[$key]=$(calc 't * 1e6 / hz / n' "t=$((after - before))" "hz=$CLK_TCK" "n=$requests")
  CPU_US[$key]=$(printf '%.2f' "${CPU_US[$key]}")
}

ratio() {  # a b -> a/b, "-" unless both are numbers and b > 0
  awk -v a="$1" -v b="$2" 'BEGIN {
    if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b + 0 == 0) print "-"; else printf "%.2f", a / b }'
}

# --- Run -------------------------------------------------------------------------------------

read -r -a TESTS <<<"$BENCH_TESTS"
read -r -a VARIANTS <<<"$BENCH_VARIANTS"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
GIT_REV=$(git_rev)  # now: the results file written at the end would make the tree look dirty
point=0
for variant in "${VARIANTS[@]}"; do
  [[ $variant == one-key || $variant == many-keys ]] || die "unknown variant '$variant'"
  start_server lavik
  start_server redis
  if [[ $variant == one-key ]]; then
    use_server redis
    if "$REDIS_BENCHMARK" -h "$HOST" -p "$PORT" -t xadd -n 1 --csv 2>/dev/null | grep -q '^"XADD'; then
      HAS_BUILTIN_XADD=1
    fi
    cli DEL mystream >/dev/null
  fi
  for t in "${TESTS[@]}"; do
    if ((point % 2 == 0)); then order=(lavik redis); else order=(redis lavik); fi
    point=$((point + 1))
    for server in "${order[@]}"; do
      run_point "$server" "$variant" "$t"
    done
  done
  stop_servers
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# --- Report ----------------------------------------------------------------------------------

ROWS=()
for variant in "${VARIANTS[@]}"; do
  for t in "${TESTS[@]}"; do
    l="lavik|$variant|$t"
    r="redis|$variant|$t"
    ROWS+=("$variant|${t^^}|${RPS[$l]:--}|${RPS[$r]:--}|$(ratio "${RPS[$l]:-}" "${RPS[$r]:-}")|${P50[$l]:--}|${P50[$r]:--}|${CPU_US[$l]:--}|${CPU_US[$r]:--}|$(ratio "${CPU_US[$l]:-}" "${CPU_US[$r]:-}")")
  done
done
STAMP=$(date +%Y%m%d-%H%M%S)
mkdir -p "$RESULTS_DIR"
OUT=$RESULTS_DIR/collections-$STAMP.md
{
  echo "# Collection commands, lavik vs redis-server ($STAMP)"
  echo
  echo "- lavik: $("$LAVIK_BIN" --version 2>&1 | head -n 1) (git $GIT_REV), --threads $LAVIK_THREADS"
  echo "- redis: $("$REDIS_SERVER" --version | grep -o 'v=[^ ]*' | head -n 1); client: $("$REDIS_BENCHMARK" --version 2>&1 | head -n 1)"
  echo "- redis-benchmark -c $BENCH_CLIENTS -P 1 -d $BENCH_VALUE_SIZE; one-key: -n $ONE_KEY_REQUESTS -r $ONE_KEY_REQUESTS (random members of one key); many-keys: -n $BENCH_REQUESTS -r $MANY_KEYS (random keys)"
  echo "- server CPUs $SERVER_CPUS, client CPUs $CLIENT_CPUS; $(nproc) CPUs; load average $LOAD_START at start, $LOAD_END at end"
  echo "- CPU µs/req = server utime+stime (all threads) over the point ÷ requests; ratios are lavik/redis"
  echo "  (ops/s: above 1 is better for lavik; CPU: below 1 is better for lavik)"
  echo
  md_table "variant|test|lavik ops/s|redis ops/s|ops l/r|lavik p50 ms|redis p50 ms|lavik CPU µs/req|redis CPU µs/req|CPU l/r" "${ROWS[@]}"
} >"$OUT"
cat "$OUT"
log "written to $OUT"
