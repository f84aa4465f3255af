#include "base/bitops.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace lavik {
namespace {

using namespace std::string_literals;

BitfieldType I(int bits) { return {true, bits}; }
BitfieldType U(int bits) { return {false, bits}; }

TEST(BitopsRange, BytesAndBitsWithNegativeIndexes) {
  BitRange r = ResolveBitRange(0, -1, 3, false);
  ASSERT_FALSE(r.empty);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.last, 23u);
  r = ResolveBitRange(-2, -1, 3, false);
  EXPECT_EQ(r.first, 8u);
  EXPECT_EQ(r.last, 23u);
  r = ResolveBitRange(5, 100, 3, true);
  EXPECT_EQ(r.first, 5u);
  EXPECT_EQ(r.last, 23u);
  r = ResolveBitRange(-100, -200, 3, false);  // both clamp to byte 0
  ASSERT_FALSE(r.empty);
  EXPECT_EQ(r.last, 7u);
  EXPECT_TRUE(ResolveBitRange(2, 1, 3, false).empty);
  EXPECT_TRUE(ResolveBitRange(0, -1, 0, false).empty);
  EXPECT_TRUE(ResolveBitRange(3, 10, 3, false).empty);
  EXPECT_FALSE(ResolveBitRange(INT64_MIN, INT64_MAX, 3, true).empty);
}

TEST(BitopsCount, WholeAndPartialBytes) {
  const std::string s = "foobar";
  EXPECT_EQ(CountBits(s, ResolveBitRange(0, -1, s.size(), false)), 26u);
  EXPECT_EQ(CountBits(s, ResolveBitRange(1, 1, s.size(), false)), 6u);
  EXPECT_EQ(CountBits(s, ResolveBitRange(5, 30, s.size(), true)), 17u);
  const std::string z = "\x00\xff\x00"s;
  EXPECT_EQ(CountBits(z, ResolveBitRange(3, 9, z.size(), true)), 2u);
  EXPECT_EQ(CountBits(z, ResolveBitRange(8, 8, z.size(), true)), 1u);
  EXPECT_EQ(CountBits(z, ResolveBitRange(5, 4, z.size(), true)), 0u);
  std::string big(1000, '\xff');
  EXPECT_EQ(CountBits(big, ResolveBitRange(3, -4, big.size(), true)), 8000u - 6u);
}

TEST(BitopsFind, SetAndClearBits) {
  const std::string z = "\x00\xff\x00"s;
  auto find = [&](int bit, int64_t start, int64_t end, bool in_bits) {
    return FindBit(z, bit, ResolveBitRange(start, end, z.size(), in_bits));
  };
  EXPECT_EQ(find(1, 0, -1, false), 8);
  EXPECT_EQ(find(0, 0, -1, false), 0);
  EXPECT_EQ(find(1, 9, 100, true), 9);
  EXPECT_EQ(find(0, 8, 15, true), -1);
  EXPECT_EQ(find(0, 8, 100, true), 16);
  EXPECT_EQ(find(1, 3, 3, true), -1);
  EXPECT_EQ(find(0, -5, -3, true), 19);
  EXPECT_EQ(find(1, 2, 1, false), -1);  // empty range
  std::string ones(100, '\xff');
  ones[77] = '\xfe';
  EXPECT_EQ(FindBit(ones, 0, ResolveBitRange(0, -1, ones.size(), false)), 77 * 8 + 7);
  EXPECT_EQ(FindBit(ones, 0, ResolveBitRange(0, 76, ones.size(), false)), -1);
  std::string zeros(100, '\0');
  zeros[99] = '\x01';
  EXPECT_EQ(FindBit(zeros, 1, ResolveBitRange(0, -1, zeros.size(), false)), 799);
}

TEST(BitopsFold, MissingBytesAreZero) {
  std::string acc;
  BitOpFold(BitOpKind::kAnd, "\xff\x0f"s, true, &acc);
  BitOpFold(BitOpKind::kAnd, "\x3c", false, &acc);
  EXPECT_EQ(acc, "\x3c\x00"s);
  BitOpFold(BitOpKind::kAnd, "", false, &acc);
  EXPECT_EQ(acc, "\x00\x00"s);
  BitOpFold(BitOpKind::kOr, "\x01\x02\x03"s, true, &acc);
  BitOpFold(BitOpKind::kOr, "\x10", false, &acc);
  EXPECT_EQ(acc, "\x11\x02\x03"s);
  BitOpFold(BitOpKind::kXor, "abcdefghijk", true, &acc);
  BitOpFold(BitOpKind::kXor, "abcdefghijk", false, &acc);
  EXPECT_EQ(acc, std::string(11, '\0'));
  BitOpFold(BitOpKind::kNot, "\x0f\xf0"s, true, &acc);
  EXPECT_EQ(acc, "\xf0\x0f"s);
  // AND of a short first source with a longer one: the tail is zero.
  BitOpFold(BitOpKind::kAnd, "\xff", true, &acc);
  BitOpFold(BitOpKind::kAnd, "\xff\xff\xff"s, false, &acc);
  EXPECT_EQ(acc, "\xff\x00\x00"s);
}

TEST(BitopsField, ParseType) {
  BitfieldType t;
  EXPECT_TRUE(ParseBitfieldType("i64", &t));
  EXPECT_TRUE(t.is_signed);
  EXPECT_EQ(t.bits, 64);
  EXPECT_TRUE(ParseBitfieldType("u63", &t));
  EXPECT_FALSE(t.is_signed);
  EXPECT_FALSE(ParseBitfieldType("u64", &t));
  EXPECT_FALSE(ParseBitfieldType("i65", &t));
  EXPECT_FALSE(ParseBitfieldType("i0", &t));
  EXPECT_FALSE(ParseBitfieldType("u08", &t));
  EXPECT_FALSE(ParseBitfieldType("U8", &t));
  EXPECT_FALSE(ParseBitfieldType("i", &t));
  EXPECT_FALSE(ParseBitfieldType("", &t));
}

TEST(BitopsField, GetAcrossBytesAndPastTheEnd) {
  const std::string s = "\x12\x34\x56\x78\x9a\xbc\xde\xf0\x11"s;
  EXPECT_EQ(GetBitfield(s, 0, U(8)), 0x12);
  EXPECT_EQ(GetBitfield(s, 4, U(8)), 0x23);
  EXPECT_EQ(GetBitfield(s, 0, I(64)), 0x123456789abcdef0);
  EXPECT_EQ(GetBitfield(s, 7, I(64)), static_cast<int64_t>(0x1a2b3c4d5e6f7808ull));
  EXPECT_EQ(GetBitfield(s, 32, I(8)), static_cast<int8_t>(0x9a));
  EXPECT_EQ(GetBitfield(s, 68, U(8)), 0x10);  // the last nibble then zero padding
  EXPECT_EQ(GetBitfield(s, 1000, I(5)), 0);
  EXPECT_EQ(GetBitfield("\x80"s, 0, I(1)), -1);
  EXPECT_EQ(GetBitfield("\x80"s, 0, U(1)), 1);
}

TEST(BitopsField, SetKeepsNeighbours) {
  std::string s(3, '\0');
  SetBitfield(&s, 4, U(8), 0xff);
  EXPECT_EQ(s, "\x0f\xf0\x00"s);
  SetBitfield(&s, 20, I(4), static_cast<uint64_t>(-1));
  EXPECT_EQ(s, "\x0f\xf0\x0f"s);
  SetBitfield(&s, 0, U(24), 0x123456);
  EXPECT_EQ(s, "\x12\x34\x56"s);
  std::string w(9, '\0');
  SetBitfield(&w, 7, I(64), static_cast<uint64_t>(INT64_MIN));
  EXPECT_EQ(GetBitfield(w, 7, I(64)), INT64_MIN);
  EXPECT_EQ(w, "\x01\x00\x00\x00\x00\x00\x00\x00\x00"s);
}

TEST(BitopsField, UnsignedOverflow) {
  int64_t v;
  EXPECT_FALSE(BitfieldAdd(U(8), 200, 55, BitfieldOverflow::kWrap, &v));
  EXPECT_EQ(v, 255);
  EXPECT_TRUE(BitfieldAdd(U(8), 200, 100, BitfieldOverflow::kWrap, &v));
  EXPECT_EQ(v, 44);
  EXPECT_TRUE(BitfieldAdd(U(8), 200, 100, BitfieldOverflow::kSat, &v));
  EXPECT_EQ(v, 255);
  EXPECT_TRUE(BitfieldAdd(U(8), 10, -11, BitfieldOverflow::kSat, &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(BitfieldAdd(U(8), 10, -11, BitfieldOverflow::kWrap, &v));
  EXPECT_EQ(v, 255);
  EXPECT_TRUE(BitfieldAdd(U(8), 10, -11, BitfieldOverflow::kFail, &v));
  // SET of a negative value: above the maximum once reinterpreted.
  EXPECT_TRUE(BitfieldAdd(U(8), -1, 0, BitfieldOverflow::kSat, &v));
  EXPECT_EQ(v, 255);
  EXPECT_TRUE(BitfieldAdd(U(63), 5, INT64_MIN, BitfieldOverflow::kSat, &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(BitfieldAdd(U(63), INT64_MAX, 1, BitfieldOverflow::kWrap, &v));
  EXPECT_EQ(v, 0);
}

TEST(BitopsField, SignedOverflow) {
  int64_t v;
  EXPECT_FALSE(BitfieldAdd(I(8), 100, 27, BitfieldOverflow::kFail, &v));
  EXPECT_EQ(v, 127);
  EXPECT_TRUE(BitfieldAdd(I(8), 100, 28, BitfieldOverflow::kWrap, &v));
  EXPECT_EQ(v, -128);
  EXPECT_TRUE(BitfieldAdd(I(8), 100, 28, BitfieldOverflow::kSat, &v));
  EXPECT_EQ(v, 127);
  EXPECT_TRUE(BitfieldAdd(I(8), -100, -29, BitfieldOverflow::kSat, &v));
  EXPECT_EQ(v, -128);
  EXPECT_TRUE(BitfieldAdd(I(8), -100, -29, BitfieldOverflow::kWrap, &v));
  EXPECT_EQ(v, 127);
  EXPECT_TRUE(BitfieldAdd(I(64), INT64_MAX, 1, BitfieldOverflow::kWrap, &v));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_TRUE(BitfieldAdd(I(64), INT64_MIN, -1, BitfieldOverflow::kSat, &v));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_FALSE(BitfieldAdd(I(64), INT64_MIN, INT64_MAX, BitfieldOverflow::kFail, &v));
  EXPECT_EQ(v, -1);
  EXPECT_TRUE(BitfieldAdd(I(8), 1000, 0, BitfieldOverflow::kSat, &v));  // SET 1000
  EXPECT_EQ(v, 127);
  EXPECT_TRUE(BitfieldAdd(I(8), -200, 0, BitfieldOverflow::kSat, &v));
  EXPECT_EQ(v, -128);
}

TEST(BitopsField, SignedSetFarBelowMinimumSaturatesUpAsRedisDoes) {
  // Redis 7.0.15: BITFIELD k OVERFLOW SAT SET i33 0 -9223372036854775808 then GET gives
  // 4294967295; the boundary for i8 is -9223372036854775681 (max) / ...680 (min).
  int64_t v;
  EXPECT_TRUE(BitfieldAdd(I(33), INT64_MIN, 0, BitfieldOverflow::kSat, &v));
  EXPECT_EQ(v, 4294967295);
  EXPECT_TRUE(BitfieldAdd(I(8), INT64_MIN + 127, 0, BitfieldOverflow::kSat, &v));
  EXPECT_EQ(v, 127);
  EXPECT_TRUE(BitfieldAdd(I(8), INT64_MIN + 128, 0, BitfieldOverflow::kSat, &v));
  EXPECT_EQ(v, -128);
}

}  // namespace
}  // namespace lavik
