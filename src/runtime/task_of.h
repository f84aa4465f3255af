// TaskOf<T>: a Task that produces a value — `T v = co_await SomeStep(...);`. Same rules as Task
// (lazy, pooled frame, resumes on the thread that started it); only awaited, never Start()ed.
//
// Thread safety: a TaskOf and its frame belong to one thread.
#pragma once

#include <coroutine>
#include <exception>
#include <optional>
#include <utility>

#include "runtime/frame_pool.h"

namespace lavik {

template <typename T>
class [[nodiscard]] TaskOf {
 public:
  struct promise_type;
  using Handle = std::coroutine_handle<promise_type>;

  struct promise_type {
    std::coroutine_handle<> continuation;
    std::optional<T> value;

    TaskOf get_return_object() { return TaskOf(Handle::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct FinalAwaiter {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(Handle h) noexcept { return h.promise().continuation; }
      void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    template <typename U>
    void return_value(U&& v) {
      value.emplace(std::forward<U>(v));
    }
    void unhandled_exception() { std::terminate(); }

    static void* operator new(std::size_t n) { return FramePool::Allocate(n); }
    static void operator delete(void* p, std::size_t n) { FramePool::Free(p, n); }
  };

  TaskOf(TaskOf&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  TaskOf(const TaskOf&) = delete;
  ~TaskOf() {
    if (h_) h_.destroy();
  }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
    h_.promise().continuation = caller;
    return h_;
  }
  T await_resume() { return std::move(*h_.promise().value); }

 private:
  explicit TaskOf(Handle h) : h_(h) {}
  Handle h_;
};

}  // namespace lavik
