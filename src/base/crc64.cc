// Table-driven, slicing by 8: eight 256-entry tables let the loop fold 8 input bytes per step.
#include "base/crc64.h"

#include <cstring>

namespace lavik {
namespace {

// 0xad93d23594c935a9 with its bits reversed: the reflected form the right-shifting loop uses.
constexpr uint64_t kReflectedPoly = 0x95ac9329ac4bc9b5ULL;

struct Tables {
  uint64_t t[8][256];
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint64_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kReflectedPoly : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
    }
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

}  // namespace

uint64_t Crc64(uint64_t crc, const void* data, size_t n) {
  const Tables& tb = GetTables();
  const auto* p = static_cast<const unsigned char*>(data);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);  // little-endian hosts only (x86-64, aarch64)
    crc ^= w;
    crc = tb.t[7][crc & 0xff] ^ tb.t[6][(crc >> 8) & 0xff] ^ tb.t[5][(crc >> 16) & 0xff] ^
          tb.t[4][(crc >> 24) & 0xff] ^ tb.t[3][(crc >> 32) & 0xff] ^ tb.t[2][(crc >> 40) & 0xff] ^
          tb.t[1][(crc >> 48) & 0xff] ^ tb.t[0][crc >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) crc = tb.t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace lavik
