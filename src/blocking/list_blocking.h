// Blocking commands: the list ones' registration table (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
// BLMPOP), the engine every blocking pop runs on (BlockUntilServed; the sorted-set forms in
// commands/zset_blocking.cc use it too) and the per-worker timer that ends waits on timeout or
// when the client hangs up.
//
// Thread safety: StartListBlocking runs on the worker's thread before it serves; the engine runs
// on the blocked client's home worker, except `serve`, which runs on the woken key's worker.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "commands/command.h"
#include "commands/list_wait.h"
#include "commands/multi_shard.h"
#include "commands/shards.h"
#include "runtime/worker.h"
#include "storage/value_type.h"

namespace lavik {

std::span<const CommandSpec> ListBlockingCommands();
// BZPOPMIN, BZPOPMAX, BZMPOP (zset_blocking.cc).
std::span<const CommandSpec> ZSetBlockingCommands();

// Clients blocked in a blocking command right now, over all workers (INFO blocked_clients).
uint64_t ListBlockedClients();

// Adds the worker's timer that times out blocked clients and notices their hang-ups, and the
// shard's write hook that serves them (and wakes the stream readers of a key whose stream was
// deleted or replaced by another type) and expire hook (a stream that expired).
void StartListBlocking(Worker* w, Shard* shard);

// On the client's home worker: ends the wait of the client `client_id` if it is blocked here
// in any blocking command (lists, sorted sets, streams) with `why`: kTimeout (CLIENT UNBLOCK
// TIMEOUT: the command's timeout reply), kUnblockError (CLIENT UNBLOCK ERROR) or kGone (CLIENT
// KILL: no reply). False if it is not blocked here, or a write serves it already.
bool EndBlockedWait(uint64_t client_id, ListWaiter::Outcome why);

// Replies what a blocked command answers when its wait ended without a wake-up: the timeout's
// nil array, CLIENT UNBLOCK ERROR's error, or nothing for a client that is gone.
void ReplyWaitEnded(Context& ctx, ListWaiter::Outcome why);

// Redis 7.0's timeout argument (float seconds; 0 = forever) in ms, or replies its error.
bool ParseTimeoutOrReply(Context& ctx, std::string_view arg, int64_t* ms);

// What one blocking command does; BlockUntilServed runs it.
struct BlockingOps {
  std::vector<std::string_view> keys;  // the keys the attempt locks (the command's arguments)
  size_t wait_keys = 0;                // the first wait_keys of them are waited on
  ValueType type = ValueType::kList;   // what a waited key must hold to serve the command
  int64_t timeout_ms = 0;              // 0: forever
  bool nil_bulk_in_exec = false;       // inside EXEC an empty source answers $-1 (BLMOVE)
  // The non-blocking form, under the plan's locks: sets *done if it took something or failed.
  std::function<Task(Context& ctx, KeyPlan& plan, bool* done)> attempt;
  // On the woken key's worker, holding its shard lock (ctx has no client): takes from `key`
  // what the command takes and sets *served, or leaves it false to retry at home.
  std::function<Task(Context& ctx, std::string_view key, bool* served)> serve;
  // Replies what attempt or serve took (or its error).
  std::function<void(Context& ctx)> reply;
};

// Tries ops.attempt; if nothing was there, blocks until a write serves the command, the
// timeout passes (nil array) or the client hangs up. Inside MULTI/EXEC it never blocks.
Task BlockUntilServed(Context& ctx, BlockingOps& ops);

// For other blocking families (XREAD/XREADGROUP): on the client's home worker, puts a waiter
// under the timer above (deadline, hang-up, shutdown) and counts it in blocked_clients, until
// it is untracked.
void TrackBlockedWaiter(std::shared_ptr<ListWaiter> w);
void UntrackBlockedWaiter(const std::shared_ptr<ListWaiter>& w);

}  // namespace lavik
