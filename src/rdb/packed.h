// Redis's packed blobs as they appear inside RDB strings: listpack (listpack.c), ziplist
// (ziplist.c, read only: Redis 7 still loads it), intset (intset.c) and zipmap (zipmap.c, read
// only). Every reader checks the blob's header against its size, every entry's bounds and the
// terminator, so a corrupt blob is reported (false), never read out of bounds.
//
//   listpack  u32 total bytes | u16 count (65535: unknown) | entries | 0xff
//             entry = encoding+data | backlen (the encoding+data size, 1-5 bytes of 7 bits)
//   ziplist   u32 total bytes | u32 tail offset | u16 count | entries | 0xff
//             entry = prevlen (1 byte, or 0xfe + u32) | encoding+data
//   intset    u32 width (2, 4, 8) | u32 count | count ascending little-endian integers
//   zipmap    u8 count | (len key, len value, u8 free, value, free bytes)... | 0xff
//             len = 1 byte < 254, or 254 + u32
//
// Thread safety: pure functions; views point into the caller's blob.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lavik::rdb {

// One listpack / ziplist element: an integer or a string.
struct PackedItem {
  bool is_int = false;
  int64_t num = 0;
  std::string_view str;
  // The element as text (an integer as its decimal form).
  std::string ToString() const;
};

bool ParseListpack(std::string_view blob, std::vector<PackedItem>* out);
bool ParseZiplist(std::string_view blob, std::vector<PackedItem>* out);
// The members in blob order. Like Redis's load-time check (sanitize-dump-payload no), the order
// is not verified: the caller decides about duplicates.
bool ParseIntset(std::string_view blob, std::vector<int64_t>* out);
// Field, value, field, value...
bool ParseZipmap(std::string_view blob, std::vector<std::string_view>* out);

// Builds a listpack the way Redis does: an element that is the canonical text of an int64 is
// stored as an integer in the smallest encoding, any other as a string.
class ListpackWriter {
 public:
  ListpackWriter() { Reset(); }
  void Add(std::string_view s);
  void AddInt(int64_t v);
  size_t count() const { return count_; }
  size_t bytes() const { return buf_.size() + 1; }  // with the terminator
  // The finished blob; the writer is empty again afterwards.
  std::string Finish();

 private:
  void Reset();
  void AddString(std::string_view s);
  void EndEntry(size_t start);

  std::string buf_;
  size_t count_ = 0;
};

// An intset of `sorted` (ascending, distinct), in the narrowest width that holds them all.
std::string EncodeIntset(const std::vector<int64_t>& sorted);

}  // namespace lavik::rdb
