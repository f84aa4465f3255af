// Test helpers for code that runs on lavik::Workers: a mailbox item that runs a closure, and
// polling for a condition another thread makes true.
//
// Thread safety: FnItem runs on the worker it is posted to; WaitFor polls from the test's thread.
#pragma once

#include <chrono>
#include <functional>
#include <thread>
#include <utility>

#include "runtime/mailbox.h"

namespace lavik::test_worker {

// A mailbox item that runs a closure and then deletes itself.
struct FnItem : MailboxItem {
  explicit FnItem(std::function<void()> f) : fn(std::move(f)) {
    run = [](MailboxItem* self) {
      auto* item = static_cast<FnItem*>(self);
      item->fn();
      delete item;
    };
  }
  std::function<void()> fn;
};

// Waits (polling) until pred() is true or the deadline passes; returns pred().
inline bool WaitFor(const std::function<bool()>& pred,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(20000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace lavik::test_worker
