# shellcheck shell=bash
# lib.sh: helpers shared by the bench/*.sh scripts (sourced, not run).
#
# The sourcing script sets BENCH_NAME (log prefix) before sourcing and, before calling the server
# helpers, SERVER_PID and PORT. Servers are tracked by PID only: stop_lavik signals the PID this
# script started, never a process found by name (other people's servers run on this machine).

readonly HOST=127.0.0.1
SERVER_CMD=()  # set by lavik_command / redis_command
PYTHON=${PYTHON:-/usr/bin/python3}
REDIS_CLI=${REDIS_CLI:-redis-cli}
REDIS_BENCHMARK=${REDIS_BENCHMARK:-redis-benchmark}

log() { printf '[%s] %s\n' "$BENCH_NAME" "$*" >&2; }
die() {
  printf '[%s] FAILED: %s\n' "$BENCH_NAME" "$*" >&2
  exit 1
}

require_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || die "missing tool: $tool"
  done
}

require_uint() {
  local name=$1 value=$2
  [[ $value =~ ^[1-9][0-9]*$ ]] || die "$name must be a positive integer, got '$value'"
}

# A port nobody listens on right now (the kernel picks it; the server binds it a moment later).
free_port() {
  "$PYTHON" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

cli() { "$REDIS_CLI" -h "$HOST" -p "$PORT" "$@"; }

# Waits until the server at PORT answers PING; fails if SERVER_PID exits first. SERVER_NAME (if
# set) names the server in the messages.
wait_ready() {
  local what=$1 i
  for ((i = 0; i < 600; i++)); do
    kill -0 "$SERVER_PID" 2>/dev/null ||
      die "${SERVER_NAME:-lavik} exited during $what; see its log in $RAW_DIR"
    if [[ $(cli PING 2>/dev/null) == PONG ]]; then
      return 0
    fi
    sleep 0.1
  done
  die "${SERVER_NAME:-lavik} did not answer PING within 60 s ($what)"
}

alive() {
  kill -0 "$SERVER_PID" 2>/dev/null || die "lavik (pid $SERVER_PID) died during $1; see $RAW_DIR"
}

# stop_lavik PID [SECONDS [NAME]]: stops the server with pid PID (NAME in the log, lavik by
# default) if it runs: SIGTERM, then SIGKILL after SECONDS (30). Returns its exit status through
# the global LAST_EXIT ("" when there was no pid).
LAST_EXIT=""
# shellcheck disable=SC2034  # LAST_EXIT is read by the sourcing scripts
stop_lavik() {
  local pid=$1 secs=${2:-30} name=${3:-lavik} i
  LAST_EXIT=""
  [[ -n $pid ]] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < secs * 10; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "$name (pid $pid) ignored SIGTERM for $secs s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  local rc=0
  wait "$pid" 2>/dev/null || rc=$?
  LAST_EXIT=$rc
}

# Resident set size of pid $1 in bytes (VmRSS, or VmHWM with $2 = VmHWM).
rss_bytes() {
  local field=${2:-VmRSS} kb
  kb=$(awk -v f="$field:" '$1 == f { print $2 }' "/proc/$1/status") || die "pid $1 is gone"
  [[ -n $kb ]] || die "no $field in /proc/$1/status"
  echo $((kb * 1024))
}

# utime+stime of the whole process in clock ticks (fields counted from the last ')').
cpu_ticks() {
  local stat
  stat=$(<"/proc/$1/stat") || die "pid $1 is gone"
  stat=${stat##*) }
  local -a f
  read -r -a f <<<"$stat"
  echo $((f[11] + f[12]))
}

# info_get "<INFO text>" FIELD: the value of FIELD, or fails.
info_get() {
  local v
  v=$(printf '%s\n' "$1" | tr -d '\r' | awk -F: -v k="$2" '!done && $1 == k { print $2; done = 1 }')
  [[ -n $v ]] || die "INFO has no field '$2'"
  echo "$v"
}

# median V...: the middle value (the mean of the two middle ones for an even count).
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
    END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Arithmetic with decimals: calc EXPR VARS... (awk; VARS as name=value).
calc() {
  local expr=$1
  shift
  local -a args=()
  local kv
  for kv in "$@"; do
    args+=(-v "$kv")
  done
  awk "${args[@]}" "BEGIN { print $expr }"
}

human_bytes() {
  awk -v b="$1" 'BEGIN {
    split("B KiB MiB GiB TiB", u, " "); i = 1
    while (b >= 1024 && i < 5) { b /= 1024; i++ }
    printf (i == 1 ? "%d %s" : "%.1f %s"), b, u[i] }'
}

# Loads keys 0..N-1 of VALUE_SIZE bytes from RESP on stdin with redis-cli --pipe pinned to
# CLIENT_CPUS; output in $1. Fails unless every reply arrived without error.
pipe_load() {
  local out=$1 n=$2
  local rc=0
  taskset -c "$CLIENT_CPUS" "$REDIS_CLI" -h "$HOST" -p "$PORT" --pipe --pipe-timeout 120 \
    >"$out" 2>&1 || rc=$?
  ((rc == 0)) || die "redis-cli --pipe exited with status $rc; see $out"
  grep -q "errors: 0, replies: $n\$" "$out" || die "load incomplete or with errors: $(tail -n 1 "$out")"
}

# Warning lines of a Redis-style log ("pid:role date time # text") plus anything that looks like a
# crash report.
log_warnings() {
  [[ -f $1 ]] || return 0
  grep -E ' # |[Aa]ssert|[Ss]egmentation|[Aa]bort|terminate called|[Pp]anic' "$1" || true
}

# Markdown table from rows of "a|b|c": md_table "h1|h2" row...
md_table() {
  local header=$1
  shift
  echo "| ${header//|/ | } |"
  local sep="|" i
  local -a hs
  IFS='|' read -r -a hs <<<"$header"
  for ((i = 0; i < ${#hs[@]}; i++)); do
    sep+=" --- |"
  done
  echo "$sep"
  local row
  for row in "$@"; do
    echo "| ${row//|/ | } |"
  done
}

# Plain two-column table from rows of "name|value".
text_table() {
  local row
  for row in "$@"; do
    printf '  %-44s %s\n' "${row%%|*}" "${row#*|}"
  done
}

git_rev() {
  local rev
  rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [[ $(git -C "$ROOT" status --porcelain 2>/dev/null | head -c 1) != "" ]]; then
    rev+=" (dirty tree)"
  fi
  echo "$rev"
}

# Copies LAVIK_BIN into BENCH_TMP and sets LAVIK_RUN to the copy, so that a rebuild of build/ by
# someone else during the run (the binary is replaced) cannot mix two builds in one measurement.
# LAVIK_BIN_ID names the build measured: path, modification time, start of its SHA-256.
# shellcheck disable=SC2034,SC2153  # LAVIK_BIN comes from, LAVIK_BIN_ID goes to the sourcing script
snapshot_lavik() {
  LAVIK_RUN=$BENCH_TMP/lavik
  cp -- "$LAVIK_BIN" "$LAVIK_RUN"
  "$LAVIK_RUN" --version >/dev/null 2>&1 || die "$LAVIK_BIN does not run (being rebuilt?)"
  LAVIK_BIN_ID="$LAVIK_BIN, built $(date -r "$LAVIK_BIN" '+%Y-%m-%d %H:%M:%S'), sha256 $(sha256sum "$LAVIK_RUN" | cut -c1-12)"
}

# The number of lines of $1 (lavik's log warnings): 0 when it is empty.
count_lines() {
  if [[ -n $1 ]]; then
    printf '%s\n' "$1" | wc -l
  else
    echo 0
  fi
}

# print_warnings TEXT FORM: the first 20 of lavik's log warnings TEXT under a heading, as plain
# text (FORM text) or Markdown (FORM md); nothing when there are none.
print_warnings() {
  [[ -n $1 ]] || return 0
  echo
  if [[ $2 == md ]]; then
    echo "lavik log warnings (first 20):"
    echo
    echo '```'
    printf '%s\n' "$1" | head -n 20
    echo '```'
  else
    echo "lavik log warnings:"
    printf '%s\n' "$1" | head -n 20
  fi
}

# Number of CPUs in a taskset list such as "1", "0,1" or "0-3".
count_cpus() {
  local n=0 part
  local -a parts
  IFS=, read -r -a parts <<<"$1"
  for part in "${parts[@]}"; do
    if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then
      n=$((n + BASH_REMATCH[2] - BASH_REMATCH[1] + 1))
    else
      n=$((n + 1))
    fi
  done
  echo "$n"
}

# The CPUs two taskset lists share, as a comma-separated list ("" for none).
cpu_overlap() {
  "$PYTHON" -c 'import sys
def cpus(s):
    out = set()
    for p in s.split(","):
        a, _, b = p.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out
print(",".join(map(str, sorted(cpus(sys.argv[1]) & cpus(sys.argv[2])))))' "$1" "$2"
}

# lavik_command BIN DIR THREADS [FLAG...]: sets the array SERVER_CMD to the command line that starts
# lavik on $HOST:$PORT with its data file, logs and dump.rdb directory (`--dir`, so a dump.rdb in
# the caller's directory is never imported) under DIR (created) and THREADS workers. When
# SERVER_NCPUS (the size of the CPU mask the server runs in) is set and smaller than THREADS, the
# workers are not pinned: pinned workers would each claim a CPU of the mask.
lavik_command() {
  local bin=$1 dir=$2 threads=$3
  shift 3
  mkdir -p "$dir/data" "$dir/logs"
  SERVER_CMD=("$bin" --port "$PORT" --threads "$threads" --data-file "$dir/data/lavik.data"
    --log-dir "$dir/logs" --dir "$dir" "$@")
  if [[ -n ${SERVER_NCPUS:-} ]] && ((threads > SERVER_NCPUS)); then
    SERVER_CMD+=(--no-pin-workers)
  fi
}

# redis_command BIN DIR [ARG...]: sets SERVER_CMD to a redis-server (or compatible) on $HOST:$PORT
# without persistence, its working directory DIR (created).
redis_command() {
  local bin=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  SERVER_CMD=("$bin" --port "$PORT" --bind "$HOST" --save '' --appendonly no --daemonize no
    --dir "$dir" "$@")
}

# start_bench_server lavik|redis DIR THREADS: on a fresh PORT, starts LAVIK_BIN (THREADS workers,
# not pinned, files under DIR) or REDIS_SERVER (files under DIR/redis), output in DIR/<name>.out,
# and waits until it answers PING.
start_bench_server() {
  PORT=$(free_port)
  if [[ $1 == lavik ]]; then
    lavik_command "$LAVIK_BIN" "$2" "$3" --no-pin-workers
  else
    redis_command "$REDIS_SERVER" "$2/redis"
  fi
  launch_server "$2/$1.out"
  wait_ready "start of $1"
}

# launch_server LOG: starts SERVER_CMD pinned to $SERVER_CPUS, output to LOG; sets SERVER_PID
# (taskset execs the server, so $! is the server's own pid).
# shellcheck disable=SC2153  # SERVER_CPUS is set by the sourcing script
launch_server() {
  taskset -c "$SERVER_CPUS" "${SERVER_CMD[@]}" >"$1" 2>&1 &
  SERVER_PID=$!
}

# Cluster benchmarks (cluster.sh, reshard.sh). track_nodes TMPDIR: every node start_cluster_node
# starts is stopped, and TMPDIR removed, on every exit path.
declare -A NODE_PIDS=()  # "<server> <port>" -> pid
NODES_TMP=""
cleanup_nodes() {
  local k
  for k in "${!NODE_PIDS[@]}"; do
    stop_lavik "${NODE_PIDS[$k]}" 30 "$k"
  done
  if [[ -n $NODES_TMP ]]; then rm -rf "$NODES_TMP"; fi
}
track_nodes() {
  NODES_TMP=$1
  trap cleanup_nodes EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# start_cluster_node SERVER PORT DIR LAVIK_BINARY: a cluster-enabled lavik or redis-server node
# on PORT (nodes.conf in DIR), started and answering. Sets PORT.
start_cluster_node() {
  local server=$1 dir=$3
  PORT=$2
  local -a cl=(--cluster-enabled yes --cluster-config-file "$dir/nodes.conf")
  if [[ $server == lavik ]]; then
    lavik_command "$4" "$dir" "$LAVIK_THREADS" --no-pin-workers "${cl[@]}"
  else
    redis_command "$REDIS_SERVER" "$dir" "${cl[@]}"
  fi
  log "starting $server on $HOST:$PORT: ${SERVER_CMD[*]}"
  launch_server "$dir.out"
  NODE_PIDS["$server $PORT"]=$SERVER_PID
  SERVER_NAME=$server wait_ready "start of $server:$PORT"
}
