// LEB128 varints (7 bits a byte, low bits first, the top bit set on every byte but the last), as
// the record formats write lengths and id deltas (storage/collection.h, list_record.h,
// stream_record.h, stream_chunks.h).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace lavik {

// Appends `v` in one append (byte-wise push_back dominated XADD's profile on big streams).
inline void AppendVarint(std::string* out, uint64_t v) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out->append(buf, n);
}

// Reads one varint at *p, advancing it: false (and *p left anywhere) if it runs to `end` or
// past 64 bits.
inline bool ReadVarint(const char** p, const char* end, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift <= 63 && *p < end; shift += 7) {
    const auto b = static_cast<uint8_t>(*(*p)++);
    *v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// The same for a value stored as 32 bits: false if it runs to `end` or past five bytes (*v is
// set only on success).
inline bool ReadVarint32(const char** p, const char* end, uint32_t* v) {
  uint32_t x = 0;
  for (int shift = 0; shift <= 28 && *p < end; shift += 7) {
    const auto b = static_cast<uint8_t>(*(*p)++);
    x |= static_cast<uint32_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) {
      *v = x;
      return true;
    }
  }
  return false;
}

}  // namespace lavik
