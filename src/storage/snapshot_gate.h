// SnapshotGate: FLUSHALL/FLUSHDB and the RDB walk's snapshots (Store::BeginSnapshot) exclude each
// other, process-wide. A flush drops whole databases at once, which a snapshot could only keep by
// saving every entry; so a flush waits until no snapshot is open, and a snapshot does not begin
// while a flush runs (doc/rdb.md "Consistency"). Any number of flushes, or any number of
// snapshots, may hold the gate together.
//
// Thread safety: any thread (one atomic).
#pragma once

#include <atomic>

namespace lavik {

class SnapshotGate {
 public:
  // True if the caller now holds the gate as a flush (no snapshot open).
  static bool TryEnterFlush() {
    int s = state_.load();
    while (s >= 0) {
      if (state_.compare_exchange_weak(s, s + 1)) return true;
    }
    return false;
  }
  static void LeaveFlush() { state_.fetch_sub(1); }
  // True if the caller now holds the gate as a snapshot (no flush running).
  static bool TryBeginSnapshot() {
    int s = state_.load();
    while (s <= 0) {
      if (state_.compare_exchange_weak(s, s - 1)) return true;
    }
    return false;
  }
  static void EndSnapshot() { state_.fetch_add(1); }
  static bool snapshot_open() { return state_.load(std::memory_order_relaxed) < 0; }

 private:
  // > 0: that many flushes run; < 0: that many snapshots are open.
  static inline std::atomic<int> state_{0};
};

}  // namespace lavik
