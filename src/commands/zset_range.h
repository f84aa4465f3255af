// ZRANGE's argument grammar and selection, shared by ZRANGE, its legacy forms (ZREVRANGE,
// ZRANGEBYSCORE, ...), ZRANGESTORE and ZREMRANGEBY*: parse once into a ZRangeSpec, then select
// from the entries in score order. Parsing follows Redis 7.0 zrangeGenericCommand, errors
// included (checked against redis-server 7.0.15).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "commands/command.h"
#include "commands/zset_common.h"

namespace lavik {

struct ZRangeSpec {
  enum By { kRank, kScore, kLex } by = kRank;
  bool rev = false;
  bool withscores = false;
  int64_t start = 0, end = -1;     // kRank
  ScoreRange score;                // kScore
  LexRange lex;                    // kLex
  int64_t offset = 0, limit = -1;  // LIMIT (limit < 0: no limit)
};

// Which command is parsing: ZRANGE (options choose the range type and direction) or a legacy
// form that fixes them. kStore is ZRANGESTORE (no WITHSCORES).
enum class ZRangeForm { kZRange, kStore, kRevRank, kByScore, kRevByScore, kByLex, kRevByLex };

// Parses args[key + 1] (min / start), args[key + 2] (max / stop) and the options after them.
// False after replying the error.
bool ParseZRangeOrReply(Context& ctx, size_t key, ZRangeForm form, ZRangeSpec* spec);

// A rank spec's window as ascending ranks [*first, *last] of a set of n entries; false if empty.
bool RankBounds(const ZRangeSpec& spec, uint32_t n, uint32_t* first, uint32_t* last);

// The entries of `sorted` (ascending (score, member)) the spec selects, in reply order.
std::vector<ZEntry> SelectRange(const std::vector<ZEntry>& sorted, const ZRangeSpec& spec);

// What the spec selects from a whole set, in reply order: a score or lex range filters first and
// sorts only its matches (O(n + k log k)); a rank range takes a RankWindow.
std::vector<ZEntry> SelectFromSet(const CollectionView& v, const ZRangeSpec& spec);

}  // namespace lavik
