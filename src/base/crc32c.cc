#include "base/crc32c.h"

#include <isa-l/crc.h>

#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#define LAVIK_CRC32C_X86 1
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#define LAVIK_CRC32C_ARM 1
#endif

namespace lavik {
namespace {

// The helpers below work on the raw shift-register state (the CRC before the
// final xor); the public functions convert with `~` on the way in and out,
// which is what makes finished values chain.

constexpr uint32_t kPoly = 0x82F63B78;  // 0x1EDC6F41 bit-reversed

// kTables[0] is the classic byte-at-a-time table; kTables[k][b] is the CRC
// state after byte b followed by k zero bytes, which lets the loop fold eight
// input bytes with eight independent lookups ("slicing by 8").
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][i] = c;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

static_assert(std::endian::native == std::endian::little,
              "the 8-byte software loop loads words little-endian");

uint32_t SoftwareUpdate(uint32_t state, const uint8_t* p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    w ^= state;
    state = kTables[7][w & 0xFF] ^ kTables[6][(w >> 8) & 0xFF] ^ kTables[5][(w >> 16) & 0xFF] ^
            kTables[4][(w >> 24) & 0xFF] ^ kTables[3][(w >> 32) & 0xFF] ^
            kTables[2][(w >> 40) & 0xFF] ^ kTables[1][(w >> 48) & 0xFF] ^ kTables[0][w >> 56];
  }
  for (; n > 0; ++p, --n) state = (state >> 8) ^ kTables[0][(state ^ *p) & 0xFF];
  return state;
}

#if defined(LAVIK_CRC32C_X86)

// Compiled for SSE4.2 regardless of the build's -march, and only reached after
// the run-time check, so one binary runs on any x86-64. A single dependency
// chain gives ~8 bytes per 3 cycles, several GB/s: enough for records and
// checkpoints without the 3-way interleave-and-combine trick.
__attribute__((target("sse4.2"))) uint32_t HardwareUpdate(uint32_t state, const uint8_t* p,
                                                          size_t n) {
  // Leading bytes up to an 8-byte boundary so the word loads are aligned.
  for (; n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; ++p, --n) {
    state = _mm_crc32_u8(state, *p);
  }
  uint64_t s = state;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    s = _mm_crc32_u64(s, w);
  }
  state = static_cast<uint32_t>(s);
  for (; n > 0; ++p, --n) state = _mm_crc32_u8(state, *p);
  return state;
}

bool DetectHardware() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}

#elif defined(LAVIK_CRC32C_ARM)

uint32_t HardwareUpdate(uint32_t state, const uint8_t* p, size_t n) {
  for (; n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; ++p, --n) {
    state = __crc32cb(state, *p);
  }
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    state = __crc32cd(state, w);
  }
  for (; n > 0; ++p, --n) state = __crc32cb(state, *p);
  return state;
}

// The compiler was told the target has the CRC extension.
bool DetectHardware() { return true; }

#else

uint32_t HardwareUpdate(uint32_t state, const uint8_t* p, size_t n) {
  return SoftwareUpdate(state, p, n);
}

bool DetectHardware() { return false; }

#endif

}  // namespace

bool Crc32cHardwareAvailable() {
  static const bool available = DetectHardware();
  return available;
}

uint32_t Crc32cSoftware(const void* data, size_t n, uint32_t crc) {
  return ~SoftwareUpdate(~crc, static_cast<const uint8_t*>(data), n);
}

uint32_t Crc32cHardware(const void* data, size_t n, uint32_t crc) {
  if (!Crc32cHardwareAvailable()) return Crc32cSoftware(data, n, crc);
  return ~HardwareUpdate(~crc, static_cast<const uint8_t*>(data), n);
}

#if defined(LAVIK_CRC32C_X86)
namespace {
__attribute__((target("sse4.2"))) uint32_t HardwareFixed64(uint32_t state, uint64_t v) {
  return static_cast<uint32_t>(_mm_crc32_u64(state, v));
}
}  // namespace
#endif

uint32_t Crc32cFixed64(uint64_t v, uint32_t crc) {
#if defined(LAVIK_CRC32C_X86)
  if (Crc32cHardwareAvailable()) return ~HardwareFixed64(~crc, v);
#endif
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(v >> (8 * i));
  return Crc32cHardware(bytes, sizeof(bytes), crc);
}

uint32_t Crc32c(const void* data, size_t n, uint32_t crc) {
  // Below 128 bytes one chain of `crc32` instructions is the faster: ISA-L's folding code pays a
  // fixed ~15 ns to set up (8 bytes: 15.6 ns against 3 ns; 64: 19 against 6), which every
  // record's 8-byte seed paid (storage/format.cc RecordCrc). (Without CRC instructions
  // Crc32cHardware is the table version.)
  if (n < 128) return Crc32cHardware(data, n, crc);
  // ISA-L works on the raw register state, as the helpers above (its int length: records and
  // checkpoint pieces are far below 2 GiB; larger inputs go through in pieces).
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t state = ~crc;
  constexpr size_t kPiece = size_t{1} << 30;
  for (; n > kPiece; p += kPiece, n -= kPiece) {
    state = crc32_iscsi(const_cast<unsigned char*>(p), static_cast<int>(kPiece), state);
  }
  state = crc32_iscsi(const_cast<unsigned char*>(p), static_cast<int>(n), state);
  return ~state;
}

}  // namespace lavik
