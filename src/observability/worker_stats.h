// Per-worker counters the server keeps (INFO stats, metrics): each written by its own worker
// only, read by any thread (relaxed atomics: a reader sees a recent value).
#pragma once

#include <atomic>
#include <cstdint>

namespace lavik {

class StatCounter {
 public:
  void Add(uint64_t n = 1) {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  uint64_t Get() const { return v_.load(std::memory_order_relaxed); }
  void Reset() { v_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

struct WorkerStats {
  StatCounter commands;
  StatCounter connections_received;
  StatCounter rejected_connections;
  StatCounter expired_keys_active;
};

}  // namespace lavik
