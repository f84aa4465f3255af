// StatCounter: a counter written by one thread only and read by any (INFO stats, metrics). The
// writer uses a plain load + store (no locked instruction); a reader sees a recent value.
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

}  // namespace lavik
