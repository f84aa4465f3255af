#include "tools/lavik_bench/runner.h"

#include <unistd.h>

#include <memory>
#include <thread>
#include <vector>

namespace lavik::bench {
namespace {

// Lead time between the end of setup and the first request, so every thread is parked in its
// start wait before the schedule begins.
constexpr int64_t kStartDelayNs = 20 * 1000 * 1000;

}  // namespace

std::string MakeValue(int size) {
  std::string v(static_cast<size_t>(size), 'x');
  for (int i = 0; i < size; ++i) v[static_cast<size_t>(i)] = static_cast<char>('a' + i * 7 % 26);
  return v;
}

bool RunBenchmark(const Options& opts, uint64_t seed, RunResult* out, std::string* error) {
  // Connect everything up front: connection failures are reported before any load starts.
  std::vector<int> fds;
  fds.reserve(static_cast<size_t>(opts.connections));
  for (int i = 0; i < opts.connections; ++i) {
    const int fd = ConnectTo(opts.host, opts.port, error);
    if (fd < 0) {
      for (const int f : fds) close(f);
      return false;
    }
    fds.push_back(fd);
  }

  const std::string value = MakeValue(opts.value_size);
  std::vector<std::unique_ptr<Worker>> workers;
  int next = 0;
  for (int t = 0; t < opts.threads; ++t) {
    const int share = opts.connections / opts.threads + (t < opts.connections % opts.threads);
    std::vector<int> mine(fds.begin() + next, fds.begin() + next + share);
    workers.push_back(std::make_unique<Worker>(opts, t, next, std::move(mine), value, seed));
    next += share;
  }

  Timeline timeline;
  timeline.start_ns = MonotonicNs() + kStartDelayNs;
  timeline.measure_ns = timeline.start_ns + static_cast<int64_t>(opts.warmup_s * 1e9);
  timeline.end_ns = timeline.measure_ns + static_cast<int64_t>(opts.duration_s * 1e9);
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&w, &timeline] { w->Run(timeline); });
  for (auto& th : threads) th.join();
  const int64_t finished_ns = MonotonicNs();

  *out = RunResult();
  out->seed = seed;
  for (const auto& w : workers) out->stats.Merge(w->stats());
  const int64_t window_ns =
      opts.fill ? finished_ns - timeline.start_ns : timeline.end_ns - timeline.measure_ns;
  out->duration_s = static_cast<double>(window_ns) / 1e9;
  return true;
}

}  // namespace lavik::bench
