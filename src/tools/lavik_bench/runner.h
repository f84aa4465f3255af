// RunBenchmark: one complete lavik-bench run (closed loop, open loop or fill) from parsed
// options to merged results: connects every connection, splits them over the worker threads,
// starts all workers on one timeline and merges their statistics.
//
// Thread safety: call from one thread; it starts and joins its own workers.

#ifndef LAVIK_TOOLS_LAVIK_BENCH_RUNNER_H_
#define LAVIK_TOOLS_LAVIK_BENCH_RUNNER_H_

#include <cstdint>
#include <string>

#include "tools/lavik_bench/client.h"
#include "tools/lavik_bench/options.h"

namespace lavik::bench {

// An open-loop point counts as sustained only at >= 97% of the requested rate.
inline constexpr double kSustainedFraction = 0.97;

struct RunResult {
  WorkerStats stats;      // merged over all workers
  double duration_s = 0;  // the measured window (fill: wall time of the fill)
  uint64_t seed = 0;

  double ops_per_sec() const { return duration_s > 0 ? stats.requests / duration_s : 0; }
  uint64_t errors() const { return stats.error_replies + stats.connection_errors; }
  // Closed loop has no target rate, so it is always "sustained".
  bool Sustained(const Options& o) const {
    return !o.open_loop() || ops_per_sec() >= kSustainedFraction * o.rate;
  }
  // --fill wrote every key exactly once (each SET answered +OK, nothing failed).
  bool FillExact(const Options& o) const {
    return stats.keys_written == o.key_count() && errors() == 0;
  }
};

// The SET payload of `size` bytes: printable and not one repeated byte.
std::string MakeValue(int size);

// Runs `opts` with base seed `seed`. Returns false with *error set only if setup fails (a
// connection cannot be opened); failures during the run are counted in the result instead.
bool RunBenchmark(const Options& opts, uint64_t seed, RunResult* out, std::string* error);

}  // namespace lavik::bench

#endif  // LAVIK_TOOLS_LAVIK_BENCH_RUNNER_H_
