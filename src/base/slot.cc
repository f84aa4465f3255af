#include "base/slot.h"

#include <array>

namespace lavik {
namespace {

constexpr uint16_t kCrc16Poly = 0x1021;

// One entry per leading byte value: the CRC register after shifting that byte
// through eight rounds of the MSB-first polynomial division. Built at compile
// time so the table cannot drift from the polynomial.
constexpr std::array<uint16_t, 256> MakeCrc16Table() {
  std::array<uint16_t, 256> table{};
  for (int byte = 0; byte < 256; ++byte) {
    uint16_t reg = static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      reg = (reg & 0x8000) ? static_cast<uint16_t>((reg << 1) ^ kCrc16Poly)
                           : static_cast<uint16_t>(reg << 1);
    }
    table[byte] = reg;
  }
  return table;
}

constexpr std::array<uint16_t, 256> kCrc16Table = MakeCrc16Table();

static_assert(kCrc16Table[1] == 0x1021 && kCrc16Table[255] == 0x1EF0,
              "CRC16 table does not match the XMODEM polynomial");

}  // namespace

uint16_t Crc16(std::string_view data) {
  uint16_t crc = 0;
  for (char c : data) {
    const uint8_t index = static_cast<uint8_t>((crc >> 8) ^ static_cast<uint8_t>(c));
    crc = static_cast<uint16_t>((crc << 8) ^ kCrc16Table[index]);
  }
  return crc;
}

std::string_view HashTagOf(std::string_view key) {
  const size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const size_t close = key.find('}', open + 1);
  // "{}" (nothing between the braces) deliberately hashes the whole key, so
  // that keys like "foo{}{bar}" are spread out rather than piled on one slot.
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

uint16_t KeyHashSlot(std::string_view key) {
  // kNumSlots is a power of two, so the modulo is a mask.
  return Crc16(HashTagOf(key)) & (kNumSlots - 1);
}

}  // namespace lavik
