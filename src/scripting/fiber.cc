#include "scripting/fiber.h"

#include <sys/mman.h>

#include <cstdlib>
#include <memory>
#include <utility>

namespace lavik {

namespace {
thread_local Fiber* entering = nullptr;  // the fiber Entry() runs for (set just before)
thread_local std::unique_ptr<Fiber> local_fiber;
}  // namespace

Fiber::Fiber() {
  stack_ = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (stack_ == MAP_FAILED) std::abort();
  // A guard page at the low end: overflowing the stack faults instead of corrupting memory.
  mprotect(stack_, 4096, PROT_NONE);
}

Fiber::~Fiber() { munmap(stack_, kStackBytes); }

Fiber& Fiber::Local() {
  if (local_fiber == nullptr) local_fiber = std::make_unique<Fiber>();
  return *local_fiber;
}

void Fiber::Entry() {
  Fiber* f = entering;
  for (;;) {
    f->job_(f->arg_);
    f->running_ = false;
    f->on_fiber_ = false;
    swapcontext(&f->fiber_ctx_, &f->caller_ctx_);
  }
}

void Fiber::SwitchIn() {
  on_fiber_ = true;
  swapcontext(&caller_ctx_, &fiber_ctx_);
}

bool Fiber::Start(Job job, void* arg) {
  job_ = job;
  arg_ = arg;
  running_ = true;
  if (!made_) {
    getcontext(&fiber_ctx_);
    fiber_ctx_.uc_stack.ss_sp = stack_;
    fiber_ctx_.uc_stack.ss_size = kStackBytes;
    fiber_ctx_.uc_link = nullptr;
    makecontext(&fiber_ctx_, &Fiber::Entry, 0);
    made_ = true;
    entering = this;
  }
  SwitchIn();
  return !running_;
}

void Fiber::Suspend() {
  on_fiber_ = false;
  swapcontext(&fiber_ctx_, &caller_ctx_);
}

void Fiber::Resume() {
  SwitchIn();
  if (!running_) std::exchange(waiter_, {}).resume();
}

}  // namespace lavik
