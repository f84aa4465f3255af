// What the sorted-set commands (zset_family.cc, zset_multi.cc) share. A sorted set is one record
// in the collection encoding (storage/collection.h) whose values are 8-byte scores, so member
// lookups are the collection's binary search; score order is built per command by sorting the
// entries (doc/collections.md explains the choice and its cost).
//
// Thread safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command.h"
#include "storage/collection.h"

namespace lavik {

class KeyPlan;

// The 8-byte little-endian IEEE-754 value stored for a member's score.
std::string EncodeScore(double score);
// The score of entry i (0 for a set member: ZUNION and friends read sets as score 1 themselves).
double ScoreAt(const CollectionView& v, uint32_t i);

struct ZEntry {
  double score;
  std::string_view member;
};

// Every entry of `v` in Redis's order: ascending score, ties by member bytes. O(n log n).
std::vector<ZEntry> SortedEntries(const CollectionView& v);

// The entries of ascending ranks first..last (first <= last < v.size()) in that order, without
// sorting the others: O(n + k log k) for k = last - first + 1 (ZRANGE 0 9, ZPOPMIN on big sets).
// `reverse`: the same window in descending order.
std::vector<ZEntry> RankWindow(const CollectionView& v, uint32_t first, uint32_t last,
                               bool reverse);

// Redis's less-than on (score, member).
inline bool ZLess(const ZEntry& a, const ZEntry& b) {
  if (a.score != b.score) return a.score < b.score;
  return a.member < b.member;
}

struct ScoreRange {
  double min = 0, max = 0;
  bool minex = false, maxex = false;
  bool Above(double s) const { return minex ? s > min : s >= min; }  // s clears the min
  bool Below(double s) const { return maxex ? s < max : s <= max; }  // s clears the max
  bool Contains(double s) const { return Above(s) && Below(s); }
};
// "1.5", "(1.5", "-inf", "+inf" (Redis zslParseRange). False on a malformed bound or NaN.
bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* r);

struct LexBound {
  enum Kind { kNegInf, kPosInf, kValue } kind = kNegInf;
  std::string_view value;  // without the '[' / '(' prefix
  bool exclusive = false;
};
struct LexRange {
  LexBound min, max;
  bool Above(std::string_view m) const;  // m clears the min
  bool Below(std::string_view m) const;  // m clears the max
  bool Contains(std::string_view m) const { return Above(m) && Below(m); }
};
// "-", "+", "[a", "(a" (Redis zslParseLexRange). False on anything else.
bool ParseLexRange(std::string_view min, std::string_view max, LexRange* r);

// Entries as Redis replies them: member, score pairs; RESP2 flat; RESP3 [member, score] pairs
// when `nested` (ZRANGE WITHSCORES and friends), else flat.
void ReplyEntries(Context& ctx, const std::vector<ZEntry>& entries, bool withscores, bool nested);

// Replaces plan.keys()[dst_index] with a sorted set of `entries` (deleting it when empty),
// dropping its TTL, on the key's shard under the plan's locks (ZRANGESTORE, ZUNIONSTORE...,
// GEORADIUS STORE, GEOSEARCHSTORE), reporting `event` (or "del" for a key it deleted). *error
// is set if the write failed.
Task StoreZSetResult(Context& ctx, KeyPlan& plan, size_t dst_index, std::string_view event,
                     const std::vector<ZEntry>& entries, std::string* error);

}  // namespace lavik
