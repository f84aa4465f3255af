#include "base/slot.h"

#include <array>
#include <cstddef>
#include <cstring>

namespace lavik {
namespace {

constexpr uint16_t kCrc16Poly = 0x1021;

// kCrc16Tables[0][b]: the CRC register after shifting byte b through eight rounds of the
// MSB-first polynomial division. kCrc16Tables[k][b]: the CRC of byte b followed by k zero bytes.
// With them eight bytes are folded at once (slicing-by-8): the register enters the first two
// bytes, each byte's share is one independent lookup, and the shares xor together, since the CRC
// is linear. A key's slot costs a third of the byte-at-a-time loop's chain of dependent lookups.
// Built at compile time so the tables cannot drift from the polynomial.
using Crc16Tables = std::array<std::array<uint16_t, 256>, 8>;

constexpr Crc16Tables MakeCrc16Tables() {
  Crc16Tables t{};
  for (int byte = 0; byte < 256; ++byte) {
    uint16_t reg = static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      reg = (reg & 0x8000) ? static_cast<uint16_t>((reg << 1) ^ kCrc16Poly)
                           : static_cast<uint16_t>(reg << 1);
    }
    t[0][byte] = reg;
  }
  for (int k = 1; k < 8; ++k) {
    for (int byte = 0; byte < 256; ++byte) {
      const uint16_t prev = t[k - 1][byte];
      t[k][byte] = static_cast<uint16_t>((prev << 8) ^ t[0][prev >> 8]);
    }
  }
  return t;
}

constexpr Crc16Tables kCrc16Tables = MakeCrc16Tables();

static_assert(kCrc16Tables[0][1] == 0x1021 && kCrc16Tables[0][255] == 0x1EF0,
              "CRC16 table does not match the XMODEM polynomial");

uint16_t Crc16Bytes(uint16_t crc, const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    crc = static_cast<uint16_t>((crc << 8) ^
                                kCrc16Tables[0][static_cast<uint8_t>((crc >> 8) ^ p[i])]);
  }
  return crc;
}

}  // namespace

uint16_t Crc16(std::string_view data) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  uint16_t crc = 0;
  for (; n >= 8; p += 8, n -= 8) {
    const auto& t = kCrc16Tables;
    crc = static_cast<uint16_t>(t[7][p[0] ^ (crc >> 8)] ^ t[6][p[1] ^ (crc & 0xFF)] ^ t[5][p[2]] ^
                                t[4][p[3]] ^ t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]]);
  }
  return Crc16Bytes(crc, p, n);
}

uint16_t Crc16Bytewise(std::string_view data) {
  return Crc16Bytes(0, reinterpret_cast<const uint8_t*>(data.data()), data.size());
}

std::string_view HashTagOf(std::string_view key) {
  // memchr, not string_view::find: libstdc++'s find tests a byte at a time, and every write
  // computes its key's slot (the record header's).
  if (key.empty()) return key;
  const char* const begin = key.data();
  const char* const end = begin + key.size();
  const auto* open = static_cast<const char*>(std::memchr(begin, '{', key.size()));
  if (open == nullptr) return key;
  const auto* close =
      static_cast<const char*>(std::memchr(open + 1, '}', static_cast<size_t>(end - open - 1)));
  // "{}" (nothing between the braces) deliberately hashes the whole key, so
  // that keys like "foo{}{bar}" are spread out rather than piled on one slot.
  if (close == nullptr || close == open + 1) return key;
  return std::string_view(open + 1, static_cast<size_t>(close - open - 1));
}

uint16_t KeyHashSlot(std::string_view key) {
  // kNumSlots is a power of two, so the modulo is a mask.
  return Crc16(HashTagOf(key)) & (kNumSlots - 1);
}

}  // namespace lavik
