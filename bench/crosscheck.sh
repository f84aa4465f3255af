#!/usr/bin/env bash
# crosscheck.sh: lavik-bench against redis-benchmark on the same server and settings.
#
# Issue #5 asks that lavik-bench's ops/s and p50 agree with redis-benchmark's within 10% on the
# same server and settings. Both clients GET the same key ("1", a VALUE_SIZE-byte value) with
# pipeline 1 at each connection count, one client at a time, alternating (redis-benchmark then
# lavik-bench, then the other way round) REPEATS times, so a change in the machine's background
# load hits both alike; the table shows the median of the repeats and the ratio lavik-bench /
# redis-benchmark. Both are pinned to CLIENT_CPUS, the server to SERVER_CPUS, one client thread
# each (redis-benchmark's default).
#
# Environment (defaults in brackets):
#   SERVER [redis: Debian's redis-server; or lavik: build/lavik --threads 1]   LAVIK_ARGS [""]: more
#     lavik flags, e.g. "--cache-mb 0" so every GET reads the data file and the server, not the
#     client, is the bottleneck
#   CONNECTIONS ["1 10 50 200"]   REPEATS [3]   REQUESTS [300000: per redis-benchmark run]
#   DURATION [3: lavik-bench's window, s; plus WARMUP 1 s]   VALUE_SIZE [1024]
#   SERVER_CPUS [1]   CLIENT_CPUS [0]   RESULTS_DIR [bench/results]
#
# Output: the table on stdout and as Markdown in RESULTS_DIR/crosscheck-<stamp>.md.
set -euo pipefail

# shellcheck disable=SC2034  # read by lib.sh
BENCH_NAME=crosscheck
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

SERVER=${SERVER:-redis}
CONNECTIONS=${CONNECTIONS:-"1 10 50 200"}
REPEATS=${REPEATS:-3}
REQUESTS=${REQUESTS:-300000}
DURATION=${DURATION:-3}
WARMUP=${WARMUP:-1}
VALUE_SIZE=${VALUE_SIZE:-1024}
SERVER_CPUS=${SERVER_CPUS:-1}
CLIENT_CPUS=${CLIENT_CPUS:-0}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results}
LAVIK_BIN=${LAVIK_BIN:-$ROOT/build/lavik}
LAVIK_BENCH=${LAVIK_BENCH:-$ROOT/build/lavik-bench}
LAVIK_ARGS=${LAVIK_ARGS:-}

require_tools "$REDIS_CLI" "$REDIS_BENCHMARK" redis-server taskset "$PYTHON"
for v in REPEATS REQUESTS DURATION WARMUP VALUE_SIZE; do require_uint "$v" "${!v}"; done
[[ -x $LAVIK_BENCH ]] || die "$LAVIK_BENCH not built (cmake --build build --target lavik-bench)"

TMP=$(mktemp -d)
SERVER_PID=""
cleanup() {
  if [[ -n $SERVER_PID ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

PORT=$(free_port)
case $SERVER in
  redis) redis_command redis-server "$TMP" ;;
  lavik)
    [[ -x $LAVIK_BIN ]] || die "$LAVIK_BIN not built"
    # shellcheck disable=SC2086  # LAVIK_ARGS is a list of flags
    lavik_command "$LAVIK_BIN" "$TMP" 1 $LAVIK_ARGS
    ;;
  *) die "SERVER must be redis or lavik, got '$SERVER'" ;;
esac
launch_server "$TMP/server.log"
RAW_DIR=$TMP
wait_ready "start-up"
cli SET 1 "$(head -c "$VALUE_SIZE" /dev/zero | tr '\0' x)" >/dev/null
[[ $(cli STRLEN 1) == "$VALUE_SIZE" ]] || die "SET 1 failed"
VERSION=$(cli INFO server | tr -d '\r' | awk -F: '$1 == "redis_version" {print $2}')
log "server: $SERVER $VERSION on CPU $SERVER_CPUS, port $PORT; clients on CPU $CLIENT_CPUS"

# run_rb CONNS -> "ops p50_ms"
run_rb() {
  local out
  out=$(taskset -c "$CLIENT_CPUS" "$REDIS_BENCHMARK" -h "$HOST" -p "$PORT" -c "$1" \
    -n "$REQUESTS" --csv GET 1)
  # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",...
  awk -F, 'NR == 2 { gsub(/"/, ""); print $2, $5 }' <<<"$out"
}

# run_lb CONNS -> "ops p50_ms"
run_lb() {
  local json
  json=$(taskset -c "$CLIENT_CPUS" "$LAVIK_BENCH" --host "$HOST" --port "$PORT" \
    --connections "$1" --threads 1 --pipeline 1 --ratio 1:0 --key-min 1 --key-max 1 \
    --value-size "$VALUE_SIZE" --duration "$DURATION" --warmup "$WARMUP" --json)
  "$PYTHON" -c 'import json, sys; d = json.loads(sys.argv[1]); print(d["ops_per_sec"], d["p50_ms"])' "$json"
}

median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

STAMP=$(date +%Y%m%d-%H%M%S)
OUT=$RESULTS_DIR/crosscheck-$STAMP.md
declare -a ROWS=()
for c in $CONNECTIONS; do
  rb_ops="" rb_p50="" lb_ops="" lb_p50=""
  for ((i = 0; i < REPEATS; i++)); do
    if ((i % 2 == 0)); then order="rb lb"; else order="lb rb"; fi
    for who in $order; do
      read -r ops p50 < <("run_$who" "$c")
      [[ -n $ops && -n $p50 ]] || die "$who gave no result at $c connections"
      log "c=$c run $((i + 1)) $who: $ops ops/s, p50 $p50 ms"
      if [[ $who == rb ]]; then
        rb_ops+=" $ops" rb_p50+=" $p50"
      else
        lb_ops+=" $ops" lb_p50+=" $p50"
      fi
    done
  done
  m_rb_ops=$(median <<<"${rb_ops# }") m_rb_p50=$(median <<<"${rb_p50# }")
  m_lb_ops=$(median <<<"${lb_ops# }") m_lb_p50=$(median <<<"${lb_p50# }")
  ROWS+=("$(awk -v c="$c" -v ro="$m_rb_ops" -v lo="$m_lb_ops" -v rp="$m_rb_p50" -v lp="$m_lb_p50" \
    'BEGIN { printf "%d|%.0f|%.0f|%.3f|%.3f|%.3f|%.3f", c, ro, lo, lo / ro, rp, lp, lp / rp }')")
done

{
  echo "# lavik-bench vs redis-benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "Server: $SERVER $VERSION${LAVIK_ARGS:+ ($LAVIK_ARGS)} on CPU $SERVER_CPUS; both clients on CPU $CLIENT_CPUS, one thread,"
  echo "pipeline 1, GET of one ${VALUE_SIZE}-byte value (key \"1\"); median of $REPEATS alternating runs"
  echo "(redis-benchmark: -n $REQUESTS; lavik-bench: ${WARMUP} s warm-up + ${DURATION} s window)."
  echo "Machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
  echo
  echo "| Connections | redis-benchmark ops/s | lavik-bench ops/s | ratio | redis-benchmark p50 ms | lavik-bench p50 ms | ratio |"
  echo "|---|---|---|---|---|---|---|"
  for r in "${ROWS[@]}"; do echo "| ${r//|/ | } |"; done
} | tee "$OUT"
log "wrote $OUT"
