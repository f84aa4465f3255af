#include "server/pubsub.h"

#include <algorithm>

#include "base/glob.h"
#include "runtime/mailbox.h"
#include "runtime/worker.h"
#include "server/client_hub.h"
#include "server/client_state.h"
#include "server/server.h"

namespace lavik {

// The messages one worker publishes, during one loop turn, to the subscribers that live on one
// other worker: one mailbox item and a few buffers for all of them, instead of an item with its
// own copies per PUBLISH (doc/pubsub.md, "Costs"). Messages keep publish order; the receivers of
// one message are contiguous. Names and payloads are copied once into `bytes`.
struct PubSub::DeliveryBatch : MailboxItem {
  struct Message {
    PubSubKind kind;
    size_t channel, channel_len;  // offsets into bytes
    size_t payload, payload_len;
    size_t first_receiver, receivers;  // range of `receivers`
  };
  struct Receiver {
    uint64_t id;
    size_t pattern, pattern_len;  // offsets into bytes; pattern_len 0 for a direct subscriber
    bool by_pattern;
  };

  PubSub* pubsub = nullptr;
  int home = 0;
  const std::string* last_pattern = nullptr;  // in the owner's registry; reset per message
  size_t last_pattern_at = 0;
  std::string bytes;
  std::vector<Message> messages;
  std::vector<Receiver> receivers;

  // Starts this PUBLISH's message here (at its first receiver on this home).
  void Begin(PubSubKind kind, std::string_view channel, std::string_view payload) {
    last_pattern = nullptr;
    Message m{kind, bytes.size(), channel.size(), 0, payload.size(), receivers.size(), 0};
    bytes.append(channel);
    m.payload = bytes.size();
    bytes.append(payload);
    messages.push_back(m);
  }
  void AddDirect(uint64_t id) {
    receivers.push_back(Receiver{id, 0, 0, false});
    ++messages.back().receivers;
  }
  void AddMatched(uint64_t id, const std::string& pattern) {
    if (last_pattern != &pattern) {
      last_pattern = &pattern;
      last_pattern_at = bytes.size();
      bytes.append(pattern);
    }
    receivers.push_back(Receiver{id, last_pattern_at, pattern.size(), true});
    ++messages.back().receivers;
  }
  size_t footprint() const {
    return bytes.size() + receivers.size() * sizeof(Receiver) + messages.size() * sizeof(Message);
  }
  void Clear() {
    bytes.clear();
    messages.clear();
    receivers.clear();
    last_pattern = nullptr;
  }
};

namespace {

// A batch this large leaves at once rather than at the end of the turn, which bounds the memory a
// burst of large payloads holds on the owner.
constexpr size_t kMaxBatchBytes = size_t{1} << 20;

// A departed client's subscriptions, removed on the worker that holds them.
struct Removal : MailboxItem {
  PubSub* pubsub = nullptr;
  int worker = 0;
  uint64_t id = 0;
  std::vector<std::pair<PubSubKind, std::string>> names;
};

}  // namespace

PubSub::PubSub(Server* server, ClientHub* hub)
    : server_(server), hub_(hub), workers_(std::make_unique<PerWorker[]>(ClientHub::kMaxWorkers)) {}

PubSub::~PubSub() {
  for (int w = 0; w < ClientHub::kMaxWorkers; ++w) {
    // Only the scratch batch is ours: every other one was posted and its home deletes it.
    if (static_cast<size_t>(w) < workers_[w].open.size()) delete workers_[w].open[w];
  }
}

PubSubClient& PubSub::StateOf(ClientState* cl) {
  if (cl->pubsub == nullptr) {
    cl->pubsub = std::make_unique<PubSubClient>();
    workers_[cl->conn->worker()->id()].local.emplace(cl->id, cl);
  }
  return *cl->pubsub;
}

void PubSub::OnClose(ClientState* cl) {
  if (cl->pubsub == nullptr) return;
  const int home = cl->conn->worker()->id();
  workers_[home].local.erase(cl->id);
  const int n = server_->worker_count();
  std::vector<Removal*> removals(n, nullptr);
  auto add = [&](int w, PubSubKind kind, const std::string& name) {
    if (removals[w] == nullptr) {
      removals[w] = new Removal();
      removals[w]->pubsub = this;
      removals[w]->worker = w;
      removals[w]->id = cl->id;
    }
    removals[w]->names.emplace_back(kind, name);
  };
  PubSubClient& st = *cl->pubsub;
  for (const std::string& c : st.of(PubSubKind::kChannel)) {
    add(server_->shards().ShardOf(c), PubSubKind::kChannel, c);
  }
  for (const std::string& c : st.of(PubSubKind::kShard)) {
    add(server_->shards().ShardOf(c), PubSubKind::kShard, c);
  }
  for (const std::string& p : st.of(PubSubKind::kPattern)) {
    for (int w = 0; w < n; ++w) add(w, PubSubKind::kPattern, p);
  }
  for (auto& set : st.names) set.clear();
  st.held.clear();
  for (int w = 0; w < n; ++w) {
    Removal* r = removals[w];
    if (r == nullptr) continue;
    r->run = [](MailboxItem* item) {
      auto* rm = static_cast<Removal*>(item);
      for (const auto& [kind, name] : rm->names)
        rm->pubsub->RemoveOn(rm->worker, kind, name, rm->id);
      delete rm;
    };
    if (w == home) {
      r->run(r);
    } else {
      server_->worker(w)->Post(r);
    }
  }
}

void PubSub::AddOn(int w, PubSubKind kind, std::string_view name, uint64_t client_id, int home) {
  std::vector<Sub>& subs = RegistryOn(w, kind)[std::string(name)];
  subs.push_back(Sub{client_id, home});
}

void PubSub::RemoveOn(int w, PubSubKind kind, std::string_view name, uint64_t client_id) {
  Registry& reg = RegistryOn(w, kind);
  auto it = reg.find(std::string(name));
  if (it == reg.end()) return;
  std::vector<Sub>& subs = it->second;
  auto s = std::find_if(subs.begin(), subs.end(), [&](const Sub& x) { return x.id == client_id; });
  if (s != subs.end()) subs.erase(s);
  // As Redis, a channel nobody listens to is forgotten (PUBSUB CHANNELS stops listing it).
  if (subs.empty()) reg.erase(it);
}

PubSub::DeliveryBatch* PubSub::BatchFor(int w, int home, bool* fresh) {
  PerWorker& pw = workers_[w];
  if (pw.open.size() <= static_cast<size_t>(home)) {
    pw.open.resize(server_->worker_count(), nullptr);
    pw.open_epoch.resize(server_->worker_count(), 0);
  }
  DeliveryBatch*& b = pw.open[home];
  *fresh = false;
  if (home == w) {
    if (b == nullptr) {
      b = new DeliveryBatch();
      b->pubsub = this;
      b->home = home;
    }
    return b;
  }
  // Still in our outbox (no chain pushed to `home` since it was posted; the run holding it has
  // only items for `home` after it) and not too large: the message joins it. It reaches `home`
  // before anything posted after it — the publisher's reply included — and ahead of the items
  // queued behind it in the run, which are at most (un)subscribe hops returning to `home`; a
  // client whose (un)subscribe is in flight there holds or drops it as it would anyway.
  if (b != nullptr && server_->worker(w)->flushes_to(home) == pw.open_epoch[home] &&
      b->footprint() < kMaxBatchBytes) {
    return b;
  }
  b = new DeliveryBatch();  // the previous one (if any) has left or is full: it is not ours now
  b->pubsub = this;
  b->home = home;
  b->run = [](MailboxItem* item) {
    auto* batch = static_cast<DeliveryBatch*>(item);
    batch->pubsub->Deliver(*batch);
    delete batch;
  };
  *fresh = true;
  return b;
}

int64_t PubSub::PublishOn(int w, PubSubKind kind, std::string_view channel,
                          std::string_view payload) {
  const int n = server_->worker_count();
  // By home: the batch this call writes to, and whether this call opened it.
  thread_local std::vector<DeliveryBatch*> using_batch;
  thread_local std::vector<char> fresh;
  using_batch.assign(n, nullptr);
  fresh.assign(n, 0);
  auto to = [&](int home) -> DeliveryBatch* {
    DeliveryBatch*& b = using_batch[home];
    if (b == nullptr) {
      bool is_new = false;
      b = BatchFor(w, home, &is_new);
      fresh[home] = is_new;
      b->Begin(kind, channel, payload);
    }
    return b;
  };
  int64_t receivers = 0;
  const Registry& reg = RegistryOn(w, kind);
  if (auto it = reg.find(std::string(channel)); it != reg.end()) {
    for (const Sub& s : it->second) to(s.home)->AddDirect(s.id);
    receivers += static_cast<int64_t>(it->second.size());
  }
  if (kind == PubSubKind::kChannel) {
    for (const auto& [pattern, subs] : RegistryOn(w, PubSubKind::kPattern)) {
      if (!GlobMatch(pattern, channel)) continue;
      for (const Sub& s : subs) to(s.home)->AddMatched(s.id, pattern);
      receivers += static_cast<int64_t>(subs.size());
    }
  }
  PerWorker& pw = workers_[w];
  // The owner's own subscribers are served now, from the reused scratch batch.
  if (pw.open.size() > static_cast<size_t>(w) && pw.open[w] != nullptr &&
      !pw.open[w]->messages.empty()) {
    Deliver(*pw.open[w]);
    pw.open[w]->Clear();
  }
  // New batches are posted now, before our caller posts the publisher's reply: a later PUBLISH
  // from the same client cannot overtake this one at any home.
  Worker* self = server_->worker(w);
  for (int home = 0; home < n; ++home) {
    if (!fresh[home]) continue;
    DeliveryBatch* b = using_batch[home];
    const uint64_t epoch = self->flushes_to(home);
    server_->worker(home)->Post(b);
    // Appendable only while it waits in our outbox: not if that post pushed the chain (outbox
    // full) or went straight to the mailbox (not called from the loop).
    const bool held = self->batching() && self->flushes_to(home) == epoch;
    pw.open[home] = held ? b : nullptr;
    pw.open_epoch[home] = epoch;
  }
  return receivers;
}

void PubSub::Deliver(const DeliveryBatch& b) {
  PerWorker& pw = workers_[b.home];
  for (const DeliveryBatch::Message& m : b.messages) {
    const std::string_view channel(b.bytes.data() + m.channel, m.channel_len);
    const std::string_view payload(b.bytes.data() + m.payload, m.payload_len);
    for (size_t i = m.first_receiver; i < m.first_receiver + m.receivers; ++i) {
      const DeliveryBatch::Receiver& r = b.receivers[i];
      auto it = pw.local.find(r.id);
      if (it == pw.local.end()) continue;  // the client left after the message was published
      ClientState* cl = it->second;
      PubSubClient& st = *cl->pubsub;
      const PubSubKind kind = r.by_pattern ? PubSubKind::kPattern : m.kind;
      const std::string_view pattern =
          r.by_pattern ? std::string_view(b.bytes.data() + r.pattern, r.pattern_len)
                       : std::string_view();
      // Unsubscribed meanwhile (UNSUBSCRIBE takes effect at home at once): not for it any more.
      if (!st.of(kind).contains(std::string(r.by_pattern ? pattern : channel))) continue;
      if (cl->closed || cl->conn->closing()) continue;
      std::string* out = st.in_flight ? &st.held : cl->conn->output();
      AppendPubSubMessage(out, cl->resp, kind, pattern, channel, payload);
      hub_->OnPubSubOutput(cl);
    }
  }
}

void PubSub::ListOn(int w, PubSubKind kind, std::string_view pattern, bool has_pattern,
                    std::vector<std::string>* out) const {
  for (const auto& [name, subs] : workers_[w].owned[static_cast<int>(kind)]) {
    if (!has_pattern || GlobMatch(pattern, name)) out->push_back(name);
  }
}

int64_t PubSub::CountOn(int w, PubSubKind kind, std::string_view name) const {
  const Registry& reg = workers_[w].owned[static_cast<int>(kind)];
  auto it = reg.find(std::string(name));
  return it == reg.end() ? 0 : static_cast<int64_t>(it->second.size());
}

int64_t PubSub::PatternCountOn(int w) const {
  return static_cast<int64_t>(workers_[w].owned[static_cast<int>(PubSubKind::kPattern)].size());
}

}  // namespace lavik
