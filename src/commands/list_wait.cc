#include "commands/list_wait.h"

#include <deque>
#include <string>
#include <unordered_map>

#include "base/clock.h"

namespace lavik {
namespace {

// The keys of this worker's shard that clients block on, each with its waiters in arrival order.
thread_local std::unordered_map<std::string, std::deque<std::shared_ptr<ListWaiter>>> queues;

}  // namespace

bool ListWaiter::Claim(Outcome why) {
  if (claimed.exchange(true, std::memory_order_acq_rel)) return false;
  outcome = why;
  run = [](MailboxItem* item) {
    auto* self = static_cast<ListWaiter*>(item);
    self->arrived = true;
    // A claim can come before the command reached its wait (it queued itself on a key's worker
    // and was still checking the other keys): the wait then does not suspend.
    if (self->handle) self->handle.resume();
  };
  home->Post(this);
  return true;
}

void QueueListWaiter(Shard&, std::string_view key, std::shared_ptr<ListWaiter> w, bool front) {
  auto& q = queues[std::string(key)];
  if (front) {
    q.push_front(std::move(w));
  } else {
    q.push_back(std::move(w));
  }
}

void DequeueListWaiter(std::string_view key, const ListWaiter* w) {
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

void SignalListReady(Shard& shard, std::string_view key) {
  if (queues.empty()) return;  // the common case: nobody blocks on this worker
  auto it = queues.find(std::string(key));
  if (it == queues.end()) return;
  const KeyInfo info = shard.store.Lookup(key, NowMs());
  if (!info.exists || info.type != ValueType::kList) return;
  auto& q = it->second;
  while (!q.empty()) {
    std::shared_ptr<ListWaiter> w = std::move(q.front());
    q.pop_front();
    // Set before the claim: once claimed, the home worker may read them.
    if (w->claimed.load(std::memory_order_acquire)) continue;
    w->woken_key.assign(key);
    w->woken_shard = shard.id;
    if (w->Claim(ListWaiter::Outcome::kWoken)) break;
  }
  if (q.empty()) queues.erase(it);
}

}  // namespace lavik
