#include "base/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace lavik {
namespace {

uint32_t Crc(const std::string& s) { return Crc32c(s.data(), s.size()); }

// Bit-at-a-time reference straight from the definition, independent of the
// tables and instructions under test.
uint32_t SlowCrc32c(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFF;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ 0x82F63B78 : c >> 1;
  }
  return ~c;
}

TEST(Crc32cTest, StandardCheckValue) {
  EXPECT_EQ(Crc("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32cSoftware("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32cHardware("123456789", 9), 0xE3069283u);
}

TEST(Crc32cTest, EmptyInput) {
  EXPECT_EQ(Crc32c(nullptr, 0), 0u);
  EXPECT_EQ(Crc32c("", 0, 0x12345678), 0x12345678u);
  EXPECT_EQ(Crc32cSoftware(nullptr, 0, 0xDEADBEEF), 0xDEADBEEFu);
}

// RFC 3720 (iSCSI) appendix B.4 test vectors.
TEST(Crc32cTest, Rfc3720Vectors) {
  std::string zeros(32, '\0');
  EXPECT_EQ(Crc(zeros), 0x8A9136AAu);
  std::string ones(32, '\xFF');
  EXPECT_EQ(Crc(ones), 0x62A8AB43u);
  std::string inc(32, '\0');
  std::string dec(32, '\0');
  for (int i = 0; i < 32; ++i) {
    inc[i] = static_cast<char>(i);
    dec[i] = static_cast<char>(31 - i);
  }
  EXPECT_EQ(Crc(inc), 0x46DD794Eu);
  EXPECT_EQ(Crc(dec), 0x113FDB5Cu);
  const uint8_t iscsi_read[48] = {
      0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
      0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  };
  EXPECT_EQ(Crc32c(iscsi_read, sizeof(iscsi_read)), 0xD9963A56u);
}

TEST(Crc32cTest, Chaining) {
  std::string s = "The quick brown fox jumps over the lazy dog, twice over.";
  uint32_t whole = Crc(s);
  for (size_t cut = 0; cut <= s.size(); ++cut) {
    uint32_t first = Crc32c(s.data(), cut);
    EXPECT_EQ(Crc32c(s.data() + cut, s.size() - cut, first), whole) << cut;
    EXPECT_EQ(Crc32cSoftware(s.data() + cut, s.size() - cut, Crc32cSoftware(s.data(), cut)), whole)
        << cut;
  }
}

TEST(Crc32cTest, Fixed64IsTheCrcOfItsLittleEndianBytes) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t v = i < 3 ? uint64_t{0} - i : rng();
    const uint32_t crc = i % 2 == 0 ? 0 : static_cast<uint32_t>(rng());
    uint8_t bytes[8];
    for (int b = 0; b < 8; ++b) bytes[b] = static_cast<uint8_t>(v >> (8 * b));
    EXPECT_EQ(Crc32cFixed64(v, crc), Crc32cSoftware(bytes, 8, crc)) << v;
    EXPECT_EQ(Crc32cFixed64(v, crc), Crc32c(bytes, 8, crc)) << v;
  }
}

TEST(Crc32cTest, MatchesBitwiseReference) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> buf(300);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t n = 0; n <= buf.size(); ++n) {
    uint32_t want = SlowCrc32c(buf.data(), n);
    EXPECT_EQ(Crc32cSoftware(buf.data(), n), want) << n;
    EXPECT_EQ(Crc32cHardware(buf.data(), n), want) << n;
    EXPECT_EQ(Crc32c(buf.data(), n), want) << n;
  }
}

TEST(Crc32cTest, HardwareMatchesSoftwareOnRandomBuffers) {
  if (!Crc32cHardwareAvailable()) GTEST_SKIP() << "no CRC instructions on this CPU";
  std::mt19937_64 rng(42);
  std::vector<uint8_t> buf(70000);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (int iter = 0; iter < 2000; ++iter) {
    size_t offset = rng() % 64;  // every alignment
    size_t max_len = iter % 10 == 0 ? buf.size() - offset : 300;
    size_t len = rng() % (max_len + 1);
    uint32_t seed = iter % 3 == 0 ? 0 : static_cast<uint32_t>(rng());
    const uint8_t* p = buf.data() + offset;
    ASSERT_EQ(Crc32cHardware(p, len, seed), Crc32cSoftware(p, len, seed))
        << "offset " << offset << " len " << len;
    ASSERT_EQ(Crc32c(p, len, seed), Crc32cSoftware(p, len, seed))
        << "offset " << offset << " len " << len;
  }
}

}  // namespace
}  // namespace lavik
