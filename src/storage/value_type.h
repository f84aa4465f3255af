// The Redis value types, and how the index's location word packs a record's place and kind.
#pragma once

#include <cstdint>
#include <string_view>

namespace lavik {

// kChunk: an internal chunk record of a chunked collection (storage/chunked.h); never a client
// key's type, and skipped by KEYS/SCAN/RANDOMKEY/DBSIZE.
enum class ValueType : uint8_t { kString = 0, kList, kSet, kZSet, kHash, kStream, kChunk };
std::string_view TypeName(ValueType t);
// The member-hash-sorted collections (storage/collection.h), which may be chunked.
inline bool IsCollectionType(ValueType t) {
  return t == ValueType::kSet || t == ValueType::kZSet || t == ValueType::kHash;
}
// The types whose value may be a chunk root (storage/chunked.h), which the store tracks: those
// collections, lists (chunked by position, commands/list_chunks.h) and streams (by id,
// commands/stream_chunked.h).
inline bool IsChunkableType(ValueType t) {
  return IsCollectionType(t) || t == ValueType::kList || t == ValueType::kStream;
}

// Location word (doc/index.md): bits 0..37 record offset / 8, bits 38..58 record length / 8
// (0 = a large record: read its header to learn the length), bits 59..61 value type, bit 62 the
// key has a TTL, bit 63 reserved for the index.
namespace loc {
inline constexpr uint64_t kOffsetBits = 38;
inline constexpr uint64_t kLenBits = 21;
inline constexpr uint64_t kMaxInlineLen = ((uint64_t{1} << kLenBits) - 1) * 8;

inline uint64_t Make(uint64_t offset, uint64_t len, ValueType type, bool ttl) {
  uint64_t len8 = len <= kMaxInlineLen ? len / 8 : 0;
  return (offset / 8) | (len8 << kOffsetBits) | (uint64_t{static_cast<uint8_t>(type)} << 59) |
         (uint64_t{ttl} << 62);
}
inline uint64_t Offset(uint64_t l) { return (l & ((uint64_t{1} << kOffsetBits) - 1)) * 8; }
inline uint64_t Len(uint64_t l) {
  return ((l >> kOffsetBits) & ((uint64_t{1} << kLenBits) - 1)) * 8;
}
inline ValueType Type(uint64_t l) { return static_cast<ValueType>((l >> 59) & 7); }
inline bool Ttl(uint64_t l) { return (l >> 62) & 1; }
}  // namespace loc

}  // namespace lavik
