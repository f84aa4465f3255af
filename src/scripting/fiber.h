// Fiber: a separate C stack on which a Lua script runs, so that redis.call can wait for a
// command that suspends (a device read, a hop to another worker) without Lua knowing.
//
// Lua 5.1 cannot yield across a C call (redis.call is one), so the script's whole C stack is
// parked instead: Suspend() switches back to the worker's own stack (the event loop keeps
// serving), and Resume() — called by whatever the script waits for, on the same worker —
// switches back in. One fiber per worker is enough: scripts run one at a time (they hold every
// shard's lock, see doc/threading.md).
//
// Thread safety: a Fiber belongs to one worker thread; every call is made on it.
#pragma once

#include <ucontext.h>

#include <coroutine>
#include <cstddef>

namespace lavik {

class Fiber {
 public:
  using Job = void (*)(void* arg);

  Fiber();
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // The calling worker's fiber (made on first use).
  static Fiber& Local();

  // From the worker's stack: runs job(arg) on the fiber until it finishes or suspends.
  // Returns true if it finished.
  bool Start(Job job, void* arg);
  // From the fiber: parks it and returns to whoever started or resumed it.
  void Suspend();
  // From the worker's stack: continues a suspended fiber. When the job finishes, `waiter`
  // (set by the awaiter below) is resumed.
  void Resume();
  bool running() const { return running_; }
  bool on_fiber() const { return on_fiber_; }

  // `co_await fiber.Run(job, arg)`: the caller resumes once the job has finished.
  struct Awaiter {
    Fiber* fiber;
    Job job;
    void* arg;
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) {
      fiber->waiter_ = h;
      return !fiber->Start(job, arg);
    }
    void await_resume() const noexcept {}
  };
  Awaiter Run(Job job, void* arg) { return Awaiter{this, job, arg}; }

 private:
  static void Entry();
  void SwitchIn();

  static constexpr size_t kStackBytes = 8u << 20;  // reserved, committed as touched
  void* stack_ = nullptr;
  ucontext_t fiber_ctx_;
  ucontext_t caller_ctx_;
  bool made_ = false;
  bool running_ = false;  // a job started and has not finished
  bool on_fiber_ = false;
  Job job_ = nullptr;
  void* arg_ = nullptr;
  std::coroutine_handle<> waiter_;
};

}  // namespace lavik
