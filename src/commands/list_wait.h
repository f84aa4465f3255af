// Clients blocked on lists (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP) and how a push wakes them
// (doc/threading.md, "Blocking list commands").
//
// A blocked client is a ListWaiter owned by its home worker (the connection's). It is queued,
// per key, on the worker that owns each key it waits for. A push that leaves a list non-empty
// calls SignalListReady on the key's worker: the first waiter of that key's queue that nobody
// has claimed yet is claimed (an atomic flag, since a waiter may sit in the queues of several
// workers) and posted home, where its command retries the pop under the shard locks. The waiter
// ends by signalling the key again, so a push of several elements serves the queue in order,
// first blocked first served.
//
// Thread safety: the queues are per worker (thread-local) and touched only there; a waiter's
// `claimed` flag is the only state shared across workers, and whoever wins it posts the waiter
// home. The waiter stays alive (shared_ptr) while any queue or its command holds it.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "commands/shards.h"
#include "runtime/mailbox.h"
#include "runtime/worker.h"

namespace lavik {

struct ListWaiter : MailboxItem {
  enum class Outcome { kNone, kWoken, kTimeout, kGone };

  std::atomic<bool> claimed{false};
  Worker* home = nullptr;
  std::coroutine_handle<> handle;  // the blocked command, resumed on `home`
  Outcome outcome = Outcome::kNone;
  std::string woken_key;  // set by the worker that claimed it (kWoken)
  int woken_shard = -1;
  int64_t deadline_ms = 0;  // 0: wait forever
  int fd = -1;              // the client's socket, polled for a hang-up
  bool arrived = false;     // home: the claim reached home (before or after the wait)

  // Claims the waiter for `outcome` and posts it home. False if someone claimed it first.
  bool Claim(Outcome why);
};

// On the key's worker: queues `w` for `key` (at the front when it re-blocks after losing a race,
// to keep its turn). Must run in the same turn as the check that found the key empty.
void QueueListWaiter(Shard& shard, std::string_view key, std::shared_ptr<ListWaiter> w, bool front);
// On the key's worker: drops `w` from the key's queue (it was served, timed out or went away).
void DequeueListWaiter(std::string_view key, const ListWaiter* w);
// On the key's worker, after a write that may have made `key` a non-empty list: wakes the first
// unclaimed waiter of the key, if any.
void SignalListReady(Shard& shard, std::string_view key);

// Awaits the outcome: `co_await WaitForList(w)` suspends until Claim posts the waiter home.
struct WaitForList {
  ListWaiter* w;
  bool await_ready() const noexcept { return w->arrived; }
  void await_suspend(std::coroutine_handle<> h) { w->handle = h; }
  ListWaiter::Outcome await_resume() const noexcept { return w->outcome; }
};

}  // namespace lavik
