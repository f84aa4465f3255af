// Task: the coroutine type of command handlers and of the steps they co_await.
//
// Why coroutines (see doc/threading.md): a command may have to wait — for a value read from the
// device, or for another worker's shard — without blocking its worker. A coroutine keeps the
// handler a straight-line function; its frame comes from FramePool, so no malloc per command.
//
// A Task is lazy: nothing runs until Start() (top level) or co_await (nested). A Task always
// resumes on the thread that started it; cross-worker steps hop there and back (ShardHop).
// Thread safety: a Task and its frame belong to one thread.
#pragma once

#include <coroutine>
#include <exception>
#include <utility>

#include "runtime/frame_pool.h"

namespace lavik {

class [[nodiscard]] Task {
 public:
  struct promise_type;
  using Handle = std::coroutine_handle<promise_type>;

  struct promise_type {
    std::coroutine_handle<> continuation;
    void (*on_done)(void*) = nullptr;
    void* on_done_arg = nullptr;
    bool detached = false;

    Task get_return_object() { return Task(Handle::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }

    struct FinalAwaiter {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(Handle h) noexcept {
        promise_type& p = h.promise();
        if (p.continuation) return p.continuation;
        if (p.detached) {
          void (*cb)(void*) = p.on_done;
          void* arg = p.on_done_arg;
          h.destroy();
          if (cb != nullptr) cb(arg);
        }
        return std::noop_coroutine();
      }
      void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() { std::terminate(); }

    static void* operator new(std::size_t n) { return FramePool::Allocate(n); }
    static void operator delete(void* p, std::size_t n) { FramePool::Free(p, n); }
  };

  // An empty Task is one that has already finished: a handler that needs no coroutine (its reply
  // written, nothing to wait for) returns Task() and costs no frame. Start returns true and
  // co_await goes straight on.
  Task() = default;
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  ~Task() {
    if (h_) h_.destroy();
  }

  // Runs the task until it first suspends. Returns true if it finished (its frame is already
  // freed and on_done is NOT called). Otherwise returns false and on_done(arg) is called on this
  // thread once the task finishes, after its frame is freed.
  bool Start(void (*on_done)(void*), void* arg) {
    Handle h = std::exchange(h_, {});
    if (!h) return true;
    h.resume();
    if (h.done()) {
      h.destroy();
      return true;
    }
    promise_type& p = h.promise();
    p.on_done = on_done;
    p.on_done_arg = arg;
    p.detached = true;
    return false;
  }

  // Nested use: `co_await SomeTask(...)` runs it to completion, then resumes the caller.
  bool await_ready() const noexcept { return !h_; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
    if (!h_) return caller;  // ShardCall suspends without asking await_ready
    h_.promise().continuation = caller;
    return h_;
  }
  void await_resume() noexcept {}

 private:
  explicit Task(Handle h) : h_(h) {}
  Handle h_;
};

}  // namespace lavik
