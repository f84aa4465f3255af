// Worker: one thread with its own event loop, mailbox and timers. Shared-nothing: the shard a
// worker owns (storage, commands layers) is touched only on this thread; other threads reach it
// by posting a MailboxItem.
//
// Thread safety: Post() and RequestStop() may be called from any thread. Everything else is for
// the worker's own thread (after Start) or for the creating thread before Start.
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
  // Posted from a worker's loop, the item waits in that worker's outbox, which holds one run of
  // consecutive posts to the same target: the run is pushed as one chain, with one wake-up, when
  // the turn ends, when a post to another target comes (so items still become visible in exactly
  // the order they were posted, across targets too), or at kMaxOutgoing items.
  void Post(MailboxItem* item);

  // Own thread: whether Post from this thread goes to the outbox (the loop runs), and how many
  // chains this worker has pushed to worker `target` so far. An item posted to target from the
  // loop stays invisible to target while this count is unchanged since just before the post, so
  // its poster may still add to it (PubSub's delivery batches grow that way during a turn).
  bool batching() const { return batching_; }
  uint64_t flushes_to(int target) const {
    return static_cast<size_t>(target) < flushes_to_.size() ? flushes_to_[target] : 0;
  }

  // The longest run held back: bounds the delay a hop posted early in a long turn can see.
  static constexpr int kMaxOutgoing = 64;

  // Own thread: the next loop turn must not sleep (more work is ready in user-space queues).
  void MarkBusy() { busy_ = true; }
  // Own thread: runs item->run(item) on the next loop turn, after I/O completions were reaped
  // (how background work yields to foreground requests).
  void Defer(MailboxItem* item) {
    deferred_.push_back(item);
    busy_ = true;
  }

  // Own thread (or before Start): calls fn every interval_us, between loop turns.
  void AddTimer(int64_t interval_us, std::function<void()> fn);
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
  // Chains pushed to other workers' mailboxes and wake-ups (eventfd writes) sent by this worker.
  uint64_t chains_sent() const { return chains_sent_; }
  uint64_t wakeups_sent() const { return wakeups_sent_; }

 private:
  struct Timer {
    int64_t interval_us;
    int64_t due_us;
    std::function<void()> fn;
  };
  void Run(std::function<bool(std::string*)> init, std::function<bool()> done);
  int64_t RunTimers();  // returns microseconds until the next timer (or -1)
  void DrainMailbox();
  // Pushes item (or a chain) into this worker's mailbox and wakes it if it sleeps; returns
  // whether a wake-up was sent.
  bool Deliver(MailboxItem* first, MailboxItem* last);
  // Own thread: adds item to the outbox run (pushing the run first if it is for another target)
  // / pushes the run.
  void Enqueue(Worker* target, MailboxItem* item);
  void FlushOutgoing();

  const int id_;
  const int pin_cpu_;
  EventLoop loop_;
  Mailbox mailbox_;
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> stop_{false};
  bool busy_ = false;
  std::vector<Timer> timers_;
  std::vector<std::function<void()>> turn_hooks_;
  std::vector<MailboxItem*> deferred_;
  std::vector<MailboxItem*> running_deferred_;
  std::thread thread_;
  uint64_t mailbox_items_ = 0;
  bool batching_ = false;  // the loop runs: Post from this thread goes to the outbox
  // The outbox run: items for run_target_, linked through MailboxItem::next.
  Worker* run_target_ = nullptr;
  MailboxItem* run_first_ = nullptr;
  MailboxItem* run_last_ = nullptr;
  int run_count_ = 0;
  std::vector<uint64_t> flushes_to_;  // chains pushed, by target id
  uint64_t chains_sent_ = 0;
  uint64_t wakeups_sent_ = 0;

  std::atomic<int> started_{0};  // 0 pending, 1 ok, 2 failed
  std::string start_error_;
};

}  // namespace lavik
