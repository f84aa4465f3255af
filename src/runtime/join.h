// Join: waits for detached tasks started on the calling worker — a fan-out of independent steps
// (device reads, mostly) that one coroutine then waits for together:
//
//   Join join;
//   for (...) { Task t = Step(...); join.Add(); if (t.Start(&Join::OnDone, &join)) join.Done(); }
//   co_await join;
//
// Thread safety: one worker's thread (the tasks resume on it).
#pragma once

#include <coroutine>
#include <cstddef>
#include <utility>

namespace lavik {

class Join {
 public:
  void Add() { ++pending_; }
  void Done() {
    if (--pending_ == 0 && waiter_) std::exchange(waiter_, {}).resume();
  }
  static void OnDone(void* self) { static_cast<Join*>(self)->Done(); }
  bool await_ready() const noexcept { return pending_ == 0; }
  void await_suspend(std::coroutine_handle<> h) { waiter_ = h; }
  void await_resume() const noexcept {}

 private:
  size_t pending_ = 0;
  std::coroutine_handle<> waiter_;
};

}  // namespace lavik
