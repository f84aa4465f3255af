// BZPOPMIN, BZPOPMAX and BZMPOP: the blocking sorted-set pops, on the engine of the blocking list
// commands (list_blocking.h, doc/threading.md "Blocking commands"): the non-blocking attempt
// pops from the first non-empty key under every key's shard lock; a blocked command is served on
// the key's worker by the write (ZADD, ZINCRBY, ZUNIONSTORE, RENAME...) that leaves a sorted set
// there. They live in server/ (not with the sorted-set families) because blocking needs the
// client's connection.
#include <algorithm>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "blocking/list_blocking.h"
#include "commands/collection_access.h"
#include "commands/multi_shard.h"
#include "commands/zset_common.h"
#include "protocol/errors.h"

namespace lavik {
namespace {

struct ZBlock {
  bool max = false;
  int64_t count = 1;
  bool mpop_reply = false;  // BZMPOP's [key, [[member, score]...]] rather than [key, member, score]
  std::string key;          // where the members came from
  std::vector<std::string> members;
  std::vector<ZEntry> popped;  // their members point into `members`
  std::string error;
  BlockingOps ops;

  ZBlock() {
    ops.type = ValueType::kZSet;
    ops.attempt = [this](Context& ctx, KeyPlan& plan, bool* done) -> Task {
      co_await PopFirst(ctx, plan);
      *done = !popped.empty() || !error.empty();
    };
    ops.serve = [this](Context& ctx, std::string_view key, bool* served) -> Task {
      KeyPlan plan(ctx, std::vector<std::string_view>{key});
      co_await PopFirst(ctx, plan);
      *served = !popped.empty() || !error.empty();
    };
    ops.reply = [this](Context& ctx) { Reply(ctx); };
  }
  ZBlock(const ZBlock&) = delete;

  // Pops from the first non-empty sorted set of the plan's keys, in order; a wrong type counts
  // only if it is reached before one, as in Redis.
  Task PopFirst(Context& ctx, KeyPlan& plan) {
    popped.clear();
    members.clear();
    error.clear();
    for (size_t i = 0; i < plan.keys().size() && error.empty() && popped.empty(); ++i) {
      const std::string_view k = plan.keys()[i];
      co_await plan.Run(plan.shard_of(i), [&](Store& st) -> Task {
        co_await RewriteCollection(
            st, k, ValueType::kZSet, ctx.now_ms,
            [&](const CollectionView& v, bool, std::string* out) {
              popped.clear();
              members.clear();
              if (v.empty()) return Rewrite::kUnchanged;
              const auto n = static_cast<uint32_t>(std::min<int64_t>(count, v.size()));
              std::vector<ZEntry> chosen = max ? RankWindow(v, v.size() - n, v.size() - 1, true)
                                               : RankWindow(v, 0, n - 1, false);
              std::vector<CollectionChange> changes;
              members.reserve(chosen.size());
              for (const ZEntry& e : chosen) {
                members.emplace_back(e.member);
                changes.push_back({e.member, {}, true});
              }
              // The entries' views die with the record copy: point them at our copies.
              for (size_t j = 0; j < chosen.size(); ++j) chosen[j].member = members[j];
              popped = std::move(chosen);
              *out = ApplyChanges(v, std::move(changes), true);
              return Rewrite::kWrite;
            },
            &error, {}, max ? "zpopmax" : "zpopmin");
      });
      if (!popped.empty()) key.assign(k);
    }
  }

  void Reply(Context& ctx) const {
    if (!error.empty()) {
      ctx.reply->Error(error);
    } else if (mpop_reply) {
      ctx.reply->Array(2);
      ctx.reply->Bulk(ClientKey(key));
      ctx.reply->Array(popped.size());
      for (const ZEntry& e : popped) {
        ctx.reply->Array(2);
        ctx.reply->Bulk(e.member);
        ctx.reply->Double(e.score);
      }
    } else {
      ctx.reply->Array(3);
      ctx.reply->Bulk(ClientKey(key));
      ctx.reply->Bulk(popped[0].member);
      ctx.reply->Double(popped[0].score);
    }
  }
};

// BZPOPMIN/BZPOPMAX key [key ...] timeout
Task BZPopGeneric(Context& ctx, bool max) {
  ZBlock b;
  if (!ParseTimeoutOrReply(ctx, ctx.args.back(), &b.ops.timeout_ms)) co_return;
  b.max = max;
  b.ops.keys.assign(ctx.args.begin() + 1, ctx.args.end() - 1);
  b.ops.wait_keys = b.ops.keys.size();
  co_await BlockUntilServed(ctx, b.ops);
}

Task BZPopMin(Context& ctx) { co_await BZPopGeneric(ctx, false); }
Task BZPopMax(Context& ctx) { co_await BZPopGeneric(ctx, true); }

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]. Redis checks the other arguments
// before the timeout.
Task BZMPop(Context& ctx) {
  int64_t numkeys;
  if (!ParseInt64(ctx.args[2], &numkeys) || numkeys < 1) {
    ctx.reply->Error("ERR numkeys should be greater than 0");
    co_return;
  }
  if (numkeys > static_cast<int64_t>(ctx.args.size()) - 4) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  const auto n = static_cast<size_t>(numkeys);
  const std::string_view where = ctx.args[3 + n];
  if (!EqualsNoCase(where, "min") && !EqualsNoCase(where, "max")) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  ZBlock b;
  b.mpop_reply = true;
  b.max = EqualsNoCase(where, "max");
  const size_t rest = ctx.args.size() - 4 - n;
  if (rest == 2 && EqualsNoCase(ctx.args[4 + n], "count")) {
    if (!ParseInt64(ctx.args[5 + n], &b.count) || b.count < 1) {
      ctx.reply->Error("ERR count should be greater than 0");
      co_return;
    }
  } else if (rest != 0) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  if (!ParseTimeoutOrReply(ctx, ctx.args[1], &b.ops.timeout_ms)) co_return;
  b.ops.keys.assign(ctx.args.begin() + 3, ctx.args.begin() + 3 + n);
  b.ops.wait_keys = n;
  co_await BlockUntilServed(ctx, b.ops);
}

constexpr uint32_t kB = kCmdWrite | kCmdBlocking | kCmdHome;

const CommandSpec kZSetBlockingCommands[] = {
    {"bzpopmin", -3, kB | kCmdNoScript | kCmdFast, 1, -2, 1, &BZPopMin,
     "@write @sortedset @fast @blocking", "sorted_set",
     "Removes and returns the member with the lowest score from one or more sorted sets. Blocks "
     "until a member is available otherwise. Deletes the sorted set if the last element was "
     "popped.",
     "5.0.0"},
    {"bzpopmax", -3, kB | kCmdNoScript | kCmdFast, 1, -2, 1, &BZPopMax,
     "@write @sortedset @fast @blocking", "sorted_set",
     "Removes and returns the member with the highest score from one or more sorted sets. "
     "Blocks until a member available otherwise.  Deletes the sorted set if the last element "
     "was popped.",
     "5.0.0"},
    {"bzmpop", -5, kB | kCmdMovableKeys, 0, 0, 0, &BZMPop, "@write @sortedset @slow @blocking",
     "sorted_set",
     "Removes and returns a member by score from one or more sorted sets. Blocks until a member "
     "is available otherwise. Deletes the sorted set if the last element was popped.",
     "7.0.0"},
};

}  // namespace

std::span<const CommandSpec> ZSetBlockingCommands() { return kZSetBlockingCommands; }

}  // namespace lavik
