#!/usr/bin/env bash
# index-memory.sh: DRAM cost of lavik's key index, in bytes per key.
#
# Starts build/lavik with the value cache off (--cache-mb 0) so that what stays in DRAM is the
# index plus fixed costs (buffers, code, allocator), records the RSS of the empty server, loads
# KEYS distinct keys with small values (key:%012d, the names redis-benchmark uses) through
# redis-cli --pipe from a RESP file generated beforehand (so the generator is not timed), checks
# DBSIZE == KEYS and sampled values, and reports:
#   - RSS (VmRSS of /proc/PID/status) per key, absolute and above the empty server's RSS;
#   - INFO used_memory_index per key, and the rest of INFO # Memory;
#   - the peak RSS (VmHWM) during the load;
#   - the same after a restart, when the index is rebuilt by recovery from the data file.
# Target: at most TARGET_BYTES_PER_KEY (24) bytes of RSS per key at 10M+ keys.
#
# Pinning: lavik on SERVER_CPUS (default 1), redis-cli on CLIENT_CPUS (default 0).
#
# Environment (defaults in brackets):
#   KEYS [10000000]          VALUE_SIZE [16]        LAVIK_THREADS [1]     CACHE_MB [0]
#   SERVER_CPUS [1]          CLIENT_CPUS [0]        TARGET_BYTES_PER_KEY [24]
#   SAMPLES [100]            RESTART [1: also measure after a restart; 0 skips it]
#   LAVIK_BIN [build/lavik: copied to BENCH_TMP first, so a rebuild mid-run does not matter]
#   RESULTS_DIR [bench/results]
#   BENCH_TMP [bench/tmp-<pid>: data file and RESP file; created and deleted by the script]
#   KEEP_TMP [0: delete BENCH_TMP on exit]
#
# Output: a table on stdout and as Markdown in RESULTS_DIR/index-memory-<stamp>.md; lavik's log
# and the redis-cli output in RESULTS_DIR/index-memory-<stamp>/raw/ (git-ignored). Any failed
# check exits non-zero; the server is stopped and BENCH_TMP removed on every exit path. Missing
# the target is reported, not a failure.
set -euo pipefail

BENCH_NAME=index-memory
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
KEYS=${KEYS:-10000000}
VALUE_SIZE=${VALUE_SIZE:-16}
LAVIK_THREADS=${LAVIK_THREADS:-1}
CACHE_MB=${CACHE_MB:-0}
SERVER_CPUS=${SERVER_CPUS:-1}
CLIENT_CPUS=${CLIENT_CPUS:-0}
TARGET_BYTES_PER_KEY=${TARGET_BYTES_PER_KEY:-24}
SAMPLES=${SAMPLES:-100}
RESTART=${RESTART:-1}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
BENCH_TMP=${BENCH_TMP:-$ROOT/bench/tmp-$$}
KEEP_TMP=${KEEP_TMP:-0}

require_tools "$REDIS_CLI" "$PYTHON" taskset df awk
[[ -x $LAVIK_BIN ]] || die "$LAVIK_BIN not built (cmake --build build)"
require_uint KEYS "$KEYS"
require_uint VALUE_SIZE "$VALUE_SIZE"
require_uint LAVIK_THREADS "$LAVIK_THREADS"
require_uint SAMPLES "$SAMPLES"
[[ $CACHE_MB =~ ^[0-9]+$ ]] || die "CACHE_MB must be a non-negative integer"
taskset -c "$SERVER_CPUS" true 2>/dev/null || die "SERVER_CPUS=$SERVER_CPUS is not a usable CPU list"
taskset -c "$CLIENT_CPUS" true 2>/dev/null || die "CLIENT_CPUS=$CLIENT_CPUS is not a usable CPU list"
[[ ! -e $BENCH_TMP ]] || die "$BENCH_TMP already exists"

STAMP=$(date +%Y%m%d-%H%M%S)
OUT_MD=$RESULTS_DIR/index-memory-$STAMP.md
RAW_DIR=$RESULTS_DIR/index-memory-$STAMP/raw
mkdir -p "$RAW_DIR"
mkdir -p "$BENCH_TMP"
TMP_CREATED=1
snapshot_lavik

SERVER_PID=""
PORT=""
CLIENT_PID=""
RUN_NO=0

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n $CLIENT_PID ]]; then
    kill -TERM "$CLIENT_PID" 2>/dev/null || true
    wait "$CLIENT_PID" 2>/dev/null || true
  fi
  stop_lavik "$SERVER_PID"
  if [[ -f $BENCH_TMP/logs/lavik.log ]]; then
    cp "$BENCH_TMP/logs/lavik.log" "$RAW_DIR/lavik.log" || true
  fi
  if [[ ${TMP_CREATED:-0} == 1 ]]; then
    if [[ $KEEP_TMP == 1 ]]; then
      log "temporary files kept in $BENCH_TMP"
    else
      rm -rf -- "$BENCH_TMP"
    fi
  fi
  ((rc == 0)) || log "raw output and lavik's log in $RAW_DIR"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Disk: the RESP file (~(40 + VALUE_SIZE) bytes a key) plus the data file (a record is a header,
# the key and the value, rounded; 100 bytes a key is generous for small values), twice over.
NEED=$((KEYS * (40 + VALUE_SIZE) + KEYS * (100 + VALUE_SIZE)))
AVAIL=$(($(df --output=avail -B1 "$BENCH_TMP" | tail -n 1)))
((AVAIL >= 2 * NEED)) ||
  die "$(human_bytes "$AVAIL") free under $BENCH_TMP, want 2x $(human_bytes "$NEED") for $KEYS keys; lower KEYS"

# Starts lavik (run RUN_NO, which names its stdout file) on PORT with the data file in BENCH_TMP.
start_lavik() {
  RUN_NO=$((RUN_NO + 1))
  local -a pin=()
  if ((LAVIK_THREADS > 1)); then
    pin=(--no-pin-workers)
  fi
  lavik_command "$LAVIK_RUN" "$BENCH_TMP" "$LAVIK_THREADS" --cache-mb "$CACHE_MB" "${pin[@]}"
  CMDLINE="taskset -c $SERVER_CPUS ${SERVER_CMD[*]}"
  log "starting: $CMDLINE"
  launch_server "$RAW_DIR/lavik-stdout-$RUN_NO.log"
  wait_ready "start-up (run $RUN_NO)"
}

LAVIK_VERSION=$("$LAVIK_RUN" --version 2>&1 | head -n 1)
GIT_REV=$(git_rev)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

# 1. The RESP file, generated before the server starts so the load measures lavik + redis-cli.
RESP_FILE=$BENCH_TMP/load.resp
log "generating $KEYS SET commands (values of $VALUE_SIZE bytes) into $RESP_FILE"
GEN_T0=$(date +%s.%N)
"$PYTHON" "$ROOT/bench/loadgen.py" resp "$KEYS" "$VALUE_SIZE" >"$RESP_FILE"
GEN_T1=$(date +%s.%N)
RESP_BYTES=$(stat -c %s "$RESP_FILE")
log "generated $(human_bytes "$RESP_BYTES") in $(calc 'sprintf("%.1f", t1 - t0)' t1="$GEN_T1" t0="$GEN_T0") s"

# 2. The empty server.
PORT=$(free_port)
start_lavik
sleep 2
RSS_EMPTY=$(rss_bytes "$SERVER_PID")
INFO_EMPTY=$(cli INFO)
log "empty server: RSS $(human_bytes "$RSS_EMPTY")"

# 3. Load.
log "loading $KEYS keys with redis-cli --pipe"
T0=$(date +%s.%N)
pipe_load "$RAW_DIR/load.txt" "$KEYS" <"$RESP_FILE" &
CLIENT_PID=$!
wait "$CLIENT_PID" || die "load failed"
CLIENT_PID=""
T1=$(date +%s.%N)
alive load
LOAD_S=$(calc 'sprintf("%.1f", t1 - t0)' t1="$T1" t0="$T0")
LOAD_RATE=$(calc 'sprintf("%.0f", n / s)' n="$KEYS" s="$LOAD_S")
log "loaded in $LOAD_S s ($LOAD_RATE keys/s)"
rm -f -- "$RESP_FILE"

DBSIZE=$(cli DBSIZE)
[[ $DBSIZE == "$KEYS" ]] || die "DBSIZE after load is '$DBSIZE', want $KEYS"
VERIFY=$("$PYTHON" "$ROOT/bench/loadgen.py" verify "$PORT" "$KEYS" "$VALUE_SIZE" "$SAMPLES") ||
  die "value check failed: $VERIFY"
# Let write buffers drain and the allocator settle before sampling RSS.
sleep 3
alive "the post-load pause"
RSS_LOADED=$(rss_bytes "$SERVER_PID")
HWM_LOADED=$(rss_bytes "$SERVER_PID" VmHWM)
INFO_LOADED=$(cli INFO)

# 4. Restart: the index rebuilt from the data file.
if [[ $RESTART == 1 ]]; then
  log "restarting lavik to measure the index rebuilt by recovery"
  stop_lavik "$SERVER_PID"
  SERVER_PID=""
  [[ $LAST_EXIT == 0 ]] || die "lavik exited with status $LAST_EXIT on SIGTERM"
  PORT=$(free_port)
  T0=$(date +%s.%N)
  start_lavik
  T1=$(date +%s.%N)
  RESTART_S=$(calc 'sprintf("%.1f", t1 - t0)' t1="$T1" t0="$T0")
  DBSIZE2=$(cli DBSIZE)
  [[ $DBSIZE2 == "$KEYS" ]] || die "DBSIZE after restart is '$DBSIZE2', want $KEYS"
  VERIFY2=$("$PYTHON" "$ROOT/bench/loadgen.py" verify "$PORT" "$KEYS" "$VALUE_SIZE" "$SAMPLES") ||
    die "value check after restart failed: $VERIFY2"
  sleep 2
  alive "the post-restart pause"
  RSS_RESTART=$(rss_bytes "$SERVER_PID")
  HWM_RESTART=$(rss_bytes "$SERVER_PID" VmHWM)
  INFO_RESTART=$(cli INFO)
fi

stop_lavik "$SERVER_PID"
SERVER_PID=""
[[ $LAST_EXIT == 0 ]] || die "lavik exited with status $LAST_EXIT on SIGTERM"
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
WARNINGS=$(log_warnings "$BENCH_TMP/logs/lavik.log")

# --- Report ----------------------------------------------------------------------------------

per_key() { calc 'sprintf("%.2f", b / n)' b="$1" n="$KEYS"; }
meets() { awk -v v="$1" -v t="$TARGET_BYTES_PER_KEY" 'BEGIN { print (v <= t ? "yes" : "NO") }'; }

IDX=$(info_get "$INFO_LOADED" used_memory_index)
RSS_PER_KEY=$(per_key "$RSS_LOADED")
RSS_DELTA_PER_KEY=$(per_key $((RSS_LOADED - RSS_EMPTY)))
ROWS=(
  "keys (DBSIZE)|$DBSIZE"
  "value size|$VALUE_SIZE bytes"
  "load|$LOAD_S s, $LOAD_RATE keys/s (redis-cli --pipe from a file)"
  "sampled values checked|${VERIFY#ok } (STRLEN + content)"
  "RSS empty server|$RSS_EMPTY ($(human_bytes "$RSS_EMPTY"))"
  "RSS loaded|$RSS_LOADED ($(human_bytes "$RSS_LOADED"))"
  "peak RSS (VmHWM) since start-up|$HWM_LOADED ($(human_bytes "$HWM_LOADED"))"
  "RSS bytes/key (RSS / keys)|$RSS_PER_KEY (<= $TARGET_BYTES_PER_KEY: $(meets "$RSS_PER_KEY"))"
  "RSS bytes/key ((RSS - RSS empty) / keys)|$RSS_DELTA_PER_KEY (<= $TARGET_BYTES_PER_KEY: $(meets "$RSS_DELTA_PER_KEY"))"
  "peak RSS bytes/key (VmHWM / keys)|$(per_key "$HWM_LOADED")"
  "used_memory_index bytes/key|$(per_key "$IDX") ($(human_bytes "$IDX"))"
  "used_memory bytes/key|$(per_key "$(info_get "$INFO_LOADED" used_memory)")"
  "used_memory_cache|$(info_get "$INFO_LOADED" used_memory_cache)"
  "used_memory_buffers|$(info_get "$INFO_LOADED" used_memory_buffers) (empty: $(info_get "$INFO_EMPTY" used_memory_buffers))"
  "used_memory_allocator|$(info_get "$INFO_LOADED" used_memory_allocator) (empty: $(info_get "$INFO_EMPTY" used_memory_allocator))"
  "data file: bytes_used / bytes_live|$(info_get "$INFO_LOADED" bytes_used) / $(info_get "$INFO_LOADED" bytes_live)"
)
if [[ $RESTART == 1 ]]; then
  IDX2=$(info_get "$INFO_RESTART" used_memory_index)
  ROWS+=(
    "after restart: start-up to PING|$RESTART_S s (recovery_ms $(info_get "$INFO_RESTART" recovery_ms), from checkpoint: $(info_get "$INFO_RESTART" recovery_from_checkpoint))"
    "after restart: DBSIZE, values checked|$DBSIZE2, ${VERIFY2#ok }"
    "after restart: RSS, peak RSS|$RSS_RESTART ($(human_bytes "$RSS_RESTART")), $HWM_RESTART ($(human_bytes "$HWM_RESTART"))"
    "after restart: RSS bytes/key|$(per_key "$RSS_RESTART") ((RSS - RSS empty) / keys: $(per_key $((RSS_RESTART - RSS_EMPTY))))"
    "after restart: used_memory_index bytes/key|$(per_key "$IDX2")"
  )
fi
ROWS+=("lavik log warnings|$(count_lines "$WARNINGS")")

PINNING="lavik on CPUs $SERVER_CPUS (--threads $LAVIK_THREADS), redis-cli on CPUs $CLIENT_CPUS"
{
  echo
  echo "lavik index memory, $(date '+%Y-%m-%d %H:%M:%S %Z'), $(nproc) CPUs"
  echo "lavik: $LAVIK_VERSION (git $GIT_REV); binary: $LAVIK_BIN_ID"
  echo "server: $CMDLINE"
  echo "pinning: $PINNING; load average $LOAD_START at start, $LOAD_END at end"
  echo
  text_table "${ROWS[@]}"
  print_warnings "$WARNINGS" text
  echo
  echo "Markdown: $OUT_MD"
}

{
  echo "# lavik index memory, $(date '+%Y-%m-%d %H:%M:%S %Z')"
  echo
  echo "- lavik: $LAVIK_VERSION (git $GIT_REV); binary: $LAVIK_BIN_ID; machine: $(nproc) CPUs, $(uname -r)"
  echo "- server: \`$CMDLINE\`"
  echo "- pinning: $PINNING"
  echo "- load: \`redis-cli --pipe\` from a pre-generated RESP file of $KEYS \`SET key:%012d <$VALUE_SIZE bytes>\`"
  echo "- RSS = VmRSS from /proc/PID/status, sampled 2-3 s after start-up / load; VmHWM = peak RSS"
  echo "- load average: $LOAD_START at start, $LOAD_END at end"
  echo "- target: at most $TARGET_BYTES_PER_KEY bytes of RSS per key at 10M+ keys"
  echo
  md_table "measure|value" "${ROWS[@]}"
  print_warnings "$WARNINGS" md
  echo
  echo "Raw output and lavik's log: \`index-memory-$STAMP/raw/\` (not committed)."
} >"$OUT_MD"
