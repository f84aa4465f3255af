// Set commands: SADD, SREM, SISMEMBER/SMISMEMBER, SCARD, SMEMBERS, SRANDMEMBER, SPOP, SMOVE,
// SINTER/SUNION/SDIFF (+STORE), SINTERCARD, SSCAN. A set is one record holding its members in
// the collection encoding (storage/collection.h, doc/collections.md). Commands over several keys
// read and write them under their shards' locks (multi_shard.h), so they are atomic across
// workers as Redis's are on its single thread.
#include <algorithm>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/numbers.h"
#include "commands/collection_access.h"
#include "commands/families.h"
#include "commands/multi_shard.h"
#include "notify/keyspace_events.h"

namespace lavik {
namespace {

constexpr ValueType kSet = ValueType::kSet;

constexpr std::string_view kErrRangeLong =
    "ERR value is out of range, value must between -9223372036854775807 and "
    "9223372036854775807";

Task SAdd(Context& ctx) {
  int64_t added = 0;
  bool ok = co_await RewriteCollectionOrReply(
      ctx, kSet, "sadd",
      [&](const CollectionView& v, bool, std::string* out) {
        std::vector<CollectionChange> changes;
        std::vector<std::string_view> fresh;
        for (size_t i = 2; i < ctx.args.size(); ++i) {
          if (v.Find(ctx.args[i]) < 0) {
            fresh.push_back(ctx.args[i]);
            changes.push_back({ctx.args[i], {}, false});
          }
        }
        std::sort(fresh.begin(), fresh.end());
        added = std::unique(fresh.begin(), fresh.end()) - fresh.begin();
        if (added == 0) return Rewrite::kUnchanged;
        *out = ApplyChanges(v, std::move(changes), false);
        return Rewrite::kWrite;
      },
      ReadScope::Members(ctx.args.subspan(2)));
  if (ok) ctx.reply->Integer(added);
}

Task SRem(Context& ctx) { co_await RemoveMembers(ctx, kSet); }

Task SIsMember(Context& ctx) {
  CollectionRead s;
  if (!co_await ReadCollectionOrReply(ctx, kSet, &s, ReadScope::Members(ctx.args.subspan(2)))) {
    co_return;
  }
  ctx.reply->Integer(s.view.Find(ctx.args[2]) >= 0 ? 1 : 0);
}

Task SMIsMember(Context& ctx) {
  CollectionRead s;
  if (!co_await ReadCollectionOrReply(ctx, kSet, &s, ReadScope::Members(ctx.args.subspan(2)))) {
    co_return;
  }
  ctx.reply->Array(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    ctx.reply->Integer(s.view.Find(ctx.args[i]) >= 0 ? 1 : 0);
  }
}

Task SCard(Context& ctx) { co_await ReplyCardinality(ctx, kSet); }

void ReplyMembers(Context& ctx, const CollectionView& v) {
  ctx.reply->Set(v.size());
  for (uint32_t i = 0; i < v.size(); ++i) ctx.reply->Bulk(v.field(i));
}

Task SMembers(Context& ctx) {
  CollectionRead s;
  if (!co_await ReadCollectionOrReply(ctx, kSet, &s)) {
    co_return;
  }
  ReplyMembers(ctx, s.view);
}

// SRANDMEMBER key [count] (Redis 7.0 srandmemberCommand).
Task SRandMember(Context& ctx) {
  if (ctx.args.size() > 3) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  const bool with_count = ctx.args.size() == 3;
  int64_t count = 0;
  if (with_count) {
    if (!ParseInt64(ctx.args[2], &count)) {
      ctx.reply->Error(kErrNotInteger);
      co_return;
    }
    if (count < -INT64_MAX) {
      ctx.reply->Error(kErrRangeLong);
      co_return;
    }
  }
  CollectionRead s;
  if (!co_await ReadRandomMembersOrReply(ctx, kSet, with_count, &s)) co_return;
  RandomPicks picks(s.view, count);
  ctx.reply->Array(picks.size());
  for (uint64_t k = 0; k < picks.size(); ++k) ctx.reply->Bulk(s.view.field(picks.Next()));
}

// SPOP key [count]: removes random members (the whole set, and the key, when count >= SCARD).
Task SPop(Context& ctx) {
  bool with_count;
  int64_t count;
  if (!ParsePopCountOrReply(ctx, false, &with_count, &count)) co_return;
  std::vector<std::string> popped;
  bool ok = co_await RewriteCollectionOrReply(
      ctx, kSet, "spop",
      [&](const CollectionView& v, bool, std::string* out) {
        popped.clear();
        if (v.empty() || count == 0) return Rewrite::kUnchanged;
        const auto n = static_cast<uint32_t>(std::min<int64_t>(count, v.size()));
        std::vector<CollectionChange> changes;
        for (uint32_t i : DistinctRandomIndices(v.size(), n)) {
          popped.emplace_back(v.field(i));
          changes.push_back({v.field(i), {}, true});
        }
        *out = ApplyChanges(v, std::move(changes), false);
        return Rewrite::kWrite;
      },
      with_count ? ReadScope() : ReadScope::Random());  // SPOP key: one chunk
  if (!ok) co_return;
  if (!with_count) {
    if (popped.empty()) {
      ctx.reply->Null();
    } else {
      ctx.reply->Bulk(popped[0]);
    }
    co_return;
  }
  ctx.reply->Set(popped.size());
  for (const std::string& m : popped) ctx.reply->Bulk(m);
}

Task SScan(Context& ctx) {
  CollectionRead s;
  std::vector<uint32_t> hits;
  if (!co_await ScanOrReply(ctx, kSet, &s, &hits)) co_return;
  ctx.reply->Array(hits.size());
  for (uint32_t i : hits) ctx.reply->Bulk(s.view.field(i));
}

// --- Commands over several sets ---

// Copies of the sets named by plan.keys()[first..], read under the plan's locks, each on its
// shard. A missing key is an empty set. False with *error on WRONGTYPE (every key is checked,
// as Redis 7.0 does, even after a missing one) or a read failure.
struct SetCopies {
  std::vector<CollectionRead> sets;
  std::string error;
};

Task ReadSets(Context& ctx, KeyPlan& plan, size_t first, SetCopies* out) {
  out->sets.resize(plan.keys().size() - first);
  for (int s : plan.shards()) {
    co_await plan.Run(s, [&, s](Store& st) -> Task {
      for (size_t i = first; i < plan.keys().size(); ++i) {
        if (plan.shard_of(i) != s || !out->error.empty()) continue;
        std::string error;
        if (!co_await ReadCollection(st, plan.keys()[i], kSet, ctx.now_ms, true, true,
                                     &out->sets[i - first], &error)) {
          out->error = std::move(error);
        }
      }
    });
  }
}

enum class SetOp { kInter, kUnion, kDiff };

// The members of the result, as views into `sets` (distinct). `limit` (> 0) stops an
// intersection early (SINTERCARD).
std::vector<std::string_view> Combine(const std::vector<CollectionRead>& sets, SetOp op,
                                      uint64_t limit = 0) {
  std::vector<std::string_view> out;
  if (op == SetOp::kInter) {
    std::vector<const CollectionView*> by_size;
    for (const CollectionRead& s : sets) {
      if (s.view.empty()) return out;  // intersecting with an empty set
      by_size.push_back(&s.view);
    }
    std::sort(by_size.begin(), by_size.end(), [](const CollectionView* a, const CollectionView* b) {
      return a->size() < b->size();
    });
    const CollectionView& smallest = *by_size[0];
    for (uint32_t i = 0; i < smallest.size(); ++i) {
      std::string_view m = smallest.field(i);
      bool everywhere = true;
      for (size_t k = 1; k < by_size.size() && everywhere; ++k)
        everywhere = by_size[k]->Find(m) >= 0;
      if (!everywhere) continue;
      out.push_back(m);
      if (limit != 0 && out.size() >= limit) break;
    }
  } else if (op == SetOp::kDiff) {
    const CollectionView& base = sets[0].view;
    for (uint32_t i = 0; i < base.size(); ++i) {
      std::string_view m = base.field(i);
      bool elsewhere = false;
      for (size_t k = 1; k < sets.size() && !elsewhere; ++k) elsewhere = sets[k].view.Find(m) >= 0;
      if (!elsewhere) out.push_back(m);
    }
  } else {
    for (const CollectionRead& s : sets) {
      for (uint32_t i = 0; i < s.view.size(); ++i) out.push_back(s.view.field(i));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out;
}

// SINTER / SUNION / SDIFF and their STORE forms (dst = the first argument).
Task SetOpGeneric(Context& ctx, SetOp op, bool store) {
  static constexpr std::string_view kStoreEvents[] = {"sinterstore", "sunionstore", "sdiffstore"};
  KeyPlan plan(ctx, ctx.args.subspan(1));
  const size_t first = store ? 1 : 0;
  SetCopies in;
  std::string error;
  int64_t card = 0;
  co_await plan.Lock();
  co_await ReadSets(ctx, plan, first, &in);
  std::vector<std::string_view> result;
  if (in.error.empty()) result = Combine(in.sets, op);
  if (in.error.empty() && store) {
    std::vector<CollectionChange> entries;
    entries.reserve(result.size());
    for (std::string_view m : result) entries.push_back({m, {}, false});
    std::string encoded = EncodeCollection(std::move(entries), false);
    card = static_cast<int64_t>(result.size());
    // The destination is replaced whatever its type, and loses its TTL (a new key).
    co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
      WriteResult w;
      bool existed = false;
      if (encoded.empty()) {
        w = co_await st.Delete(plan.keys()[0], ctx.now_ms, &existed);
      } else {
        w = co_await st.Write(plan.keys()[0], kSet, encoded, 0);
      }
      if (!w.ok()) error = w.error;
      if (w.ok() && !encoded.empty()) {
        NotifyKeyspaceEvent(kNotifySet, kStoreEvents[static_cast<int>(op)], plan.keys()[0]);
      } else if (w.ok() && existed) {
        NotifyKeyspaceEvent(kNotifyGeneric, "del", plan.keys()[0]);
      }
    });
  }
  co_await plan.Unlock();
  if (!in.error.empty() || !error.empty()) {
    ctx.reply->Error(in.error.empty() ? error : in.error);
  } else if (store) {
    ctx.reply->Integer(card);
  } else {
    ctx.reply->Set(result.size());
    for (std::string_view m : result) ctx.reply->Bulk(m);
  }
}

Task SInter(Context& ctx) { co_await SetOpGeneric(ctx, SetOp::kInter, false); }
Task SUnion(Context& ctx) { co_await SetOpGeneric(ctx, SetOp::kUnion, false); }
Task SDiff(Context& ctx) { co_await SetOpGeneric(ctx, SetOp::kDiff, false); }
Task SInterStore(Context& ctx) { co_await SetOpGeneric(ctx, SetOp::kInter, true); }
Task SUnionStore(Context& ctx) { co_await SetOpGeneric(ctx, SetOp::kUnion, true); }
Task SDiffStore(Context& ctx) { co_await SetOpGeneric(ctx, SetOp::kDiff, true); }

// SINTERCARD numkeys key [key ...] [LIMIT limit]
Task SInterCard(Context& ctx) {
  int64_t numkeys;
  if (!ParseInt64(ctx.args[1], &numkeys) || numkeys <= 0) {
    ctx.reply->Error("ERR numkeys should be greater than 0");
    co_return;
  }
  if (numkeys > static_cast<int64_t>(ctx.args.size()) - 2) {
    ctx.reply->Error("ERR Number of keys can't be greater than number of args");
    co_return;
  }
  int64_t limit = 0;
  for (size_t i = 2 + static_cast<size_t>(numkeys); i < ctx.args.size(); i += 2) {
    if (EqualsNoCase(ctx.args[i], "limit") && i + 1 < ctx.args.size()) {
      if (!ParseInt64(ctx.args[i + 1], &limit) || limit < 0) {
        ctx.reply->Error("ERR LIMIT can't be negative");
        co_return;
      }
    } else {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
  }
  KeyPlan plan(ctx, ctx.args.subspan(2, static_cast<size_t>(numkeys)));
  SetCopies in;
  co_await plan.Lock();
  co_await ReadSets(ctx, plan, 0, &in);
  co_await plan.Unlock();
  if (!in.error.empty()) {
    ctx.reply->Error(in.error);
    co_return;
  }
  ctx.reply->Integer(
      static_cast<int64_t>(Combine(in.sets, SetOp::kInter, static_cast<uint64_t>(limit)).size()));
}

// SMOVE source destination member: the removal and the addition happen under both shards'
// locks. Redis's checks, in its order: a missing source answers 0 before any type check.
Task SMove(Context& ctx) {
  KeyPlan plan(ctx, ctx.args.subspan(1, 2));
  const std::string_view src = ctx.args[1], dst = ctx.args[2], member = ctx.args[3];
  std::string error;
  int64_t moved = 0;
  co_await plan.Lock();
  while (true) {
    CollectionRead from;
    co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
      co_await ReadCollection(st, src, kSet, ctx.now_ms, false, true, &from, &error,
                              ReadScope::Members({&member, 1}));
    });
    if (!error.empty() || !from.info.exists) break;
    co_await plan.On(plan.shard_of(1), [&](Store& st) {
      KeyInfo info = st.Lookup(dst, ctx.now_ms);
      if (info.exists && info.type != kSet) error = kErrWrongType;
    });
    if (!error.empty()) break;
    if (from.view.Find(member) < 0) break;
    if (src == dst) {
      moved = 1;  // a member of the one set: nothing to move
      break;
    }
    bool applied = false;
    std::string encoded = ApplyChanges(from.view, {{member, {}, true}}, false);
    co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
      co_await StoreCollectionRead(st, src, kSet, from, encoded, &applied, &error);
    });
    if (!error.empty()) break;
    if (!applied) continue;  // a write slipped in before the locks were taken: start over
    moved = 1;
    co_await plan.Run(plan.shard_of(1), [&](Store& st) -> Task {
      // Redis's order, all from here so they arrive in it: the removal, the source's "del" if
      // it emptied, then the addition ("new" first, from the store, if it creates the key).
      NotifyKeyspaceEvent(kNotifySet, "srem", src);
      if (from.size == 1) NotifyKeyspaceEvent(kNotifyGeneric, "del", src);
      bool added = false;
      co_await RewriteCollection(
          st, dst, kSet, ctx.now_ms,
          [&](const CollectionView& v, bool, std::string* out) {
            added = v.Find(member) < 0;
            if (!added) return Rewrite::kUnchanged;
            *out = ApplyChanges(v, {{member, {}, false}}, false);
            return Rewrite::kWrite;
          },
          &error, ReadScope::Members({&member, 1}));
      if (added && error.empty()) NotifyKeyspaceEvent(kNotifySet, "sadd", dst);
    });
    break;
  }
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else {
    ctx.reply->Integer(moved);
  }
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const CommandSpec kSetCommands[] = {
    {"sadd", -3, kW | kCmdFast, 1, 1, 1, &SAdd, "@write @set @fast", "set",
     "Adds one or more members to a set. Creates the key if it doesn't exist.", "1.0.0"},
    {"srem", -3, kCmdWrite | kCmdFast, 1, 1, 1, &SRem, "@write @set @fast", "set",
     "Removes one or more members from a set. Deletes the set if the last member was removed.",
     "1.0.0"},
    {"sismember", 3, kR | kCmdFast, 1, 1, 1, &SIsMember, "@read @set @fast", "set",
     "Determines whether a member belongs to a set.", "1.0.0"},
    {"smismember", -3, kR | kCmdFast, 1, 1, 1, &SMIsMember, "@read @set @fast", "set",
     "Determines whether multiple members belong to a set.", "6.2.0"},
    {"scard", 2, kR | kCmdFast, 1, 1, 1, &SCard, "@read @set @fast", "set",
     "Returns the number of members in a set.", "1.0.0"},
    {"smembers", 2, kR, 1, 1, 1, &SMembers, "@read @set @slow", "set",
     "Returns all members of a set.", "1.0.0"},
    {"srandmember", -2, kR, 1, 1, 1, &SRandMember, "@read @set @slow", "set",
     "Get one or multiple random members from a set", "1.0.0"},
    {"spop", -2, kCmdWrite | kCmdFast, 1, 1, 1, &SPop, "@write @set @fast", "set",
     "Returns one or more random members from a set after removing them. Deletes the set if the "
     "last member was popped.",
     "1.0.0"},
    {"smove", 4, kCmdWrite | kCmdFast, 1, 2, 1, &SMove, "@write @set @fast", "set",
     "Moves a member from one set to another.", "1.0.0"},
    {"sinter", -2, kR, 1, -1, 1, &SInter, "@read @set @slow", "set",
     "Returns the intersect of multiple sets.", "1.0.0"},
    {"sintercard", -3, kR | kCmdMovableKeys, 0, 0, 0, &SInterCard, "@read @set @slow", "set",
     "Returns the number of members of the intersect of multiple sets.", "7.0.0"},
    {"sinterstore", -3, kW, 1, -1, 1, &SInterStore, "@write @set @slow", "set",
     "Stores the intersect of multiple sets in a key.", "1.0.0"},
    {"sunion", -2, kR, 1, -1, 1, &SUnion, "@read @set @slow", "set",
     "Returns the union of multiple sets.", "1.0.0"},
    {"sunionstore", -3, kW, 1, -1, 1, &SUnionStore, "@write @set @slow", "set",
     "Stores the union of multiple sets in a key.", "1.0.0"},
    {"sdiff", -2, kR, 1, -1, 1, &SDiff, "@read @set @slow", "set",
     "Returns the difference of multiple sets.", "1.0.0"},
    {"sdiffstore", -3, kW, 1, -1, 1, &SDiffStore, "@write @set @slow", "set",
     "Stores the difference of multiple sets in a key.", "1.0.0"},
    {"sscan", -3, kR, 1, 1, 1, &SScan, "@read @set @slow", "set", "Iterates over members of a set.",
     "2.8.0"},
};

}  // namespace

std::span<const CommandSpec> SetCommands() { return kSetCommands; }

}  // namespace lavik
