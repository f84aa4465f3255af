// Transactions: MULTI / EXEC / DISCARD / WATCH / UNWATCH, atomic across workers (see
// doc/transactions.md).
//
// - A client in MULTI has its commands checked by the dispatcher (unknown command, arity, auth)
//   and queued here (+QUEUED); a rejected command flags the transaction, so EXEC replies
//   EXECABORT.
// - EXEC takes the lock of every shard its queued commands (and its watched keys) touch, in
//   ascending shard order like MSET, checks the watches, runs the commands one by one on their
//   shards (hops) and unlocks: no other client's command runs on those shards meanwhile.
// - WATCH registers the client's WatchFlag under each key in the key's shard's WatchTable; a
//   write to a watched key (Store's KeyObserver hook) sets the flag. A shard's store has the hook
//   only while its table is non-empty.
//
// Thread safety: TxState belongs to its client's worker. A WatchTable belongs to one shard's
// worker. WatchFlag is shared between them (an atomic flag, kept alive by shared_ptr).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/command.h"
#include "storage/store.h"

namespace lavik {

class ClientState;
class ShardSet;

// Set when a key the client watches changes; read by EXEC on the client's worker.
struct WatchFlag {
  std::atomic<bool> dirty{false};
};

// One shard's watched keys: key → the flags of the clients watching it.
class WatchTable : public KeyObserver {
 public:
  // `store` (may be null in tests) gets this table as its observer while it is non-empty.
  explicit WatchTable(Store* store) : store_(store) {}
  ~WatchTable();
  WatchTable(const WatchTable&) = delete;
  WatchTable& operator=(const WatchTable&) = delete;

  void Add(std::string_view key, const std::shared_ptr<WatchFlag>& flag);
  // Removes `flag` from key's watchers (no-op if it is not there any more).
  void Remove(std::string_view key, const WatchFlag* flag);
  size_t size() const { return keys_.size(); }

  // KeyObserver: flags every watcher of the key and forgets the key (a flag stays set; its
  // client's other registrations are removed when it unwatches).
  void KeyChanged(std::string_view key) override;
  // FLUSHALL (db -1) / FLUSHDB: a watched key of the database that exists now is about to
  // change (Redis flags only those).
  void BeforeFlush(Store& store, int db) override;
  // As BeforeFlush, with the existence test given (unit tests).
  void Flush(const std::function<bool(std::string_view key)>& exists);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  void Attach();

  Store* store_;
  std::unordered_map<std::string, std::vector<std::shared_ptr<WatchFlag>>, Hash, std::equal_to<>>
      keys_;
};

// The shards EXEC must lock for one queued command (appended to *out, unsorted): its keys'
// shards; every shard for a keyless command that reads or writes the keyspace (DBSIZE, KEYS,
// FLUSHALL...) or one with movable keys; none for the rest (PING, CLIENT...).
// shard_of maps a key to its shard.
void AddCommandShards(const CommandSpec& spec, std::span<const std::string_view> args,
                      int shard_count, const std::function<int(std::string_view)>& shard_of,
                      std::vector<int>* out);

// Runs one command whose shards the caller already holds (EXEC, scripts): on its keys' shard by a
// hop, or on the caller's worker (keyless, connection and multi-shard commands), with
// ctx.in_exec set so it neither locks nor blocks. Its reply goes to `w`; the command is counted
// in the stats. `exec` is the caller's context (client, services); `argv` outlives the task.
Task RunHoldingShards(Context& exec, const CommandSpec* spec,
                      std::span<const std::string_view> argv, ReplyWriter* w);

// A client's transaction state; allocated on its first MULTI or WATCH.
class TxState {
 public:
  explicit TxState(ShardSet* shards) : shards_(shards) {}
  ~TxState() { Unwatch(); }
  TxState(const TxState&) = delete;
  TxState& operator=(const TxState&) = delete;

  struct Queued {
    const CommandSpec* spec;
    std::vector<std::string> args;
  };
  struct Watched {
    int shard;
    int64_t expire_ms;  // the key's TTL when it was watched (0: none, or missing)
  };

  // The dispatcher: a command was refused before it could be queued (Redis's flagTransaction).
  void Rejected() {
    if (in_multi) dirty_exec = true;
  }
  // Drops every watch (the tables forget this client's flag asynchronously).
  void Unwatch();
  // A watched key changed, or one that had a TTL when watched has now expired.
  bool WatchBroken(int64_t now_ms) const;

  ShardSet* const shards_;
  bool in_multi = false;
  bool dirty_exec = false;  // a command was rejected while queuing: EXEC aborts
  std::vector<Queued> queue;
  std::shared_ptr<WatchFlag> flag;  // null while nothing is watched
  std::unordered_map<std::string, Watched> watched;
};

// The dispatcher's hooks (server/dispatcher.cc).
//
// Flags an open MULTI when OnRequest's checks reject the command (unknown, arity, auth...).
class MultiRejectGuard {
 public:
  explicit MultiRejectGuard(TxState* tx) : tx_(tx) {}
  ~MultiRejectGuard() {
    if (tx_ != nullptr && !passed_) tx_->Rejected();
  }
  MultiRejectGuard(const MultiRejectGuard&) = delete;
  MultiRejectGuard& operator=(const MultiRejectGuard&) = delete;
  void Passed() { passed_ = true; }

 private:
  TxState* tx_;
  bool passed_ = false;
};

// Inside MULTI: queues the command and replies +QUEUED (or rejects a no-multi command); returns
// false when the command must run now (not in MULTI, or EXEC/DISCARD/MULTI/WATCH/QUIT/RESET).
bool QueueInMultiOrReply(ClientState* cl, const CommandSpec* spec,
                         std::span<const std::string_view> args);

// Cluster mode: when EXEC's queue names keys of a slot MIGRATING or IMPORTING here (the
// dispatcher's check left ctx.cluster_open set), EXEC calls this on the slot's worker once it
// holds its shards and before anything runs: "" to go on, else the -ASK/-TRYAGAIN text, and EXEC
// then discards the transaction as Redis does (cluster/cluster_route.h; set once at start-up).
using ExecOpenSlotCheck = std::string (*)(const Services& services, uint32_t open, Store& store,
                                          const std::vector<TxState::Queued>& queue,
                                          int64_t now_ms);
void SetExecOpenSlotCheck(ExecOpenSlotCheck check);

// MULTI, EXEC, DISCARD, WATCH, UNWATCH.
std::span<const CommandSpec> TransactionCommands();

}  // namespace lavik
