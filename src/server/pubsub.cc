#include "server/pubsub.h"

#include <algorithm>

#include "base/glob.h"
#include "runtime/mailbox.h"
#include "runtime/worker.h"
#include "server/client_hub.h"
#include "server/client_state.h"
#include "server/server.h"

namespace lavik {

// One published message on its way to the subscribers that live on one worker: one mailbox item
// per home worker per PUBLISH, however many of its clients receive it.
struct PubSub::Delivery : MailboxItem {
  PubSub* pubsub = nullptr;
  int home = 0;
  PubSubKind kind = PubSubKind::kChannel;
  std::string channel;
  std::string payload;
  std::vector<uint64_t> direct;                        // subscribers of the channel itself
  std::vector<std::pair<uint64_t, uint32_t>> matched;  // (subscriber, index into patterns)
  std::vector<std::string> patterns;
};

namespace {

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

PubSub::~PubSub() = default;

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

int64_t PubSub::PublishOn(int w, PubSubKind kind, std::string_view channel,
                          std::string_view payload) {
  const int n = server_->worker_count();
  thread_local std::vector<Delivery*> batch;
  batch.assign(n, nullptr);
  auto to = [&](int home) -> Delivery* {
    Delivery*& d = batch[home];
    if (d == nullptr) {
      d = new Delivery();
      d->pubsub = this;
      d->home = home;
      d->kind = kind;
      d->channel.assign(channel);
      d->payload.assign(payload);
    }
    return d;
  };
  int64_t receivers = 0;
  const Registry& reg = RegistryOn(w, kind);
  if (auto it = reg.find(std::string(channel)); it != reg.end()) {
    for (const Sub& s : it->second) to(s.home)->direct.push_back(s.id);
    receivers += static_cast<int64_t>(it->second.size());
  }
  if (kind == PubSubKind::kChannel) {
    for (const auto& [pattern, subs] : RegistryOn(w, PubSubKind::kPattern)) {
      if (!GlobMatch(pattern, channel)) continue;
      for (const Sub& s : subs) {
        Delivery* d = to(s.home);
        if (d->patterns.empty() || d->patterns.back() != pattern) d->patterns.push_back(pattern);
        d->matched.emplace_back(s.id, static_cast<uint32_t>(d->patterns.size() - 1));
      }
      receivers += static_cast<int64_t>(subs.size());
    }
  }
  for (int home = 0; home < n; ++home) {
    Delivery* d = batch[home];
    if (d == nullptr) continue;
    if (home == w) {
      Deliver(home, *d);
      delete d;
    } else {
      d->run = [](MailboxItem* item) { RunDelivery(item); };
      server_->worker(home)->Post(d);
    }
  }
  return receivers;
}

void PubSub::RunDelivery(void* item) {
  auto* d = static_cast<Delivery*>(static_cast<MailboxItem*>(item));
  d->pubsub->Deliver(d->home, *d);
  delete d;
}

void PubSub::Deliver(int home, const Delivery& d) {
  PerWorker& pw = workers_[home];
  auto send = [&](uint64_t id, PubSubKind kind, std::string_view pattern) {
    auto it = pw.local.find(id);
    if (it == pw.local.end()) return;  // the client left after the message was published
    ClientState* cl = it->second;
    PubSubClient& st = *cl->pubsub;
    // Unsubscribed meanwhile (UNSUBSCRIBE takes effect at home at once): not for it any more.
    if (!st.of(kind).contains(std::string(kind == PubSubKind::kPattern ? pattern : d.channel))) {
      return;
    }
    if (cl->closed || cl->conn->closing()) return;
    std::string* out = st.in_flight ? &st.held : cl->conn->output();
    AppendPubSubMessage(out, cl->resp, kind, pattern, d.channel, d.payload);
    hub_->OnPubSubOutput(cl);
  };
  for (uint64_t id : d.direct) send(id, d.kind, {});
  for (const auto& [id, p] : d.matched) send(id, PubSubKind::kPattern, d.patterns[p]);
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
