#include "runtime/worker.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

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
  Worker* self = current_worker;
  if (self != nullptr && self->batching_) {
    self->Enqueue(this, item);
    return;
  }
  Deliver(item, item);
}

bool Worker::Deliver(MailboxItem* first, MailboxItem* last) {
  if (first == last) {
    mailbox_.Push(first);
  } else {
    mailbox_.PushChain(first, last);
  }
  // Pairs with the seq_cst store in before_sleep: either the worker sees the item before it
  // sleeps, or we see it sleeping and wake it.
  if (sleeping_.load(std::memory_order_seq_cst) && sleeping_.exchange(false)) {
    loop_.Wake();
    return true;
  }
  return false;
}

void Worker::Enqueue(Worker* target, MailboxItem* item) {
  if (run_target_ != target) {
    FlushOutgoing();
    run_target_ = target;
  }
  item->next.store(nullptr, std::memory_order_relaxed);
  if (run_first_ == nullptr) {
    run_first_ = item;
  } else {
    run_last_->next.store(item, std::memory_order_relaxed);
  }
  run_last_ = item;
  if (++run_count_ >= kMaxOutgoing) FlushOutgoing();
}

void Worker::FlushOutgoing() {
  if (run_first_ == nullptr) return;
  Worker* target = run_target_;
  MailboxItem* first = run_first_;
  MailboxItem* last = run_last_;
  run_first_ = run_last_ = nullptr;
  run_count_ = 0;
  const size_t t = static_cast<size_t>(target->id());
  if (flushes_to_.size() <= t) flushes_to_.resize(t + 1, 0);
  ++flushes_to_[t];
  ++chains_sent_;
  if (target->Deliver(first, last)) ++wakeups_sent_;
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
  while (MailboxItem* item = mailbox_.Pop()) {
    ++mailbox_items_;
    item->run(item);
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

  batching_ = true;
  while (true) {
    DrainMailbox();
    busy_ = false;
    running_deferred_.swap(deferred_);
    for (MailboxItem* item : running_deferred_) item->run(item);
    running_deferred_.clear();
    if (!deferred_.empty()) busy_ = true;
    for (auto& hook : turn_hooks_) hook();
    int64_t timeout = RunTimers();
    // What this turn posted leaves now, before this worker may sleep (a post to itself is then in
    // its own mailbox, so it does not sleep).
    FlushOutgoing();
    if (stop_requested() && done()) break;
    // While stopping, poll at least every 10 ms so `done` is re-checked.
    if (stop_requested() && (timeout < 0 || timeout > 10000)) timeout = 10000;
    loop_.Turn(true, timeout);
    sleeping_.store(false, std::memory_order_relaxed);
  }
  batching_ = false;
  FlushOutgoing();
  current_worker = nullptr;
}

}  // namespace lavik
