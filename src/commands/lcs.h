// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN] (Redis 7.0), and the pure longest
// common subsequence computation behind it (ComputeLcs), kept apart so it is unit-tested
// without a server.
//
// Thread safety: ComputeLcs is a pure function; the handler runs like any command (its keys may
// be on two workers: it reads them under both shards' locks, multi_shard.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command.h"

namespace lavik {

// One run of consecutive matched bytes: a[a_start..a_end] == b[b_start..b_end] (inclusive).
struct LcsRange {
  uint32_t a_start = 0, a_end = 0;
  uint32_t b_start = 0, b_end = 0;
  uint32_t length() const { return a_end - a_start + 1; }
  bool operator==(const LcsRange&) const = default;
};

struct LcsResult {
  uint32_t length = 0;
  std::string sequence;          // the subsequence itself (only with traceback)
  std::vector<LcsRange> ranges;  // its runs, from the end of the strings back (Redis's order)
};

enum class LcsStatus {
  kOk,
  kTooLong,      // a string of 2^32 - 2 bytes or more
  kTableTooBig,  // the (|a|+1) x (|b|+1) table of 4-byte lengths would exceed the limit
  kNoMemory,     // the table could not be allocated
};

// The longest common subsequence of a and b by the classic dynamic programming table; when
// `traceback`, also the subsequence and its runs, chosen the way Redis walks the table back
// (on a tie it steps back in b), so the bytes and ranges equal Redis's. O(|a|*|b|) time and
// 4*(|a|+1)*(|b|+1) bytes, refused above `max_table_bytes`.
LcsStatus ComputeLcs(std::string_view a, std::string_view b, bool traceback,
                     uint64_t max_table_bytes, LcsResult* out);

std::span<const CommandSpec> LcsCommands();

}  // namespace lavik
