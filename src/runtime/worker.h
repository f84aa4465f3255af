// Worker: one thread with its own event loop, mailbox and timers. Shared-nothing: the shard a
// worker owns (storage, commands layers) is touched only on this thread; other threads reach it
// by posting a MailboxItem.
//
// Thread safety: Post(), PostQuiet(), WakeIfSleeping() and RequestStop() may be called from any
// thread. Everything else is for the worker's own thread (after Start) or for the creating thread
// before Start.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/event_loop.h"
#include "runtime/mailbox.h"

namespace lavik {

class Worker {
 public:
  Worker(int id, int pin_cpu);
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  int id() const { return id_; }
  EventLoop& loop() { return loop_; }

  // The worker running on the calling thread, or nullptr on a non-worker thread.
  static Worker* Current();

  // Any thread: runs item->run(item) on this worker's thread, in push order per producer.
  void Post(MailboxItem* item);
  // Any thread: queues item like Post, without waking the worker if it sleeps: it runs once
  // something else wakes it (a completion, a timer, another Post). For work whose result nobody
  // waits on until the worker has a reason to wake anyway (RemoteCommand's lent-socket replies).
  void PostQuiet(MailboxItem* item) { mailbox_.Push(item); }
  // Any thread: wakes the worker if it sleeps.
  void WakeIfSleeping();

  // Own thread: the next loop turn must not sleep (more work is ready in user-space queues).
  void MarkBusy() { busy_ = true; }
  // Own thread, from a turn hook: this turn's wait ends within `us` microseconds even if nothing
  // completes (work held back for a moment must not wait for the next timer or request).
  void WakeWithin(int64_t us) {
    if (wake_within_us_ < 0 || us < wake_within_us_) wake_within_us_ = us;
  }
  // Own thread: runs item->run(item) on the next loop turn, after I/O completions were reaped
  // (how background work yields to foreground requests).
  void Defer(MailboxItem* item) {
    deferred_.push_back(item);
    busy_ = true;
  }

  // Own thread (or before Start): calls fn every interval_us, between loop turns.
  void AddTimer(int64_t interval_us, std::function<void()> fn);
  // Own thread (or before Start): called after the `prefetch` of a batch of mailbox items ran
  // (one or more), before their `run`: finishes what the prefetches started (e.g.
  // Store::PrefetchFlush).
  void SetPrefetchFlush(void (*fn)(void* arg), void* arg) {
    prefetch_flush_ = fn;
    prefetch_flush_arg_ = arg;
  }
  // Own thread (or before Start): calls fn at the end of every loop turn, before waiting.
  void AddTurnHook(std::function<void()> fn);

  // Starts the thread. `init` runs first on it (returns false + error to abort the process
  // start-up); the loop then runs until `done()` returns true after a stop was requested.
  void Start(std::function<bool(std::string*)> init, std::function<bool()> done);
  // Blocks until Start's init has run; returns its result.
  bool WaitStarted(std::string* error);
  void RequestStop();
  bool stop_requested() const { return stop_.load(std::memory_order_acquire); }
  void Join();

  uint64_t mailbox_items() const { return mailbox_items_; }

 private:
  struct Timer {
    int64_t interval_us;
    int64_t due_us;
    std::function<void()> fn;
  };
  void Run(std::function<bool(std::string*)> init, std::function<bool()> done);
  int64_t RunTimers();  // returns microseconds until the next timer (or -1)
  void DrainMailbox();

  const int id_;
  const int pin_cpu_;
  EventLoop loop_;
  Mailbox mailbox_;
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> stop_{false};
  bool busy_ = false;
  int64_t wake_within_us_ = -1;  // WakeWithin of this turn, -1: none
  std::vector<Timer> timers_;
  std::vector<std::function<void()>> turn_hooks_;
  std::vector<MailboxItem*> deferred_;
  std::vector<MailboxItem*> running_deferred_;
  std::thread thread_;
  uint64_t mailbox_items_ = 0;
  void (*prefetch_flush_)(void*) = nullptr;
  void* prefetch_flush_arg_ = nullptr;

  std::atomic<int> started_{0};  // 0 pending, 1 ok, 2 failed
  std::string start_error_;
};

}  // namespace lavik
