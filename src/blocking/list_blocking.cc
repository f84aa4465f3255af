// The blocking commands' engine and the list commands on it. A command runs on its connection's
// worker (kCmdHome): it tries the non-blocking form under its keys' shard locks; if every key is
// empty it queues a ListWaiter on each key's worker (commands/list_wait.h) and suspends until a
// write serves it (the pop runs on the key's worker, before any other command touches the key),
// the timeout passes or the client hangs up. A command the key's worker cannot serve (BLMOVE to a
// key of another worker) is woken to retry at home; if another client took the element first it
// blocks again at the front of the queues. Inside MULTI/EXEC it never blocks, as in Redis.
#include "blocking/list_blocking.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "client/client_state.h"
#include "commands/list_ops.h"
#include "commands/list_wait.h"
#include "commands/multi_shard.h"
#include "commands/propagate.h"
#include "commands/stream_wait.h"
#include "protocol/errors.h"

namespace lavik {
namespace {

constexpr int64_t kTickUs = 10'000;    // timeout resolution
constexpr int kHangupEveryTicks = 10;  // poll blocked sockets for a hang-up every 100 ms

// This worker's blocked clients (their home is here).
thread_local std::vector<std::shared_ptr<ListWaiter>> blocked;
std::atomic<uint64_t> blocked_total{0};

// A list pop (BLPOP, BRPOP, BLMPOP) or move (BLMOVE, BRPOPLPUSH) on the engine.
struct ListBlock {
  bool move = false;
  bool mpop_reply = false;  // BLMPOP's [key, [elements]] rather than BLPOP's [key, element]
  MPopArgs mpop;
  bool from_left = true, to_left = true;
  PopResult pop;
  MoveResult moved;
  BlockingOps ops;

  ListBlock() {
    ops.attempt = [this](Context& ctx, KeyPlan& plan, bool* done) -> Task {
      pop = PopResult();
      moved = MoveResult();
      if (move) {
        co_await MoveOnce(ctx, plan, from_left, to_left, &moved);
      } else {
        co_await MPopOnce(ctx, plan, mpop, &pop);
      }
      *done = Taken();
    };
    ops.serve = [this](Context& ctx, std::string_view key, bool* served) -> Task {
      pop = PopResult();
      moved = MoveResult();
      if (move) {
        // The destination's worker may be another: its lock cannot be taken from here without
        // breaking the lock order, so that move retries at home.
        if (ctx.shards->ShardOf(ops.keys[1]) != ctx.shards->ShardOf(key)) co_return;
        KeyPlan plan(ctx, std::vector<std::string_view>{key, ops.keys[1]});
        co_await MoveOnce(ctx, plan, from_left, to_left, &moved);
      } else {
        KeyPlan plan(ctx, std::vector<std::string_view>{key});
        co_await MPopOnce(ctx, plan, mpop, &pop);
      }
      *served = Taken();
    };
    ops.reply = [this](Context& ctx) { Reply(ctx); };
  }
  ListBlock(const ListBlock&) = delete;

  bool Taken() const {
    if (move) return moved.moved || !moved.error.empty();
    return !pop.elements.empty() || !pop.error.empty();
  }
  void Reply(Context& ctx) const {
    const std::string& error = move ? moved.error : pop.error;
    if (!error.empty()) {
      ctx.reply->Error(error);
    } else if (move) {
      ctx.reply->Bulk(moved.element);
    } else if (mpop_reply) {
      ReplyMPop(ctx, pop);
    } else {
      ctx.reply->Array(2);
      ctx.reply->Bulk(ClientKey(pop.key));
      ctx.reply->Bulk(pop.elements[0]);
    }
  }
};

// BLPOP/BRPOP key [key ...] timeout
Task BPopGeneric(Context& ctx, bool left) {
  ListBlock b;
  if (!ParseTimeoutOrReply(ctx, ctx.args.back(), &b.ops.timeout_ms)) co_return;
  b.ops.keys.assign(ctx.args.begin() + 1, ctx.args.end() - 1);
  b.ops.wait_keys = b.ops.keys.size();
  b.mpop.left = left;
  b.mpop.count = 1;
  b.mpop.numkeys = b.ops.keys.size();
  co_await BlockUntilServed(ctx, b.ops);
}

Task BLPop(Context& ctx) { co_await BPopGeneric(ctx, true); }
Task BRPop(Context& ctx) { co_await BPopGeneric(ctx, false); }

Task BMoveGeneric(Context& ctx, bool from_left, bool to_left, std::string_view timeout) {
  ListBlock b;
  if (!ParseTimeoutOrReply(ctx, timeout, &b.ops.timeout_ms)) co_return;
  b.move = true;
  b.ops.keys = {ctx.args[1], ctx.args[2]};
  b.ops.wait_keys = 1;
  b.ops.nil_bulk_in_exec = true;
  b.from_left = from_left;
  b.to_left = to_left;
  co_await BlockUntilServed(ctx, b.ops);
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
Task BLMove(Context& ctx) {
  bool from_left, to_left;
  if (!ParseSideOrReply(ctx, ctx.args[3], &from_left) ||
      !ParseSideOrReply(ctx, ctx.args[4], &to_left)) {
    co_return;
  }
  co_await BMoveGeneric(ctx, from_left, to_left, ctx.args[5]);
}

// BRPOPLPUSH source destination timeout
Task BRPopLPush(Context& ctx) { co_await BMoveGeneric(ctx, false, true, ctx.args[3]); }

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
Task BLMPop(Context& ctx) {
  ListBlock b;
  b.mpop_reply = true;
  // Redis checks the other arguments before the timeout.
  if (!ParseMPopArgsOrReply(ctx, 2, &b.mpop)) co_return;
  if (!ParseTimeoutOrReply(ctx, ctx.args[1], &b.ops.timeout_ms)) co_return;
  b.ops.keys.assign(ctx.args.begin() + 3, ctx.args.begin() + 3 + b.mpop.numkeys);
  b.ops.wait_keys = b.ops.keys.size();
  co_await BlockUntilServed(ctx, b.ops);
}

void Tick() {
  static thread_local int ticks = 0;
  if (blocked.empty()) return;
  const bool hangups = ++ticks % kHangupEveryTicks == 0;
  const int64_t now = NowMs();
  // Shutting down: end every wait, or the drain would wait for these clients until its deadline.
  const bool stopping = Worker::Current()->stop_requested();
  for (const std::shared_ptr<ListWaiter>& w : blocked) {
    if (stopping || (w->deadline_ms != 0 && now >= w->deadline_ms)) {
      w->Claim(ListWaiter::Outcome::kTimeout);
    } else if (hangups && ClientHungUp(w->fd)) {
      w->Claim(ListWaiter::Outcome::kGone);
    }
  }
}

// The store's write hook: `key` now holds a value of `type`, or was deleted.
void OnShardWrite(void* arg, std::string_view key, ValueType type, bool deleted) {
  Shard& shard = *static_cast<Shard*>(arg);
  if (!deleted) OnListKeyWritten(shard, key, type);
  // A stream deleted (DEL, RENAME, MOVE...) or replaced by another type (SET over it, DEL then
  // a push in one EXEC): its blocked XREADGROUP readers fail as in Redis; XREAD readers look
  // and block again.
  if (deleted || type != ValueType::kStream) SignalStreamReady(shard, key);
}

// The store's expire hook: an expired stream's XREADGROUP readers fail, as on a deletion.
void OnShardExpire(uint64_t fp, ValueType type) {
  if (type == ValueType::kStream) SignalStreamExpired(fp);
}

// Runs fn(shard, key) on the worker of each key the command waits on, in turn. `fn` is a named
// lambda of the caller: a temporary in a co_await operand trips GCC 12 (see below).
template <typename Fn>
Task OnWaitKeys(Context& ctx, const BlockingOps& ops, const Fn& fn) {
  const KeyPlan plan(ctx, ops.keys);
  for (size_t i = 0; i < ops.wait_keys; ++i) {
    Shard* s = &ctx.shards->at(plan.shard_of(i));
    std::string_view key = ops.keys[i];
    // `fn` by reference: GCC 12 destroys a co_await operand's by-value captures twice.
    co_await ShardHop(s->worker, [s, key, &fn]() { fn(*s, key); });
  }
}

constexpr uint32_t kB = kCmdWrite | kCmdNoScript | kCmdBlocking | kCmdHome;

const CommandSpec kListBlockingCommands[] = {
    {"blpop", -3, kB, 1, -2, 1, &BLPop, "@write @list @slow @blocking", "list",
     "Removes and returns the first element in a list. Blocks until an element is available "
     "otherwise. Deletes the list if the last element was popped.",
     "2.0.0"},
    {"brpop", -3, kB, 1, -2, 1, &BRPop, "@write @list @slow @blocking", "list",
     "Removes and returns the last element in a list. Blocks until an element is available "
     "otherwise. Deletes the list if the last element was popped.",
     "2.0.0"},
    {"blmove", 6, kB | kCmdDenyOom, 1, 2, 1, &BLMove, "@write @list @slow @blocking", "list",
     "Pops an element from a list, pushes it to another list and returns it. Blocks until an "
     "element is available otherwise. Deletes the list if the last element was moved.",
     "6.2.0"},
    {"brpoplpush", 4, kB | kCmdDenyOom, 1, 2, 1, &BRPopLPush, "@write @list @slow @blocking",
     "list",
     "Pops an element from a list, pushes it to another list and returns it. Block until an "
     "element is available otherwise. Deletes the list if the last element was popped.",
     "2.2.0"},
    {"blmpop", -5, kCmdWrite | kCmdBlocking | kCmdHome | kCmdMovableKeys, 0, 0, 0, &BLMPop,
     "@write @list @slow @blocking", "list",
     "Pops the first element from one of multiple lists. Blocks until an element is available "
     "otherwise. Deletes the list if the last element was popped.",
     "7.0.0"},
};

}  // namespace

// Redis 7.0 getTimeoutFromObjectOrReply (seconds, as a float). 0 = forever.
bool ParseTimeoutOrReply(Context& ctx, std::string_view arg, int64_t* ms) {
  long double secs;
  if (!ParseLongDouble(arg, &secs) || std::isnan(secs)) {
    ctx.reply->Error(kErrTimeoutNotFloat);
    return false;
  }
  const long double v = ceill(secs * 1000.0L);
  // Redis 7.0 casts to long long: a value past its range comes out negative.
  if (v < 0 || v >= 9.2e18L) {
    ctx.reply->Error(kErrTimeoutNegative);
    return false;
  }
  *ms = static_cast<int64_t>(v);
  return true;
}

Task BlockUntilServed(Context& ctx, BlockingOps& ops) {
  const int64_t deadline = ops.timeout_ms > 0 ? NowMs() + ops.timeout_ms : 0;
  bool front = false;
  while (true) {
    bool done = false;
    {
      KeyPlan plan(ctx, ops.keys);
      co_await plan.Lock();
      co_await ops.attempt(ctx, plan, &done);
      co_await plan.Unlock();
    }
    if (done) {
      if (front) {
        // Woken, then failed at home (BLMOVE whose destination holds the wrong type): the value
        // is still there, and goes to the next client blocked on the key, as in Redis.
        const auto serve_next = [](Shard& s, std::string_view key) {
          ServeListWaitersIfReady(s, key);
        };
        co_await OnWaitKeys(ctx, ops, serve_next);
      }
      ops.reply(ctx);
      co_return;
    }
    if (ctx.in_exec) {  // never blocks inside a transaction: the non-blocking form's nil
      if (ops.nil_bulk_in_exec) {
        ctx.reply->Null();
      } else {
        ctx.reply->NullArray();
      }
      co_return;
    }
    auto w = std::make_shared<ListWaiter>();
    w->home = Worker::Current();
    w->deadline_ms = deadline;
    w->fd = ctx.client->conn->fd();
    w->client_id = ctx.client_id;
    w->type = ops.type;
    // Runs on the key's worker while this command is suspended below, so `ctx` and `ops` are
    // only read there; the reply is written here, at home.
    w->serve = [&ctx, &ops](Shard&, std::string_view key, bool* served) -> Task {
      Context sctx;
      sctx.shards = ctx.shards;
      sctx.spec = ctx.spec;
      sctx.client_id = ctx.client_id;
      sctx.now_ms = NowMs();
      sctx.in_exec = true;  // the drain holds the key's shard lock
      co_await ops.serve(sctx, key, served);
      // The pop's place in the replication stream is here, on the key's worker under the
      // drain's lock, not when the reply is written at home (commands/propagate.h).
      if (*served) repl::TakeSeqNow(ctx);
    };
    TrackBlockedWaiter(w);
    const auto queue = [&w, front](Shard& s, std::string_view key) {
      QueueListWaiter(s, key, w, front);
    };
    co_await OnWaitKeys(ctx, ops, queue);
    const ListWaiter::Outcome outcome = co_await WaitForList{w.get()};
    UntrackBlockedWaiter(w);
    const auto dequeue = [p = w.get()](Shard&, std::string_view key) { DequeueListWaiter(key, p); };
    co_await OnWaitKeys(ctx, ops, dequeue);
    if (outcome == ListWaiter::Outcome::kWoken && w->served) {
      ops.reply(ctx);
      co_return;
    }
    if (outcome != ListWaiter::Outcome::kWoken) {
      ReplyWaitEnded(ctx, outcome);
      co_return;
    }
    front = true;  // woken to retry here: keep our turn if another client is faster
  }
}

bool EndBlockedWait(uint64_t client_id, ListWaiter::Outcome why) {
  for (const std::shared_ptr<ListWaiter>& w : blocked) {
    if (w->client_id == client_id) return w->Claim(why);
  }
  return false;
}

void ReplyWaitEnded(Context& ctx, ListWaiter::Outcome why) {
  if (why == ListWaiter::Outcome::kUnblockError) {
    ctx.reply->Error(kErrUnblockedByClient);
  } else if (why != ListWaiter::Outcome::kGone) {
    ctx.reply->NullArray();  // the timeout's reply, for every blocking command Lavik has
  }
}

std::span<const CommandSpec> ListBlockingCommands() { return kListBlockingCommands; }

uint64_t ListBlockedClients() { return blocked_total.load(std::memory_order_relaxed); }

void StartListBlocking(Worker* w, Shard* shard) {
  w->AddTimer(kTickUs, &Tick);
  shard->store.set_write_hook(&OnShardWrite, shard);
  shard->store.set_expire_hook(&OnShardExpire);
}

void TrackBlockedWaiter(std::shared_ptr<ListWaiter> w) {
  blocked.push_back(std::move(w));
  blocked_total.fetch_add(1, std::memory_order_relaxed);
}

void UntrackBlockedWaiter(const std::shared_ptr<ListWaiter>& w) {
  blocked.erase(std::find(blocked.begin(), blocked.end(), w));
  blocked_total.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace lavik
