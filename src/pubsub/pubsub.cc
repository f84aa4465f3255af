#include "pubsub/pubsub.h"

#include <algorithm>

#include "base/glob.h"
#include "client/client_state.h"
#include "client/services.h"
#include "pubsub/pubsub_batch.h"
#include "runtime/mailbox.h"
#include "runtime/worker.h"

namespace lavik {

// One turn's messages for the subscribers on worker `home`, as one mailbox item.
struct PubSub::DeliveryBatch : MailboxItem {
  PubSub* pubsub = nullptr;
  int home = 0;
  PubSubBatch batch;
};

namespace {

// A batch this large leaves at once rather than at the end of the turn, which bounds the memory a
// burst of large payloads holds on the publishing worker.
constexpr size_t kMaxBatchBytes = size_t{1} << 20;

// A departed client's subscriptions, removed on the worker that holds them.
struct Removal : MailboxItem {
  PubSub* pubsub = nullptr;
  int worker = 0;
  uint64_t id = 0;
  std::vector<std::pair<PubSubKind, std::string>> names;
};

}  // namespace

PubSub::PubSub(const Services* services, OutputHook on_output)
    : services_(services),
      on_output_(std::move(on_output)),
      workers_(std::make_unique<PerWorker[]>(kMaxWorkers)) {}

PubSub::~PubSub() {
  for (int w = 0; w < kMaxWorkers; ++w) {
    for (DeliveryBatch* b : workers_[w].open) delete b;  // not posted (posted ones are null)
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
  const int n = services_->worker_count();
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
  for (PubSubKind kind : {PubSubKind::kChannel, PubSubKind::kPattern, PubSubKind::kShard}) {
    for (const std::string& name : st.of(kind)) {
      for (int w = 0; w < n; ++w) add(w, kind, name);
    }
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
      services_->workers[w]->Post(r);
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

PubSub::DeliveryBatch* PubSub::BatchFor(int w, int home) {
  PerWorker& pw = workers_[w];
  if (pw.open.size() <= static_cast<size_t>(home)) pw.open.resize(services_->worker_count());
  DeliveryBatch*& b = pw.open[home];
  if (b == nullptr) {
    b = new DeliveryBatch();
    b->pubsub = this;
    b->home = home;
    if (home != w) {
      pw.open_homes.push_back(home);
      // Opened after this turn's hooks ran (a PUBLISH resumed by a timer): the loop must turn
      // again rather than sleep, so that EndOfTurn posts it.
      Worker::Current()->MarkBusy();
    }
  }
  return b;
}

int64_t PubSub::PublishOn(int w, PubSubKind kind, std::string_view channel,
                          std::string_view payload) {
  const int n = services_->worker_count();
  thread_local std::vector<DeliveryBatch*> using_batch;  // by home: where this call writes
  using_batch.assign(n, nullptr);
  auto to = [&](int home) -> DeliveryBatch* {
    DeliveryBatch*& b = using_batch[home];
    if (b == nullptr) {
      b = BatchFor(w, home);
      b->batch.Begin(kind, channel, payload);
    }
    return b;
  };
  int64_t receivers = 0;
  const Registry& reg = RegistryOn(w, kind);
  if (auto it = reg.find(std::string(channel)); it != reg.end()) {
    for (const Sub& s : it->second) to(s.home)->batch.AddDirect(s.id);
    receivers += static_cast<int64_t>(it->second.size());
  }
  if (kind == PubSubKind::kChannel) {
    for (const auto& [pattern, subs] : RegistryOn(w, PubSubKind::kPattern)) {
      if (!GlobMatch(pattern, channel)) continue;
      for (const Sub& s : subs) to(s.home)->batch.AddMatched(s.id, pattern);
      receivers += static_cast<int64_t>(subs.size());
    }
  }
  // This worker's own subscribers are served now, from the reused scratch batch.
  if (using_batch[w] != nullptr) {
    Deliver(*using_batch[w]);
    using_batch[w]->batch.Clear();
  }
  for (int home = 0; home < n; ++home) {
    if (home != w && using_batch[home] != nullptr &&
        using_batch[home]->batch.footprint() >= kMaxBatchBytes) {
      PostBatch(w, home);
    }
  }
  return receivers;
}

void PubSub::PostBatch(int w, int home) {
  DeliveryBatch* b = workers_[w].open[home];
  workers_[w].open[home] = nullptr;
  b->run = [](MailboxItem* item) {
    auto* batch = static_cast<DeliveryBatch*>(item);
    batch->pubsub->Deliver(*batch);
    delete batch;
  };
  services_->workers[home]->Post(b);
}

void PubSub::EndOfTurn(int w) {
  PerWorker& pw = workers_[w];
  if (pw.open_homes.empty()) return;
  for (int home : pw.open_homes) {
    if (pw.open[home] != nullptr) PostBatch(w, home);
  }
  pw.open_homes.clear();
}

void PubSub::Deliver(const DeliveryBatch& b) {
  PerWorker& pw = workers_[b.home];
  b.batch.ForEach([&](uint64_t id, PubSubKind kind, std::string_view pattern,
                      std::string_view channel, std::string_view payload) {
    auto it = pw.local.find(id);
    if (it == pw.local.end()) return;  // the client left after the message was published
    ClientState* cl = it->second;
    PubSubClient& st = *cl->pubsub;
    // Unsubscribed meanwhile (UNSUBSCRIBE takes effect at home at once): not for it any more.
    if (!st.of(kind).contains(std::string(kind == PubSubKind::kPattern ? pattern : channel))) {
      return;
    }
    if (cl->closed || cl->conn->closing()) return;
    std::string* out = st.in_flight ? &st.held : cl->conn->output();
    AppendPubSubMessage(out, cl->resp, kind, pattern, channel, payload);
    on_output_(cl);
  });
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
