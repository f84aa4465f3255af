#!/usr/bin/env bash
# report.sh: lavik's benchmark report, side by side with Debian's redis-server, on this machine.
#
# One command runs every configuration (server x data set) one at a time and writes
# bench/results/<date>/: README.md (tables, machine, method), SVG charts, points.csv (one row per
# measured point) and meta.txt (settings, versions, checks; README and charts are regenerated from
# these two by `bench/report_render.py DIR`), plus raw/ (git-ignored: lavik-bench JSON per point,
# server logs and command lines).
#
# Per configuration: start the server empty (lavik: --threads LAVIK_THREADS, --cache-mb CACHE_MB;
# redis-like servers: --save '' --appendonly no), fill keys "1".."N" with VALUE_SIZE-byte values
# (lavik-bench --fill), check, one GET warm-up (WARMUP s at WARMUP_CONNECTIONS), then
#   1. GET sweep: pipeline 1, random keys over 1..N, each of CONNECTIONS, POINT_WARMUP s of
#      warm-up then a DURATION s window;
#   2. GET at fixed rates (open loop, RATE_CONNECTIONS connections): RATE_STEP, 2*RATE_STEP, ... up
#      to the sweep's GET peak x RATE_FACTOR (at most RATE_MAX_POINTS rates: the step doubles until
#      the ladder fits), or the explicit list RATES; a rate achieved below 97% is "NS";
#   3. SET sweep, as the GET sweep (overwrites random existing keys, so DBSIZE stays N);
# then check again and stop the server. Around every configuration it checks: DBSIZE exactly N,
# STRLEN = VALUE_SIZE for keys 1, 2, N/2, N-1, N and SAMPLES random keys, zero GET misses (in
# lavik-bench's JSON of every GET point and INFO keyspace_misses = 0 at the end), zero errors in
# every point, the server alive after every point and exiting 0 on SIGTERM. Any failed check stops
# the run with a non-zero exit and no README. After every point: INFO used_memory and VmRSS.
# During every window: server and client CPU (utime+stime from /proc/PID/stat; server CPU us per
# request: on 2 cores the client saturates first, so this is what separates servers), CPU steal
# from /proc/stat and the load average (other people use this machine).
#
# Pinning: every server on SERVER_CPUS (default 1), lavik-bench (--threads 1) on CLIENT_CPUS
# (default 0); both are recorded. Client and server share this one VM over loopback.
#
# Environment (defaults in brackets):
#   LAVIK_BIN [build/lavik: copied to BENCH_TMP first, so a rebuild mid-run cannot mix builds]
#   LAVIK_BENCH [build/lavik-bench]   LAVIK_THREADS [1]   CACHE_MB [256]   VALUE_SIZE [1024]
#   SMALL_CACHE_MB [2048: lavik's value cache for the SMALL_KEYS data set, large enough to hold it,
#     so that data set measures lavik's DRAM path and the big one its device path; 0 = CACHE_MB]
#   SMALL_KEYS [1000000]   BIG_FACTOR [10]
#   BIG_KEYS [BIG_FACTOR x the lavik value cache: CACHE_MB MiB x BIG_FACTOR / VALUE_SIZE = 2621440]
#   DATASETS ["SMALL_KEYS BIG_KEYS": key counts, each run on every server]
#   SERVERS ["lavik redis", plus "valkey" when VALKEY_BIN is set]. Every name but lavik runs like
#     redis-server: binary <NAME>_BIN (REDIS_BIN defaults to redis-server), extra arguments
#     <NAME>_ARGS (word-split), e.g. VALKEY_BIN=/opt/valkey/bin/valkey-server REDIS_ARGS=
#   SERVER_CPUS [1]   CLIENT_CPUS [0]
#   CONNECTIONS ["16 32 80 160 320 640 1280"]   DURATION [10]   POINT_WARMUP [2]
#   WARMUP [10]   WARMUP_CONNECTIONS [160]
#   RATE_CONNECTIONS [160]   RATE_STEP [10000]   RATE_FACTOR [1.2]   RATE_MAX_POINTS [12]
#   RATE_DURATION [DURATION]   RATES ["": derived from each configuration's GET peak]
#   QUIET_WAIT [10]   QUIET_MAX [50]: before each point, wait up to QUIET_WAIT s until the machine
#     (our server idle, no client) is busy below QUIET_MAX % of one CPU over 1 s; other people's
#     builds and benchmarks share this VM. The wait and the busy level are recorded per point.
#   FILL_CONNECTIONS [32]   FILL_PIPELINE [16]   SAMPLES [20]
#   RESULTS_DIR [bench/results]   OUT_DIR [RESULTS_DIR/<YYYY-MM-DD>, -2, -3... if it exists]
#   REPORT_NOTE ["": a sentence put at the top of the README, e.g. why settings were reduced]
#   BENCH_TMP [bench/tmp-<pid>: lavik's data file; deleted on exit]   KEEP_TMP [0]
# Settings that differ from these defaults are listed in the README automatically.
#
# With the defaults (2 data sets x lavik + redis, 7 connection counts, 10 s windows) the run takes
# 20-35 minutes (19 min on a quiet machine without the quiet wait, 30 min with it on a busy one)
# and needs ~3.5 GiB of RAM for redis and ~8 GiB of disk for lavik's data file.
# The settings are assigned through knob (printf -v), which shellcheck cannot follow.
# shellcheck disable=SC2153
set -euo pipefail

BENCH_NAME=report
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

# --- Settings --------------------------------------------------------------------------------

# knob NAME DEFAULT: NAME from the environment or DEFAULT; remembered for the README's list of
# settings that differ from the defaults.
declare -a KNOBS=()
declare -A KNOB_DEFAULT=()
knob() {
  local name=$1 default=$2
  KNOBS+=("$name")
  KNOB_DEFAULT[$name]=$default
  if [[ -z ${!name+x} ]]; then
    printf -v "$name" '%s' "$default"
  fi
}

knob LAVIK_BIN "$ROOT/build/lavik"
knob LAVIK_BENCH "$ROOT/build/lavik-bench"
knob LAVIK_THREADS 1
knob CACHE_MB 256
knob SMALL_CACHE_MB 2048
knob VALUE_SIZE 1024
knob SMALL_KEYS 1000000
knob BIG_FACTOR 10
knob BIG_KEYS $((CACHE_MB * 1048576 * BIG_FACTOR / VALUE_SIZE))
knob DATASETS "$SMALL_KEYS $BIG_KEYS"
if [[ -n ${VALKEY_BIN:-} ]]; then
  knob SERVERS "lavik redis valkey"
else
  knob SERVERS "lavik redis"
fi
knob REDIS_BIN redis-server
knob SERVER_CPUS 1
knob CLIENT_CPUS 0
knob CONNECTIONS "16 32 80 160 320 640 1280"
knob DURATION 10
knob POINT_WARMUP 2
knob WARMUP 10
knob WARMUP_CONNECTIONS 160
knob RATE_CONNECTIONS 160
knob RATE_STEP 10000
knob RATE_FACTOR 1.2
knob RATE_MAX_POINTS 12
knob RATE_DURATION "$DURATION"
knob RATES ""
knob QUIET_WAIT 10
knob QUIET_MAX 50
knob FILL_CONNECTIONS 32
knob FILL_PIPELINE 16
knob SAMPLES 20
knob RESULTS_DIR "$ROOT/bench/results"
REPORT_NOTE=${REPORT_NOTE:-}
BENCH_TMP=${BENCH_TMP:-$ROOT/bench/tmp-$$}
KEEP_TMP=${KEEP_TMP:-0}

require_tools "$REDIS_CLI" "$PYTHON" taskset getconf awk df nproc
[[ -x $LAVIK_BIN ]] || die "$LAVIK_BIN not built (cmake --build build --target lavik)"
[[ -x $LAVIK_BENCH ]] ||
  die "$LAVIK_BENCH not built (cmake --build build -j2 --target lavik-bench)"
for v in LAVIK_THREADS CACHE_MB SMALL_CACHE_MB VALUE_SIZE DURATION WARMUP WARMUP_CONNECTIONS RATE_CONNECTIONS \
  RATE_STEP RATE_MAX_POINTS RATE_DURATION FILL_CONNECTIONS FILL_PIPELINE SAMPLES; do
  require_uint "$v" "${!v}"
done
((DURATION >= 2 && RATE_DURATION >= 2)) || die "DURATION and RATE_DURATION must be at least 2 s"
[[ $POINT_WARMUP =~ ^[0-9]+$ ]] || die "POINT_WARMUP must be a non-negative integer"
[[ $QUIET_WAIT =~ ^[0-9]+$ ]] || die "QUIET_WAIT must be a non-negative integer"
require_uint QUIET_MAX "$QUIET_MAX"
[[ $RATE_FACTOR =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "RATE_FACTOR must be a number"
read -r -a DATASET_LIST <<<"$DATASETS"
read -r -a SERVER_LIST <<<"$SERVERS"
read -r -a CONN_LIST <<<"$CONNECTIONS"
read -r -a RATE_LIST <<<"$RATES"
((${#DATASET_LIST[@]} > 0)) || die "DATASETS is empty"
((${#SERVER_LIST[@]} > 0)) || die "SERVERS is empty"
((${#CONN_LIST[@]} > 0)) || die "CONNECTIONS is empty"
for n in "${DATASET_LIST[@]}"; do require_uint "a DATASETS entry" "$n"; done
for n in "${CONN_LIST[@]}"; do require_uint "a CONNECTIONS entry" "$n"; done
for n in "${RATE_LIST[@]}"; do require_uint "a RATES entry" "$n"; done
taskset -c "$SERVER_CPUS" true 2>/dev/null || die "SERVER_CPUS=$SERVER_CPUS is not a usable CPU list"
taskset -c "$CLIENT_CPUS" true 2>/dev/null || die "CLIENT_CPUS=$CLIENT_CPUS is not a usable CPU list"

# Server binaries: lavik is snapshotted below; the others resolve <NAME>_BIN now.
declare -A SERVER_BIN=() SERVER_ARGS=()
for s in "${SERVER_LIST[@]}"; do
  [[ $s =~ ^[a-z][a-z0-9_]*$ ]] || die "server name '$s' must be lower-case letters, digits, _"
  [[ -z ${SERVER_BIN[$s]:-} ]] || die "server '$s' listed twice in SERVERS"
  if [[ $s == lavik ]]; then
    SERVER_BIN[$s]=$LAVIK_BIN
    continue
  fi
  var=${s^^}_BIN
  bin=${!var:-}
  [[ -n $bin ]] || die "no binary for server '$s': set $var=/path/to/server"
  resolved=$(command -v -- "$bin") || die "$var=$bin is not an executable"
  SERVER_BIN[$s]=$resolved
  var=${s^^}_ARGS
  SERVER_ARGS[$s]=${!var:-}
done

max_conns=0
for c in "${CONN_LIST[@]}" "$WARMUP_CONNECTIONS" "$RATE_CONNECTIONS"; do
  ((c > max_conns)) && max_conns=$c
done
NOFILE=$(ulimit -n)
((NOFILE > max_conns + 200)) || die "ulimit -n is $NOFILE; need more than $((max_conns + 200))"

CLK_TCK=$(getconf CLK_TCK)
DATE=$(date +%F)
if [[ -z ${OUT_DIR:-} ]]; then
  OUT_DIR=$RESULTS_DIR/$DATE
  i=2
  while [[ -e $OUT_DIR ]]; do
    OUT_DIR=$RESULTS_DIR/$DATE-$i
    i=$((i + 1))
  done
fi
[[ ! -e $OUT_DIR/README.md ]] || die "$OUT_DIR already has a README.md"
RAW_DIR=$OUT_DIR/raw
[[ ! -e $BENCH_TMP ]] || die "$BENCH_TMP already exists"

# --- State and cleanup -----------------------------------------------------------------------

SERVER_PID=""
SERVER_NAME=""
PORT=""
CLIENT_PID=""
TMP_CREATED=0

# Stops the process with pid $1 (one this script started): SIGTERM, SIGKILL after $2 s.
stop_pid() { stop_lavik "$1" "${2:-30}" "process"; }

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_pid "$CLIENT_PID" 5
  if [[ -n $SERVER_PID ]]; then
    kill -0 "$SERVER_PID" 2>/dev/null ||
      log "$SERVER_NAME (pid $SERVER_PID) is not running (crashed or killed)"
    stop_pid "$SERVER_PID" 30
    save_server_logs
  fi
  if ((TMP_CREATED)); then
    if [[ $KEEP_TMP == 1 ]]; then
      log "temporary files kept in $BENCH_TMP; delete them by hand"
    else
      rm -rf -- "$BENCH_TMP"
    fi
  fi
  if ((rc != 0)); then
    [[ ! -d $OUT_DIR ]] || echo "run failed with status $rc at $(date '+%F %T')" >"$OUT_DIR/FAILED"
    log "FAILED (status $rc); partial results and raw output in $OUT_DIR"
  fi
  exit "$rc"
}
trap cleanup EXIT
# A command failing outside the checks (which all die with a message) is named, not silent.
set -E
trap 'log "unexpected failure (status $?) at line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT
trap 'exit 143' TERM

# Sleeps in the background so a signal runs the cleanup trap at once.
nap() {
  sleep "$1" &
  wait $! || true
}

# --- Helpers ---------------------------------------------------------------------------------

# "1M", "2.62M", "500k": a data set's label.
ds_label() {
  awk -v n="$1" 'BEGIN {
    if (n >= 1e6) { s = sprintf("%.2f", n / 1e6); u = "M" }
    else if (n >= 1e3) { s = sprintf("%.2f", n / 1e3); u = "k" }
    else { s = n; u = "" }
    sub(/\.?0+$/, "", s); print s u }'
}

# A command line as it would be typed (empty arguments shown as '').
shell_join() {
  local out
  printf -v out '%q ' "$@"
  echo "${out% }"
}

meta() { printf '%s=%s\n' "$1" "$2" >>"$OUT_DIR/meta.txt"; }

# utime+stime of pid $1, or nothing if it has exited (never fails).
ticks_or_empty() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }
  local -a f
  read -r -a f <<<"$stat"
  echo $((f[11] + f[12]))
}

# Seconds cut from each end of lavik-bench's window when sampling CPU around it.
readonly SAMPLE_MARGIN=0.25

# From /proc/stat's cpu line (all CPUs, clock ticks): steal, busy (all but idle and iowait),
# total, softirq.
stat_sample() {
  awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t - $5 - $6, t, $8 }' /proc/stat
}

server_alive() {
  kill -0 "$SERVER_PID" 2>/dev/null || die "$SERVER_NAME (pid $SERVER_PID) died during $1; see $RAW_DIR/$TAG"
}

save_server_logs() {
  [[ -n ${TAG:-} && -d $RAW_DIR/$TAG ]] || return 0
  if [[ -f $BENCH_TMP/$TAG/logs/lavik.log ]]; then
    cp "$BENCH_TMP/$TAG/logs/lavik.log" "$RAW_DIR/$TAG/lavik.log" || true
  fi
}

# cache_mb_for KEYS: lavik's --cache-mb for a data set of KEYS keys.
cache_mb_for() {
  if [[ $1 == "$SMALL_KEYS" ]] && ((SMALL_CACHE_MB > 0)); then
    echo "$SMALL_CACHE_MB"
  else
    echo "$CACHE_MB"
  fi
}

start_server() {
  local name=$1
  SERVER_NAME=$name
  PORT=$(free_port)
  local dir=$BENCH_TMP/$TAG
  if [[ $name == lavik ]]; then
    lavik_command "$LAVIK_RUN" "$dir" "$LAVIK_THREADS" --cache-mb "$(cache_mb_for "$KEYS")"
  else
    local -a extra=()
    read -r -a extra <<<"${SERVER_ARGS[$name]}"
    redis_command "${SERVER_BIN[$name]}" "$dir" --maxclients 10000 "${extra[@]}"
  fi
  CMDLINE="taskset -c $SERVER_CPUS $(shell_join "${SERVER_CMD[@]}")"
  log "$TAG: starting $CMDLINE"
  echo "$CMDLINE" >"$RAW_DIR/$TAG/cmdline.txt"
  launch_server "$RAW_DIR/$TAG/server-stdout.log"
  local i
  for ((i = 0; i < 300; i++)); do
    server_alive start-up
    [[ $(cli PING 2>/dev/null) == PONG ]] && return 0
    sleep 0.1
  done
  die "$name did not answer PING within 30 s"
}

# The data checks run around every configuration: exact DBSIZE and STRLEN of sampled keys.
check_data() {
  local what=$1 n=$KEYS
  server_alive "$what"
  local dbsize
  dbsize=$(cli DBSIZE) || die "$TAG: DBSIZE failed ($what)"
  [[ $dbsize == "$n" ]] || die "$TAG: DBSIZE is '$dbsize' $what, want exactly $n"
  local -a keys=(1 2 $((n / 2)) $((n - 1)) "$n")
  local i
  for ((i = 0; i < SAMPLES; i++)); do
    keys+=($((1 + (RANDOM * 32768 + RANDOM) % n)))
  done
  local k len bad=0
  for k in "${keys[@]}"; do
    ((k >= 1)) || continue
    len=$(cli STRLEN "$k")
    if [[ $len != "$VALUE_SIZE" ]]; then
      log "$TAG: STRLEN $k is '$len' $what, want $VALUE_SIZE"
      bad=1
    fi
  done
  ((bad == 0)) || die "$TAG: sampled values have the wrong length $what"
  CHECKS+=("$what: DBSIZE $dbsize, STRLEN = $VALUE_SIZE for ${#keys[@]} keys")
}

# Memory snapshot: "used_memory rss_bytes".
mem_snapshot() {
  local info
  info=$(cli INFO memory) || die "$TAG: INFO memory failed"
  echo "$(info_get "$info" used_memory) $(rss_bytes "$SERVER_PID")"
}

# parse_json FILE FIELDS: the values of FIELDS (space-separated names) in lavik-bench's JSON
# object, tab-separated, or fails naming the missing field.
POINT_FIELDS="ops_per_sec achieved_rate sustained p50_ms p99_ms p999_ms p9999_ms misses errors"
FILL_FIELDS="keys_written keys_expected keys_per_sec errors"
parse_json() {
  "$PYTHON" - "$1" "$2" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
try:
    obj = json.loads(text[text.index("{"):text.rindex("}") + 1])
except ValueError as e:
    sys.exit("no JSON object in %s: %s" % (sys.argv[1], e))
out = []
for f in sys.argv[2].split():
    if f not in obj:
        sys.exit("%s: no field %s" % (sys.argv[1], f))
    v = obj[f]
    if isinstance(v, bool):
        v = "true" if v else "false"
    elif v is None:
        v = ""
    out.append(str(v))
print("\t".join(out))
EOF
}

# run_bench NAME PHASE CONNS RATE WARMUP_S WINDOW_S ARGS...: runs lavik-bench pinned to
# CLIENT_CPUS, samples server/client CPU, steal and load over the measured window, checks the
# result and appends a row to points.csv. PHASE: warmup, get, set or rate.
run_bench() {
  local name=$1 phase=$2 conns=$3 rate=$4 warm=$5 window=$6
  shift 6
  local out=$RAW_DIR/$TAG/$name.json err=$RAW_DIR/$TAG/$name.err
  local -a cmd=("$LAVIK_BENCH_RUN" --host "$HOST" --port "$PORT" --threads 1 --pipeline 1
    --connections "$conns" --key-min 1 --key-max "$KEYS" --key-pattern random
    --value-size "$VALUE_SIZE" --warmup "$warm" --duration "$window" --json "$@")
  echo "taskset -c $CLIENT_CPUS $(shell_join "${cmd[@]}")" >"$RAW_DIR/$TAG/$name.cmd"
  wait_quiet
  local misses_before
  misses_before=$(info_get "$(cli INFO stats)" keyspace_misses)
  taskset -c "$CLIENT_CPUS" "${cmd[@]}" >"$out" 2>"$err" &
  CLIENT_PID=$!
  # The sampled window sits SAMPLE_MARGIN inside lavik-bench's own measured window at both ends
  # (its start-up and the end of its run are not exactly ours).
  nap "$(calc 'w + m' w="$warm" m="$SAMPLE_MARGIN")"
  local s0 c0 t0 st0 busy0 tot0 sirq0
  s0=$(cpu_ticks "$SERVER_PID")
  c0=$(ticks_or_empty "$CLIENT_PID")
  t0=$(date +%s.%N)
  read -r st0 busy0 tot0 sirq0 < <(stat_sample)
  nap "$(calc 'w - 2 * m' w="$window" m="$SAMPLE_MARGIN")"
  local s1 c1 t1 st1 busy1 tot1 sirq1
  s1=$(cpu_ticks "$SERVER_PID")
  c1=$(ticks_or_empty "$CLIENT_PID")
  t1=$(date +%s.%N)
  read -r st1 busy1 tot1 sirq1 < <(stat_sample)
  local load1
  load1=$(cut -d' ' -f1 /proc/loadavg)
  # The client ends on its own; allow 60 s past its window (closing 1000+ connections) and then
  # stop it.
  local i rc=0
  for ((i = 0; i < 600; i++)); do
    kill -0 "$CLIENT_PID" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$CLIENT_PID" 2>/dev/null; then
    stop_pid "$CLIENT_PID" 5
    CLIENT_PID=""
    die "$TAG: lavik-bench ($name) did not finish within 60 s of its window; see $err"
  fi
  wait "$CLIENT_PID" || rc=$?
  CLIENT_PID=""
  server_alive "$name"
  ((rc == 0)) || die "$TAG: lavik-bench exited with status $rc ($name); see $err and $out"
  local fields
  fields=$(parse_json "$out" "$POINT_FIELDS") || die "$TAG: unusable lavik-bench output ($name): $fields"
  local ops achieved sustained p50 p99 p999 p9999 misses errors
  IFS=$'\t' read -r ops achieved sustained p50 p99 p999 p9999 misses errors <<<"$fields"
  [[ $errors == 0 ]] || die "$TAG: lavik-bench reported $errors errors ($name); see $out"
  local misses_after
  misses_after=$(info_get "$(cli INFO stats)" keyspace_misses)
  if [[ $phase != set ]]; then
    [[ $misses == 0 ]] || die "$TAG: $misses GET misses ($name); every key 1..$KEYS was loaded"
    ((misses_after == misses_before)) ||
      die "$TAG: INFO keyspace_misses grew by $((misses_after - misses_before)) during $name"
  fi
  awk -v o="$ops" 'BEGIN { exit !(o > 0) }' || die "$TAG: zero ops/s ($name)"
  local dt srv_pct cli_pct us_req steal other_pct sirq_pct
  dt=$(calc 't1 - t0' t1="$t1" t0="$t0")
  srv_pct=$(calc 'sprintf("%.1f", (s1 - s0) / hz / dt * 100)' s1="$s1" s0="$s0" hz="$CLK_TCK" dt="$dt")
  if [[ -n $c0 && -n $c1 ]]; then
    cli_pct=$(calc 'sprintf("%.1f", (c1 - c0) / hz / dt * 100)' c1="$c1" c0="$c0" hz="$CLK_TCK" dt="$dt")
    # Busy CPU of the whole machine not charged to our server or client: other people's
    # processes plus kernel time (e.g. softirq) no process was charged for; % of one CPU.
    other_pct=$(calc 'sprintf("%.1f", ((b1 - b0) - (s1 - s0) - (c1 - c0)) / hz / dt * 100)' \
      b1="$busy1" b0="$busy0" s1="$s1" s0="$s0" c1="$c1" c0="$c0" hz="$CLK_TCK" dt="$dt")
  else
    cli_pct=""
    other_pct=""
  fi
  us_req=$(calc 'sprintf("%.2f", (s1 - s0) / hz * 1e6 / (o * dt))' s1="$s1" s0="$s0" hz="$CLK_TCK" o="$ops" dt="$dt")
  # (Parenthesised: a bare '>' in awk's print would redirect to a file.)
  steal=$(calc '((b1 - b0) > 0 ? sprintf("%.2f", (a1 - a0) / (b1 - b0) * 100) : "0")' a1="$st1" a0="$st0" b1="$tot1" b0="$tot0")
  sirq_pct=$(calc 'sprintf("%.1f", (q1 - q0) / hz / dt * 100)' q1="$sirq1" q0="$sirq0" hz="$CLK_TCK" dt="$dt")
  local mem
  mem=$(mem_snapshot)
  MEM_POINTS+=("$mem")
  local used rss
  read -r used rss <<<"$mem"
  echo "$TAG,$SERVER_NAME,$KEYS,$phase,$conns,$rate,$ops,$achieved,$sustained,$p50,$p99,$p999,$p9999,$misses,$errors,$srv_pct,$cli_pct,$other_pct,$sirq_pct,$us_req,$steal,$load1,$used,$rss,$dt,$QUIET_WAITED,$QUIET_BUSY,$name" \
    >>"$OUT_DIR/points.csv"
  LAST_OPS=$ops
  local shown="$ops ops/s"
  [[ $phase != rate ]] || shown="rate $rate: achieved $achieved, sustained $sustained"
  log "$TAG $name (machine ${QUIET_BUSY:-?}% busy before, waited ${QUIET_WAITED}s): $shown, p50 $p50 p99 $p99 p99.9 $p999 ms; server CPU $srv_pct% ($us_req us/req), client CPU ${cli_pct:-?}%, rest of the machine ${other_pct:-?}%"
}

# Waits up to QUIET_WAIT s for 1 s during which the whole machine is busy below QUIET_MAX % of
# one CPU (between points our server is idle, so that is other people's work). Sets QUIET_WAITED
# (s) and QUIET_BUSY (% of one CPU in the last second sampled).
NCPU=$(nproc)
QUIET_WAITED=0
QUIET_BUSY=""
wait_quiet() {
  QUIET_WAITED=0
  QUIET_BUSY=""
  ((QUIET_WAIT > 0)) || return 0
  local start=$SECONDS b0 t0 b1 t1
  while :; do
    read -r _ b0 t0 _ < <(stat_sample)
    nap 1
    read -r _ b1 t1 _ < <(stat_sample)
    QUIET_BUSY=$(calc '((t1 - t0) > 0 ? sprintf("%.0f", (b1 - b0) / (t1 - t0) * n * 100) : 0)' \
      b1="$b1" b0="$b0" t1="$t1" t0="$t0" n="$NCPU")
    if ((QUIET_BUSY < QUIET_MAX || SECONDS - start >= QUIET_WAIT)); then
      break
    fi
  done
  QUIET_WAITED=$((SECONDS - start))
}

# The GET ladder for a configuration whose GET peak is $1.
rate_ladder() {
  if ((${#RATE_LIST[@]} > 0)); then
    echo "${RATE_LIST[*]}"
    return
  fi
  local top step
  top=$(calc 'sprintf("%.0f", p * f)' p="$1" f="$RATE_FACTOR")
  step=$RATE_STEP
  while (((top + step - 1) / step > RATE_MAX_POINTS)); do
    step=$((step * 2))
  done
  local r out=""
  for ((r = step; r < top + step; r += step)); do
    out+="$r "
  done
  echo "${out% }"
}

SERVER_NCPUS=$(count_cpus "$SERVER_CPUS")

# --- Preparation -----------------------------------------------------------------------------

mkdir -p "$RAW_DIR" "$BENCH_TMP"
TMP_CREATED=1
: >"$OUT_DIR/meta.txt"
echo "tag,server,keys,phase,connections,rate,ops_per_sec,achieved_rate,sustained,p50_ms,p99_ms,p999_ms,p9999_ms,misses,errors,server_cpu_pct,client_cpu_pct,other_cpu_pct,softirq_pct,server_us_per_req,steal_pct,load1,used_memory,rss_bytes,window_s,quiet_wait_s,busy_before_pct,name" \
  >"$OUT_DIR/points.csv"
snapshot_lavik
LAVIK_BENCH_RUN=$BENCH_TMP/lavik-bench
cp -- "$LAVIK_BENCH" "$LAVIK_BENCH_RUN"
LAVIK_BENCH_ID="$LAVIK_BENCH, built $(date -r "$LAVIK_BENCH" '+%F %T'), sha256 $(sha256sum "$LAVIK_BENCH_RUN" | cut -c1-12)"

# Disk: lavik's data file holds the largest data set plus what the SET sweeps append before
# compaction catches up; ask for 3x the largest data set + 2 GiB and fail rather than scale.
max_keys=0
for n in "${DATASET_LIST[@]}"; do ((n > max_keys)) && max_keys=$n; done
if [[ " ${SERVER_LIST[*]} " == *" lavik "* ]]; then
  need=$((3 * max_keys * (VALUE_SIZE + 64) + (2 << 30)))
  avail=$(($(df --output=avail -B1 "$BENCH_TMP" | tail -n 1)))
  ((avail >= need)) ||
    die "$(human_bytes "$avail") free under $BENCH_TMP, want $(human_bytes "$need") for $max_keys keys"
fi

# Rough duration, so a too-long run is noticed before it starts.
# (A 9-rate ladder is assumed when RATES is not given; each point waits 1..QUIET_WAIT s first.)
est=0
npoints=0
for n in "${DATASET_LIST[@]}"; do
  nrates=${#RATE_LIST[@]}
  ((nrates > 0)) || nrates=9
  per=$((n / 60000 + 15 + WARMUP + 2 * ${#CONN_LIST[@]} * (POINT_WARMUP + DURATION + 3)))
  per=$((per + nrates * (POINT_WARMUP + RATE_DURATION + 3)))
  est=$((est + per * ${#SERVER_LIST[@]}))
  npoints=$((npoints + (2 * ${#CONN_LIST[@]} + nrates + 1) * ${#SERVER_LIST[@]}))
done
est_max=$((est + npoints * (QUIET_WAIT > 1 ? QUIET_WAIT - 1 : 0)))
log "${#SERVER_LIST[@]} server(s) x ${#DATASET_LIST[@]} data set(s); estimated $((est / 60))-$((est_max / 60)) min; output in $OUT_DIR"

OVERLAP=$(cpu_overlap "$SERVER_CPUS" "$CLIENT_CPUS")
LAVIK_PIN="workers pinned to CPUs of the mask"
((LAVIK_THREADS <= SERVER_NCPUS)) || LAVIK_PIN="--no-pin-workers: workers share the mask"
PINNING="servers on CPU(s) $SERVER_CPUS (lavik --threads $LAVIK_THREADS, $LAVIK_PIN); lavik-bench --threads 1 on CPU(s) $CLIENT_CPUS"
[[ -z $OVERLAP ]] || PINNING+="; WARNING: server and client share CPU(s) $OVERLAP"

# Machine, recorded as it is (other people's jobs included).
meta date "$(date '+%F %T %Z')"
meta git "$(git_rev)"
meta lavik_bin "$LAVIK_BIN_ID"
meta lavik_version "$("$LAVIK_RUN" --version 2>&1 | head -n 1)"
meta lavik_bench "$LAVIK_BENCH_ID"
meta cpu_model "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
meta cpus "$(nproc)"
meta cpu_topology "$(lscpu 2>/dev/null | awk -F: '/^(Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|Hypervisor vendor|Virtualization type)/ { gsub(/^ +/, "", $2); printf "%s%s: %s", sep, $1, $2; sep = "; " }')"
meta mem_total "$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
meta mem_available_start "$(awk '/^MemAvailable/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
meta swap "$(awk '/^SwapTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
disk_src=$(df --output=source "$BENCH_TMP" | tail -n 1)
disk_dev=$(basename "$disk_src")
disk_desc=$(df -h --output=source,fstype,size,avail "$BENCH_TMP" | tail -n 1 |
  awk '{ printf "%s (%s), %s, %s free", $1, $2, $3, $4 }')
if [[ -e /sys/block/$disk_dev/device/driver ]]; then
  disk_desc+="; driver $(basename "$(readlink -f "/sys/block/$disk_dev/device/driver")")"
fi
if [[ -r /sys/block/$disk_dev/device/model ]]; then
  disk_desc+="; model $(xargs <"/sys/block/$disk_dev/device/model")"
fi
if [[ -r /sys/block/$disk_dev/queue/rotational ]]; then
  disk_desc+="; rotational flag $(<"/sys/block/$disk_dev/queue/rotational")"
fi
meta disk "$disk_desc"
meta kernel "$(uname -sr)"
meta os "$(. /etc/os-release && echo "$PRETTY_NAME")"
meta thp "$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo '?')"
meta load_start "$(cut -d' ' -f1-3 /proc/loadavg)"
meta nofile "$NOFILE"
meta pinning "$PINNING"
meta clk_tck "$CLK_TCK"
meta report_note "$REPORT_NOTE"
for k in "${KNOBS[@]}"; do
  [[ ${!k} == "${KNOB_DEFAULT[$k]}" ]] || meta "changed.$k" "${!k} (default ${KNOB_DEFAULT[$k]})"
  meta "knob.$k" "${!k}"
done
for s in "${SERVER_LIST[@]}"; do
  [[ -z ${SERVER_ARGS[$s]:-} ]] || meta "changed.${s^^}_ARGS" "${SERVER_ARGS[$s]}"
done
meta servers "${SERVER_LIST[*]}"
meta datasets "${DATASET_LIST[*]}"

# --- Run -------------------------------------------------------------------------------------

declare -a CHECKS MEM_POINTS
TAG=""
for server in "${SERVER_LIST[@]}"; do
  for KEYS in "${DATASET_LIST[@]}"; do
    label=$(ds_label "$KEYS")
    TAG="$server-${label,,}"
    mkdir -p "$RAW_DIR/$TAG"
    CHECKS=()
    MEM_POINTS=()
    start_server "$server"
    if [[ $server == lavik ]]; then
      version=$("$LAVIK_RUN" --version 2>&1 | head -n 1)
    else
      version="$server $("${SERVER_BIN[$server]}" --version 2>&1 | grep -o 'v=[^ ]*' | head -n 1 | cut -c3-)"
    fi
    meta "config.$TAG.server" "$server"
    meta "config.$TAG.keys" "$KEYS"
    meta "config.$TAG.cache_mb" "$(cache_mb_for "$KEYS")"
    meta "config.$TAG.version" "$version"
    meta "config.$TAG.cmdline" "$CMDLINE"
    meta "config.$TAG.load_start" "$(cut -d' ' -f1-3 /proc/loadavg)"
    mem=$(mem_snapshot)
    meta "config.$TAG.mem_empty" "$mem"

    # Fill: exactly keys 1..N, each once.
    log "$TAG: filling $KEYS keys x $VALUE_SIZE bytes"
    fill_cmd=("$LAVIK_BENCH_RUN" --host "$HOST" --port "$PORT" --threads 1
      --connections "$FILL_CONNECTIONS" --pipeline "$FILL_PIPELINE" --key-min 1 --key-max "$KEYS"
      --value-size "$VALUE_SIZE" --fill --json)
    echo "taskset -c $CLIENT_CPUS $(shell_join "${fill_cmd[@]}")" >"$RAW_DIR/$TAG/fill.cmd"
    t0=$(date +%s.%N)
    taskset -c "$CLIENT_CPUS" "${fill_cmd[@]}" >"$RAW_DIR/$TAG/fill.json" 2>"$RAW_DIR/$TAG/fill.err" &
    CLIENT_PID=$!
    rc=0
    wait "$CLIENT_PID" || rc=$?
    CLIENT_PID=""
    t1=$(date +%s.%N)
    server_alive fill
    ((rc == 0)) || die "$TAG: fill exited with status $rc; see $RAW_DIR/$TAG/fill.err"
    fields=$(parse_json "$RAW_DIR/$TAG/fill.json" "$FILL_FIELDS") ||
      die "$TAG: unusable fill output: $fields"
    IFS=$'\t' read -r written expected kps errors <<<"$fields"
    [[ $errors == 0 ]] || die "$TAG: fill reported $errors errors"
    [[ $written == "$KEYS" && $expected == "$KEYS" ]] ||
      die "$TAG: fill wrote $written of $expected keys, want $KEYS"
    fill_s=$(calc 'sprintf("%.1f", t1 - t0)' t1="$t1" t0="$t0")
    meta "config.$TAG.fill" "$written keys in $fill_s s ($(calc 'sprintf("%.0f", k)' k="$kps") keys/s), 0 errors"
    log "$TAG: filled $written keys in $fill_s s"
    check_data "after the fill"
    sleep 1
    mem=$(mem_snapshot)
    meta "config.$TAG.mem_loaded" "$mem"

    run_bench warmup warmup "$WARMUP_CONNECTIONS" "" 0 "$WARMUP" --ratio 1:0
    peak=0
    for c in "${CONN_LIST[@]}"; do
      run_bench "get-c$c" get "$c" "" "$POINT_WARMUP" "$DURATION" --ratio 1:0
      if awk -v a="$LAST_OPS" -v b="$peak" 'BEGIN { exit !(a > b) }'; then
        peak=$LAST_OPS
      fi
    done
    ladder=$(rate_ladder "$peak")
    meta "config.$TAG.rates" "$ladder"
    log "$TAG: GET peak $peak ops/s; fixed rates $ladder"
    for r in $ladder; do
      run_bench "rate-$r" rate "$RATE_CONNECTIONS" "$r" "$POINT_WARMUP" "$RATE_DURATION" \
        --ratio 1:0 --rate "$r"
    done
    for c in "${CONN_LIST[@]}"; do
      run_bench "set-c$c" set "$c" "" "$POINT_WARMUP" "$DURATION" --ratio 0:1
    done
    check_data "after the SET sweep"
    total_misses=$(info_get "$(cli INFO stats)" keyspace_misses)
    [[ $total_misses == 0 ]] || die "$TAG: INFO keyspace_misses is $total_misses at the end"
    CHECKS+=("0 errors and 0 GET misses in every point, INFO keyspace_misses 0 at the end")
    mem=$(mem_snapshot)
    meta "config.$TAG.mem_end" "$mem"
    meta "config.$TAG.hwm" "$(rss_bytes "$SERVER_PID" VmHWM)"
    meta "config.$TAG.load_end" "$(cut -d' ' -f1-3 /proc/loadavg)"

    stop_pid "$SERVER_PID" 60
    pid=$SERVER_PID
    SERVER_PID=""
    save_server_logs
    [[ $LAST_EXIT == 0 ]] || die "$TAG: $server (pid $pid) exited with status $LAST_EXIT on SIGTERM"
    CHECKS+=("exit status 0 on SIGTERM")
    # lavik logs warnings with ' # '; redis-like servers use ' # ' for notices too, so only
    # their WARNING lines (and crash reports) count.
    if [[ $server == lavik ]]; then
      warnings=$(log_warnings "$RAW_DIR/$TAG/lavik.log"; log_warnings "$RAW_DIR/$TAG/server-stdout.log")
    else
      warnings=$(grep -E 'WARNING|[Aa]ssert|[Ss]egmentation|[Aa]bort|terminate called|[Pp]anic|crash' \
        "$RAW_DIR/$TAG/server-stdout.log" || true)
    fi
    nwarn=$(grep -c . <<<"$warnings" || true)
    meta "config.$TAG.log_warnings" "$nwarn"
    # The first three, without pid and time stamp, cut to 160 characters.
    meta "config.$TAG.log_warning_text" "$(sed -E 's/^[0-9]+:[A-Z] [0-9]+ [A-Za-z]+ [0-9]+ [0-9:.]+ . //' <<<"$warnings" | sort -u | head -n 3 | cut -c1-160 | paste -sd'|' -)"
    meta "config.$TAG.checks" "$(IFS=';'; echo "${CHECKS[*]}")"
    rm -rf -- "${BENCH_TMP:?}/$TAG"
    log "$TAG: done"
  done
done
TAG=""
meta load_end "$(cut -d' ' -f1-3 /proc/loadavg)"
meta date_end "$(date '+%F %T %Z')"

"$PYTHON" "$ROOT/bench/report_render.py" "$OUT_DIR" || die "report_render.py failed"
log "report: $OUT_DIR/README.md"
