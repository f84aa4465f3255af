#!/usr/bin/env bash
# reshard.sh: reshard throughput (keys/s moved by `redis-cli --cluster reshard`) of a 2-node Lavik
# cluster and a 2-node redis-server cluster holding KEYS keys of VALUE_SIZE bytes, in the same
# run (issue #15's benchmark; doc/cluster.md, doc/migrate.md).
#
# Per server: node A gets all 16384 slots (CLUSTER ADDSLOTSRANGE), node B joins it (CLUSTER
# MEET); A is filled with keys key:0..KEYS-1 by redis-cli --pipe; then `redis-cli --cluster
# reshard` moves SLOTS slots from A to B (MIGRATE ... KEYS batches of PIPELINE keys, redis-cli's
# --cluster-pipeline). Reported: the keys B holds afterwards, the reshard's wall time, keys/s,
# and the server CPU (utime+stime of both nodes from /proc/<pid>/stat) per key moved. Checks that
# no key was lost (DBSIZE of A + B == KEYS) and `redis-cli --cluster check` passes.
#
# Environment (defaults in brackets):
#   LAVIK_BIN [build/lavik]  LAVIK_THREADS [1]  BASE_PORT [7230] (Lavik on BASE_PORT, +1; redis on
#   BASE_PORT+10, +11; the bus is port + 10000)  KEYS [1000000]  VALUE_SIZE [1024]  SLOTS [8192]
#   PIPELINE [100]  SERVER_CPUS [all]  CLIENT_CPUS [all]  RESULTS_DIR [bench/results]
# Output: a Markdown table on stdout and in RESULTS_DIR/reshard-<stamp>.md. Servers are tracked by
# PID and stopped on every exit path.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=reshard
LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
LAVIK_THREADS=${LAVIK_THREADS:-1}
BASE_PORT=${BASE_PORT:-7230}
KEYS=${KEYS:-1000000}
VALUE_SIZE=${VALUE_SIZE:-1024}
SLOTS=${SLOTS:-8192}
PIPELINE=${PIPELINE:-100}
ALL_CPUS=$(nproc --all)
SERVER_CPUS=${SERVER_CPUS:-0-$((ALL_CPUS - 1))}
CLIENT_CPUS=${CLIENT_CPUS:-0-$((ALL_CPUS - 1))}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

require_tools "$REDIS_SERVER" "$REDIS_CLI" taskset
[[ -x $LAVIK_BIN ]] || die "no $LAVIK_BIN: build first"
for v in LAVIK_THREADS BASE_PORT KEYS VALUE_SIZE SLOTS PIPELINE; do
  require_uint "$v" "${!v}"
done
((SLOTS >= 1 && SLOTS <= 16384)) || die "SLOTS must be 1..16384"
CLK_TCK=$(getconf CLK_TCK)

BENCH_TMP=$(mktemp -d /tmp/lavik-reshard-bench.XXXXXX)
RAW_DIR=$BENCH_TMP
track_nodes "$BENCH_TMP"
snapshot_lavik

node_ports() {  # server -> its two ports
  local base=$BASE_PORT
  [[ $1 == redis ]] && base=$((BASE_PORT + 10))
  echo "$base $((base + 1))"
}

start_nodes() {
  local server=$1 p
  for p in $(node_ports "$server"); do
    start_cluster_node "$server" "$p" "$BENCH_TMP/$server-$p" "$LAVIK_RUN"
  done
  local a b i
  read -r a b <<<"$(node_ports "$server")"
  "$REDIS_CLI" -p "$a" CLUSTER ADDSLOTSRANGE 0 16383 >/dev/null
  "$REDIS_CLI" -p "$b" CLUSTER MEET "$HOST" "$a" >/dev/null
  for ((i = 0; i < 300; i++)); do
    if "$REDIS_CLI" -p "$b" CLUSTER INFO | grep -q '^cluster_state:ok' &&
      "$REDIS_CLI" -p "$a" CLUSTER INFO | grep -q '^cluster_known_nodes:2'; then
      return
    fi
    sleep 0.1
  done
  die "$server nodes did not form a cluster in 30 s"
}

load_keys() {  # server: KEYS keys into node A, which owns every slot
  local a
  a=$(node_ports "$1" | cut -d' ' -f1)
  log "$1: loading $KEYS keys of $VALUE_SIZE bytes"
  PORT=$a
  "$PYTHON" - "$KEYS" "$VALUE_SIZE" <<'EOF' | pipe_load "$BENCH_TMP/$1-load.txt" "$KEYS"
import sys
n, size = int(sys.argv[1]), int(sys.argv[2])
value = b"v" * size
out = sys.stdout.buffer
batch = []
for i in range(n):
    k = b"key:%d" % i
    batch.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, size, value))
    if len(batch) == 1000:
        out.write(b"".join(batch))
        batch = []
out.write(b"".join(batch))
EOF
  local got
  got=$("$REDIS_CLI" -p "$a" DBSIZE)
  [[ $got == "$KEYS" ]] || die "$1: DBSIZE $got after loading $KEYS keys"
}

node_id() { "$REDIS_CLI" -p "$1" CLUSTER MYID; }

declare -A MOVED SECONDS_TAKEN RATE CPU_US
reshard() {
  local server=$1 a b from to t0 t1 c0 c1 out rc=0
  read -r a b <<<"$(node_ports "$server")"
  from=$(node_id "$a") to=$(node_id "$b")
  out=$BENCH_TMP/$server-reshard.txt
  log "$server: moving $SLOTS slots from :$a to :$b (--cluster-pipeline $PIPELINE)"
  c0=$(($(cpu_ticks "${NODE_PIDS["$server $a"]}") + $(cpu_ticks "${NODE_PIDS["$server $b"]}")))
  t0=$(date +%s.%N)
  taskset -c "$CLIENT_CPUS" "$REDIS_CLI" --cluster reshard "$HOST:$a" --cluster-from "$from" \
    --cluster-to "$to" --cluster-slots "$SLOTS" --cluster-pipeline "$PIPELINE" --cluster-yes \
    >"$out" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  c1=$(($(cpu_ticks "${NODE_PIDS["$server $a"]}") + $(cpu_ticks "${NODE_PIDS["$server $b"]}")))
  ((rc == 0)) || die "$server reshard failed ($rc): $(tail -5 "$out")"
  local na nb
  na=$("$REDIS_CLI" -p "$a" DBSIZE) nb=$("$REDIS_CLI" -p "$b" DBSIZE)
  ((na + nb == KEYS)) || die "$server: $na + $nb keys after the reshard, $KEYS before"
  ((nb > 0)) || die "$server: no key moved"
  "$REDIS_CLI" --cluster check "$HOST:$a" >"$BENCH_TMP/$server-check.txt" 2>&1 ||
    die "$server cluster check failed: $(tail -5 "$BENCH_TMP/$server-check.txt")"
  MOVED[$server]=$nb
  SECONDS_TAKEN[$server]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  RATE[$server]=$(awk -v n="$nb" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / (b - a) }')
  CPU_US[$server]=$(awk -v t=$((c1 - c0)) -v hz="$CLK_TCK" -v n="$nb" \
    'BEGIN { printf "%.1f", t * 1e6 / hz / n }')
  log "$server: $nb keys in ${SECONDS_TAKEN[$server]} s (${RATE[$server]} keys/s)"
}

for server in lavik redis; do
  start_nodes "$server"
  load_keys "$server"
  reshard "$server"
done

ratio() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.2f", (y > 0 ? x / y : 0) }'; }
STAMP=$(date +%Y%m%d-%H%M%S)
mkdir -p "$RESULTS_DIR"
REPORT=$RESULTS_DIR/reshard-$STAMP.md
{
  echo "# redis-cli --cluster reshard: 2 Lavik nodes vs 2 redis-server nodes"
  echo
  echo "$(date '+%Y-%m-%d %H:%M:%S %Z'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
    "git $(git_rev "$ROOT"); $LAVIK_BIN_ID; lavik --threads $LAVIK_THREADS per node;" \
    "$KEYS keys × $VALUE_SIZE B on node A, $SLOTS slots moved to node B, --cluster-pipeline" \
    "$PIPELINE; server CPU = both nodes' utime+stime per key moved."
  echo
  echo "| | keys moved | seconds | keys/s | server CPU µs/key |"
  echo "|---|---|---|---|---|"
  for server in lavik redis; do
    echo "| $server | ${MOVED[$server]} | ${SECONDS_TAKEN[$server]} | ${RATE[$server]} |" \
      "${CPU_US[$server]} |"
  done
  echo "| lavik / redis | | | $(ratio "${RATE[lavik]}" "${RATE[redis]}") |" \
    "$(ratio "${CPU_US[lavik]}" "${CPU_US[redis]}") |"
} | tee "$REPORT"
log "report: $REPORT"
