// Bit arithmetic on byte strings for the bitmap commands (commands/bitmap_family.cc), with
// Redis 7.0's conventions: bit 0 is the most significant bit of byte 0; ranges are inclusive
// and may count from the end; bytes past a string's end read as zero.
//
// Everything here is pure: no allocation except where an output string is given, no state.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace lavik {

// An inclusive range [first, last] of bits of a string, already clamped to it; empty when the
// arguments select nothing.
struct BitRange {
  bool empty = true;
  uint64_t first = 0;
  uint64_t last = 0;
};

// BITCOUNT/BITPOS range arguments over a string of `len` bytes: `start`/`end` count bytes (or
// bits when `in_bits`), negative ones from the end, and are clamped to the string.
BitRange ResolveBitRange(int64_t start, int64_t end, uint64_t len, bool in_bits);

// The number of set bits of `s` in `range`.
uint64_t CountBits(std::string_view s, BitRange range);

// The position of the first bit equal to `bit` (0 or 1) of `s` inside `range`, or -1.
int64_t FindBit(std::string_view s, int bit, BitRange range);

enum class BitOpKind { kAnd, kOr, kXor, kNot };

// Folds `src` into the running BITOP result `acc` (both zero-padded to the longer length;
// afterwards acc is that long). `first`: src is the first source (acc is replaced; for kNot
// the result is its complement).
void BitOpFold(BitOpKind op, std::string_view src, bool first, std::string* acc);

// --- BITFIELD ---

// A field type: i1..i64 or u1..u63.
struct BitfieldType {
  bool is_signed = false;
  int bits = 0;
};

// Parses "i16" / "u8"; false for anything else (u64 is not allowed: its values do not fit
// Redis's signed integer reply).
bool ParseBitfieldType(std::string_view s, BitfieldType* out);

// The field of `type` at bit `offset` of `s` (bits past the end read as zero), as the
// unsigned value or the sign-extended signed value reinterpreted as int64.
int64_t GetBitfield(std::string_view s, uint64_t offset, BitfieldType type);

// Stores the low type.bits bits of `value` at bit `offset` of `s`; s must hold every bit of
// the field (offset + bits <= size * 8).
void SetBitfield(std::string* s, uint64_t offset, BitfieldType type, uint64_t value);

enum class BitfieldOverflow { kWrap, kSat, kFail };

// The value a SET (incr = 0, value = the argument) or INCRBY (value = the field's value)
// leaves in a field of `type`: *result is the in-range outcome under `mode` (unused for kFail
// when it overflows). Returns whether it overflowed.
bool BitfieldAdd(BitfieldType type, int64_t value, int64_t incr, BitfieldOverflow mode,
                 int64_t* result);

}  // namespace lavik
