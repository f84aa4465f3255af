// ShardHop: `co_await ShardHop(target, fn)` runs fn() on worker `target` and resumes the calling
// coroutine on its own worker afterwards. If target is the calling worker, fn runs inline.
//
// The awaiter lives in the coroutine frame, so a hop allocates nothing. fn must not suspend; it
// may read and write the caller's frame (the caller is suspended meanwhile, and the mailbox
// hand-off orders the memory accesses).
#pragma once

#include <coroutine>

#include "runtime/mailbox.h"
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

}  // namespace lavik
