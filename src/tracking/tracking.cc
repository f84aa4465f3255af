#include "tracking/tracking.h"

#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/db_key.h"
#include "client/client_state.h"
#include "client/services.h"
#include "commands/command_keys.h"
#include "commands/shards.h"
#include "pubsub/pubsub_client.h"
#include "runtime/mailbox.h"
#include "runtime/shard_hop.h"
#include "runtime/worker.h"
#include "storage/chunk_format.h"
#include "storage/index.h"
#include "storage/store.h"

namespace lavik {
namespace {

using tracking_internal::current_writer;

// A batch this large leaves at once rather than at the end of the turn.
constexpr size_t kMaxBatchBytes = size_t{1} << 20;

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

struct Sub {
  uint64_t id;
  int home;
};
struct BcastSub {
  uint64_t id;
  int home;
  bool noloop;
};
struct Prefix {
  std::vector<BcastSub> clients;
  std::map<std::string, uint64_t> keys;  // written this turn (client key → last writer)
};

// `keys` as a RESP array, leaving out those last written by `exclude` (0: none); empty if that
// leaves nothing.
std::string KeysArray(const std::map<std::string, uint64_t>& keys, uint64_t exclude) {
  size_t n = 0;
  for (const auto& [k, writer] : keys) n += (exclude == 0 || writer != exclude);
  if (n == 0) return {};
  std::string out = "*" + std::to_string(n) + "\r\n";
  for (const auto& [k, writer] : keys) {
    if (exclude != 0 && writer == exclude) continue;
    out += "$" + std::to_string(k.size()) + "\r\n";
    out += k;
    out += "\r\n";
  }
  return out;
}

std::string OneKeyArray(std::string_view key) {
  std::string out = "*1\r\n$" + std::to_string(key.size()) + "\r\n";
  out.append(key);
  out += "\r\n";
  return out;
}

}  // namespace

// What a destination worker does for one client. kKey, kNull and kBcast go to the tracking
// client's home; kRedirected to its REDIRECT client's home; kBroken back to the tracking client
// when that redirect client is gone.
enum class NoteKind : uint8_t { kKey, kNull, kBcast, kRedirected, kBroken };

struct Tracking::Note {
  NoteKind kind;
  uint64_t target;     // the client acted on, on the destination worker
  uint64_t other;      // kKey: the writer; kRedirected: the tracking client; kBroken: redirect id
  int other_home = 0;  // kRedirected: the tracking client's home
  size_t off = 0, len = 0;  // the payload, in the batch's bytes
};

struct Tracking::Batch : MailboxItem {
  Tracking* owner = nullptr;
  int to = 0;
  std::string bytes;
  std::vector<Note> notes;
  size_t footprint() const { return bytes.size() + notes.size() * sizeof(Note); }
};

struct Tracking::PerWorker final : KeyObserver {
  Tracking* owner = nullptr;
  int w = 0;
  Store* store = nullptr;
  bool attached = false;
  // This shard's tracked keys (stored form) → the clients that read them.
  std::unordered_map<std::string, std::vector<Sub>, StringHash, std::equal_to<>> table;
  uint64_t items = 0;
  // The table's keys by index fingerprint: an expiry is reported by fingerprint.
  std::unordered_map<uint64_t, const std::string*> by_fp;
  std::map<std::string, Prefix> prefixes;  // a full copy on every worker
  bool bcast_pending = false;
  std::unordered_map<uint64_t, ClientState*> local;  // this worker's clients with a state
  int local_tracking = 0;
  std::vector<Batch*> open;  // by destination worker (null: none this turn)
  std::vector<int> open_to;
  uint64_t rnd = 0x9E3779B97F4A7C15ULL;
  std::atomic<uint64_t> keys_stat{0}, items_stat{0}, prefixes_stat{0};

  void KeyChanged(std::string_view key) override { owner->KeyChangedOn(w, key); }
  void BeforeFlush(Store&, int) override { owner->FlushOn(w); }
  void KeyExpired(uint64_t fp) override { owner->KeyExpiredOn(w, fp); }
  void Publish() {
    keys_stat.store(table.size(), std::memory_order_relaxed);
    items_stat.store(items, std::memory_order_relaxed);
    prefixes_stat.store(prefixes.size(), std::memory_order_relaxed);
  }
};

Tracking::Tracking(const Services* services, OutputHook on_output, ClientFinder find_client)
    : services_(services),
      on_output_(std::move(on_output)),
      find_client_(std::move(find_client)),
      workers_(std::make_unique<PerWorker[]>(kMaxWorkers)) {
  for (int w = 0; w < kMaxWorkers; ++w) {
    workers_[w].owner = this;
    workers_[w].w = w;
  }
}

Tracking::~Tracking() {
  for (int w = 0; w < kMaxWorkers; ++w) {
    PerWorker& pw = workers_[w];
    if (pw.store != nullptr && pw.attached) pw.store->set_tracking_observer(nullptr);
    for (Batch* b : pw.open) delete b;
  }
}

void Tracking::AttachStore(int w, Store* store) { workers_[w].store = store; }

void Tracking::Reattach(int w) {
  PerWorker& pw = workers_[w];
  const bool want = !pw.table.empty() || !pw.prefixes.empty() || pw.local_tracking > 0;
  pw.Publish();
  if (want == pw.attached || pw.store == nullptr) return;
  pw.attached = want;
  pw.store->set_tracking_observer(want ? &pw : nullptr);
}

TrackingClient& Tracking::StateOf(ClientState* cl) {
  if (cl->tracking == nullptr) {
    cl->tracking = std::make_unique<TrackingClient>();
    workers_[cl->conn->worker()->id()].local.emplace(cl->id, cl);
  }
  return *cl->tracking;
}

std::vector<int> Tracking::AllWorkers() const {
  std::vector<int> all;
  for (int w = 0; w < services_->worker_count(); ++w) all.push_back(w);
  return all;
}

Task Tracking::Enable(ClientState* cl, const TrackingOptions& opt) {
  TrackingClient& t = StateOf(cl);
  const int home = cl->conn->worker()->id();
  if (!t.on) {
    t.on = true;
    clients_.fetch_add(1, std::memory_order_relaxed);
    ++workers_[home].local_tracking;
    Reattach(home);
  }
  // As Redis: the mode flags are replaced, the prefixes of an earlier BCAST call kept.
  t.bcast = opt.bcast;
  t.optin = opt.optin;
  t.optout = opt.optout;
  t.noloop = opt.noloop;
  t.broken_redirect = false;
  t.redirect = opt.redirect;
  t.redirect_home = opt.redirect_home;
  if (!opt.bcast) co_return;
  if (opt.prefixes.empty()) {
    t.prefixes.insert(std::string());
  } else {
    t.prefixes.insert(opt.prefixes.begin(), opt.prefixes.end());
  }
  // Every prefix again, so each copy also learns the new NOLOOP setting.
  std::vector<std::string> all(t.prefixes.begin(), t.prefixes.end());
  const bool noloop = t.noloop;
  const uint64_t id = cl->id;
  for (int w : AllWorkers()) {
    co_await ShardHop(services_->workers[w], [&, w]() {
      for (const std::string& p : all) AddPrefixOn(w, p, id, home, noloop);
    });
    if (cl->closed) co_return;  // OnClose posted the removals behind our registrations
  }
}

Task Tracking::Disable(ClientState* cl) {
  if (cl->tracking == nullptr || !cl->tracking->on) co_return;
  TrackingClient& t = *cl->tracking;
  const int home = cl->conn->worker()->id();
  std::vector<std::string> prefixes(t.prefixes.begin(), t.prefixes.end());
  t = TrackingClient{};
  clients_.fetch_sub(1, std::memory_order_relaxed);
  --workers_[home].local_tracking;
  Reattach(home);
  const uint64_t id = cl->id;
  for (int w = 0; w < services_->worker_count() && !prefixes.empty(); ++w) {
    // Even if the client leaves meanwhile: OnClose no longer knows these prefixes.
    co_await ShardHop(services_->workers[w], [&, w]() {
      for (const std::string& p : prefixes) RemovePrefixOn(w, p, id);
    });
  }
}

void Tracking::OnClose(ClientState* cl) {
  if (cl->tracking == nullptr) return;
  const int home = cl->conn->worker()->id();
  PerWorker& pw = workers_[home];
  pw.local.erase(cl->id);
  TrackingClient& t = *cl->tracking;
  if (t.on) {
    clients_.fetch_sub(1, std::memory_order_relaxed);
    --pw.local_tracking;
  }
  if (!t.prefixes.empty()) {
    struct Removal : MailboxItem {
      Tracking* owner;
      int w;
      uint64_t id;
      std::vector<std::string> prefixes;
    };
    for (int w = 0; w < services_->worker_count(); ++w) {
      auto* r = new Removal();
      r->owner = this;
      r->w = w;
      r->id = cl->id;
      r->prefixes.assign(t.prefixes.begin(), t.prefixes.end());
      r->run = [](MailboxItem* item) {
        auto* rm = static_cast<Removal*>(item);
        for (const std::string& p : rm->prefixes) rm->owner->RemovePrefixOn(rm->w, p, rm->id);
        delete rm;
      };
      if (w == home) {
        r->run(r);
      } else {
        services_->workers[w]->Post(r);
      }
    }
  }
  cl->tracking.reset();
  Reattach(home);
}

TaskOf<int> Tracking::Locate(uint64_t id) {
  const int n = services_->worker_count();
  const int home = Worker::Current()->id();
  int found = -1;
  for (int k = 0; k < n && found < 0; ++k) {
    const int w = (home + k) % n;
    co_await ShardHop(services_->workers[w], [&, w]() {
      if (ClientState* c = find_client_(w, id); c != nullptr) {
        StateOf(c);
        found = w;
      }
    });
  }
  co_return found;
}

bool Tracking::WantsKeys(const TrackingClient& t, const CommandSpec& spec, bool caching) {
  return t.on && !t.bcast && (spec.flags & kCmdReadOnly) && !(spec.flags & kCmdPubSub) &&
         !(t.optin && !caching) && !(t.optout && caching);
}

bool Tracking::ShouldRemember(ClientState* cl, const CommandSpec& spec) {
  TrackingClient& t = *cl->tracking;
  const bool remember = WantsKeys(t, spec, t.caching);
  t.held_caching = t.caching;  // for the commands an EXEC or a script runs
  // CLIENT CACHING holds for the next command only; MULTI and CLIENT ... keep it (Redis clears
  // it in resetClient unless the client is in MULTI or ran a CLIENT subcommand).
  if (spec.name != "multi" && !spec.name.starts_with("client|")) t.caching = false;
  return remember;
}

void Tracking::Remember(int w, ShardSet& shards, const CommandSpec& spec,
                        std::span<const std::string_view> args, uint64_t client_id, int home) {
  thread_local std::vector<KeyRef> refs;
  refs.clear();
  CommandKeys(spec, args, &refs);
  for (const KeyRef& ref : refs) {
    const std::string_view key = args[static_cast<size_t>(ref.arg)];
    const int owner = shards.ShardOf(key);
    if (owner == w) {
      RememberKeyOn(w, key, client_id, home);
      continue;
    }
    // A key of another worker (a multi-shard read): registered there before the command's own
    // hops reach it (one producer's mailbox items keep their order).
    struct Item : MailboxItem {
      Tracking* owner;
      int w;
      uint64_t id;
      int home;
      std::string key;
    };
    auto* item = new Item();
    item->owner = this;
    item->w = owner;
    item->id = client_id;
    item->home = home;
    item->key.assign(key);
    item->run = [](MailboxItem* m) {
      auto* it = static_cast<Item*>(m);
      it->owner->RememberKeyOn(it->w, it->key, it->id, it->home);
      delete it;
    };
    services_->workers[owner]->Post(item);
  }
}

void TrackHeldCommand(const Services& services, ShardSet& shards, ClientState* client,
                      const CommandSpec& spec, std::span<const std::string_view> args) {
  const TrackingClient& t = *client->tracking;
  if (!Tracking::WantsKeys(t, spec, t.held_caching)) return;
  const int home = client->conn->worker()->id();
  services.tracking->Remember(home, shards, spec, args, client->id, home);
}

void Tracking::RememberKeyOn(int w, std::string_view stored_key, uint64_t client_id, int home) {
  PerWorker& pw = workers_[w];
  auto it = pw.table.find(stored_key);
  if (it == pw.table.end()) {
    it = pw.table.emplace(std::string(stored_key), 0).first;
    pw.by_fp[Index::Fingerprint(stored_key)] = &it->first;
  }
  std::vector<Sub>& subs = it->second;
  bool present = false;
  for (const Sub& s : subs) present = present || s.id == client_id;
  if (!present) {
    subs.push_back(Sub{client_id, home});
    ++pw.items;
  }
  EvictOn(w, stored_key);
  Reattach(w);
}

void Tracking::EvictOn(int w, std::string_view keep) {
  const uint64_t max = max_keys_.load(std::memory_order_relaxed);
  if (max == 0) return;
  PerWorker& pw = workers_[w];
  const uint64_t share =
      std::max<uint64_t>(1, max / static_cast<uint64_t>(std::max(1, services_->worker_count())));
  // Bounded effort per call, as Redis: a large cut (CONFIG SET lower) continues on later reads.
  for (int effort = 0; effort < 1000 && pw.table.size() > share; ++effort) {
    pw.rnd ^= pw.rnd << 13;
    pw.rnd ^= pw.rnd >> 7;
    pw.rnd ^= pw.rnd << 17;
    // A random entry other than `keep`, the key about to be read (evicting it would leave the
    // value the client is about to cache untracked). There are two at least: share >= 1.
    const size_t buckets = pw.table.bucket_count();
    size_t b = pw.rnd % buckets;
    std::string victim;
    for (bool found = false; !found; b = (b + 1) % buckets) {
      for (auto it = pw.table.begin(b); it != pw.table.end(b) && !found; ++it) {
        found = it->first != keep;
        if (found) victim = it->first;
      }
    }
    Forget(w, victim, 0);
  }
}

// Sends the key's invalidation to every client that read it and drops the entry; a reader
// `keep` (non-zero) is neither told nor dropped.
void Tracking::Forget(int w, std::string_view stored_key, uint64_t writer, uint64_t keep) {
  PerWorker& pw = workers_[w];
  auto it = pw.table.find(stored_key);
  if (it == pw.table.end()) return;
  const std::string payload = OneKeyArray(ClientKey(stored_key));
  bool kept = false;
  for (const Sub& s : it->second) {
    if (keep != 0 && s.id == keep) {
      kept = true;
      continue;
    }
    Send(w, s.home, Note{NoteKind::kKey, s.id, writer}, payload);
  }
  if (kept) {
    pw.items -= it->second.size() - 1;
    std::erase_if(it->second, [keep](const Sub& s) { return s.id != keep; });
    return;
  }
  pw.items -= it->second.size();
  auto f = pw.by_fp.find(Index::Fingerprint(stored_key));
  if (f != pw.by_fp.end() && f->second == &it->first) pw.by_fp.erase(f);
  pw.table.erase(it);
}

void Tracking::KeyExpiredOn(int w, uint64_t fp) {
  PerWorker& pw = workers_[w];
  auto f = pw.by_fp.find(fp);
  if (f == pw.by_fp.end()) return;
  // An expiry has no writer. A tracking client whose read found the key expired (lazy expiry)
  // registered it just before: it keeps tracking what it is about to cache (a nil).
  Forget(w, std::string(*f->second), 0, current_writer);
  Reattach(w);
}

void Tracking::KeyChangedOn(int w, std::string_view stored_key) {
  PerWorker& pw = workers_[w];
  if (!pw.prefixes.empty() && !IsChunkKey(stored_key)) {
    const std::string_view key = ClientKey(stored_key);
    for (auto& [p, prefix] : pw.prefixes) {
      if (!key.starts_with(p)) continue;
      prefix.keys[std::string(key)] = current_writer;
      if (!pw.bcast_pending) {
        pw.bcast_pending = true;
        Worker::Current()->MarkBusy();  // written after this turn's hooks: turn again
      }
    }
  }
  if (pw.table.empty()) return;
  Forget(w, stored_key, current_writer);
  Reattach(w);
}

void Tracking::FlushOn(int w) {
  PerWorker& pw = workers_[w];
  // Every tracking client of this worker is told "everything" (a null), as Redis does on a
  // flush; FLUSHALL visits every worker, so every tracking client hears it once.
  for (const auto& [id, cl] : pw.local) {
    if (cl->tracking != nullptr && cl->tracking->on) Send(w, w, Note{NoteKind::kNull, id, 0}, "");
  }
  pw.table.clear();
  pw.by_fp.clear();
  pw.items = 0;
  Reattach(w);
}

void Tracking::AddPrefixOn(int w, const std::string& prefix, uint64_t id, int home, bool noloop) {
  PerWorker& pw = workers_[w];
  Prefix& p = pw.prefixes[prefix];
  for (BcastSub& s : p.clients) {
    if (s.id == id) {
      s.noloop = noloop;
      return;
    }
  }
  p.clients.push_back(BcastSub{id, home, noloop});
  Reattach(w);
}

void Tracking::RemovePrefixOn(int w, const std::string& prefix, uint64_t id) {
  PerWorker& pw = workers_[w];
  auto it = pw.prefixes.find(prefix);
  if (it == pw.prefixes.end()) return;
  auto& subs = it->second.clients;
  std::erase_if(subs, [id](const BcastSub& s) { return s.id == id; });
  if (subs.empty()) pw.prefixes.erase(it);
  Reattach(w);
}

void Tracking::Send(int from, int to, const Note& note, std::string_view payload) {
  PerWorker& pw = workers_[from];
  if (pw.open.size() <= static_cast<size_t>(to)) pw.open.resize(services_->worker_count());
  Batch*& b = pw.open[to];
  if (b == nullptr) {
    b = new Batch();
    b->owner = this;
    b->to = to;
    pw.open_to.push_back(to);
    Worker::Current()->MarkBusy();  // opened after this turn's hooks: turn again
  }
  Note n = note;
  n.off = b->bytes.size();
  n.len = payload.size();
  b->bytes.append(payload);
  b->notes.push_back(n);
  if (to != from && b->footprint() >= kMaxBatchBytes) PostBatch(from, to);
}

void Tracking::PostBatch(int from, int to) {
  Batch* b = workers_[from].open[to];
  workers_[from].open[to] = nullptr;
  b->run = [](MailboxItem* item) {
    auto* batch = static_cast<Batch*>(item);
    batch->owner->Deliver(batch->to, *batch);
    delete batch;
  };
  services_->workers[to]->Post(b);
}

void Tracking::EndOfTurn(int w) {
  PerWorker& pw = workers_[w];
  if (pw.bcast_pending) {
    pw.bcast_pending = false;
    for (auto& [name, prefix] : pw.prefixes) {
      if (prefix.keys.empty()) continue;
      const std::string common = KeysArray(prefix.keys, 0);
      for (const BcastSub& s : prefix.clients) {
        if (!s.noloop) {
          Send(w, s.home, Note{NoteKind::kBcast, s.id, 0}, common);
        } else if (std::string own = KeysArray(prefix.keys, s.id); !own.empty()) {
          Send(w, s.home, Note{NoteKind::kBcast, s.id, 0}, own);
        }
      }
      prefix.keys.clear();
    }
  }
  if (pw.open_to.empty()) return;
  Batch* own = nullptr;
  for (int to : pw.open_to) {
    if (pw.open[to] == nullptr) continue;
    if (to == w) {
      own = pw.open[to];
      pw.open[to] = nullptr;
    } else {
      PostBatch(w, to);
    }
  }
  pw.open_to.clear();
  if (own != nullptr) {
    Deliver(w, *own);  // what it forwards opens batches for the next turn
    delete own;
  }
}

void Tracking::Deliver(int w, const Batch& b) {
  for (const Note& n : b.notes) {
    DeliverOne(w, n, std::string_view(b.bytes.data() + n.off, n.len));
  }
}

void Tracking::DeliverOne(int w, const Note& note, std::string_view payload) {
  PerWorker& pw = workers_[w];
  auto it = pw.local.find(note.target);
  if (it == pw.local.end()) {
    // The REDIRECT client is gone: its tracking client learns it at home.
    if (note.kind == NoteKind::kRedirected) {
      Send(w, note.other_home, Note{NoteKind::kBroken, note.other, note.target}, "");
    }
    return;
  }
  ClientState* cl = it->second;
  if (note.kind == NoteKind::kRedirected) {
    Emit(cl, payload, true);
    return;
  }
  TrackingClient& t = *cl->tracking;
  if (note.kind == NoteKind::kBroken) {
    if (t.on && t.redirect == note.other) {
      t.broken_redirect = true;
      if (cl->resp >= 3 && !cl->closed && !cl->conn->closing()) {
        std::string* out = cl->conn->output();
        out->append(">2\r\n$21\r\ntracking-redir-broken\r\n:");
        out->append(std::to_string(t.redirect));
        out->append("\r\n");
        on_output_(cl);
      }
    }
    return;
  }
  if (!t.on) return;
  // A key read before the client switched to BCAST is not its business any more (Redis).
  if (note.kind == NoteKind::kKey && (t.bcast || (t.noloop && note.other == cl->id))) return;
  if (note.kind == NoteKind::kBcast && !t.bcast) return;
  if (note.kind == NoteKind::kNull) payload = cl->resp >= 3 ? "_\r\n" : "$-1\r\n";
  if (t.redirect == 0) {
    Emit(cl, payload, false);
    return;
  }
  if (t.redirect_home != w) {
    Send(w, t.redirect_home, Note{NoteKind::kRedirected, t.redirect, cl->id, w}, payload);
    return;
  }
  auto r = pw.local.find(t.redirect);
  if (r != pw.local.end()) {
    Emit(r->second, payload, true);
    return;
  }
  Note broken{NoteKind::kBroken, cl->id, t.redirect};
  DeliverOne(w, broken, "");
}

void Tracking::Emit(ClientState* cl, std::string_view payload, bool via_redirect) {
  if (cl->closed || cl->conn->closing()) return;
  const bool subscribed = cl->pubsub != nullptr && cl->pubsub->subscribed();
  std::string* out = cl->conn->output();
  if (cl->pubsub != nullptr && cl->pubsub->in_flight) {
    out = &cl->pubsub->held;
  } else if (!via_redirect && cl->pending && cl->cmd_spec != nullptr &&
             !(cl->cmd_spec->flags & kCmdBlocking)) {
    // A command of this client is under way (a FLUSHALL or MSET across workers): as Redis, its
    // invalidations follow its reply (ReleaseHeld, when it finishes).
    out = &cl->tracking->held;
  }
  if (cl->resp >= 3) {
    out->append(">2\r\n$10\r\ninvalidate\r\n");
  } else if (via_redirect && subscribed) {
    out->append("*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n");
  } else {
    return;  // RESP2 without a subscribed redirect: nowhere to put it (as Redis)
  }
  out->append(payload);
  on_output_(cl);
}

void Tracking::ReleaseHeld(ClientState* cl) {
  std::string& held = cl->tracking->held;
  if (held.empty()) return;
  if (!cl->closed) {
    cl->conn->output()->append(held);
    on_output_(cl);
  }
  held.clear();
}

uint64_t Tracking::total_keys() const {
  uint64_t n = 0;
  for (int w = 0; w < services_->worker_count(); ++w) {
    n += workers_[w].keys_stat.load(std::memory_order_relaxed);
  }
  return n;
}

uint64_t Tracking::total_items() const {
  uint64_t n = 0;
  for (int w = 0; w < services_->worker_count(); ++w) {
    n += workers_[w].items_stat.load(std::memory_order_relaxed);
  }
  return n;
}

uint64_t Tracking::total_prefixes() const {
  return workers_[0].prefixes_stat.load(std::memory_order_relaxed);  // every copy is complete
}

}  // namespace lavik
