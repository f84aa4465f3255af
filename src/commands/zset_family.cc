// Sorted set commands on one key: ZADD, ZINCRBY, ZREM, ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK,
// ZCOUNT, ZLEXCOUNT, ZRANGE and its legacy forms, ZPOPMIN/ZPOPMAX, ZREMRANGEBY*, ZRANDMEMBER,
// ZSCAN. Multi-key commands live in zset_multi.cc. A sorted set is one record in the collection
// encoding with 8-byte scores as values (zset_common.h, doc/collections.md).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/numbers.h"
#include "commands/collection_access.h"
#include "commands/families.h"
#include "commands/zset_common.h"
#include "commands/zset_range.h"

namespace lavik {
namespace {

constexpr ValueType kZSet = ValueType::kZSet;

constexpr std::string_view kErrRangeLong =
    "ERR value is out of range, value must between -9223372036854775807 and "
    "9223372036854775807";

struct ZAddFlags {
  bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
};

// The ZADD/ZINCRBY core (Redis zaddGenericCommand): pairs start at args[first].
Task ZAddGeneric(Context& ctx, size_t first, ZAddFlags f) {
  const size_t n = (ctx.args.size() - first) / 2;
  std::vector<double> scores(n);
  for (size_t i = 0; i < n; ++i) {
    if (!ParseDouble(ctx.args[first + 2 * i], &scores[i])) {
      ctx.reply->Error(kErrNotFloat);
      co_return;
    }
  }
  int64_t added = 0, updated = 0;
  bool performed = false;  // INCR: the member was added or updated
  double incr_result = 0;
  std::string error;
  std::vector<std::string_view> members;
  for (size_t i = 0; i < n; ++i) members.push_back(ctx.args[first + 2 * i + 1]);
  bool ok = co_await RewriteCollectionOrReply(
      ctx, kZSet, f.incr ? "zincr" : "zadd",
      [&](const CollectionView& v, bool exists, std::string* out) {
        added = updated = 0;
        performed = false;
        if (!exists && f.xx) return Rewrite::kUnchanged;
        // Later pairs naming the same member see earlier ones, as in Redis.
        std::vector<std::string> score_bytes;
        score_bytes.reserve(n);
        std::vector<CollectionChange> changes;
        std::vector<std::pair<std::string_view, double>> batch;  // this command's members
        for (size_t i = 0; i < n; ++i) {
          const std::string_view m = ctx.args[first + 2 * i + 1];
          double score = scores[i];
          bool have = false;
          double cur = 0;
          for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
            if (it->first == m) {
              have = true;
              cur = it->second;
              break;
            }
          }
          if (!have) {
            const int64_t at = v.Find(m);
            if (at >= 0) {
              have = true;
              cur = ScoreAt(v, static_cast<uint32_t>(at));
            }
          }
          if (have) {
            if (f.nx) continue;
            if (f.incr) {
              score += cur;
              if (std::isnan(score)) {
                ctx.reply->Error(kErrScoreNaN);
                return Rewrite::kError;
              }
            }
            if ((f.lt && score >= cur) || (f.gt && score <= cur)) continue;
            performed = true;
            incr_result = score;
            if (score == cur) continue;
            ++updated;
          } else {
            if (f.xx) continue;
            ++added;
            performed = true;
            incr_result = score;
          }
          batch.emplace_back(m, score);
          score_bytes.push_back(EncodeScore(score));
          changes.push_back({m, score_bytes.back(), false});
        }
        if (changes.empty()) return Rewrite::kUnchanged;
        *out = ApplyChanges(v, std::move(changes), true);
        return Rewrite::kWrite;
      },
      ReadScope::Members(members));
  if (!ok) co_return;
  if (f.incr) {
    if (performed) {
      ctx.reply->Double(incr_result);
    } else {
      ctx.reply->Null();
    }
  } else {
    ctx.reply->Integer(added + (f.ch ? updated : 0));
  }
}

Task ZAdd(Context& ctx) {
  ZAddFlags f;
  size_t i = 2;
  for (; i < ctx.args.size(); ++i) {
    const std::string_view o = ctx.args[i];
    if (EqualsNoCase(o, "nx")) {
      f.nx = true;
    } else if (EqualsNoCase(o, "xx")) {
      f.xx = true;
    } else if (EqualsNoCase(o, "gt")) {
      f.gt = true;
    } else if (EqualsNoCase(o, "lt")) {
      f.lt = true;
    } else if (EqualsNoCase(o, "ch")) {
      f.ch = true;
    } else if (EqualsNoCase(o, "incr")) {
      f.incr = true;
    } else {
      break;
    }
  }
  const size_t rest = ctx.args.size() - i;
  if (rest == 0 || rest % 2 != 0) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  if (f.nx && f.xx) {
    ctx.reply->Error(kErrZaddXxNx);
    co_return;
  }
  if ((f.gt && f.nx) || (f.lt && f.nx) || (f.gt && f.lt)) {
    ctx.reply->Error(kErrZaddGtLtNx);
    co_return;
  }
  if (f.incr && rest > 2) {
    ctx.reply->Error(kErrZaddIncrPair);
    co_return;
  }
  co_await ZAddGeneric(ctx, i, f);
}

Task ZIncrBy(Context& ctx) {
  ZAddFlags f;
  f.incr = true;
  co_await ZAddGeneric(ctx, 2, f);
}

Task ZRem(Context& ctx) { co_await RemoveMembers(ctx, kZSet); }

Task ZCard(Context& ctx) { co_await ReplyCardinality(ctx, kZSet); }

Task ZScore(Context& ctx) {
  CollectionRead z;
  if (!co_await ReadCollectionOrReply(ctx, kZSet, &z, ReadScope::Members(ctx.args.subspan(2, 1)))) {
    co_return;
  }
  const int64_t at = z.view.Find(ctx.args[2]);
  if (at < 0) {
    ctx.reply->Null();
  } else {
    ctx.reply->Double(ScoreAt(z.view, static_cast<uint32_t>(at)));
  }
}

Task ZMScore(Context& ctx) {
  CollectionRead z;
  if (!co_await ReadCollectionOrReply(ctx, kZSet, &z, ReadScope::Members(ctx.args.subspan(2)))) {
    co_return;
  }
  ctx.reply->Array(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    const int64_t at = z.view.Find(ctx.args[i]);
    if (at < 0) {
      ctx.reply->Null();
    } else {
      ctx.reply->Double(ScoreAt(z.view, static_cast<uint32_t>(at)));
    }
  }
}

Task ZRankGeneric(Context& ctx, bool rev) {
  CollectionRead z;
  if (!co_await ReadCollectionOrReply(ctx, kZSet, &z)) {
    co_return;
  }
  const int64_t at = z.view.Find(ctx.args[2]);
  if (at < 0) {
    ctx.reply->Null();
    co_return;
  }
  // The rank is the number of entries ordered before this one: O(n), no sort needed.
  const ZEntry me{ScoreAt(z.view, static_cast<uint32_t>(at)),
                  z.view.field(static_cast<uint32_t>(at))};
  int64_t before = 0;
  for (uint32_t i = 0; i < z.view.size(); ++i) {
    if (ZLess({ScoreAt(z.view, i), z.view.field(i)}, me)) ++before;
  }
  ctx.reply->Integer(rev ? static_cast<int64_t>(z.view.size()) - 1 - before : before);
}

Task ZRank(Context& ctx) { co_await ZRankGeneric(ctx, false); }
Task ZRevRank(Context& ctx) { co_await ZRankGeneric(ctx, true); }

// ZCOUNT, ZLEXCOUNT, ZREMRANGEBYSCORE, ZREMRANGEBYLEX: ctx.args[2] and [3] as a score range
// (kScore) or a lex range (kLex). False after replying the error.
bool ParseMinMaxOrReply(Context& ctx, ZRangeSpec::By by, ZRangeSpec* spec) {
  spec->by = by;
  const bool ok = by == ZRangeSpec::kScore ? ParseScoreRange(ctx.args[2], ctx.args[3], &spec->score)
                                           : ParseLexRange(ctx.args[2], ctx.args[3], &spec->lex);
  if (!ok) ctx.reply->Error(by == ZRangeSpec::kScore ? kErrMinMaxNotFloat : kErrMinMaxNotLex);
  return ok;
}

// ZCOUNT (kScore) / ZLEXCOUNT (kLex): how many entries the range holds (O(n), no sort).
Task CountInRange(Context& ctx, ZRangeSpec::By by) {
  ZRangeSpec spec;
  if (!ParseMinMaxOrReply(ctx, by, &spec)) co_return;
  CollectionRead z;
  if (!co_await ReadCollectionOrReply(ctx, kZSet, &z)) {
    co_return;
  }
  const CollectionView& v = z.view;
  int64_t n = 0;
  for (uint32_t i = 0; i < v.size(); ++i) {
    const bool in = by == ZRangeSpec::kScore ? spec.score.Contains(ScoreAt(v, i))
                                             : spec.lex.Contains(v.field(i));
    n += in ? 1 : 0;
  }
  ctx.reply->Integer(n);
}

Task ZCount(Context& ctx) { co_await CountInRange(ctx, ZRangeSpec::kScore); }
Task ZLexCount(Context& ctx) { co_await CountInRange(ctx, ZRangeSpec::kLex); }

// ZRANGE and its legacy forms (one handler per form): parse (zset_range.h), read, select, reply.
template <ZRangeForm kForm>
Task ZRangeOf(Context& ctx) {
  ZRangeSpec spec;
  if (!ParseZRangeOrReply(ctx, 1, kForm, &spec)) co_return;
  CollectionRead z;
  if (!co_await ReadCollectionOrReply(ctx, kZSet, &z)) {
    co_return;
  }
  ReplyEntries(ctx, SelectFromSet(z.view, spec), spec.withscores, true);
}

constexpr Handler ZRange = &ZRangeOf<ZRangeForm::kZRange>;
constexpr Handler ZRevRange = &ZRangeOf<ZRangeForm::kRevRank>;
constexpr Handler ZRangeByScore = &ZRangeOf<ZRangeForm::kByScore>;
constexpr Handler ZRevRangeByScore = &ZRangeOf<ZRangeForm::kRevByScore>;
constexpr Handler ZRangeByLex = &ZRangeOf<ZRangeForm::kByLex>;
constexpr Handler ZRevRangeByLex = &ZRangeOf<ZRangeForm::kRevByLex>;

// Removes the entries pick(view) chooses; *removed gets them (their members in *members).
template <typename Pick>
TaskOf<bool> RemoveSorted(Context& ctx, std::string_view event, Pick pick,
                          std::vector<std::string>* members, std::vector<ZEntry>* removed) {
  bool ok = co_await RewriteCollectionOrReply(ctx, kZSet, event,
                                              [&](const CollectionView& v, bool, std::string* out) {
                                                removed->clear();
                                                members->clear();
                                                if (v.empty()) return Rewrite::kUnchanged;
                                                std::vector<ZEntry> chosen = pick(v);
                                                if (chosen.empty()) return Rewrite::kUnchanged;
                                                std::vector<CollectionChange> changes;
                                                members->reserve(chosen.size());
                                                for (const ZEntry& e : chosen) {
                                                  members->emplace_back(e.member);
                                                  changes.push_back({e.member, {}, true});
                                                }
                                                // The views in `chosen` die with the record copy:
                                                // point them at the kept members.
                                                for (size_t i = 0; i < chosen.size(); ++i)
                                                  chosen[i].member = (*members)[i];
                                                *removed = std::move(chosen);
                                                *out = ApplyChanges(v, std::move(changes), true);
                                                return Rewrite::kWrite;
                                              });
  co_return ok;
}

// ZPOPMIN/ZPOPMAX key [count]
Task ZPopGeneric(Context& ctx, bool max) {
  bool with_count;
  int64_t count;
  if (!ParsePopCountOrReply(ctx, false, &with_count, &count)) co_return;
  std::vector<std::string> members;
  std::vector<ZEntry> popped;
  if (count > 0) {
    auto pick = [&](const CollectionView& v) {
      const auto n = static_cast<uint32_t>(std::min<int64_t>(count, v.size()));
      return max ? RankWindow(v, v.size() - n, v.size() - 1, true) : RankWindow(v, 0, n - 1, false);
    };
    if (!co_await RemoveSorted(ctx, max ? "zpopmax" : "zpopmin", pick, &members, &popped)) {
      co_return;
    }
  }
  ReplyEntries(ctx, popped, true, with_count);
}

Task ZPopMin(Context& ctx) { co_await ZPopGeneric(ctx, false); }
Task ZPopMax(Context& ctx) { co_await ZPopGeneric(ctx, true); }

// ZREMRANGEBYRANK / BYSCORE / BYLEX once the range is parsed: removes it, replies the count.
Task RemoveRangeAndReply(Context& ctx, const ZRangeSpec& spec) {
  std::vector<std::string> members;
  std::vector<ZEntry> removed;
  auto pick = [&](const CollectionView& v) { return SelectFromSet(v, spec); };
  const std::string_view event = spec.by == ZRangeSpec::kRank    ? "zremrangebyrank"
                                 : spec.by == ZRangeSpec::kScore ? "zremrangebyscore"
                                                                 : "zremrangebylex";
  if (co_await RemoveSorted(ctx, event, pick, &members, &removed)) {
    ctx.reply->Integer(removed.size());
  }
}

Task ZRemRangeByRank(Context& ctx) {
  int64_t start, end;
  if (!ParseInt64(ctx.args[2], &start) || !ParseInt64(ctx.args[3], &end)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  ZRangeSpec spec;
  spec.by = ZRangeSpec::kRank;
  spec.start = start;
  spec.end = end;
  co_await RemoveRangeAndReply(ctx, spec);
}

// ZREMRANGEBYSCORE (kScore) / ZREMRANGEBYLEX (kLex).
Task RemoveRangeBy(Context& ctx, ZRangeSpec::By by) {
  ZRangeSpec spec;
  if (!ParseMinMaxOrReply(ctx, by, &spec)) co_return;
  co_await RemoveRangeAndReply(ctx, spec);
}

Task ZRemRangeByScore(Context& ctx) { co_await RemoveRangeBy(ctx, ZRangeSpec::kScore); }
Task ZRemRangeByLex(Context& ctx) { co_await RemoveRangeBy(ctx, ZRangeSpec::kLex); }

// ZRANDMEMBER key [count [WITHSCORES]] (Redis 7.0 zrandmemberCommand).
Task ZRandMember(Context& ctx) {
  const bool with_count = ctx.args.size() >= 3;
  bool withscores = false;
  int64_t count = 0;
  if (ctx.args.size() > 4 || (ctx.args.size() == 4 && !EqualsNoCase(ctx.args[3], "withscores"))) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  withscores = ctx.args.size() == 4;
  if (with_count) {
    if (!ParseInt64(ctx.args[2], &count)) {
      ctx.reply->Error(kErrNotInteger);
      co_return;
    }
    // Redis bounds a negative count so that count * 2 replies cannot overflow.
    if (withscores ? count < -INT64_MAX / 2 : count < -INT64_MAX) {
      ctx.reply->Error(withscores ? kErrOutOfRange : kErrRangeLong);
      co_return;
    }
  }
  CollectionRead z;
  if (!co_await ReadRandomMembersOrReply(ctx, kZSet, with_count, &z)) co_return;
  const CollectionView& v = z.view;
  RandomPicks picks(v, count);
  std::vector<ZEntry> out;
  for (uint64_t k = 0; k < picks.size(); ++k) {
    const uint32_t i = picks.Next();
    out.push_back({ScoreAt(v, i), v.field(i)});
  }
  ReplyEntries(ctx, out, withscores, true);
}

Task ZScan(Context& ctx) {
  CollectionRead z;
  std::vector<uint32_t> hits;
  if (!co_await ScanOrReply(ctx, kZSet, &z, &hits)) co_return;
  ctx.reply->Array(hits.size() * 2);
  for (uint32_t i : hits) {
    ctx.reply->Bulk(z.view.field(i));
    ctx.reply->Bulk(FormatDouble(ScoreAt(z.view, i)));
  }
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const CommandSpec kZSetCommands[] = {
    {"zadd", -4, kW | kCmdFast, 1, 1, 1, &ZAdd, "@write @sortedset @fast", "sorted_set",
     "Adds one or more members to a sorted set, or updates their scores. Creates the key if it "
     "doesn't exist.",
     "1.2.0"},
    {"zincrby", 4, kW | kCmdFast, 1, 1, 1, &ZIncrBy, "@write @sortedset @fast", "sorted_set",
     "Increments the score of a member in a sorted set.", "1.2.0"},
    {"zrem", -3, kCmdWrite | kCmdFast, 1, 1, 1, &ZRem, "@write @sortedset @fast", "sorted_set",
     "Removes one or more members from a sorted set. Deletes the sorted set if all members were "
     "removed.",
     "1.2.0"},
    {"zcard", 2, kR | kCmdFast, 1, 1, 1, &ZCard, "@read @sortedset @fast", "sorted_set",
     "Returns the number of members in a sorted set.", "1.2.0"},
    {"zscore", 3, kR | kCmdFast, 1, 1, 1, &ZScore, "@read @sortedset @fast", "sorted_set",
     "Returns the score of a member in a sorted set.", "1.2.0"},
    {"zmscore", -3, kR | kCmdFast, 1, 1, 1, &ZMScore, "@read @sortedset @fast", "sorted_set",
     "Returns the score of one or more members in a sorted set.", "6.2.0"},
    {"zrank", 3, kR | kCmdFast, 1, 1, 1, &ZRank, "@read @sortedset @fast", "sorted_set",
     "Returns the index of a member in a sorted set ordered by ascending scores.", "2.0.0"},
    {"zrevrank", 3, kR | kCmdFast, 1, 1, 1, &ZRevRank, "@read @sortedset @fast", "sorted_set",
     "Returns the index of a member in a sorted set ordered by descending scores.", "2.0.0"},
    {"zcount", 4, kR | kCmdFast, 1, 1, 1, &ZCount, "@read @sortedset @fast", "sorted_set",
     "Returns the count of members in a sorted set that have scores within a range.", "2.0.0"},
    {"zlexcount", 4, kR | kCmdFast, 1, 1, 1, &ZLexCount, "@read @sortedset @fast", "sorted_set",
     "Returns the number of members in a sorted set within a lexicographical range.", "2.8.9"},
    {"zrange", -4, kR, 1, 1, 1, ZRange, "@read @sortedset @slow", "sorted_set",
     "Returns members in a sorted set within a range of indexes.", "1.2.0"},
    {"zrevrange", -4, kR, 1, 1, 1, ZRevRange, "@read @sortedset @slow", "sorted_set",
     "Returns members in a sorted set within a range of indexes in reverse order.", "1.2.0"},
    {"zrangebyscore", -4, kR, 1, 1, 1, ZRangeByScore, "@read @sortedset @slow", "sorted_set",
     "Returns members in a sorted set within a range of scores.", "1.0.5"},
    {"zrevrangebyscore", -4, kR, 1, 1, 1, ZRevRangeByScore, "@read @sortedset @slow", "sorted_set",
     "Returns members in a sorted set within a range of scores in reverse order.", "2.2.0"},
    {"zrangebylex", -4, kR, 1, 1, 1, ZRangeByLex, "@read @sortedset @slow", "sorted_set",
     "Returns members in a sorted set within a lexicographical range.", "2.8.9"},
    {"zrevrangebylex", -4, kR, 1, 1, 1, ZRevRangeByLex, "@read @sortedset @slow", "sorted_set",
     "Returns members in a sorted set within a lexicographical range in reverse order.", "2.8.9"},
    {"zpopmin", -2, kCmdWrite | kCmdFast, 1, 1, 1, &ZPopMin, "@write @sortedset @fast",
     "sorted_set",
     "Returns the lowest-scoring members from a sorted set after removing them. Deletes the "
     "sorted set if the last member was popped.",
     "5.0.0"},
    {"zpopmax", -2, kCmdWrite | kCmdFast, 1, 1, 1, &ZPopMax, "@write @sortedset @fast",
     "sorted_set",
     "Returns the highest-scoring members from a sorted set after removing them. Deletes the "
     "sorted set if the last member was popped.",
     "5.0.0"},
    {"zremrangebyrank", 4, kCmdWrite, 1, 1, 1, &ZRemRangeByRank, "@write @sortedset @slow",
     "sorted_set",
     "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all "
     "members were removed.",
     "2.0.0"},
    {"zremrangebyscore", 4, kCmdWrite, 1, 1, 1, &ZRemRangeByScore, "@write @sortedset @slow",
     "sorted_set",
     "Removes members in a sorted set within a range of scores. Deletes the sorted set if all "
     "members were removed.",
     "1.2.0"},
    {"zremrangebylex", 4, kCmdWrite, 1, 1, 1, &ZRemRangeByLex, "@write @sortedset @slow",
     "sorted_set",
     "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if "
     "all members were removed.",
     "2.8.9"},
    {"zrandmember", -2, kR, 1, 1, 1, &ZRandMember, "@read @sortedset @slow", "sorted_set",
     "Returns one or more random members from a sorted set.", "6.2.0"},
    {"zscan", -3, kR, 1, 1, 1, &ZScan, "@read @sortedset @slow", "sorted_set",
     "Iterates over members and scores of a sorted set.", "2.8.0"},
};

}  // namespace

std::span<const CommandSpec> ZSetSingleKeyCommands() { return kZSetCommands; }

}  // namespace lavik
