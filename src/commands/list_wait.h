// Clients blocked on keys (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP)
// and how a write serves them (doc/threading.md, "Blocking commands").
//
// A blocked client is a ListWaiter owned by its home worker (the connection's). It is queued,
// per key, on the worker that owns each key it waits for. Every write that leaves a value at a
// key (Store's write hook: a push, ZADD, RENAME, MOVE, a write inside EXEC...) tells this
// module; if the key holds the type a queued waiter wants, a drain of the key is scheduled on
// the key's worker. The drain takes the shard's lock (after the writing command, or at the
// front of the lock's queue when a transaction or multi-key command holds it), then serves the
// key's waiters in arrival order: it claims each one (an atomic flag, since a waiter may sit in
// the queues of several workers) and runs the waiter's `serve` there, which pops what the
// command takes, before any other command may touch the key — as Redis serves blocked clients
// at the end of the command that made the key ready. The served waiter is posted home to reply.
//
// Thread safety: the queues are per worker (thread-local) and touched only there; a waiter's
// `claimed` flag is the only state shared across workers, and whoever wins it owns the waiter
// until it posts it home. The waiter stays alive (shared_ptr) while any queue or its command
// holds it.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "commands/shards.h"
#include "runtime/mailbox.h"
#include "runtime/task.h"
#include "runtime/worker.h"
#include "storage/value_type.h"

namespace lavik {

struct ListWaiter : MailboxItem {
  // kTimeout: the deadline passed, or CLIENT UNBLOCK (TIMEOUT); kUnblockError: CLIENT UNBLOCK
  // ERROR; kGone: the client hung up or was killed (nothing is replied).
  enum class Outcome { kNone, kWoken, kTimeout, kUnblockError, kGone };

  std::atomic<bool> claimed{false};
  Worker* home = nullptr;
  std::coroutine_handle<> handle;  // the blocked command, resumed on `home`
  Outcome outcome = Outcome::kNone;
  std::string woken_key;  // set by the worker that claimed it (kWoken)
  int woken_shard = -1;
  int64_t deadline_ms = 0;  // 0: wait forever
  int fd = -1;              // the client's socket, polled for a hang-up
  uint64_t client_id = 0;   // CLIENT UNBLOCK and CLIENT KILL find the waiter by it
  bool arrived = false;     // home: the claim reached home (before or after the wait)

  ValueType type = ValueType::kList;  // what a key must hold to serve this waiter
  // Runs on the woken key's worker under its shard lock: takes what the command takes from
  // `key` and keeps the reply's data in the command. Sets *served; false (the key changed type
  // or emptied, or the command cannot be served there) makes the command retry at home.
  std::function<Task(Shard& shard, std::string_view key, bool* served)> serve;
  bool served = false;  // kWoken: `serve` took the command's data

  // Claims the waiter for `outcome` and posts it home. False if someone claimed it first.
  bool Claim(Outcome why);
};

// On the key's worker: queues `w` for `key` (at the front when it re-blocks after losing a race,
// to keep its turn), then serves it at once if the key already holds what it waits for.
void QueueListWaiter(Shard& shard, std::string_view key, std::shared_ptr<ListWaiter> w, bool front);
// On the key's worker: drops `w` from the key's queue (it was served, timed out or went away).
void DequeueListWaiter(std::string_view key, const ListWaiter* w);
// Drops `w` from the per-key waiter queues `queues` (a map from key to a sequence of
// shared_ptr<ListWaiter>), and the key's entry once empty. The list and stream queues share it.
template <typename Queues>
void EraseWaiter(Queues& queues, std::string_view key, const ListWaiter* w) {
  auto it = queues.find(std::string(key));
  if (it == queues.end()) return;
  auto& q = it->second;
  for (auto i = q.begin(); i != q.end(); ++i) {
    if (i->get() == w) {
      q.erase(i);
      break;
    }
  }
  if (q.empty()) queues.erase(it);
}
// Whether the client at `fd` hung up (a non-blocking poll; any thread).
bool ClientHungUp(int fd);
// On the key's worker, from the store's write hook: `key` now holds a value of `type`; serves
// the key's waiters that want it (after the writing command).
void OnListKeyWritten(Shard& shard, std::string_view key, ValueType type);
// On the key's worker: serves the key's waiters if it holds what one wants. For a woken
// command that did not take the value after all (BLMOVE whose destination had the wrong type),
// so the value goes to the next waiter, as Redis hands it on.
void ServeListWaitersIfReady(Shard& shard, std::string_view key);

// Awaits the outcome: `co_await WaitForList(w)` suspends until Claim posts the waiter home.
struct WaitForList {
  ListWaiter* w;
  bool await_ready() const noexcept { return w->arrived; }
  void await_suspend(std::coroutine_handle<> h) { w->handle = h; }
  ListWaiter::Outcome await_resume() const noexcept { return w->outcome; }
};

}  // namespace lavik
