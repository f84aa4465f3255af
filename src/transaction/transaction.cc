#include "transaction/transaction.h"

#include <algorithm>
#include <utility>

#include "base/clock.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "client/client_state.h"
#include "client/services.h"
#include "commands/command_keys.h"
#include "commands/multi_shard.h"
#include "commands/propagate.h"
#include "commands/shards.h"
#include "observability/observability.h"
#include "observability/worker_stats.h"
#include "protocol/errors.h"
#include "runtime/shard_hop.h"

namespace lavik {

// --- WatchTable ---

WatchTable::~WatchTable() {
  if (store_ != nullptr && store_->key_observer() == this) store_->set_key_observer(nullptr);
}

void WatchTable::Attach() {
  if (store_ == nullptr) return;
  store_->set_key_observer(keys_.empty() ? nullptr : this);
}

void WatchTable::Add(std::string_view key, const std::shared_ptr<WatchFlag>& flag) {
  auto it = keys_.find(key);
  if (it == keys_.end()) it = keys_.emplace(std::string(key), 0).first;
  it->second.push_back(flag);
  Attach();
}

void WatchTable::Remove(std::string_view key, const WatchFlag* flag) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return;
  auto& v = it->second;
  v.erase(std::remove_if(v.begin(), v.end(), [flag](const auto& f) { return f.get() == flag; }),
          v.end());
  if (v.empty()) {
    keys_.erase(it);
    Attach();
  }
}

void WatchTable::KeyChanged(std::string_view key) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return;
  // Release: the client's worker reads the flag after taking this shard's lock (a mailbox
  // hand-off), but a plain WATCH→EXEC without locks relies on this ordering too.
  for (const auto& f : it->second) f->dirty.store(true, std::memory_order_release);
  keys_.erase(it);
  Attach();
}

void WatchTable::Flush(const std::function<bool(std::string_view key)>& exists) {
  for (auto it = keys_.begin(); it != keys_.end();) {
    if (exists(it->first)) {
      for (const auto& f : it->second) f->dirty.store(true, std::memory_order_release);
      it = keys_.erase(it);
    } else {
      ++it;
    }
  }
  Attach();
}

void WatchTable::BeforeFlush(Store& store, int db) {
  const int64_t now = NowMs();
  Flush([&](std::string_view key) {
    return (db < 0 || SplitDbKey(key).db == db) && store.Lookup(key, now).exists;
  });
}

namespace {

// Each worker's table for its own shard, made on the first WATCH of one of its keys.
thread_local std::unique_ptr<WatchTable> local_table;

WatchTable& LocalTable(Store* store) {
  if (local_table == nullptr) local_table = std::make_unique<WatchTable>(store);
  return *local_table;
}

// The last key index of a command with these arguments (-1: it names no key).
int LastKey(const CommandSpec& spec, int argc) {
  if (spec.first_key <= 0 || spec.first_key >= argc) return -1;
  int last = spec.last_key < 0 ? argc + spec.last_key : spec.last_key;
  return std::min(last, argc - 1);
}

// The shard a queued command runs on: its keys' shard, or -1 (the connection's worker: keyless
// commands, connection commands, and coordinators of keys on several shards).
int RunShard(const CommandSpec& spec, std::span<const std::string_view> args, ShardSet* shards) {
  if (spec.flags & kCmdHome) return -1;
  const int last = LastKey(spec, static_cast<int>(args.size()));
  if (last < 0) return -1;
  const int shard = shards->ShardOf(args[spec.first_key]);
  const int step = std::max(spec.key_step, 1);
  for (int i = spec.first_key + step; i <= last; i += step) {
    if (shards->ShardOf(args[i]) != shard) return -1;
  }
  return shard;
}

}  // namespace

void AddCommandShards(const CommandSpec& spec, std::span<const std::string_view> args,
                      int shard_count, const std::function<int(std::string_view)>& shard_of,
                      std::vector<int>* out) {
  const bool keyspace = spec.flags & (kCmdWrite | kCmdReadOnly);
  if ((spec.flags & kCmdMovableKeys) || (spec.first_key <= 0 && keyspace)) {
    for (int s = 0; s < shard_count; ++s) out->push_back(s);
    return;
  }
  const int last = LastKey(spec, static_cast<int>(args.size()));
  const int step = std::max(spec.key_step, 1);
  for (int i = spec.first_key; last >= 0 && i <= last; i += step) out->push_back(shard_of(args[i]));
}

// --- TxState ---

namespace {

// Tells one shard's table to forget a client's watches (posted by TxState::Unwatch).
struct UnwatchMessage : MailboxItem {
  std::shared_ptr<WatchFlag> flag;
  std::vector<std::string> keys;

  void Apply() {
    if (local_table == nullptr) return;
    for (const std::string& k : keys) local_table->Remove(k, flag.get());
  }
  static void Run(MailboxItem* item) {
    auto* m = static_cast<UnwatchMessage*>(item);
    m->Apply();
    delete m;
  }
};

}  // namespace

void TxState::Unwatch() {
  if (flag == nullptr) return;
  std::vector<std::unique_ptr<UnwatchMessage>> per_shard(shards_->size());
  for (auto& [key, w] : watched) {
    auto& m = per_shard[w.shard];
    if (m == nullptr) {
      m = std::make_unique<UnwatchMessage>();
      m->flag = flag;
    }
    m->keys.push_back(key);
  }
  Worker* self = Worker::Current();
  for (int s = 0; s < shards_->size(); ++s) {
    if (per_shard[s] == nullptr) continue;
    Worker* w = shards_->at(s).worker;
    if (w == self) {
      per_shard[s]->Apply();
    } else {
      per_shard[s]->run = &UnwatchMessage::Run;
      w->Post(per_shard[s].release());
    }
  }
  watched.clear();
  flag.reset();
}

bool TxState::WatchBroken(int64_t now_ms) const {
  if (flag == nullptr) return false;
  if (flag->dirty.load(std::memory_order_acquire)) return true;
  for (const auto& [key, w] : watched) {
    if (w.expire_ms != 0 && w.expire_ms <= now_ms) return true;
  }
  return false;
}

// --- Dispatcher hook ---

bool QueueInMultiOrReply(ClientState* cl, const CommandSpec* spec,
                         std::span<const std::string_view> args) {
  TxState* tx = cl->tx.get();
  if (tx == nullptr || !tx->in_multi) return false;
  const std::string_view n = spec->name;
  if (n == "exec" || n == "discard" || n == "multi" || n == "watch" || n == "quit" ||
      n == "reset") {
    return false;
  }
  if (spec->flags & kCmdNoMulti) {
    tx->dirty_exec = true;
    cl->writer.Error("ERR Command not allowed inside a transaction");
    return true;
  }
  TxState::Queued& q = tx->queue.emplace_back();
  q.spec = spec;
  q.args.assign(args.begin(), args.end());
  cl->writer.Simple("QUEUED");
  return true;
}

namespace {

TxState& TxOf(Context& ctx) {
  std::unique_ptr<TxState>& tx = ctx.client->tx;
  if (tx == nullptr) tx = std::make_unique<TxState>(ctx.shards);
  return *tx;
}

Task Multi(Context& ctx) {
  TxState& tx = TxOf(ctx);
  if (tx.in_multi) {
    ctx.reply->Error("ERR MULTI calls can not be nested");
    co_return;
  }
  tx.in_multi = true;
  ctx.reply->Ok();
}

Task Discard(Context& ctx) {
  TxState* tx = ctx.client->tx.get();
  if (tx == nullptr || !tx->in_multi) {
    ctx.reply->Error("ERR DISCARD without MULTI");
    co_return;
  }
  tx->queue.clear();
  tx->in_multi = false;
  tx->dirty_exec = false;
  tx->Unwatch();
  ctx.reply->Ok();
}

Task Unwatch(Context& ctx) {
  if (TxState* tx = ctx.client->tx.get()) tx->Unwatch();
  ctx.reply->Ok();
  co_return;
}

Task Watch(Context& ctx) {
  TxState& tx = TxOf(ctx);
  if (tx.in_multi) {
    ctx.reply->Error("ERR WATCH inside MULTI is not allowed");
    co_return;
  }
  if (tx.flag == nullptr) tx.flag = std::make_shared<WatchFlag>();
  // New keys by shard (a key watched twice is registered once, as in Redis).
  std::vector<std::vector<std::string_view>> by_shard(ctx.shards->size());
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    const std::string_view key = ctx.args[i];
    if (tx.watched.find(std::string(key)) != tx.watched.end()) continue;
    const int s = ctx.shards->ShardOf(key);
    tx.watched.emplace(std::string(key), TxState::Watched{s, 0});
    by_shard[s].push_back(key);
  }
  std::shared_ptr<WatchFlag> flag = tx.flag;
  for (int s = 0; s < ctx.shards->size(); ++s) {
    if (by_shard[s].empty()) continue;
    Shard* shard = &ctx.shards->at(s);
    std::vector<int64_t> expires(by_shard[s].size());
    co_await ShardHop(shard->worker, [&]() {
      WatchTable& table = LocalTable(&shard->store);
      const int64_t now = NowMs();
      for (size_t i = 0; i < by_shard[s].size(); ++i) {
        table.Add(by_shard[s][i], flag);
        KeyInfo info = shard->store.Lookup(by_shard[s][i], now);
        expires[i] = info.exists ? info.expire_ms : 0;
      }
    });
    for (size_t i = 0; i < by_shard[s].size(); ++i) {
      tx.watched[std::string(by_shard[s][i])].expire_ms = expires[i];
    }
  }
  ctx.reply->Ok();
}

}  // namespace

namespace {

// Runs the handler and counts the writes it made to its store.
Task RunCounting(Context& c, uint64_t* dirtied) {
  const uint64_t before = c.store->stats().dirty;
  co_await c.spec->handler(c);
  *dirtied = c.store->stats().dirty - before;
}

}  // namespace

Task RunHoldingShards(Context& exec, const CommandSpec* spec,
                      std::span<const std::string_view> argv, ReplyWriter* w) {
  const std::span<const std::string_view> client_argv = argv;  // what SLOWLOG shows
  std::string arena;
  std::vector<std::string_view> stored;
  if (StoredKeyArgs(*spec, argv, exec.db, &arena, &stored)) argv = stored;
  const Services& services = *exec.services;
  const int home = Worker::Current()->id();
  const int shard = RunShard(*spec, argv, exec.shards);
  const int64_t start_ns = MonotonicNs();
  const uint64_t errors = w->errors();
  Context c;
  c.args = argv;
  c.reply = w;
  c.shards = exec.shards;
  c.spec = spec;
  c.now_ms = NowMs();
  c.client_id = exec.client_id;
  c.in_exec = true;
  c.db = exec.db;
  c.in_script = exec.in_script;
  c.from_master = exec.from_master;
  if (exec.client != nullptr && exec.client->tracking != nullptr && services.track_held) {
    services.track_held(services, *exec.shards, exec.client, *spec, argv);  // CLIENT TRACKING
  }
  // Replication: EXEC's and a script's writes are collected for the stream (propagate.h); a
  // script inside EXEC collects into EXEC's.
  c.repl = exec.repl;
  const bool collect =
      c.repl != nullptr && c.repl->batch && repl::Propagates(*spec) && !repl::IsBatch(*spec);
  const size_t reply_at = w->output()->size();
  uint64_t dirtied = 0;
  if (spec->name == "monitor") {
    // Redis: a client inside EXEC expects one reply per command, so it cannot become a monitor.
    w->Error("ERR MONITOR isn't allowed for DENY BLOCKING client");
  } else if (shard >= 0 && shard != home) {
    Shard* s = &exec.shards->at(shard);
    c.store = &s->store;
    w->set_error_sink(services.observability->stats.error_sink(shard));
    if (collect) {
      co_await ShardCall(s->worker, [&c, &dirtied]() { return RunCounting(c, &dirtied); });
    } else {
      co_await ShardCall(s->worker, [&c]() { return c.spec->handler(c); });
    }
  } else {
    c.store = &exec.shards->local().store;
    c.client = exec.client;
    c.server = exec.server;
    c.services = exec.services;
    w->set_error_sink(services.observability->stats.error_sink(home));
    if (collect) {
      co_await RunCounting(c, &dirtied);
    } else {
      co_await spec->handler(c);
    }
  }
  if (collect) {
    // A command on one shard changed data if its store's write count moved; others (keyless,
    // across shards) if they did not fail.
    const bool changed = shard >= 0 ? dirtied != 0 : w->errors() == errors;
    if (changed && !repl::OwnEffect(*spec)) {  // an OwnEffect command added its own
      repl::AppendEffect(*spec, argv, c.db, c.now_ms,
                         std::string_view(*w->output()).substr(reply_at), &c.repl->ops,
                         c.repl->trim_to);
    }
    c.repl->trim_to.clear();  // XADD/XTRIM's, for this command only
  }
  if (spec->name == "select") exec.db = c.db;  // the rest of the EXEC or script runs there
  services.worker_stats[home]->commands.Add();
  services.observability->CommandDone(home, spec, exec.client, client_argv, start_ns,
                                      w->errors() != errors);
}

namespace {

// Runs one queued command on its shard (or at home), its reply going to `w`.
Task RunQueued(Context& exec, const TxState::Queued& q, ReplyWriter* w) {
  std::vector<std::string_view> argv(q.args.begin(), q.args.end());
  co_await RunHoldingShards(exec, q.spec, argv, w);
}

ExecOpenSlotCheck exec_open_slot_check = nullptr;  // cluster mode only

Task Exec(Context& ctx) {
  TxState* tx = ctx.client->tx.get();
  if (tx == nullptr || !tx->in_multi) {
    ctx.reply->Error("ERR EXEC without MULTI");
    co_return;
  }
  std::vector<TxState::Queued> queue = std::move(tx->queue);
  tx->queue.clear();
  tx->in_multi = false;
  if (tx->dirty_exec) {
    tx->dirty_exec = false;
    tx->Unwatch();
    ctx.reply->Error("EXECABORT Transaction discarded because of previous errors.");
    co_return;
  }

  // Every shard the commands touch, and the watched keys' shards (so no write can slip in
  // between the watch check and the commands), locked in ascending order like MSET's.
  ShardSet* shards = ctx.shards;
  std::vector<int> ids;
  std::vector<std::string_view> argv;
  auto shard_of = [shards](std::string_view k) { return shards->ShardOf(k); };
  // The keys' stored form depends on the database each command runs in, which a queued SELECT
  // changes (RunHoldingShards rewrites them again as it runs them).
  int db = ctx.db;
  std::string arena;
  std::vector<std::string_view> stored;
  for (const TxState::Queued& q : queue) {
    argv.assign(q.args.begin(), q.args.end());
    int64_t n;
    if (q.spec->name == "select" && argv.size() == 2 && ParseInt64(argv[1], &n) && n >= 0 &&
        n < kMaxDatabases) {
      db = DbMap::Physical(static_cast<int>(n));
    }
    const bool rewritten = StoredKeyArgs(*q.spec, argv, db, &arena, &stored);
    AddCommandShards(*q.spec, rewritten ? stored : argv, shards->size(), shard_of, &ids);
  }
  for (const auto& [key, w] : tx->watched) ids.push_back(w.shard);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (int id : ids) co_await ShardLockAwaiter(&shards->at(id), tx);

  const uint32_t open = ctx.cluster_open;
  ctx.cluster_open = 0;
  std::string redirect;
  if (open != 0 && exec_open_slot_check != nullptr) {
    // All the queue's keys are in this one slot (the dispatcher refused CROSSSLOT).
    Shard* s = &shards->at(shards->SlotShard(static_cast<uint16_t>(open >> 16)));
    const int64_t now = NowMs();
    if (s->worker == Worker::Current()) {
      redirect = exec_open_slot_check(*ctx.services, open, s->store, queue, now);
    } else {
      co_await ShardHop(s->worker, [&, s, now]() {
        redirect = exec_open_slot_check(*ctx.services, open, s->store, queue, now);
      });
    }
  }
  if (!redirect.empty()) {
    tx->Unwatch();
    for (int id : ids) {
      Shard* s = &shards->at(id);
      co_await ShardHop(s->worker, [s]() { s->Unlock(); });
    }
    ctx.reply->Error(redirect);
    co_return;
  }
  const bool broken = tx->WatchBroken(NowMs());
  tx->Unwatch();
  std::string out;
  if (!broken) {
    ReplyWriter w(&out, ctx.client->resp);
    for (const TxState::Queued& q : queue) co_await RunQueued(ctx, q, &w);
  }
  repl::TakeSeqBeforeUnlock(ctx);  // its writes' stream position (commands/propagate.h)
  for (int id : ids) {
    Shard* s = &shards->at(id);
    co_await ShardHop(s->worker, [s]() { s->Unlock(); });
  }
  if (broken) {
    ctx.reply->NullArray();
  } else {
    ctx.reply->Array(queue.size());
    ctx.reply->Raw(out);
  }
}

constexpr uint32_t kTx = kCmdHome | kCmdNoScript | kCmdLoading | kCmdStale;

const CommandSpec kTransactionCommands[] = {
    {"multi", 1, kTx | kCmdFast | kCmdAllowBusy, 0, 0, 0, &Multi, "@fast @transaction",
     "transactions", "Starts a transaction.", "1.2.0"},
    {"exec", 1, kTx, 0, 0, 0, &Exec, "@slow @transaction", "transactions",
     "Executes all commands in a transaction.", "1.2.0"},
    {"discard", 1, kTx | kCmdFast | kCmdAllowBusy, 0, 0, 0, &Discard, "@fast @transaction",
     "transactions", "Discards a transaction.", "2.0.0"},
    {"watch", -2, kTx | kCmdFast | kCmdAllowBusy, 1, -1, 1, &Watch, "@fast @transaction",
     "transactions", "Monitors changes to keys to determine the execution of a transaction.",
     "2.2.0"},
    {"unwatch", 1, kTx | kCmdFast | kCmdAllowBusy, 0, 0, 0, &Unwatch, "@fast @transaction",
     "transactions", "Forgets about watched keys of a transaction.", "2.2.0"},
};

}  // namespace

void SetExecOpenSlotCheck(ExecOpenSlotCheck check) { exec_open_slot_check = check; }

std::span<const CommandSpec> TransactionCommands() { return kTransactionCommands; }

}  // namespace lavik
