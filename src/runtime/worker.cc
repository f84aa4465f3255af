#include "runtime/worker.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <array>

namespace lavik {
namespace {

thread_local Worker* current_worker = nullptr;

int64_t MonoUs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

}  // namespace

Worker::Worker(int id, int pin_cpu) : id_(id), pin_cpu_(pin_cpu) {}

Worker* Worker::Current() { return current_worker; }

void Worker::Post(MailboxItem* item) {
  mailbox_.Push(item);
  WakeIfSleeping();
}

void Worker::WakeIfSleeping() {
  // Pairs with the seq_cst store in before_sleep: either the worker sees the item before it
  // sleeps, or we see it sleeping and wake it.
  if (sleeping_.load(std::memory_order_seq_cst) && sleeping_.exchange(false)) {
    // From another worker: a ring-to-ring message that leaves with that worker's submissions of
    // this turn (no system call per hop); from any other thread: the eventfd.
    Worker* from = current_worker;
    if (from == nullptr || from == this || !from->loop_.WakeThrough(&loop_)) loop_.Wake();
  }
}

void Worker::AddTimer(int64_t interval_us, std::function<void()> fn) {
  timers_.push_back(Timer{interval_us, MonoUs() + interval_us, std::move(fn)});
}

void Worker::AddTurnHook(std::function<void()> fn) { turn_hooks_.push_back(std::move(fn)); }

void Worker::Start(std::function<bool(std::string*)> init, std::function<bool()> done) {
  thread_ = std::thread([this, init = std::move(init), done = std::move(done)]() mutable {
    Run(std::move(init), std::move(done));
  });
}

bool Worker::WaitStarted(std::string* error) {
  while (started_.load(std::memory_order_acquire) == 0) started_.wait(0);
  if (started_.load() == 2) {
    *error = start_error_;
    return false;
  }
  return true;
}

void Worker::RequestStop() {
  stop_.store(true, std::memory_order_release);
  sleeping_.store(false);
  loop_.Wake();
}

void Worker::Join() {
  if (thread_.joinable()) thread_.join();
}

void Worker::DrainMailbox() {
  // In batches: the prefetches of a batch's items first, so their cache misses overlap (a batch
  // of commands from other workers would otherwise miss on each key in turn), then the items in
  // the order they were pushed.
  constexpr size_t kBatch = 16;
  std::array<MailboxItem*, kBatch> batch;
  while (true) {
    size_t n = 0;
    bool hinted = false;
    while (n < kBatch) {
      MailboxItem* item = mailbox_.Pop();
      if (item == nullptr) break;
      batch[n++] = item;
      if (item->prefetch != nullptr) {
        item->prefetch(item);
        hinted = true;
      }
    }
    if (n == 0) return;
    if (hinted && prefetch_flush_ != nullptr) prefetch_flush_(prefetch_flush_arg_);
    for (size_t i = 0; i < n; ++i) {
      ++mailbox_items_;
      batch[i]->run(batch[i]);
    }
  }
}

int64_t Worker::RunTimers() {
  if (timers_.empty()) return -1;
  int64_t now = MonoUs();
  int64_t next = INT64_MAX;
  for (size_t i = 0; i < timers_.size(); ++i) {
    if (timers_[i].due_us <= now) {
      timers_[i].fn();
      timers_[i].due_us = now + timers_[i].interval_us;
    }
    next = std::min(next, timers_[i].due_us);
  }
  return std::max<int64_t>(0, next - now);
}

void Worker::Run(std::function<bool(std::string*)> init, std::function<bool()> done) {
  current_worker = this;
  if (pin_cpu_ >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(pin_cpu_, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  }
  std::string error;
  bool ok = loop_.Init(4096, &error) && init(&error);
  start_error_ = error;
  started_.store(ok ? 1 : 2, std::memory_order_release);
  started_.notify_all();
  if (!ok) return;

  loop_.before_sleep = [this]() {
    if (busy_) return true;
    sleeping_.store(true, std::memory_order_seq_cst);
    // (A stop request wakes the loop by itself; the stopping loop then polls every 10 ms.)
    if (!mailbox_.Empty()) {
      sleeping_.store(false, std::memory_order_relaxed);
      return true;
    }
    return false;
  };

  while (true) {
    DrainMailbox();
    busy_ = false;
    running_deferred_.swap(deferred_);
    for (MailboxItem* item : running_deferred_) item->run(item);
    running_deferred_.clear();
    if (!deferred_.empty()) busy_ = true;
    for (auto& hook : turn_hooks_) hook();
    int64_t timeout = RunTimers();
    if (wake_within_us_ >= 0 && (timeout < 0 || wake_within_us_ < timeout)) {
      timeout = wake_within_us_;
    }
    wake_within_us_ = -1;
    if (stop_requested() && done()) {
      loop_.Submit();  // wake-ups prepared for other workers (WakeThrough) still leave
      break;
    }
    // While stopping, poll at least every 10 ms so `done` is re-checked.
    if (stop_requested() && (timeout < 0 || timeout > 10000)) timeout = 10000;
    loop_.Turn(true, timeout);
    sleeping_.store(false, std::memory_order_relaxed);
  }
  current_worker = nullptr;
}

}  // namespace lavik
