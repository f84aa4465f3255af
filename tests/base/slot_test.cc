#include "base/slot.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace lavik {
namespace {

TEST(Crc16Test, SpecCheckValue) {
  // The Redis Cluster spec's reference vector for CRC16/XMODEM.
  EXPECT_EQ(Crc16("123456789"), 0x31C3);
  EXPECT_EQ(Crc16(""), 0);
}

TEST(Crc16Test, BitwiseReference) {
  // Cross-check the table against a plain shift-register implementation over
  // every single-byte input and a binary string.
  auto slow = [](std::string_view data) {
    uint16_t crc = 0;
    for (char c : data) {
      crc ^= static_cast<uint16_t>(static_cast<uint8_t>(c) << 8);
      for (int i = 0; i < 8; ++i) {
        crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                             : static_cast<uint16_t>(crc << 1);
      }
    }
    return crc;
  };
  std::string all;
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    EXPECT_EQ(Crc16(one), slow(one)) << b;
    all += one;
  }
  EXPECT_EQ(Crc16(all), slow(all));
}

TEST(Crc16Test, EightBytesAtATimeMatchesOneAtATime) {
  // Crc16 folds eight bytes per step and finishes byte by byte: every length across a few
  // multiples of eight, at every start offset, over random bytes, against the plain loop.
  std::mt19937 rng(17);
  std::string buf(96, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t start = 0; start < 8; ++start) {
    for (size_t len = 0; len + start <= buf.size(); ++len) {
      const std::string_view s(buf.data() + start, len);
      ASSERT_EQ(Crc16(s), Crc16Bytewise(s)) << start << "+" << len;
    }
  }
  // Keys of the shapes clients use, and their slots as Redis Cluster gives them.
  EXPECT_EQ(Crc16("key:000000123456"), Crc16Bytewise("key:000000123456"));
  EXPECT_EQ(KeyHashSlot("foo"), 12182);
  EXPECT_EQ(KeyHashSlot("key:000000000000"), Crc16Bytewise("key:000000000000") & 16383);
}

TEST(HashTagTest, Rules) {
  EXPECT_EQ(HashTagOf("foo"), "foo");
  EXPECT_EQ(HashTagOf("{user1000}.following"), "user1000");
  EXPECT_EQ(HashTagOf("foo{}{bar}"), "foo{}{bar}");  // Empty tag: whole key.
  EXPECT_EQ(HashTagOf("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(HashTagOf("foo{bar}{zap}"), "bar");
  EXPECT_EQ(HashTagOf("foo{bar"), "foo{bar");  // No closing brace.
  EXPECT_EQ(HashTagOf("}{"), "}{");
  EXPECT_EQ(HashTagOf("{{}}"), "{");
  EXPECT_EQ(HashTagOf(""), "");
}

TEST(KeyHashSlotTest, TagsColocate) {
  EXPECT_EQ(KeyHashSlot("{user1000}.following"), KeyHashSlot("{user1000}.followers"));
  EXPECT_EQ(KeyHashSlot("foo{}{bar}"), Crc16("foo{}{bar}") % kNumSlots);
  EXPECT_EQ(KeyHashSlot("foo{{bar}}zap"), KeyHashSlot("{bar"));
  EXPECT_EQ(KeyHashSlot("foo{bar}{zap}"), KeyHashSlot("bar"));
}

TEST(KeyHashSlotTest, MatchesRedisClusterKeyslot) {
  // Expected values from redis-server 7.0.15: CLUSTER KEYSLOT <key>.
  struct Case {
    std::string key;
    uint16_t slot;
  };
  const Case cases[] = {
      {"foo", 12182},
      {"bar", 5061},
      {"hello", 866},
      {"{user1000}.following", 3443},
      {"{user1000}.followers", 3443},
      {"foo{}{bar}", 8363},
      {"foo{{bar}}zap", 4015},
      {"foo{bar}{zap}", 5061},
      {"{bar", 4015},
      {"{}", 15257},
      {"", 0},
      {"a", 15495},
      {"key:1", 6657},
      {"{a}b", 15495},
      {"}{", 12793},
      {"{{}}", 4092},
      {"123456789", 12739},
      {std::string("\xff\x00{\x80}", 5), 4488},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(KeyHashSlot(c.key), c.slot) << c.key;
  }
}

TEST(KeyHashSlotTest, AlwaysInRange) {
  std::string key;
  for (int i = 0; i < 5000; ++i) {
    key += static_cast<char>(i * 131);
    EXPECT_LT(KeyHashSlot(key), kNumSlots);
  }
}

}  // namespace
}  // namespace lavik
