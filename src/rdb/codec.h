// The RDB v10 building blocks (Redis 7.0 rdb.h / rdb.c): object type bytes, the length
// encoding, string encodings, doubles and millisecond times. Writers append to a std::string;
// readers pull from a ByteSource and return false on truncated or malformed input.
//
//   length  00pppppp                  6-bit length
//           01pppppp qqqqqqqq         14-bit length (big-endian)
//           10000000 + 4 bytes        32-bit length (big-endian)
//           10000001 + 8 bytes        64-bit length (big-endian)
//           11xxxxxx                  a special string encoding xxxxxx (below)
//   string  length + bytes, or 11000000 int8 / 11000001 int16 / 11000010 int32 (little-endian,
//           the decimal text of the integer), or 11000011 clen len + LZF data (clen bytes that
//           expand to len)
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rdb/source.h"

namespace lavik::rdb {

inline constexpr uint16_t kRdbVersion = 10;

// Object type bytes (rdb.h RDB_TYPE_*). 6-8 (modules) and 20+ (Redis 7.2) are not read.
enum RdbType : uint8_t {
  kTypeString = 0,
  kTypeList = 1,
  kTypeSet = 2,
  kTypeZSet = 3,
  kTypeHash = 4,
  kTypeZSet2 = 5,
  kTypeHashZipmap = 9,
  kTypeListZiplist = 10,
  kTypeSetIntset = 11,
  kTypeZSetZiplist = 12,
  kTypeHashZiplist = 13,
  kTypeListQuicklist = 14,
  kTypeStreamListpacks = 15,
  kTypeHashListpack = 16,
  kTypeZSetListpack = 17,
  kTypeListQuicklist2 = 18,
  kTypeStreamListpacks2 = 19,
};

// Quicklist node containers of kTypeListQuicklist2.
inline constexpr uint64_t kContainerPlain = 1;
inline constexpr uint64_t kContainerPacked = 2;

void PutLength(uint64_t len, std::string* out);
// `s` int-encoded when it is the canonical decimal text of an int32 (as Redis writes it), else,
// as Redis with rdbcompression yes, LZF-compressed when longer than 20 bytes and that saves at
// least 4 of them, else raw.
void PutString(std::string_view s, std::string* out);
// CONFIG rdbcompression: PutString's LZF (DUMP payloads, dump.rdb, full syncs); on by default.
void SetCompression(bool on);
void PutBinaryDouble(double v, std::string* out);  // 8 bytes, little-endian IEEE-754
void PutMillis(int64_t ms, std::string* out);      // 8 bytes, little-endian

bool GetByte(ByteSource& src, uint8_t* out);
// A plain length; false for a special string encoding (11xxxxxx) or truncation.
bool GetLength(ByteSource& src, uint64_t* out);
// Any string encoding, LZF included; *out is replaced.
bool GetString(ByteSource& src, std::string* out);
bool GetBinaryDouble(ByteSource& src, double* out);
// The old ZSET's text double: a length byte (253 nan, 254 +inf, 255 -inf) then that many chars.
bool GetTextDouble(ByteSource& src, double* out);
bool GetMillis(ByteSource& src, int64_t* out);

// LZF (liblzf's format, as Redis uses it): expands `in` into exactly `out_len` bytes appended to
// *out. False if the data is malformed or does not expand to exactly that length.
bool LzfDecompress(std::string_view in, size_t out_len, std::string* out);

}  // namespace lavik::rdb
