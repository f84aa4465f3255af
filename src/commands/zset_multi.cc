// Sorted set commands over several keys: ZRANGESTORE, ZUNION/ZINTER/ZDIFF and their STORE forms,
// ZINTERCARD and ZMPOP. Like the multi-key set commands (set_family.cc) they read and write
// under the shard locks of every key involved (multi_shard.h), so they are atomic across
// workers; sources are copied on their shards and combined on the connection's worker.
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/ascii.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "commands/collection_access.h"
#include "commands/families.h"
#include "commands/multi_shard.h"
#include "commands/zset_common.h"
#include "commands/zset_range.h"
#include "notify/keyspace_events.h"

namespace lavik {
namespace {

constexpr ValueType kZSet = ValueType::kZSet;

// A source of ZUNION and friends: a sorted set, or a plain set whose members score 1.
struct ZSource {
  CollectionRead read;
  bool is_set = false;
  double weight = 1;
  double Score(uint32_t i) const { return is_set ? 1.0 : ScoreAt(read.view, i); }
};

// Reads plan.keys()[first..] into out[...] on their shards, under the plan's locks. A missing
// key is empty; a key that is neither a sorted set nor (if `sets_too`) a set is WRONGTYPE.
Task ReadSources(Context& ctx, KeyPlan& plan, size_t first, bool sets_too,
                 std::vector<ZSource>* out, std::string* error) {
  out->resize(plan.keys().size() - first);
  for (int s : plan.shards()) {
    co_await plan.Run(s, [&, s](Store& st) -> Task {
      for (size_t i = first; i < plan.keys().size(); ++i) {
        if (plan.shard_of(i) != s || !error->empty()) continue;
        ZSource& src = (*out)[i - first];
        const KeyInfo info = st.Lookup(plan.keys()[i], ctx.now_ms);
        src.is_set = sets_too && info.exists && info.type == ValueType::kSet;
        co_await ReadCollection(st, plan.keys()[i], src.is_set ? ValueType::kSet : kZSet,
                                ctx.now_ms, true, true, &src.read, error);
      }
    });
  }
}

// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
Task ZRangeStore(Context& ctx) {
  ZRangeSpec spec;
  if (!ParseZRangeOrReply(ctx, 2, ZRangeForm::kStore, &spec)) co_return;
  KeyPlan plan(ctx, ctx.args.subspan(1, 2));
  std::vector<ZSource> src;
  std::string error;
  std::vector<ZEntry> result;
  co_await plan.Lock();
  co_await ReadSources(ctx, plan, 1, false, &src, &error);
  if (error.empty()) {
    result = SelectFromSet(src[0].read.view, spec);
    co_await StoreZSetResult(ctx, plan, 0, "zrangestore", result, &error);
  }
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else {
    ctx.reply->Integer(static_cast<int64_t>(result.size()));
  }
}

enum class ZOp { kUnion, kInter, kDiff, kInterCard };
enum class Aggregate { kSum, kMin, kMax };

void AggregateInto(double* target, double v, Aggregate agg) {
  switch (agg) {
    case Aggregate::kSum:
      *target += v;
      if (std::isnan(*target)) *target = 0;  // inf + -inf, as Redis
      break;
    case Aggregate::kMin:
      *target = std::min(*target, v);
      break;
    case Aggregate::kMax:
      *target = std::max(*target, v);
      break;
  }
}

// The result of a union, intersection or difference, sorted; views into `src`. `limit` (> 0)
// stops an intersection early (ZINTERCARD).
std::vector<ZEntry> CombineZ(std::vector<ZSource>& src, ZOp op, Aggregate agg, uint64_t limit) {
  std::vector<ZEntry> out;
  if (op == ZOp::kDiff) {
    const CollectionView& base = src[0].read.view;
    for (uint32_t i = 0; i < base.size(); ++i) {
      const std::string_view m = base.field(i);
      bool elsewhere = false;
      for (size_t k = 1; k < src.size() && !elsewhere; ++k)
        elsewhere = src[k].read.view.Find(m) >= 0;
      if (!elsewhere) out.push_back({src[0].Score(i), m});
    }
  } else {
    // Redis walks the sources from the smallest (the aggregation order follows it).
    std::vector<ZSource*> by_size;
    for (ZSource& s : src) by_size.push_back(&s);
    std::stable_sort(by_size.begin(), by_size.end(), [](const ZSource* a, const ZSource* b) {
      return a->read.view.size() < b->read.view.size();
    });
    if (op == ZOp::kUnion) {
      std::unordered_map<std::string_view, double> acc;
      std::vector<std::string_view> order;
      for (const ZSource* s : by_size) {
        for (uint32_t i = 0; i < s->read.view.size(); ++i) {
          double v = s->weight * s->Score(i);
          if (std::isnan(v)) v = 0;
          auto [it, fresh] = acc.try_emplace(s->read.view.field(i), v);
          if (fresh) {
            order.push_back(it->first);
          } else {
            AggregateInto(&it->second, v, agg);
          }
        }
      }
      for (std::string_view m : order) out.push_back({acc[m], m});
    } else if (!by_size[0]->read.view.empty()) {
      const ZSource& first = *by_size[0];
      for (uint32_t i = 0; i < first.read.view.size(); ++i) {
        const std::string_view m = first.read.view.field(i);
        double score = first.weight * first.Score(i);
        if (std::isnan(score)) score = 0;
        bool everywhere = true;
        for (size_t k = 1; k < by_size.size() && everywhere; ++k) {
          const int64_t at = by_size[k]->read.view.Find(m);
          everywhere = at >= 0;
          if (everywhere) {
            AggregateInto(&score, by_size[k]->weight * by_size[k]->Score(static_cast<uint32_t>(at)),
                          agg);
          }
        }
        if (!everywhere) continue;
        out.push_back({score, m});
        if (limit != 0 && out.size() >= limit) return out;
      }
    }
  }
  if (op != ZOp::kInterCard) std::sort(out.begin(), out.end(), ZLess);
  return out;
}

// ZUNION/ZINTER/ZDIFF numkeys key... [WEIGHTS w...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES], their
// STORE forms (dst numkeys key...) and ZINTERCARD numkeys key... [LIMIT limit]
// (Redis 7.0 zunionInterDiffGenericCommand, including its error order: WRONGTYPE first).
Task ZSetOpGeneric(Context& ctx, ZOp op, bool store) {
  const size_t numkeys_at = store ? 2 : 1;
  const bool card = op == ZOp::kInterCard;
  int64_t numkeys;
  if (!ParseInt64(ctx.args[numkeys_at], &numkeys)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  if (numkeys < 1) {
    std::string name = std::string(ctx.spec->name);
    ctx.reply->Error("ERR at least 1 input key is needed for '" + name + "' command");
    co_return;
  }
  if (numkeys > static_cast<int64_t>(ctx.args.size() - numkeys_at - 1)) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  const auto n = static_cast<size_t>(numkeys);
  // Options are parsed first but their error is replied only if every key had the right type.
  std::string option_error;
  std::vector<double> weights(n, 1.0);
  Aggregate agg = Aggregate::kSum;
  bool withscores = false;
  int64_t limit = 0;
  for (size_t j = numkeys_at + 1 + n; j < ctx.args.size() && option_error.empty();) {
    const std::string_view o = ctx.args[j];
    const size_t remaining = ctx.args.size() - j;
    if (op != ZOp::kDiff && !card && remaining >= n + 1 && EqualsNoCase(o, "weights")) {
      for (size_t i = 0; i < n; ++i) {
        if (!ParseDouble(ctx.args[j + 1 + i], &weights[i])) {
          option_error = "ERR weight value is not a float";
          break;
        }
      }
      j += n + 1;
    } else if (op != ZOp::kDiff && !card && remaining >= 2 && EqualsNoCase(o, "aggregate")) {
      const std::string_view a = ctx.args[j + 1];
      if (EqualsNoCase(a, "sum")) {
        agg = Aggregate::kSum;
      } else if (EqualsNoCase(a, "min")) {
        agg = Aggregate::kMin;
      } else if (EqualsNoCase(a, "max")) {
        agg = Aggregate::kMax;
      } else {
        option_error = kErrSyntax;
      }
      j += 2;
    } else if (!store && !card && EqualsNoCase(o, "withscores")) {
      withscores = true;
      j += 1;
    } else if (card && remaining >= 2 && EqualsNoCase(o, "limit")) {
      if (!ParseInt64(ctx.args[j + 1], &limit) || limit < 0) {
        option_error = "ERR LIMIT can't be negative";
      }
      j += 2;
    } else {
      option_error = kErrSyntax;
    }
  }
  std::vector<std::string_view> keys;
  if (store) keys.push_back(ctx.args[1]);
  for (size_t i = 0; i < n; ++i) keys.push_back(ctx.args[numkeys_at + 1 + i]);
  const size_t first = store ? 1 : 0;
  KeyPlan plan(ctx, std::move(keys));
  std::vector<ZSource> src;
  std::string error;
  std::vector<ZEntry> result;
  co_await plan.Lock();
  co_await ReadSources(ctx, plan, first, true, &src, &error);
  if (error.empty()) error = option_error;
  if (error.empty()) {
    for (size_t i = 0; i < n; ++i) src[i].weight = weights[i];
    result = CombineZ(src, op, agg, static_cast<uint64_t>(limit));
    static constexpr std::string_view kStoreEvents[] = {"zunionstore", "zinterstore", "zdiffstore"};
    if (store) {
      co_await StoreZSetResult(ctx, plan, 0, kStoreEvents[static_cast<int>(op)], result, &error);
    }
  }
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else if (store || card) {
    ctx.reply->Integer(static_cast<int64_t>(result.size()));
  } else {
    ReplyEntries(ctx, result, withscores, true);
  }
}

Task ZUnion(Context& ctx) { co_await ZSetOpGeneric(ctx, ZOp::kUnion, false); }
Task ZInter(Context& ctx) { co_await ZSetOpGeneric(ctx, ZOp::kInter, false); }
Task ZDiff(Context& ctx) { co_await ZSetOpGeneric(ctx, ZOp::kDiff, false); }
Task ZUnionStore(Context& ctx) { co_await ZSetOpGeneric(ctx, ZOp::kUnion, true); }
Task ZInterStore(Context& ctx) { co_await ZSetOpGeneric(ctx, ZOp::kInter, true); }
Task ZDiffStore(Context& ctx) { co_await ZSetOpGeneric(ctx, ZOp::kDiff, true); }
Task ZInterCard(Context& ctx) { co_await ZSetOpGeneric(ctx, ZOp::kInterCard, false); }

// ZMPOP numkeys key... MIN|MAX [COUNT count]: pops from the first non-empty key, in order,
// under every key's shard lock; a wrong type counts only if it is reached before.
Task ZMPop(Context& ctx) {
  int64_t numkeys;
  if (!ParseInt64(ctx.args[1], &numkeys) || numkeys < 1) {
    ctx.reply->Error("ERR numkeys should be greater than 0");
    co_return;
  }
  if (numkeys > static_cast<int64_t>(ctx.args.size()) - 3) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  const auto n = static_cast<size_t>(numkeys);
  const std::string_view where = ctx.args[2 + n];
  if (!EqualsNoCase(where, "min") && !EqualsNoCase(where, "max")) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  const bool max = EqualsNoCase(where, "max");
  int64_t count = 1;
  const size_t rest = ctx.args.size() - 3 - n;
  if (rest == 2 && EqualsNoCase(ctx.args[3 + n], "count")) {
    if (!ParseInt64(ctx.args[4 + n], &count) || count < 1) {
      ctx.reply->Error("ERR count should be greater than 0");
      co_return;
    }
  } else if (rest != 0) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  KeyPlan plan(ctx, ctx.args.subspan(2, n));
  std::string error;
  std::vector<std::string> members;
  std::vector<ZEntry> popped;
  size_t from = 0;
  co_await plan.Lock();
  for (size_t i = 0; i < n && error.empty() && popped.empty(); ++i) {
    from = i;
    co_await plan.Run(plan.shard_of(i), [&](Store& st) -> Task {
      co_await RewriteCollection(
          st, plan.keys()[i], kZSet, ctx.now_ms,
          [&](const CollectionView& v, bool, std::string* out) {
            popped.clear();
            members.clear();
            if (v.empty()) return Rewrite::kUnchanged;
            const auto k = static_cast<uint32_t>(std::min<int64_t>(count, v.size()));
            std::vector<ZEntry> all = max ? RankWindow(v, v.size() - k, v.size() - 1, true)
                                          : RankWindow(v, 0, k - 1, false);
            std::vector<CollectionChange> changes;
            for (const ZEntry& e : all) {
              members.emplace_back(e.member);
              changes.push_back({e.member, {}, true});
            }
            // The entries must outlive the record copy: point them at our member copies.
            for (size_t k = 0; k < all.size(); ++k) all[k].member = members[k];
            popped = std::move(all);
            *out = ApplyChanges(v, std::move(changes), true);
            return Rewrite::kWrite;
          },
          &error, {}, max ? "zpopmax" : "zpopmin");
    });
  }
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else if (popped.empty()) {
    ctx.reply->NullArray();
  } else {
    ctx.reply->Array(2);
    ctx.reply->Bulk(ClientKey(plan.keys()[from]));
    ctx.reply->Array(popped.size());
    for (const ZEntry& e : popped) {
      ctx.reply->Array(2);
      ctx.reply->Bulk(e.member);
      ctx.reply->Double(e.score);
    }
  }
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;
constexpr uint32_t kMovable = kCmdMovableKeys;

const CommandSpec kZSetMultiCommands[] = {
    {"zrangestore", -5, kW, 1, 2, 1, &ZRangeStore, "@write @sortedset @slow", "sorted_set",
     "Stores a range of members from sorted set in a key.", "6.2.0"},
    {"zunion", -3, kR | kMovable, 0, 0, 0, &ZUnion, "@read @sortedset @slow", "sorted_set",
     "Returns the union of multiple sorted sets.", "6.2.0"},
    {"zinter", -3, kR | kMovable, 0, 0, 0, &ZInter, "@read @sortedset @slow", "sorted_set",
     "Returns the intersect of multiple sorted sets.", "6.2.0"},
    {"zdiff", -3, kR | kMovable, 0, 0, 0, &ZDiff, "@read @sortedset @slow", "sorted_set",
     "Returns the difference between multiple sorted sets.", "6.2.0"},
    {"zintercard", -3, kR | kMovable, 0, 0, 0, &ZInterCard, "@read @sortedset @slow", "sorted_set",
     "Returns the number of members of the intersect of multiple sorted sets.", "7.0.0"},
    {"zmpop", -4, kCmdWrite | kMovable, 0, 0, 0, &ZMPop, "@write @sortedset @slow", "sorted_set",
     "Returns the highest- or lowest-scoring members from one or more sorted sets after removing "
     "them. Deletes the sorted set if the last member was popped.",
     "7.0.0"},
    {"zunionstore", -4, kW | kMovable, 1, 1, 1, &ZUnionStore, "@write @sortedset @slow",
     "sorted_set", "Stores the union of multiple sorted sets in a key.", "2.0.0"},
    {"zinterstore", -4, kW | kMovable, 1, 1, 1, &ZInterStore, "@write @sortedset @slow",
     "sorted_set", "Stores the intersect of multiple sorted sets in a key.", "2.0.0"},
    {"zdiffstore", -4, kW | kMovable, 1, 1, 1, &ZDiffStore, "@write @sortedset @slow", "sorted_set",
     "Stores the difference of multiple sorted sets in a key.", "6.2.0"},
};

}  // namespace

Task StoreZSetResult(Context& ctx, KeyPlan& plan, size_t dst_index, std::string_view event,
                     const std::vector<ZEntry>& entries, std::string* error) {
  std::vector<std::string> scores;
  scores.reserve(entries.size());
  std::vector<CollectionChange> changes;
  changes.reserve(entries.size());
  for (const ZEntry& e : entries) {
    scores.push_back(EncodeScore(e.score));
    changes.push_back({e.member, scores.back(), false});
  }
  std::string encoded = EncodeCollection(std::move(changes), true);
  co_await plan.Run(plan.shard_of(dst_index), [&](Store& st) -> Task {
    WriteResult w;
    bool existed = false;
    if (encoded.empty()) {
      w = co_await st.Delete(plan.keys()[dst_index], ctx.now_ms, &existed);
    } else {
      w = co_await st.Write(plan.keys()[dst_index], kZSet, encoded, 0);
    }
    if (!w.ok()) *error = w.error;
    if (w.ok() && !encoded.empty()) {
      NotifyKeyspaceEvent(kNotifyZset, event, plan.keys()[dst_index]);
    } else if (w.ok() && existed) {
      NotifyKeyspaceEvent(kNotifyGeneric, "del", plan.keys()[dst_index]);
    }
  });
}

std::span<const CommandSpec> ZSetMultiKeyCommands() { return kZSetMultiCommands; }

}  // namespace lavik
