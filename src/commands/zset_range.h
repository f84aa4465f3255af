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

// The entries of `sorted` (ascending (score, member)) the spec selects, in reply order.
std::vector<ZEntry> SelectRange(const std::vector<ZEntry>& sorted, const ZRangeSpec& spec);

}  // namespace lavik
