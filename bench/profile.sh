#!/usr/bin/env bash
# profile.sh: deterministic per-request costs of one server at a few load points, for a machine
# too busy for wall-clock figures to mean much (doc/threading.md, "Request path costs").
#
# For each point (test x connections x pipeline) it runs redis-benchmark against the server while
# `perf stat` counts, on the server's threads only, every system call (raw_syscalls:sys_enter),
# io_uring_enter calls, context switches and task-clock; it prints them per request, with the
# server's utime+stime per request. With PROFILE_CALLGRIND=1 the server runs under
# `valgrind --tool=callgrind` instead and the script prints the user-space instructions per
# request (counters zeroed before the point, dumped after it: start-up and fill are not counted).
#
#   bench/profile.sh                                   # lavik, GET/SET, 50/200/1000 conns, P1 and P16
#   PROFILE_SERVER=redis bench/profile.sh              # redis-server, same points
#   PROFILE_CALLGRIND=1 PROFILE_REQUESTS=20000 bench/profile.sh
#
# Environment (defaults in brackets): PROFILE_SERVER [lavik] (lavik|redis), LAVIK_BIN
# [build/lavik], LAVIK_THREADS [1], SERVER_CPUS [1], CLIENT_CPUS [0], PROFILE_KEYS [100000],
# PROFILE_REQUESTS [200000], PROFILE_POINTS ["get:50:1 set:50:1 get:200:1 set:200:1 get:1000:1
# set:1000:1 get:50:16 set:50:16"], PROFILE_VALUE_SIZE [1024], LAVIK_ARGS [""].
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
PROFILE_SERVER=${PROFILE_SERVER:-lavik}
LAVIK_THREADS=${LAVIK_THREADS:-1}
LAVIK_ARGS=${LAVIK_ARGS:-}
SERVER_CPUS=${SERVER_CPUS:-1}
CLIENT_CPUS=${CLIENT_CPUS:-0}
PROFILE_KEYS=${PROFILE_KEYS:-100000}
PROFILE_REQUESTS=${PROFILE_REQUESTS:-200000}
PROFILE_VALUE_SIZE=${PROFILE_VALUE_SIZE:-1024}
PROFILE_POINTS=${PROFILE_POINTS:-get:50:1 set:50:1 get:200:1 set:200:1 get:1000:1 set:1000:1 get:50:16 set:50:16}
PROFILE_CALLGRIND=${PROFILE_CALLGRIND:-0}
BENCH_NAME=profile
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

require_tools "$REDIS_CLI" "$REDIS_BENCHMARK" "$PYTHON" taskset perf
[[ $PROFILE_CALLGRIND == 1 ]] && require_tools valgrind callgrind_control
TMP=$(mktemp -d /tmp/lavik-profile.XXXXXX)
RAW_DIR=$TMP
SERVER_PID=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [[ -n $SERVER_PID ]] && stop_lavik "$SERVER_PID" 20 "$PROFILE_SERVER"
  rm -rf -- "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PORT=$(free_port)
SERVER_NCPUS=$(count_cpus "$SERVER_CPUS")
if [[ $PROFILE_SERVER == lavik ]]; then
  # shellcheck disable=SC2086  # LAVIK_ARGS is a list of flags
  lavik_command "$LAVIK_BIN" "$TMP" "$LAVIK_THREADS" $LAVIK_ARGS
else
  redis_command "$REDIS_SERVER" "$TMP/redis"
fi
if [[ $PROFILE_CALLGRIND == 1 ]]; then
  SERVER_CMD=(valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$TMP/cg.%p"
    "${SERVER_CMD[@]}")
fi
launch_server "$TMP/server.log"
wait_ready start-up

log "filling $PROFILE_KEYS keys"
"$PYTHON" - "$PROFILE_KEYS" "$PROFILE_VALUE_SIZE" <<'EOF' | pipe_load "$TMP/fill.txt" "$PROFILE_KEYS"
import sys
n, size = int(sys.argv[1]), int(sys.argv[2])
tail = b"\r\n$%d\r\n%s\r\n" % (size, b"x" * size)
out = sys.stdout.buffer
for i in range(n):
    key = b"key:%012d" % i
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s%s" % (len(key), key, tail))
EOF

printf '%-4s %5s %3s %10s %10s %10s %10s %10s\n' test conns P "sys/req" "enter/req" "cs/req" \
  "cpu us/req" "Ir/req"
for point in $PROFILE_POINTS; do
  IFS=: read -r test conns pipe <<<"$point"
  bench=(taskset -c "$CLIENT_CPUS" "$REDIS_BENCHMARK" -h "$HOST" -p "$PORT" -t "$test"
    -d "$PROFILE_VALUE_SIZE" -r "$PROFILE_KEYS" -n "$PROFILE_REQUESTS" -c "$conns" -P "$pipe" -q)
  ir="-"
  if [[ $PROFILE_CALLGRIND == 1 ]]; then
    callgrind_control -z "$SERVER_PID" >/dev/null
    callgrind_control -i on "$SERVER_PID" >/dev/null
    "${bench[@]}" >"$TMP/bench.txt" 2>&1
    callgrind_control -i off "$SERVER_PID" >/dev/null
    rm -f "$TMP"/cg.*
    callgrind_control -d "$SERVER_PID" >/dev/null
    for ((i = 0; i < 100; i++)); do
      compgen -G "$TMP/cg.*" >/dev/null && grep -qs '^totals:' "$TMP"/cg.* && break
      sleep 0.2
    done
    total=$(cat "$TMP"/cg.* | awk '/^totals:/ { s += $2 } END { print s + 0 }')
    ir=$(calc "int($total / $PROFILE_REQUESTS)")
    printf '%-4s %5s %3s %10s %10s %10s %10s %10s\n' "$test" "$conns" "$pipe" - - - - "$ir"
    continue
  fi
  before=$(cpu_ticks "$SERVER_PID")
  perf stat -x, -e raw_syscalls:sys_enter,syscalls:sys_enter_io_uring_enter,context-switches \
    -p "$SERVER_PID" -o "$TMP/perf.txt" -- "${bench[@]}" >"$TMP/bench.txt" 2>&1
  after=$(cpu_ticks "$SERVER_PID")
  grep -qi error "$TMP/bench.txt" && die "redis-benchmark errors: $(head -3 "$TMP/bench.txt")"
  sys=$(awk -F, '$3 == "raw_syscalls:sys_enter" { print $1 }' "$TMP/perf.txt")
  ent=$(awk -F, '$3 == "syscalls:sys_enter_io_uring_enter" { print $1 }' "$TMP/perf.txt")
  cs=$(awk -F, '$3 == "context-switches" { print $1 }' "$TMP/perf.txt")
  n=$PROFILE_REQUESTS
  printf '%-4s %5s %3s %10.3f %10.3f %10.3f %10.2f %10s\n' "$test" "$conns" "$pipe" \
    "$(calc "$sys / $n")" "$(calc "$ent / $n")" "$(calc "$cs / $n")" \
    "$(calc "($after - $before) * 1e6 / $(getconf CLK_TCK) / $n")" "$ir"
done
