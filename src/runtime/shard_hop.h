// ShardHop: `co_await ShardHop(target, fn)` runs fn() on worker `target` and resumes the calling
// coroutine on its own worker afterwards. If target is the calling worker, fn runs inline.
//
// The awaiter lives in the coroutine frame, so a hop allocates nothing. fn must not suspend; it
// may read and write the caller's frame (the caller is suspended meanwhile, and the mailbox
// hand-off orders the memory accesses).
#pragma once

#include <coroutine>

#include "runtime/mailbox.h"
#include "runtime/task.h"
#include "runtime/worker.h"

namespace lavik {

template <typename Fn>
class ShardHop : private MailboxItem {
 public:
  ShardHop(Worker* target, Fn fn) : target_(target), fn_(std::move(fn)) {}

  bool await_ready() {
    home_ = Worker::Current();
    if (home_ == target_) {
      fn_();
      return true;
    }
    return false;
  }
  void await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    run = &RunOnTarget;
    target_->Post(this);
  }
  void await_resume() {}

 private:
  static void RunOnTarget(MailboxItem* item) {
    auto* self = static_cast<ShardHop*>(item);
    self->fn_();
    self->run = &ResumeAtHome;
    self->home_->Post(self);
  }
  static void ResumeAtHome(MailboxItem* item) { static_cast<ShardHop*>(item)->handle_.resume(); }

  Worker* target_;
  Worker* home_ = nullptr;
  Fn fn_;
  std::coroutine_handle<> handle_;
};

// ShardCall: `co_await ShardCall(target, fn)` where fn() returns a Task: the task runs on worker
// `target` (it may suspend there, e.g. for device reads) and the caller resumes at home once it
// has finished. Inline (as a nested co_await) when target is the calling worker.
template <typename Fn>
class ShardCall : private MailboxItem {
 public:
  ShardCall(Worker* target, Fn fn) : target_(target), fn_(std::move(fn)) {}

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    home_ = Worker::Current();
    if (home_ == target_) {
      task_ = fn_();
      return task_.await_suspend(h);
    }
    run = &RunOnTarget;
    target_->Post(this);
    return std::noop_coroutine();
  }
  void await_resume() {}

 private:
  static void RunOnTarget(MailboxItem* item) {
    auto* self = static_cast<ShardCall*>(item);
    Task t = self->fn_();
    if (t.Start(&ShardCall::Done, self)) Done(self);
  }
  static void Done(void* arg) {
    auto* self = static_cast<ShardCall*>(arg);
    self->run = &ResumeAtHome;
    self->home_->Post(self);
  }
  static void ResumeAtHome(MailboxItem* item) { static_cast<ShardCall*>(item)->handle_.resume(); }

  Worker* target_;
  Worker* home_ = nullptr;
  Fn fn_;
  Task task_;
  std::coroutine_handle<> handle_;
};

// YieldToLoop: `co_await YieldToLoop();` resumes the coroutine on a later turn of the calling
// worker's loop, so long background work (defrag) runs in slices between foreground requests.
class YieldToLoop : private MailboxItem {
 public:
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    run = [](MailboxItem* item) { static_cast<YieldToLoop*>(item)->handle_.resume(); };
    Worker::Current()->Defer(this);
  }
  void await_resume() {}

 private:
  std::coroutine_handle<> handle_;
};

}  // namespace lavik
