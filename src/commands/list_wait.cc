#include "commands/list_wait.h"

#include <poll.h>

#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/clock.h"

namespace lavik {
namespace {

// The keys of this worker's shard that clients block on, each with its waiters in arrival order.
thread_local std::unordered_map<std::string, std::deque<std::shared_ptr<ListWaiter>>> queues;
// Keys with a drain scheduled or running: further writes to them need no drain of their own,
// since the drain re-reads the key after every waiter it serves.
thread_local std::unordered_set<std::string> draining;

void PostHome(ListWaiter* w, ListWaiter::Outcome why) {
  w->outcome = why;
  w->run = [](MailboxItem* item) {
    auto* self = static_cast<ListWaiter*>(item);
    self->arrived = true;
    // A claim can come before the command reached its wait (it queued itself on a key's worker
    // and was still checking the other keys): the wait then does not suspend.
    if (self->handle) self->handle.resume();
  };
  w->home->Post(w);
}

// A scheduled serving of one key's waiters: a mailbox item of the key's worker that runs once
// it holds the shard's lock.
struct Drain : MailboxItem {
  Shard* shard = nullptr;
  std::string key;
};

// The first unclaimed waiter of `q` that wants `type`, claimed and out of the queue.
std::shared_ptr<ListWaiter> ClaimFirst(std::deque<std::shared_ptr<ListWaiter>>& q, ValueType type) {
  for (auto i = q.begin(); i != q.end();) {
    if ((*i)->claimed.load(std::memory_order_acquire)) {
      i = q.erase(i);  // timed out or served from another key: it dequeues itself anyway
      continue;
    }
    if ((*i)->type != type) {
      ++i;
      continue;
    }
    std::shared_ptr<ListWaiter> w = *i;
    i = q.erase(i);
    if (!w->claimed.exchange(true, std::memory_order_acq_rel)) return w;
  }
  return nullptr;
}

Task DrainKey(Drain* d) {
  Shard& shard = *d->shard;
  while (true) {
    auto it = queues.find(d->key);
    if (it == queues.end()) co_return;
    const KeyInfo info = shard.store.Lookup(d->key, NowMs());
    std::shared_ptr<ListWaiter> w;
    if (info.exists) w = ClaimFirst(it->second, info.type);
    if (it->second.empty()) queues.erase(it);
    if (w == nullptr) co_return;
    if (ClientHungUp(w->fd)) {  // nobody would read the reply: keep the value for the next one
      PostHome(w.get(), ListWaiter::Outcome::kGone);
      continue;
    }
    // Set before the post: once there, the home worker reads them.
    w->woken_key = d->key;
    w->woken_shard = shard.id;
    bool served = false;
    co_await w->serve(shard, d->key, &served);
    w->served = served;
    PostHome(w.get(), ListWaiter::Outcome::kWoken);
    // Not served here (BLMOVE to another worker): it retries at home, and its move's write
    // serves whoever is next; serving the next one now could hand it this client's element.
    if (!served) co_return;
  }
}

void DrainDone(void* arg) {
  auto* d = static_cast<Drain*>(arg);
  draining.erase(d->key);
  // The drain may end deep inside an I/O completion; the commands queued behind the lock run
  // from the mailbox instead, on a clean stack.
  d->run = [](MailboxItem* item) {
    auto* self = static_cast<Drain*>(item);
    Shard* shard = self->shard;
    delete self;
    shard->Unlock();
  };
  d->shard->worker->Post(d);
}

void RunDrain(MailboxItem* item) {
  auto* d = static_cast<Drain*>(item);
  Shard* shard = d->shard;
  if (shard->lock_owner != d) {  // run by Shard::Unlock, the lock free
    shard->lock_owner = d;
  }
  Task t = DrainKey(d);
  if (t.Start(&DrainDone, d)) DrainDone(d);
}

// Serves the key's waiters once the command that wrote it is over. The shard's lock is taken
// for the serving right away (or the serving queues first in line for it), so no command that
// comes after the write — the writer's next pipelined command included — sees the key before the
// blocked clients are served.
void StartDrain(Shard& shard, std::string_view key) {
  if (!draining.emplace(key).second) return;
  auto* d = new Drain();
  d->shard = &shard;
  d->key.assign(key);
  d->run = &RunDrain;
  if (shard.locked()) {
    // A transaction or multi-key command holds the shard (maybe the one writing the key): serve
    // right after it, before the commands queued meanwhile.
    shard.waiting.push_front(d);
  } else {
    shard.lock_owner = d;
    shard.worker->Post(d);  // after the writing command's turn
  }
}

}  // namespace

void OnListKeyWritten(Shard& shard, std::string_view key, ValueType type) {
  if (queues.empty()) return;  // the common case: nobody blocks on this worker
  auto it = queues.find(std::string(key));
  if (it == queues.end()) return;
  for (const std::shared_ptr<ListWaiter>& w : it->second) {
    if (w->type == type && !w->claimed.load(std::memory_order_relaxed)) {
      StartDrain(shard, key);
      return;
    }
  }
}

void ServeListWaitersIfReady(Shard& shard, std::string_view key) {
  if (queues.find(std::string(key)) == queues.end()) return;
  const KeyInfo info = shard.store.Lookup(key, NowMs());
  if (info.exists) OnListKeyWritten(shard, key, info.type);
}

bool ClientHungUp(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

bool ListWaiter::Claim(Outcome why) {
  if (claimed.exchange(true, std::memory_order_acq_rel)) return false;
  PostHome(this, why);
  return true;
}

void QueueListWaiter(Shard& shard, std::string_view key, std::shared_ptr<ListWaiter> w,
                     bool front) {
  const ValueType type = w->type;
  auto& q = queues[std::string(key)];
  if (front) {
    q.push_front(std::move(w));
  } else {
    q.push_back(std::move(w));
  }
  // A write that landed since the command's failed attempt is not lost.
  const KeyInfo info = shard.store.Lookup(key, NowMs());
  if (info.exists && info.type == type) StartDrain(shard, key);
}

void DequeueListWaiter(std::string_view key, const ListWaiter* w) { EraseWaiter(queues, key, w); }

}  // namespace lavik
