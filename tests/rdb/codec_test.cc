#include "rdb/codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "rdb/packed.h"

namespace lavik::rdb {
namespace {

std::string Hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

TEST(RdbCodec, LengthsRoundTripInEveryWidth) {
  for (uint64_t v : {0ull, 63ull, 64ull, 16383ull, 16384ull, 4294967295ull, 4294967296ull, ~0ull}) {
    std::string b;
    PutLength(v, &b);
    const size_t want = v < 64 ? 1 : v < 16384 ? 2 : v <= 4294967295ull ? 5 : 9;
    EXPECT_EQ(b.size(), want) << v;
    StringSource src(b);
    uint64_t got;
    ASSERT_TRUE(GetLength(src, &got));
    EXPECT_EQ(got, v);
    EXPECT_EQ(src.remaining(), 0u);
  }
  const std::string bad_bytes("\x82", 1), truncated_bytes("\x80\x00", 2);
  StringSource bad(bad_bytes);
  uint64_t v;
  EXPECT_FALSE(GetLength(bad, &v));
  StringSource truncated(truncated_bytes);
  EXPECT_FALSE(GetLength(truncated, &v));
}

TEST(RdbCodec, StringsIntEncodedAsRedisWritesThem) {
  struct Case {
    std::string in;
    std::string bytes;
  } cases[] = {
      {"1", Hex("c001")},       {"-128", Hex("c080")},
      {"300", Hex("c12c01")},   {"-70000", Hex("c290eefeff")},
      {"007", Hex("03303037")}, {"4294967296", Hex("0a") + "4294967296"},
      {"", Hex("00")},
  };
  for (const Case& c : cases) {
    std::string b;
    PutString(c.in, &b);
    EXPECT_EQ(b, c.bytes) << c.in;
    StringSource src(b);
    std::string back;
    ASSERT_TRUE(GetString(src, &back));
    EXPECT_EQ(back, c.in);
  }
}

TEST(RdbCodec, LzfStringFromRedis) {
  // DUMP of a 56-byte string on redis-server 7.0.15 (rdbcompression yes): an LZF string.
  const std::string payload =
      Hex("00c313380361626361e01d02042d78797a2da02b0162630a004dfb8f0f05dbefa6");
  const std::string body = payload.substr(1);
  StringSource src(body);
  std::string s;
  ASSERT_TRUE(GetString(src, &s));
  EXPECT_EQ(s, "abcabcabcabcabcabcabcabcabcabcabcabcabcabc-xyz-abcabcabc");
  // Damaged LZF data is refused, whatever the damage.
  std::string out;
  EXPECT_FALSE(LzfDecompress(Hex("e0ff02"), 10, &out));   // back reference before the start
  EXPECT_FALSE(LzfDecompress(Hex("05616263"), 6, &out));  // literal run past the input
  EXPECT_FALSE(LzfDecompress(Hex("00616263"), 1, &out));  // trailing input
  EXPECT_TRUE(out.empty());
}

TEST(RdbCodec, Doubles) {
  std::string b;
  PutBinaryDouble(-2.5, &b);
  StringSource src(b);
  double d;
  ASSERT_TRUE(GetBinaryDouble(src, &d));
  EXPECT_EQ(d, -2.5);
  const std::string doubles = std::string("\x04") + "1.25" + "\xfe\xff\xfd";
  StringSource text(doubles);
  ASSERT_TRUE(GetTextDouble(text, &d));
  EXPECT_EQ(d, 1.25);
  ASSERT_TRUE(GetTextDouble(text, &d));
  EXPECT_TRUE(std::isinf(d) && d > 0);
  ASSERT_TRUE(GetTextDouble(text, &d));
  EXPECT_TRUE(std::isinf(d) && d < 0);
  ASSERT_TRUE(GetTextDouble(text, &d));
  EXPECT_TRUE(std::isnan(d));
}

TEST(RdbPacked, ListpackRoundTripsEveryEncoding) {
  ListpackWriter w;
  const std::string big(5000, 'q'), mid(100, 'm');
  const std::vector<std::string> in = {
      "0",           "127",        "128",   "-4096",
      "4095",        "-4097",      "32767", "8388607",
      "-2147483648", "2147483648", "abc",   mid,
      big,           "007",        "",      "-9223372036854775808"};
  for (const std::string& s : in) w.Add(s);
  const std::string lp = w.Finish();
  std::vector<PackedItem> items;
  ASSERT_TRUE(ParseListpack(lp, &items));
  ASSERT_EQ(items.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(items[i].ToString(), in[i]) << i;
  EXPECT_TRUE(items[0].is_int);
  EXPECT_FALSE(items[13].is_int);  // "007" is not canonical
  // Any truncation, or a wrong header, is refused.
  for (size_t cut = 0; cut < lp.size(); ++cut)
    EXPECT_FALSE(ParseListpack(lp.substr(0, cut), &items));
  std::string wrong = lp;
  wrong[4] = 3;
  EXPECT_FALSE(ParseListpack(wrong, &items));
}

TEST(RdbPacked, ZiplistReader) {
  // zlbytes, zltail, zllen | "ab" | 5 (4-bit immediate) | 300 (int16) | end
  std::string entries = std::string(
                            "\x00\x02"
                            "ab",
                            4) +
                        std::string("\x04\xf6", 2) + std::string("\x02\xc0\x2c\x01", 4);
  std::string zl(10, '\0');
  zl += entries;
  zl.push_back('\xff');
  auto put32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) zl[at + i] = static_cast<char>(v >> (8 * i));
  };
  put32(0, zl.size());
  put32(4, 10 + 4 + 2);
  zl[8] = 3;
  std::vector<PackedItem> items;
  ASSERT_TRUE(ParseZiplist(zl, &items));
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].ToString(), "ab");
  EXPECT_EQ(items[1].ToString(), "5");
  EXPECT_EQ(items[2].ToString(), "300");
  std::string bad_prev = zl;
  bad_prev[14] = 9;  // the second entry's prevlen
  EXPECT_FALSE(ParseZiplist(bad_prev, &items));
  for (size_t cut = 0; cut < zl.size(); ++cut)
    EXPECT_FALSE(ParseZiplist(zl.substr(0, cut), &items));
}

TEST(RdbPacked, IntsetAndZipmap) {
  const std::vector<int64_t> v = {-5, 3, 70000};
  const std::string is = EncodeIntset(v);
  EXPECT_EQ(is.size(), 8u + 3 * 4);
  std::vector<int64_t> back;
  ASSERT_TRUE(ParseIntset(is, &back));
  EXPECT_EQ(back, v);
  EXPECT_FALSE(ParseIntset(is.substr(0, is.size() - 1), &back));
  EXPECT_EQ(EncodeIntset({1, 5000000000}).size(), 8u + 2 * 8);

  // count | "f" len 1, "value" len 5, free 2 | end
  const std::string zm = std::string(
      "\x01\x01"
      "f"
      "\x05\x02"
      "value"
      "xx"
      "\xff",
      13);
  std::vector<std::string_view> fv;
  ASSERT_TRUE(ParseZipmap(zm, &fv));
  ASSERT_EQ(fv.size(), 2u);
  EXPECT_EQ(fv[0], "f");
  EXPECT_EQ(fv[1], "value");
  for (size_t cut = 0; cut < zm.size(); ++cut) EXPECT_FALSE(ParseZipmap(zm.substr(0, cut), &fv));
}

}  // namespace
}  // namespace lavik::rdb
