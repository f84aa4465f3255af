// The blocking list commands. Each runs on its connection's worker (kCmdHome): it tries the pop
// under its keys' shard locks; if every list is empty it queues a ListWaiter on each key's
// worker (commands/list_wait.h) and suspends until a push claims it, the timeout passes or the
// client hangs up. A woken command retries the pop (another client may have emptied the list
// meanwhile: it then blocks again at the front of the queue) and signals the key again so the
// next waiter is served. Inside MULTI/EXEC it never blocks, as in Redis.
#include "server/list_blocking.h"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/numbers.h"
#include "commands/list_ops.h"
#include "commands/list_wait.h"
#include "commands/multi_shard.h"
#include "protocol/errors.h"
#include "server/client_state.h"

namespace lavik {
namespace {

constexpr int64_t kTickUs = 10'000;    // timeout resolution
constexpr int kHangupEveryTicks = 10;  // poll blocked sockets for a hang-up every 100 ms

// This worker's blocked clients (their home is here).
thread_local std::vector<std::shared_ptr<ListWaiter>> blocked;
std::atomic<uint64_t> blocked_total{0};

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

bool HungUp(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

enum class Kind { kPop, kMove, kMPop };

struct BlockArgs {
  Kind kind;
  std::vector<std::string_view> keys;  // the plan's keys (LMOVE: source, destination)
  size_t wait_keys;                    // the first wait_keys of them are waited on
  MPopArgs mpop;
  bool from_left = true, to_left = true;
  int64_t timeout_ms = 0;
};

Task BlockingCommand(Context& ctx, BlockArgs a) {
  const int64_t deadline = a.timeout_ms > 0 ? NowMs() + a.timeout_ms : 0;
  bool front = false;
  int pass_on_shard = -1;
  std::string pass_on_key;
  while (true) {
    KeyPlan plan(ctx, a.keys);
    PopResult pop;
    MoveResult move;
    co_await plan.Lock();
    if (a.kind == Kind::kMove) {
      co_await MoveOnce(ctx, plan, a.from_left, a.to_left, &move);
    } else {
      co_await MPopOnce(ctx, plan, a.mpop, &pop);
    }
    co_await plan.Unlock();
    const std::string& error = a.kind == Kind::kMove ? move.error : pop.error;
    const bool served = a.kind == Kind::kMove ? move.moved : !pop.elements.empty();
    if (pass_on_shard >= 0) {
      // The wake that brought us here was ours to use; whatever is left goes to the next waiter.
      Shard* s = &ctx.shards->at(pass_on_shard);
      co_await ShardHop(s->worker, [s, &pass_on_key]() { SignalListReady(*s, pass_on_key); });
      pass_on_shard = -1;
    }
    if (!error.empty()) {
      ctx.reply->Error(error);
      co_return;
    }
    if (served) {
      if (a.kind == Kind::kMove) {
        ctx.reply->Bulk(move.element);
      } else if (a.kind == Kind::kMPop) {
        ReplyMPop(ctx, pop);
      } else {
        ctx.reply->Array(2);
        ctx.reply->Bulk(pop.key);
        ctx.reply->Bulk(pop.elements[0]);
      }
      co_return;
    }
    if (ctx.in_exec) {  // never blocks inside a transaction: the non-blocking form's nil
      if (a.kind == Kind::kMove) {
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
    blocked.push_back(w);
    blocked_total.fetch_add(1, std::memory_order_relaxed);
    for (size_t i = 0; i < a.wait_keys; ++i) {
      // Queue, then signal: a push that landed since the pop above wakes the queue at once.
      co_await plan.On(plan.shard_of(i), [&, i, s = plan.shard_of(i)](Store&) {
        Shard& shard = ctx.shards->at(s);
        QueueListWaiter(shard, a.keys[i], w, front);
        SignalListReady(shard, a.keys[i]);
      });
    }
    const ListWaiter::Outcome outcome = co_await WaitForList{w.get()};
    blocked.erase(std::find(blocked.begin(), blocked.end(), w));
    blocked_total.fetch_sub(1, std::memory_order_relaxed);
    for (size_t i = 0; i < a.wait_keys; ++i) {
      co_await plan.On(plan.shard_of(i), [&, i](Store&) { DequeueListWaiter(a.keys[i], w.get()); });
    }
    if (outcome == ListWaiter::Outcome::kTimeout) {
      ctx.reply->NullArray();
      co_return;
    }
    if (outcome == ListWaiter::Outcome::kGone || HungUp(w->fd)) {
      if (outcome == ListWaiter::Outcome::kWoken) {  // not ours to use: hand the wake on
        Shard* s = &ctx.shards->at(w->woken_shard);
        co_await ShardHop(s->worker, [s, w]() { SignalListReady(*s, w->woken_key); });
      }
      ctx.reply->NullArray();  // nobody reads it: the connection closes next
      co_return;
    }
    front = true;  // lost a race for the element: keep our turn
    pass_on_shard = w->woken_shard;
    pass_on_key = w->woken_key;
  }
}

// BLPOP/BRPOP key [key ...] timeout
Task BPopGeneric(Context& ctx, bool left) {
  BlockArgs a;
  a.kind = Kind::kPop;
  if (!ParseTimeoutOrReply(ctx, ctx.args.back(), &a.timeout_ms)) co_return;
  a.keys.assign(ctx.args.begin() + 1, ctx.args.end() - 1);
  a.wait_keys = a.keys.size();
  a.mpop.left = left;
  a.mpop.count = 1;
  a.mpop.numkeys = a.keys.size();
  co_await BlockingCommand(ctx, std::move(a));
}

Task BLPop(Context& ctx) { co_await BPopGeneric(ctx, true); }
Task BRPop(Context& ctx) { co_await BPopGeneric(ctx, false); }

Task BMoveGeneric(Context& ctx, bool from_left, bool to_left, std::string_view timeout) {
  BlockArgs a;
  a.kind = Kind::kMove;
  if (!ParseTimeoutOrReply(ctx, timeout, &a.timeout_ms)) co_return;
  a.keys = {ctx.args[1], ctx.args[2]};
  a.wait_keys = 1;
  a.from_left = from_left;
  a.to_left = to_left;
  co_await BlockingCommand(ctx, std::move(a));
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
  BlockArgs a;
  a.kind = Kind::kMPop;
  if (!ParseTimeoutOrReply(ctx, ctx.args[1], &a.timeout_ms)) co_return;
  if (!ParseMPopArgsOrReply(ctx, 2, &a.mpop)) co_return;
  a.keys.assign(ctx.args.begin() + 3, ctx.args.begin() + 3 + a.mpop.numkeys);
  a.wait_keys = a.keys.size();
  co_await BlockingCommand(ctx, std::move(a));
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
    } else if (hangups && HungUp(w->fd)) {
      w->Claim(ListWaiter::Outcome::kGone);
    }
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

std::span<const CommandSpec> ListBlockingCommands() { return kListBlockingCommands; }

uint64_t ListBlockedClients() { return blocked_total.load(std::memory_order_relaxed); }

void StartListBlocking(Worker* w) { w->AddTimer(kTickUs, &Tick); }

void TrackBlockedWaiter(std::shared_ptr<ListWaiter> w) {
  blocked.push_back(std::move(w));
  blocked_total.fetch_add(1, std::memory_order_relaxed);
}

void UntrackBlockedWaiter(const std::shared_ptr<ListWaiter>& w) {
  blocked.erase(std::find(blocked.begin(), blocked.end(), w));
  blocked_total.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace lavik
