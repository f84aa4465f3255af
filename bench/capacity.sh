#!/usr/bin/env bash
# capacity.sh: lavik holding a data set 8x larger than the memory it is allowed to use.
#
# Runs build/lavik inside a cgroup v1 memory cgroup limited to MEM_LIMIT (1 GiB): a wrapper shell
# writes its own pid into the cgroup's cgroup.procs and then execs lavik, so the server is charged
# from its first byte. Loads KEYS keys x VALUE_SIZE bytes (8M x 1 KiB = 8 GiB of values) named
# key:%012d, the names redis-benchmark -r uses, each value the key repeated (bench/loadgen.py), by
# streaming RESP from a generator into redis-cli --pipe. Then:
#   - checks DBSIZE == KEYS and SAMPLES random values (STRLEN and content);
#   - reports RSS per key, the load rate, and the generator's own rate (it must be well above);
#   - runs redis-benchmark GET then SET (-r KEYS -d VALUE_SIZE, every GET hits a loaded key) and
#     reports ops/s, p50/p99, lavik CPU us/request, the value cache hit ratio and device reads
#     per GET from INFO # Storage deltas over the GET run;
#   - records the cgroup's memory.failcnt, memory.max_usage_in_bytes and OOM kills;
#   - stops lavik and runs fio random 4K reads (direct, io_uring, iodepth 32) on a FIO_SIZE file
#     on the same file system: the device's ceiling to compare lavik's GET rate with.
# Before loading, free disk is checked (df): with less than twice the data set (plus the fio
# file) free, KEYS is scaled down and the report says so. fio is installed with apt-get if
# missing. Must run as root (cgroups, apt-get).
#
# Pinning: lavik and fio on SERVER_CPUS (default 1); generator, redis-cli and redis-benchmark on
# CLIENT_CPUS (default 0).
#
# Environment (defaults in brackets):
#   KEYS [8000000]           VALUE_SIZE [1024]      MEM_LIMIT [1G]        CACHE_MB [256]
#   LAVIK_THREADS [1]        SERVER_CPUS [1]        CLIENT_CPUS [0]       SAMPLES [100]
#   BENCH_REQUESTS [200000]  BENCH_CLIENTS [50]     FIO_SIZE [8G]         FIO_RUNTIME [20]
#   LAVIK_BIN [build/lavik: copied to BENCH_TMP first, so a rebuild mid-run does not matter]
#   RESULTS_DIR [bench/results]
#   BENCH_TMP [bench/tmp-<pid>: data file and fio file; created and deleted by the script]
#   KEEP_TMP [0: delete BENCH_TMP on exit — it holds the multi-GiB data file]
#
# Output: a table on stdout and as Markdown in RESULTS_DIR/capacity-<stamp>.md; lavik's log,
# redis-benchmark and fio output in RESULTS_DIR/capacity-<stamp>/raw/ (git-ignored). A failed
# check exits non-zero; the server is stopped, the cgroup removed and BENCH_TMP deleted on every
# exit path.
set -euo pipefail

BENCH_NAME=capacity
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
KEYS=${KEYS:-8000000}
VALUE_SIZE=${VALUE_SIZE:-1024}
MEM_LIMIT=${MEM_LIMIT:-1G}
CACHE_MB=${CACHE_MB:-256}
LAVIK_THREADS=${LAVIK_THREADS:-1}
SERVER_CPUS=${SERVER_CPUS:-1}
CLIENT_CPUS=${CLIENT_CPUS:-0}
SAMPLES=${SAMPLES:-100}
BENCH_REQUESTS=${BENCH_REQUESTS:-200000}
BENCH_CLIENTS=${BENCH_CLIENTS:-50}
FIO_SIZE=${FIO_SIZE:-8G}
FIO_RUNTIME=${FIO_RUNTIME:-20}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
BENCH_TMP=${BENCH_TMP:-$ROOT/bench/tmp-$$}
KEEP_TMP=${KEEP_TMP:-0}
CG_ROOT=${CG_ROOT:-/sys/fs/cgroup/memory}
CG=$CG_ROOT/lavik-bench-$$

require_tools "$REDIS_CLI" "$REDIS_BENCHMARK" "$PYTHON" taskset df awk numfmt getconf
[[ -x $LAVIK_BIN ]] || die "$LAVIK_BIN not built (cmake --build build)"
for v in KEYS VALUE_SIZE LAVIK_THREADS SAMPLES BENCH_REQUESTS BENCH_CLIENTS FIO_RUNTIME; do
  require_uint "$v" "${!v}"
done
[[ $CACHE_MB =~ ^[0-9]+$ ]] || die "CACHE_MB must be a non-negative integer"
# The values repeat the 16-byte key plus ';': shorter values still check, but less of the key.
((VALUE_SIZE >= 17)) || die "VALUE_SIZE must be at least 17 so values carry their key"
MEM_LIMIT_BYTES=$(numfmt --from=iec "$MEM_LIMIT") || die "MEM_LIMIT '$MEM_LIMIT' is not a size"
FIO_SIZE_BYTES=$(numfmt --from=iec "$FIO_SIZE") || die "FIO_SIZE '$FIO_SIZE' is not a size"
taskset -c "$SERVER_CPUS" true 2>/dev/null || die "SERVER_CPUS=$SERVER_CPUS is not a usable CPU list"
taskset -c "$CLIENT_CPUS" true 2>/dev/null || die "CLIENT_CPUS=$CLIENT_CPUS is not a usable CPU list"
(($(id -u) == 0)) || die "must run as root (memory cgroup, apt-get)"
[[ -f $CG_ROOT/memory.limit_in_bytes ]] || die "no cgroup v1 memory controller at $CG_ROOT"
[[ ! -e $BENCH_TMP ]] || die "$BENCH_TMP already exists"
[[ ! -e $CG ]] || die "$CG already exists"

CLK_TCK=$(getconf CLK_TCK)
STAMP=$(date +%Y%m%d-%H%M%S)
OUT_MD=$RESULTS_DIR/capacity-$STAMP.md
RAW_DIR=$RESULTS_DIR/capacity-$STAMP/raw
mkdir -p "$RAW_DIR"

SERVER_PID=""
PORT=""
CLIENT_PID=""
FIO_PID=""
CG_CREATED=0
TMP_CREATED=0

cg_read() { cat "$CG/$1"; }

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  local pid
  for pid in "$CLIENT_PID" "$FIO_PID"; do
    if [[ -n $pid ]]; then
      kill -TERM "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  if [[ -n $SERVER_PID ]] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
    log "lavik (pid $SERVER_PID) is not running (crashed or killed); its log is kept in $RAW_DIR"
  fi
  stop_lavik "$SERVER_PID"
  if [[ -n $LAST_EXIT && $LAST_EXIT != 0 && $LAST_EXIT != 143 ]]; then
    log "lavik exit status: $LAST_EXIT"
  fi
  if [[ -f $BENCH_TMP/logs/lavik.log ]]; then
    cp "$BENCH_TMP/logs/lavik.log" "$RAW_DIR/lavik.log" || true
  fi
  if ((CG_CREATED)); then
    {
      for f in memory.failcnt memory.max_usage_in_bytes memory.usage_in_bytes memory.oom_control \
        memory.stat; do
        echo "== $f"
        cat "$CG/$f" 2>/dev/null || true
      done
    } >"$RAW_DIR/cgroup-at-exit.txt" 2>&1 || true
    # The cgroup can be removed once its last task is reaped; retry for a few seconds.
    local i
    for ((i = 0; i < 50; i++)); do
      rmdir "$CG" 2>/dev/null && break
      sleep 0.1
    done
    [[ ! -d $CG ]] || log "WARNING: could not remove cgroup $CG (tasks: $(tr '\n' ' ' <"$CG/cgroup.procs" 2>/dev/null))"
  fi
  if ((TMP_CREATED)); then
    if [[ $KEEP_TMP == 1 ]]; then
      log "temporary files kept in $BENCH_TMP ($(du -sh "$BENCH_TMP" 2>/dev/null | cut -f1)); delete them by hand"
    else
      rm -rf -- "$BENCH_TMP"
    fi
  fi
  ((rc == 0)) || log "raw output, lavik's log and the cgroup's counters in $RAW_DIR"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$BENCH_TMP"
TMP_CREATED=1
snapshot_lavik

# --- Disk space and fio ----------------------------------------------------------------------

# On disk a key costs its value, its 16-byte key and a record header (~32 bytes, see
# index-memory's bytes_live); 64 bytes of slack per key covers header and padding.
PER_KEY_DISK=$((VALUE_SIZE + 64))
AVAIL=$(($(df --output=avail -B1 "$BENCH_TMP" | tail -n 1)))
REQUESTED_KEYS=$KEYS
SCALE_NOTE=""
if ((AVAIL < 2 * KEYS * PER_KEY_DISK + FIO_SIZE_BYTES)); then
  KEYS=$(((AVAIL - FIO_SIZE_BYTES) / (2 * PER_KEY_DISK) / 100000 * 100000))
  ((KEYS >= 100000)) ||
    die "only $(human_bytes "$AVAIL") free under $BENCH_TMP: not enough for even 100000 keys"
  SCALE_NOTE="scaled down from $REQUESTED_KEYS to $KEYS keys: $(human_bytes "$AVAIL") free under $BENCH_TMP, want 2x the data set ($(human_bytes $((REQUESTED_KEYS * PER_KEY_DISK)))) + the fio file"
  log "WARNING: $SCALE_NOTE"
fi
DATA_BYTES=$((KEYS * VALUE_SIZE))
log "data set: $KEYS keys x $VALUE_SIZE bytes = $(human_bytes "$DATA_BYTES") of values; $(human_bytes "$AVAIL") free on disk"

if ! command -v fio >/dev/null; then
  log "installing fio (apt-get install -y fio)"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y fio >"$RAW_DIR/apt-fio.txt" 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update >>"$RAW_DIR/apt-fio.txt" 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y fio >>"$RAW_DIR/apt-fio.txt" 2>&1 ||
      die "could not install fio; see $RAW_DIR/apt-fio.txt"
  fi
fi
FIO_VERSION=$(fio --version)

# --- Server in the cgroup --------------------------------------------------------------------

mkdir "$CG"
CG_CREATED=1
echo "$MEM_LIMIT_BYTES" >"$CG/memory.limit_in_bytes"
[[ $(cg_read memory.limit_in_bytes) == "$MEM_LIMIT_BYTES" ]] ||
  die "cgroup limit reads back as $(cg_read memory.limit_in_bytes), want $MEM_LIMIT_BYTES"

PORT=$(free_port)
PIN=()
if ((LAVIK_THREADS > 1)); then
  PIN=(--no-pin-workers)
fi
lavik_command "$LAVIK_RUN" "$BENCH_TMP" "$LAVIK_THREADS" --cache-mb "$CACHE_MB" "${PIN[@]}"
CMDLINE="taskset -c $SERVER_CPUS ${SERVER_CMD[*]}"
log "starting in $CG (limit $MEM_LIMIT): $CMDLINE"
# The wrapper joins the cgroup, then execs taskset, which execs lavik: one pid throughout, so $!
# is lavik's pid and every page lavik touches is charged to the cgroup.
# shellcheck disable=SC2016
sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" taskset -c "$SERVER_CPUS" "${SERVER_CMD[@]}" \
  >"$RAW_DIR/lavik-stdout.log" 2>&1 &
SERVER_PID=$!
wait_ready start-up
[[ $(readlink "/proc/$SERVER_PID/exe") == "$(readlink -f "$LAVIK_RUN")" ]] ||
  die "pid $SERVER_PID is $(readlink "/proc/$SERVER_PID/exe"), not lavik"
grep -q ":memory:/${CG#"$CG_ROOT"/}\$" "/proc/$SERVER_PID/cgroup" ||
  die "lavik is not in $CG: $(grep memory "/proc/$SERVER_PID/cgroup")"
sleep 2
RSS_EMPTY=$(rss_bytes "$SERVER_PID")
CG_EMPTY=$(cg_read memory.usage_in_bytes)
log "lavik pid $SERVER_PID in $CG; empty RSS $(human_bytes "$RSS_EMPTY")"

LAVIK_VERSION=$("$LAVIK_RUN" --version 2>&1 | head -n 1)
BENCH_VERSION=$("$REDIS_BENCHMARK" --version 2>&1 | head -n 1)
GIT_REV=$(git_rev)
LOAD_AVG_START=$(cut -d' ' -f1-3 /proc/loadavg)

# --- Load ------------------------------------------------------------------------------------

# The generator alone, for scale: the load rate is only meaningful well below this.
GEN_N=$((KEYS < 500000 ? KEYS : 500000))
T0=$(date +%s.%N)
taskset -c "$CLIENT_CPUS" "$PYTHON" "$ROOT/bench/loadgen.py" resp "$GEN_N" "$VALUE_SIZE" >/dev/null
T1=$(date +%s.%N)
GEN_RATE=$(calc 'sprintf("%.0f", n / (t1 - t0))' n="$GEN_N" t1="$T1" t0="$T0")
log "generator alone: $GEN_RATE keys/s"

log "loading $KEYS keys x $VALUE_SIZE bytes (generator | redis-cli --pipe)"
T0=$(date +%s.%N)
(
  taskset -c "$CLIENT_CPUS" "$PYTHON" "$ROOT/bench/loadgen.py" resp "$KEYS" "$VALUE_SIZE" |
    pipe_load "$RAW_DIR/load.txt" "$KEYS"
) &
CLIENT_PID=$!
wait "$CLIENT_PID" || { alive load; die "load failed; see $RAW_DIR/load.txt"; }
CLIENT_PID=""
T1=$(date +%s.%N)
alive load
LOAD_S=$(calc 'sprintf("%.1f", t1 - t0)' t1="$T1" t0="$T0")
LOAD_RATE=$(calc 'sprintf("%.0f", n / s)' n="$KEYS" s="$LOAD_S")
LOAD_MBS=$(calc 'sprintf("%.0f", n * v / s / 1048576)' n="$KEYS" v="$VALUE_SIZE" s="$LOAD_S")
log "loaded in $LOAD_S s: $LOAD_RATE keys/s, $LOAD_MBS MiB/s of values"

DBSIZE=$(cli DBSIZE)
[[ $DBSIZE == "$KEYS" ]] || die "DBSIZE after load is '$DBSIZE', want $KEYS"
VERIFY=$("$PYTHON" "$ROOT/bench/loadgen.py" verify "$PORT" "$KEYS" "$VALUE_SIZE" "$SAMPLES") ||
  die "value check failed: $VERIFY"
log "DBSIZE $DBSIZE; values checked: $VERIFY"
sleep 2
alive "the post-load pause"
RSS_LOADED=$(rss_bytes "$SERVER_PID")
HWM_LOADED=$(rss_bytes "$SERVER_PID" VmHWM)
INFO_LOADED=$(cli INFO)
CG_LOADED=$(cg_read memory.usage_in_bytes)

# --- redis-benchmark -------------------------------------------------------------------------

# Results keyed by test: rps, p50, p99, CPU us/request, and the INFO before/after the run.
declare -A RPS P50 P99 CPU_US INFO_BEFORE INFO_AFTER RSS_AFTER

bench_run() {
  local test=$1
  local out="$RAW_DIR/bench-$test.csv"
  log "redis-benchmark -t $test -r $KEYS -d $VALUE_SIZE -c $BENCH_CLIENTS -n $BENCH_REQUESTS"
  INFO_BEFORE[$test]=$(cli INFO)
  local before after
  before=$(cpu_ticks "$SERVER_PID")
  taskset -c "$CLIENT_CPUS" "$REDIS_BENCHMARK" -h "$HOST" -p "$PORT" -t "$test" -r "$KEYS" \
    -d "$VALUE_SIZE" -c "$BENCH_CLIENTS" -n "$BENCH_REQUESTS" -P 1 --csv >"$out" 2>&1 &
  CLIENT_PID=$!
  local rc=0
  wait "$CLIENT_PID" || rc=$?
  CLIENT_PID=""
  alive "redis-benchmark $test"
  ((rc == 0)) || die "redis-benchmark exited with status $rc for $test; see $out"
  sleep 0.5
  after=$(cpu_ticks "$SERVER_PID")
  INFO_AFTER[$test]=$(cli INFO)
  RSS_AFTER[$test]=$(rss_bytes "$SERVER_PID")
  if grep -Eqi 'error|could not connect' "$out"; then
    grep -Ei 'error|could not connect' "$out" | head -5 >&2
    die "redis-benchmark reported errors for $test; see $out"
  fi
  local row label=${test^^}
  row=$(grep "^\"$label\"," "$out" | tail -n 1) || die "no CSV row for $label in $out"
  local -a f
  IFS=, read -r -a f <<<"${row//\"/}"
  ((${#f[@]} >= 8)) || die "unexpected CSV row in $out: $row"
  RPS[$test]=${f[1]}
  P50[$test]=${f[4]}
  P99[$test]=${f[6]}
  CPU_US[$test]=$(calc 'sprintf("%.2f", t * 1e6 / hz / n)' t=$((after - before)) hz="$CLK_TCK" \
    n="$BENCH_REQUESTS")
}

# delta TEST FIELD: FIELD's INFO value after TEST's run minus before it.
delta() {
  echo $(($(info_get "${INFO_AFTER[$1]}" "$2") - $(info_get "${INFO_BEFORE[$1]}" "$2")))
}

# GET first, while every value is still the loaded one, then SET (which overwrites random keys
# with redis-benchmark's payload).
bench_run get
CHECK_FAILURES=()
GET_MISSES=$(delta get keyspace_misses)
GET_HITS=$(delta get keyspace_hits)
((GET_MISSES == 0)) || CHECK_FAILURES+=("$GET_MISSES of the GETs missed loaded keys")
C_HITS=$(delta get cache_hits)
C_MISSES=$(delta get cache_misses)
DEV_READS=$(delta get device_reads)
DEV_BYTES=$(delta get device_bytes_read)
CACHE_RATIO=$(calc '(h + m) ? sprintf("%.3f", h / (h + m)) : "-"' h="$C_HITS" m="$C_MISSES")
bench_run set
SET_DEV_WRITES=$(delta set device_writes)
SET_DEV_BYTES=$(delta set device_bytes_written)

DBSIZE_END=$(cli DBSIZE)
[[ $DBSIZE_END == "$KEYS" ]] || die "DBSIZE after the benchmarks is '$DBSIZE_END', want $KEYS"
HWM_END=$(rss_bytes "$SERVER_PID" VmHWM)
CG_FAILCNT=$(cg_read memory.failcnt)
CG_MAX=$(cg_read memory.max_usage_in_bytes)
CG_USAGE=$(cg_read memory.usage_in_bytes)
CG_OOM_KILLS=$(awk '$1 == "oom_kill" { print $2 }' "$CG/memory.oom_control")
CG_OOM_KILLS=${CG_OOM_KILLS:-n/a}
CG_STAT_RSS=$(awk '$1 == "total_rss" { print $2 }' "$CG/memory.stat")
CG_STAT_CACHE=$(awk '$1 == "total_cache" { print $2 }' "$CG/memory.stat")

stop_lavik "$SERVER_PID"
SERVER_PID=""
[[ $LAST_EXIT == 0 ]] || die "lavik exited with status $LAST_EXIT on SIGTERM"
cp "$BENCH_TMP/logs/lavik.log" "$RAW_DIR/lavik.log"
WARNINGS=$(log_warnings "$RAW_DIR/lavik.log")
# The data file is no longer needed: free its space before fio lays out its own file.
DATA_FILE_SIZE=$(stat -c %s "$BENCH_TMP/data/lavik.data")
rm -f -- "$BENCH_TMP/data/lavik.data"

# --- fio: the device's random-read ceiling ---------------------------------------------------

run_fio() {
  local engine=$1
  taskset -c "$SERVER_CPUS" fio --name=randread --filename="$BENCH_TMP/fio.dat" \
    --size="$FIO_SIZE" --direct=1 --ioengine="$engine" --rw=randread --bs=4k --iodepth=32 \
    --numjobs=1 --runtime="$FIO_RUNTIME" --time_based --group_reporting \
    --output-format=json --output="$RAW_DIR/fio-$engine.json" >"$RAW_DIR/fio-$engine.log" 2>&1 &
  FIO_PID=$!
  local rc=0
  wait "$FIO_PID" || rc=$?
  FIO_PID=""
  return "$rc"
}
FIO_ENGINE=io_uring
log "fio: random 4K reads, direct, $FIO_ENGINE, iodepth 32, $FIO_SIZE file, ${FIO_RUNTIME}s"
if ! run_fio io_uring; then
  log "fio with io_uring failed ($(tail -n 1 "$RAW_DIR/fio-io_uring.log")); retrying with libaio"
  FIO_ENGINE=libaio
  run_fio libaio || die "fio failed; see $RAW_DIR/fio-libaio.log"
fi
read -r FIO_IOPS FIO_MBS FIO_P50 FIO_P99 < <("$PYTHON" - "$RAW_DIR/fio-$FIO_ENGINE.json" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
# fio may print notes before the JSON object.
job = json.loads(text[text.index("{"):])["jobs"][0]["read"]
pct = job["clat_ns"]["percentile"]
print("%.0f %.1f %.3f %.3f" % (job["iops"], job["bw_bytes"] / 1048576,
                               pct["50.000000"] / 1e6, pct["99.000000"] / 1e6))
EOF
)
[[ -n ${FIO_IOPS:-} ]] || die "could not parse fio output $RAW_DIR/fio-$FIO_ENGINE.json"
rm -f -- "$BENCH_TMP/fio.dat"
LOAD_AVG_END=$(cut -d' ' -f1-3 /proc/loadavg)

# --- Report ----------------------------------------------------------------------------------

per_key() { calc 'sprintf("%.1f", b / n)' b="$1" n="$KEYS"; }
CACHE_BYTES=$(info_get "$INFO_LOADED" used_memory_cache)
IDX=$(info_get "$INFO_LOADED" used_memory_index)
if ((CG_FAILCNT > 0)); then
  CG_HIT="yes: failcnt $CG_FAILCNT"
else
  CG_HIT="no (failcnt 0)"
fi
ROWS=(
  "keys (DBSIZE after load / after benchmarks)|$DBSIZE / $DBSIZE_END"
  "values|$VALUE_SIZE bytes each, $(human_bytes "$DATA_BYTES") in all ($(calc 'sprintf("%.1f", d / l)' d="$DATA_BYTES" l="$MEM_LIMIT_BYTES")x the memory limit)"
  "data file size (bytes_used / bytes_live after load)|$(human_bytes "$DATA_FILE_SIZE") ($(human_bytes "$(info_get "$INFO_LOADED" bytes_used)") / $(human_bytes "$(info_get "$INFO_LOADED" bytes_live)"))"
  "sampled values checked|${VERIFY#ok } (STRLEN + content)"
  "load|$LOAD_S s: $LOAD_RATE keys/s, $LOAD_MBS MiB/s (generator alone: $GEN_RATE keys/s)"
  "RSS empty / loaded|$(human_bytes "$RSS_EMPTY") / $(human_bytes "$RSS_LOADED")"
  "RSS bytes/key (RSS / keys)|$(per_key "$RSS_LOADED")"
  "RSS bytes/key ((RSS - RSS empty) / keys)|$(per_key $((RSS_LOADED - RSS_EMPTY)))"
  "RSS bytes/key without the value cache|$(per_key $((RSS_LOADED - CACHE_BYTES))) (used_memory_cache $(human_bytes "$CACHE_BYTES"))"
  "used_memory_index bytes/key|$(per_key "$IDX") ($(human_bytes "$IDX"))"
  "RSS after the GET / SET runs|$(human_bytes "${RSS_AFTER[get]}") / $(human_bytes "${RSS_AFTER[set]}")"
  "peak RSS (VmHWM) after load / at end|$(human_bytes "$HWM_LOADED") / $(human_bytes "$HWM_END")"
  "GET ops/s (p50 / p99 ms)|${RPS[get]} (${P50[get]} / ${P99[get]})"
  "SET ops/s (p50 / p99 ms)|${RPS[set]} (${P50[set]} / ${P99[set]})"
  "lavik CPU us/request GET / SET|${CPU_US[get]} / ${CPU_US[set]}"
  "GET: keyspace hits / misses|$GET_HITS / $GET_MISSES"
  "GET: value cache hit ratio|$CACHE_RATIO (cache_hits $C_HITS, cache_misses $C_MISSES)"
  "GET: device reads per GET, bytes per read|$(calc 'sprintf("%.3f", r / n)' r="$DEV_READS" n="$BENCH_REQUESTS"), $(calc 'r ? sprintf("%.0f", b / r) : "-"' b="$DEV_BYTES" r="$DEV_READS")"
  "SET: device writes, bytes written|$SET_DEV_WRITES, $(human_bytes "$SET_DEV_BYTES")"
  "fio randread 4K QD32 ($FIO_ENGINE): IOPS|$FIO_IOPS ($FIO_MBS MiB/s, clat p50 $FIO_P50 ms, p99 $FIO_P99 ms)"
  "lavik GET ops/s / fio IOPS|$(calc 'sprintf("%.2f", g / f)' g="${RPS[get]}" f="$FIO_IOPS")"
  "cgroup limit|$MEM_LIMIT ($MEM_LIMIT_BYTES)"
  "cgroup hit its limit|$CG_HIT"
  "cgroup max_usage_in_bytes|$CG_MAX ($(human_bytes "$CG_MAX"))"
  "cgroup usage empty / loaded / end|$(human_bytes "$CG_EMPTY") / $(human_bytes "$CG_LOADED") / $(human_bytes "$CG_USAGE") (end: rss $(human_bytes "$CG_STAT_RSS"), page cache $(human_bytes "$CG_STAT_CACHE"))"
  "cgroup OOM kills|$CG_OOM_KILLS"
)
ROWS+=("lavik log warnings|$(count_lines "$WARNINGS")")
for f in "${CHECK_FAILURES[@]}"; do
  ROWS+=("CHECK FAILED|$f")
done

PINNING="lavik and fio on CPUs $SERVER_CPUS (--threads $LAVIK_THREADS), generator + redis-cli + redis-benchmark on CPUs $CLIENT_CPUS"
SETTINGS="redis-benchmark -t <get|set> -r $KEYS -d $VALUE_SIZE -c $BENCH_CLIENTS -n $BENCH_REQUESTS -P 1 --csv (GET run first)"
{
  echo
  echo "lavik capacity in a $MEM_LIMIT memory cgroup, $(date '+%Y-%m-%d %H:%M:%S %Z'), $(nproc) CPUs"
  echo "lavik: $LAVIK_VERSION (git $GIT_REV); binary: $LAVIK_BIN_ID"
  echo "tools: $BENCH_VERSION; $FIO_VERSION"
  echo "server: $CMDLINE"
  echo "pinning: $PINNING"
  echo "settings: $SETTINGS"
  [[ -z $SCALE_NOTE ]] || echo "NOTE: $SCALE_NOTE"
  echo "load average: $LOAD_AVG_START at start, $LOAD_AVG_END at end"
  echo
  text_table "${ROWS[@]}"
  print_warnings "$WARNINGS" text
  echo
  echo "Markdown: $OUT_MD"
}

{
  echo "# lavik capacity in a $MEM_LIMIT memory cgroup, $(date '+%Y-%m-%d %H:%M:%S %Z')"
  echo
  echo "- lavik: $LAVIK_VERSION (git $GIT_REV); binary: $LAVIK_BIN_ID"
  echo "- client: $BENCH_VERSION; $FIO_VERSION"
  echo "- machine: $(nproc) CPUs, $(uname -r); file system of the data: $(df --output=source,fstype "$BENCH_TMP" | tail -n 1)"
  echo "- server: \`$CMDLINE\`, started inside cgroup v1 memory cgroup with memory.limit_in_bytes=$MEM_LIMIT_BYTES"
  echo "- pinning: $PINNING"
  echo "- load: \`bench/loadgen.py resp $KEYS $VALUE_SIZE | redis-cli --pipe\` (value = key + ';' repeated)"
  echo "- benchmark: \`$SETTINGS\`"
  echo "- fio: \`--rw=randread --bs=4k --iodepth=32 --direct=1 --ioengine=$FIO_ENGINE --size=$FIO_SIZE --runtime=$FIO_RUNTIME\`, run after lavik stopped"
  [[ -z $SCALE_NOTE ]] || echo "- NOTE: $SCALE_NOTE"
  echo "- load average: $LOAD_AVG_START at start, $LOAD_AVG_END at end"
  echo
  md_table "measure|value" "${ROWS[@]}"
  print_warnings "$WARNINGS" md
  echo
  echo "Raw output, lavik's log and fio JSON: \`capacity-$STAMP/raw/\` (not committed)."
} >"$OUT_MD"

((${#CHECK_FAILURES[@]} == 0)) || die "${CHECK_FAILURES[*]}"
