#include "commands/stream_wait.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "storage/index.h"

namespace lavik {
namespace {

// The stream keys of this worker's shard that clients block on, each with its waiters.
thread_local std::unordered_map<std::string, std::vector<std::shared_ptr<ListWaiter>>> queues;

// The waiters leave the queue when they wake (DequeueStreamWaiter), so the queue is only read
// here; one already claimed (timed out, or woken by another key) is skipped.
void WakeAll(const std::vector<std::shared_ptr<ListWaiter>>& q) {
  for (const std::shared_ptr<ListWaiter>& w : q) {
    if (w->claimed.load(std::memory_order_acquire)) continue;
    // woken_key stays unset: a stream reader retries every key anyway, and two workers may race
    // here for a waiter queued on keys of both.
    w->Claim(ListWaiter::Outcome::kWoken);
  }
}

}  // namespace

void QueueStreamWaiter(std::string_view key, std::shared_ptr<ListWaiter> w) {
  queues[std::string(key)].push_back(std::move(w));
}

void DequeueStreamWaiter(std::string_view key, const ListWaiter* w) { EraseWaiter(queues, key, w); }

void SignalStreamReady(Shard&, std::string_view key) {
  if (queues.empty()) return;  // the common case: nobody blocks on this worker
  auto it = queues.find(std::string(key));
  if (it != queues.end()) WakeAll(it->second);
}

void SignalStreamExpired(uint64_t fp) {
  for (const auto& [key, q] : queues) {
    if (Index::Fingerprint(key) == fp) WakeAll(q);
  }
}

void SignalAllStreamWaiters() {
  for (const auto& [key, q] : queues) WakeAll(q);
}

}  // namespace lavik
