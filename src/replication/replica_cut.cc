// Replication cuts: the consistency points a replica's data file keeps, so a replica killed -9
// (or crashed) continues its master's stream with a partial resync instead of a full sync
// (doc/replication.md "A replica killed -9 continues", doc/storage-format.md "Replication cut").
//
// The replication thread asks for a cut every kCutIntervalMs while the stream advanced; worker 0
// (the link's) holds the stream between two commands, captures every shard's log position, lets
// the stream go on, and has each shard sync its log up to there; the replication thread then
// writes the cut into the superblock (a blocking write, off the workers) and tells the shards,
// which may then reuse the space older cuts needed.
#include "base/clock.h"
#include "base/log.h"
#include "client/client_state.h"
#include "commands/shards.h"
#include "replication/replica.h"
#include "runtime/shard_hop.h"
#include "runtime/worker.h"

namespace lavik {
namespace {

// How long a cut waits for the command in flight to finish before it gives up (and the next
// one tries again).
constexpr int64_t kCutWaitMs = 200;

struct CutNoteItem : MailboxItem {
  Store* store = nullptr;
  uint64_t number = 0;  // durable up to this capture; 0: every cut voided
};

void PostCutNote(Shard& shard, uint64_t number) {
  auto* item = new CutNoteItem();
  item->store = &shard.store;
  item->number = number;
  item->run = [](MailboxItem* m) {
    auto* it = static_cast<CutNoteItem*>(m);
    if (it->number == 0) {
      it->store->CutsVoided();
    } else {
      it->store->CutDurable(it->number);
    }
    delete it;
  };
  shard.worker->Post(item);
}

}  // namespace

void Replica::RestoreFromCut(const ReplCut& cut) {
  std::lock_guard<std::mutex> lock(mu_);
  replid_.assign(cut.replid.data(), cut.replid.size());
  replid2_.assign(40, '0');
  second_offset_ = -1;
  offset_ = cut.offset;
  stream_db_ = cut.db;
  synced_ = true;
  LogNotice("Replication history restored from the data file's last consistency point: replid " +
            replid_ + ", offset " + std::to_string(cut.offset) +
            " (a partial resynchronization may continue it)");
}

bool Replica::StreamAtRest(ReplCut* cut) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!synced_ || replid_.size() != cut->replid.size()) return false;
  // As SnapshotHistory: a command started (counted) but not finished may or may not be in the
  // data; one HoldStream held has not started.
  if (link_live_.load() && held_ == nullptr && (link_ == nullptr || link_->request_pending())) {
    return false;
  }
  if (apart_count_.load() != 0) return false;
  std::copy(replid_.begin(), replid_.end(), cut->replid.begin());
  cut->offset = offset_.load();
  cut->db = link_ != nullptr ? static_cast<ClientState*>(link_->user_data)->db : stream_db_.load();
  return true;
}

void Replica::WakeRestWaiter() {
  if (!rest_waiter_) return;
  struct ResumeItem : MailboxItem {
    std::coroutine_handle<> h;
  };
  auto* item = new ResumeItem();
  item->h = rest_waiter_;
  rest_waiter_ = nullptr;
  item->run = [](MailboxItem* m) {
    auto* it = static_cast<ResumeItem*>(m);
    std::coroutine_handle<> h = it->h;
    delete it;
    h.resume();
  };
  Worker::Current()->Defer(item);
}

void Replica::MaybeStartCut(uint64_t gen) {
  if (!deps_.shards) return;
  if (cut_running_.load()) {
    // A cut waiting for the stream to come to rest looks again (the command it waits for may
    // have finished with nothing after it).
    struct PokeItem : MailboxItem {
      Replica* self;
    };
    auto* item = new PokeItem();
    item->self = this;
    item->run = [](MailboxItem* m) {
      auto* it = static_cast<PokeItem*>(m);
      it->self->WakeRestWaiter();
      delete it;
    };
    deps_.shards().at(0).worker->Post(item);
    return;
  }
  const int64_t now = NowMs();
  if (offset_.load() == last_cut_offset_ || now - last_cut_start_ms_ < kCutIntervalMs) return;
  last_cut_start_ms_ = now;
  if (static_cast<size_t>(deps_.shards().size()) > kMaxCutShards) return;
  cut_running_ = true;
  struct StartItem : MailboxItem {
    Replica* self;
    uint64_t gen;
  };
  auto* item = new StartItem();
  item->self = this;
  item->gen = gen;
  item->run = [](MailboxItem* m) {
    auto* it = static_cast<StartItem*>(m);
    Task t = it->self->TakeCut(it->gen);
    t.Start(nullptr, nullptr);
    delete it;
  };
  deps_.shards().at(0).worker->Post(item);
}

Task Replica::TakeCut(uint64_t gen) {
  ShardSet& shards = deps_.shards();
  const int n = shards.size();
  auto p = std::make_unique<PendingCut>();
  p->gen = gen;
  // Between two commands of the stream: the next one waits (held), the one in flight finishes.
  HoldStream(true);
  bool at_rest = false;
  for (const int64_t deadline = NowMs() + kCutWaitMs; !Cancelled(gen) && NowMs() < deadline;) {
    if ((at_rest = StreamAtRest(&p->cut))) break;
    co_await RestAwaiter{this};
  }
  if (at_rest) {
    p->epoch = shards.at(0).store.file().cut_epoch();
    p->cut.count = static_cast<uint32_t>(n);
    p->numbers.resize(static_cast<size_t>(n));
    PendingCut* pc = p.get();
    for (int w = 0; w < n; ++w) {
      Shard* s = &shards.at(w);
      co_await ShardHop(s->worker, [s, pc, w] {
        pc->cut.shards[static_cast<size_t>(w)] =
            s->store.CaptureCut(&pc->numbers[static_cast<size_t>(w)]);
      });
    }
  }
  HoldStream(false);
  // Every record before the positions on stable storage (later ones may come along).
  bool ok = at_rest;
  for (int w = 0; ok && w < n; ++w) {
    Shard* s = &shards.at(w);
    bool synced = false;
    co_await ShardCall(s->worker, [s, &synced] { return s->store.FlushAndSync(&synced); });
    ok = synced;
  }
  if (!ok) {
    cut_running_ = false;
    co_return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_cut_ = std::move(p);
  }
  cv_.notify_all();
}

void Replica::WritePendingCut(std::unique_lock<std::mutex>& lock) {
  std::unique_ptr<PendingCut> p = std::move(pending_cut_);
  const bool current = p->gen == gen_.load() && !stop_.load();
  lock.unlock();
  if (current) {
    ShardSet& shards = deps_.shards();
    bool stale = false;
    std::string error;
    if (!shards.at(0).store.file().SetReplCut(p->cut, p->epoch, &stale, &error)) {
      LogWarning("Writing the replication consistency point failed: " + error);
    } else if (!stale) {
      last_cut_offset_ = p->cut.offset;
      for (int w = 0; w < shards.size(); ++w) {
        PostCutNote(shards.at(w), p->numbers[static_cast<size_t>(w)]);
      }
    }
  }
  cut_running_ = false;
  lock.lock();
}

void Replica::VoidCuts() {
  if (!deps_.shards) return;
  ShardSet& shards = deps_.shards();
  std::string error;
  if (!shards.at(0).store.file().ClearReplCut(&error)) {
    // The old cut stays named: the shards keep what it needs (a restart may roll back to it).
    LogWarning("Clearing the replication consistency point failed: " + error);
    return;
  }
  last_cut_offset_ = -1;
  for (int w = 0; w < shards.size(); ++w) PostCutNote(shards.at(w), 0);
}

}  // namespace lavik
