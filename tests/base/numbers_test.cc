#include "base/numbers.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>

namespace lavik {
namespace {

// Expected verdicts below were checked against redis-server 7.0.15 (INCRBY,
// ZADD/ZSCORE, INCRBYFLOAT) unless they follow directly from the C library.

TEST(ParseInt64Test, AcceptsCanonicalIntegers) {
  struct Case {
    const char* in;
    int64_t want;
  };
  const Case cases[] = {
      {"0", 0},
      {"1", 1},
      {"-1", -1},
      {"42", 42},
      {"1000000", 1000000},
      {"9223372036854775807", std::numeric_limits<int64_t>::max()},
      {"-9223372036854775808", std::numeric_limits<int64_t>::min()},
      {"-9223372036854775807", -9223372036854775807},
  };
  for (const Case& c : cases) {
    int64_t v = 7;
    EXPECT_TRUE(ParseInt64(c.in, &v)) << c.in;
    EXPECT_EQ(v, c.want) << c.in;
  }
}

TEST(ParseInt64Test, RejectsEverythingElse) {
  const std::string cases[] = {
      "",
      "-",
      "-0",
      "00",
      "01",
      "-01",
      "+1",
      " 1",
      "1 ",
      "1e3",
      "0x10",
      "1.0",
      "abc",
      "9223372036854775808",
      "-9223372036854775809",
      "18446744073709551615",
      "18446744073709551616",
      "99999999999999999999",
      "100000000000000000000",  // 21 bytes: rejected on length alone.
      std::string("1\0", 2),
      "--1",
      "1-",
  };
  for (const std::string& c : cases) {
    int64_t v = 7;
    EXPECT_FALSE(ParseInt64(c, &v)) << c;
    EXPECT_EQ(v, 7) << "output written on failure for " << c;
  }
}

TEST(ParseInt64Test, RoundTripsFormat) {
  std::mt19937_64 rng(1);
  char buf[kMaxInt64Chars];
  for (int i = 0; i < 20000; ++i) {
    const int64_t x = static_cast<int64_t>(rng()) >> (rng() % 64);
    const size_t n = FormatInt64(x, buf);
    int64_t back;
    ASSERT_TRUE(ParseInt64(std::string_view(buf, n), &back)) << x;
    ASSERT_EQ(back, x);
  }
}

TEST(ParseUint64Test, Grammar) {
  uint64_t v = 0;
  EXPECT_TRUE(ParseUint64("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseUint64("18446744073709551615", &v));
  EXPECT_EQ(v, std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(ParseUint64("9223372036854775808", &v));
  EXPECT_EQ(v, uint64_t{1} << 63);
  for (const char* bad : {"", "18446744073709551616", "-1", "-0", "+1", "01", " 1", "1 ", "1e3",
                          "99999999999999999999"}) {
    EXPECT_FALSE(ParseUint64(bad, &v)) << bad;
  }
}

TEST(FormatInt64Test, Edges) {
  char buf[kMaxInt64Chars];
  auto fmt = [&](int64_t x) { return std::string(buf, FormatInt64(x, buf)); };
  EXPECT_EQ(fmt(0), "0");
  EXPECT_EQ(fmt(-1), "-1");
  EXPECT_EQ(fmt(1234567890), "1234567890");
  EXPECT_EQ(fmt(std::numeric_limits<int64_t>::max()), "9223372036854775807");
  EXPECT_EQ(fmt(std::numeric_limits<int64_t>::min()), "-9223372036854775808");
  EXPECT_EQ(std::string(buf, FormatUint64(std::numeric_limits<uint64_t>::max(), buf)),
            "18446744073709551615");
}

TEST(ParseDoubleTest, Accepts) {
  struct Case {
    std::string in;
    double want;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Case cases[] = {
      {"0", 0.0},
      {"1", 1.0},
      {"1.5", 1.5},
      {"-1.5", -1.5},
      {"1e5", 1e5},
      {"1E5", 1e5},
      {"+1e+5", 1e5},
      {"1e-5", 1e-5},
      {".5", 0.5},
      {"5.", 5.0},
      {"-.5", -0.5},
      {"+.5", 0.5},
      {"01", 1.0},
      {"0x10", 16.0},
      {"inf", inf},
      {"+inf", inf},
      {"-inf", -inf},
      {"INF", inf},
      {"infinity", inf},
      {"-Infinity", -inf},
      {"1e308", 1e308},
      {"1.7976931348623157e308", std::numeric_limits<double>::max()},
      {"4.9e-324", std::numeric_limits<double>::denorm_min()},  // Subnormal: allowed.
      {"2e-320", 2e-320},
      {"0e999999", 0.0},
      {"0.30000000000000004", 0.30000000000000004},
      {"9007199254740993", 9007199254740992.0},  // Ties to even, like strtod.
      {"3.14159265358979323846", 3.14159265358979323846},
      {"123456789012345678901234567890", 123456789012345678901234567890.0},
  };
  for (const Case& c : cases) {
    double v = 7;
    EXPECT_TRUE(ParseDouble(c.in, &v)) << c.in;
    EXPECT_EQ(v, c.want) << c.in;
  }
  double v = 7;
  ASSERT_TRUE(ParseDouble("-0", &v));
  EXPECT_TRUE(v == 0 && std::signbit(v));
}

TEST(ParseDoubleTest, Rejects) {
  const std::string cases[] = {
      "",
      " 1",
      "\t1",
      "1 ",
      "1\n",
      "nan",
      "NaN",
      "-nan",
      "1e400",
      "-1e400",
      "1e-400",  // Underflow to zero.
      "1e",
      "e5",
      ".",
      "-",
      "+",
      "abc",
      "1,5",
      "1.5.5",
      "--1",
      std::string("1\0", 2),
      std::string("1\0"
                  "5",
                  3),
  };
  for (const std::string& c : cases) {
    double v = 7;
    EXPECT_FALSE(ParseDouble(c, &v)) << c;
    EXPECT_EQ(v, 7) << "output written on failure for " << c;
  }
}

// Redis's string2d written the obvious way, as the oracle for the fast path.
bool ReferenceParseDouble(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (std::isspace(static_cast<unsigned char>(s[0])) || end != s.c_str() + s.size() ||
      (errno == ERANGE && (std::isinf(v) || v == 0)) || std::isnan(v)) {
    return false;
  }
  *out = v;
  return true;
}

void ExpectSameAsReference(const std::string& s) {
  double got = 0, want = 0;
  const bool ok = ParseDouble(s, &got);
  ASSERT_EQ(ok, ReferenceParseDouble(s, &want)) << s;
  if (ok) {
    // Compare bits so that -0.0 vs 0.0 also counts.
    ASSERT_EQ(std::memcmp(&got, &want, sizeof(double)), 0) << s;
  }
}

TEST(ParseDoubleTest, MatchesStrtodOnRandomNumerals) {
  std::mt19937_64 rng(7);
  static const char kAlphabet[] = "0123456789.eE+-0000111999 xin";
  for (int i = 0; i < 200000; ++i) {
    std::string s;
    const int len = 1 + static_cast<int>(rng() % 24);
    for (int j = 0; j < len; ++j) s += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
    ExpectSameAsReference(s);
  }
}

TEST(ParseDoubleTest, MatchesStrtodOnPrintedDoubles) {
  std::mt19937_64 rng(11);
  char buf[64];
  const char* formats[] = {"%.17g", "%.3g", "%.25e", "%.1f", "%a", "%.0f"};
  for (int i = 0; i < 50000; ++i) {
    double d;
    const uint64_t bits = rng();
    std::memcpy(&d, &bits, sizeof(d));
    if (std::isnan(d)) continue;
    for (const char* f : formats) {
      std::snprintf(buf, sizeof(buf), f, d);
      ExpectSameAsReference(buf);
    }
  }
}

TEST(ParseLongDoubleTest, AcceptsAndRejects) {
  long double v = 0;
  EXPECT_TRUE(ParseLongDouble("1.5", &v));
  EXPECT_EQ(v, 1.5L);
  EXPECT_TRUE(ParseLongDouble("1e-400", &v));  // Fine in x87 range.
  EXPECT_GT(v, 0);
  EXPECT_TRUE(ParseLongDouble("1e4000", &v));
  EXPECT_TRUE(ParseLongDouble("1e-4940", &v));  // Subnormal long double.
  EXPECT_TRUE(ParseLongDouble("0e-5000", &v));
  EXPECT_TRUE(ParseLongDouble("0x1p-3", &v));
  EXPECT_EQ(v, 0.125L);
  EXPECT_TRUE(ParseLongDouble("inf", &v));
  EXPECT_TRUE(std::isinf(v));
  EXPECT_TRUE(ParseLongDouble("-Infinity", &v));
  EXPECT_TRUE(ParseLongDouble("1." + std::string(5117, '0'), &v));  // 5119 bytes.
  EXPECT_EQ(v, 1.0L);

  for (const std::string& bad :
       {std::string(""), std::string("nan"), std::string(" 1"), std::string("\t1"),
        std::string("1 "), std::string("1e5000"), std::string("1e-4960"), std::string("1e"),
        std::string("1\0abc", 5), "1." + std::string(5118, '0')}) {  // 5120 bytes.
    long double w = 7;
    EXPECT_FALSE(ParseLongDouble(bad, &w)) << bad.substr(0, 20) << " len " << bad.size();
    EXPECT_EQ(w, 7);
  }
}

TEST(FormatDoubleTest, MatchesRedisScoreReplies) {
  struct Case {
    double in;
    const char* want;
  };
  const Case cases[] = {
      {1.5, "1.5"},
      {1.1, "1.1000000000000001"},
      {1, "1"},
      {100, "100"},
      {-1.5, "-1.5"},
      {0, "0"},
      {-0.0, "-0"},
      {0.1, "0.10000000000000001"},
      {1e-5, "1.0000000000000001e-05"},
      {1e-300, "1e-300"},
      {1e15, "1000000000000000"},
      {1e16, "10000000000000000"},
      {1e17, "1e+17"},
      {1e20, "1e+20"},
      {1e21, "1e+21"},
      {123456789012345678.0, "1.2345678901234568e+17"},
      {12345678901234567890.0, "1.2345678901234567e+19"},
      {4.9e-324, "4.9406564584124654e-324"},
      {2e-320, "1.999977734365366e-320"},
      {0.30000000000000004, "0.30000000000000004"},
      {4503599627370495.5, "4503599627370495.5"},
      {-4503599627370495.0, "-4503599627370495"},
      {3.14159265358979323846, "3.1415926535897931"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-std::numeric_limits<double>::infinity(), "-inf"},
      {std::numeric_limits<double>::quiet_NaN(), "nan"},
      {-std::numeric_limits<double>::max(), "-1.7976931348623157e+308"},
      {-std::numeric_limits<double>::min(), "-2.2250738585072014e-308"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatDouble(c.in), c.want);
  }
}

TEST(FormatDoubleTest, MatchesPrintfAndRoundTrips) {
  std::mt19937_64 rng(3);
  char want[64];
  char got[kMaxDoubleChars];
  for (int i = 0; i < 200000; ++i) {
    double d;
    if (i % 2 == 0) {
      const uint64_t bits = rng();
      std::memcpy(&d, &bits, sizeof(d));
    } else {
      // Small integers and short decimals, the common score shapes.
      d = static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000) /
          static_cast<double>(1 + rng() % 1000);
    }
    if (std::isnan(d) || std::isinf(d)) continue;
    std::snprintf(want, sizeof(want), "%.17g", d);
    const size_t n = FormatDouble(d, got);
    ASSERT_LE(n, kMaxDoubleChars);
    ASSERT_EQ(std::string(got, n), want);
    double back;
    ASSERT_TRUE(ParseDouble(std::string_view(got, n), &back)) << want;
    ASSERT_EQ(std::memcmp(&back, &d, sizeof(d)), 0) << want;
  }
}

// INCRBYFLOAT key <inc> on a key holding <base>, as Redis computes it.
std::string IncrByFloat(const char* base, const char* inc) {
  long double a = 0, b = 0;
  EXPECT_TRUE(ParseLongDouble(base, &a)) << base;
  EXPECT_TRUE(ParseLongDouble(inc, &b)) << inc;
  return FormatLongDouble(a + b);
}

TEST(FormatLongDoubleTest, MatchesRedisIncrByFloat) {
  struct Case {
    const char* base;
    const char* inc;
    const char* want;
  };
  const Case cases[] = {
      {"10.5", "0.1", "10.6"},
      {"5.0e3", "0", "5000"},
      {"3.0e3", "2.0e3", "5000"},
      {"0.1", "0.2", "0.3"},
      {"-5", "0.5", "-4.5"},
      {"0", "1.5e1", "15"},
      {"0", "0x10", "16"},
      {"0", "1.23456789012345678", "1.23456789012345678"},
      {"0", "100000000000000000000000", "100000000000000000000000"},
      {"0", "1e-17", "0.00000000000000001"},
      {"1.5", "1e-20", "1.5"},
      {"0", "-1e-20", "0"},
      {"0", "-0.1", "-0.1"},
      {"-1.1", "-2.2", "-3.3"},
      {"0", "3.0000000000000000001", "3"},
      {"10", "-10", "0"},
      {"0", "123456789.123456789", "123456789.12345678899873747"},
      {"0", "0.00000000000000000999", "0.00000000000000001"},
      {"0", "0.000000000000000005", "0"},
      {"0", "0.000000000000000015", "0.00000000000000002"},
      {"1", "0.99999999999999999999", "2"},
      {"0", "1e19", "10000000000000000000"},
      {"0", "9223372036854775807", "9223372036854775807"},
      {"0", "1e-4940", "0"},
      {"0", "1e308",
       "999999999999999999966858796558456456605600998474155672077970479949217348688380618721001269"
       "218885393204467472250540132231521347495939605835974208144301964187679591000196031907786631"
       "096045071066679391533957889389145605435630612683649016186302170865892534448816237913008557"
       "57318142424510452728255046343928578048"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(IncrByFloat(c.base, c.inc), c.want) << c.base << " + " << c.inc;
  }

  // Huge magnitudes print every integer digit (Redis replies with 4000 and
  // 4934 bytes for these).
  const std::string big = IncrByFloat("0", "1e4000");
  EXPECT_EQ(big.size(), 4000u);
  EXPECT_EQ(big.substr(0, 24), "999999999999999999996546");
  const std::string most = IncrByFloat("0", "-1.18e4932");
  EXPECT_EQ(most.size(), 4934u);
  EXPECT_EQ(most.substr(0, 24), "-11800000000000000000006");
}

TEST(FormatLongDoubleTest, Specials) {
  EXPECT_EQ(FormatLongDouble(0.0L), "0");
  EXPECT_EQ(FormatLongDouble(-0.0L), "0");
  EXPECT_EQ(FormatLongDouble(std::numeric_limits<long double>::infinity()), "inf");
  EXPECT_EQ(FormatLongDouble(-std::numeric_limits<long double>::infinity()), "-inf");
  EXPECT_EQ(FormatLongDouble(std::numeric_limits<long double>::quiet_NaN()), "nan");
  EXPECT_EQ(FormatLongDouble(-std::numeric_limits<long double>::max()).size(), 4934u);
}

}  // namespace
}  // namespace lavik
