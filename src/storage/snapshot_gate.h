// SnapshotGate: FLUSHALL/FLUSHDB and the RDB walk's snapshots (Store::BeginSnapshot) exclude each
// other, process-wide. A flush drops whole databases at once, which a snapshot could only keep by
// saving every entry; so a flush waits until no snapshot is open, and a snapshot does not begin
// while a flush runs (doc/rdb.md "Consistency"). Any number of flushes, or any number of
// snapshots, may hold the gate together.
//
// A flush that finds a snapshot open parks (EnterFlush) until the last snapshot ends, instead of
// retrying every loop turn: a walk of a large data set lasts minutes, and a retrying worker could
// never sleep meanwhile.
//
// Thread safety: any thread (one atomic; the parked flushes under a mutex).
#pragma once

#include <atomic>
#include <coroutine>
#include <mutex>
#include <vector>

#include "runtime/mailbox.h"
#include "runtime/worker.h"

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
  static void EndSnapshot() {
    if (state_.fetch_add(1) != -1) return;  // other snapshots still open
    std::vector<Parked*> woken;
    {
      std::lock_guard<std::mutex> hold(mu_);
      woken.swap(parked_);
    }
    for (Parked* p : woken) p->worker->Post(p);
  }
  static bool snapshot_open() { return state_.load(std::memory_order_relaxed) < 0; }

  // `co_await SnapshotGate::EnterFlush();` on a worker: holds the gate as a flush when it returns
  // (as TryEnterFlush), parked meanwhile while snapshots are open. Pair with LeaveFlush().
  class EnterFlush;

 private:
  struct Parked : MailboxItem {
    Worker* worker = nullptr;
    std::coroutine_handle<> handle;
  };
  // Parks p unless the gate can be entered now (then returns false, entered). Re-checked under
  // the mutex: EndSnapshot's wake-up takes the list after the state changed, so a flush that
  // failed to enter before that is in the list it takes.
  static bool Park(Parked* p) {
    std::lock_guard<std::mutex> hold(mu_);
    if (TryEnterFlush()) return false;
    parked_.push_back(p);
    return true;
  }
  static void Resume(MailboxItem* item) {
    auto* p = static_cast<Parked*>(item);
    if (!Park(p)) p->handle.resume();  // entered; else another snapshot began first: parked again
  }

  // > 0: that many flushes run; < 0: that many snapshots are open.
  static inline std::atomic<int> state_{0};
  static inline std::mutex mu_;
  static inline std::vector<Parked*> parked_;
};

class SnapshotGate::EnterFlush {
 public:
  bool await_ready() const { return TryEnterFlush(); }
  bool await_suspend(std::coroutine_handle<> h) {
    parked_.worker = Worker::Current();
    parked_.handle = h;
    parked_.run = &SnapshotGate::Resume;
    return Park(&parked_);
  }
  void await_resume() const {}

 private:
  Parked parked_;
};

}  // namespace lavik
