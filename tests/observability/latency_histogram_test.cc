#include "observability/latency_histogram.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace lavik {
namespace {

TEST(LatencyHistogramTest, BucketsCoverValuesWithSmallRelativeWidth) {
  for (uint64_t v : {0ull, 1ull, 63ull, 64ull, 65ull, 127ull, 128ull, 1000ull, 123456ull,
                     (1ull << 36) + 12345}) {
    const int b = LatencyHistogram::BucketOf(v);
    ASSERT_GE(b, 0);
    ASSERT_LT(b, LatencyHistogram::kBuckets);
    const uint64_t lo = LatencyHistogram::BucketLow(b);
    const uint64_t width = LatencyHistogram::BucketWidth(b);
    EXPECT_LE(lo, v) << v;
    EXPECT_LT(v, lo + width) << v;
    if (v >= 64) {
      EXPECT_LE(static_cast<double>(width) / static_cast<double>(lo), 1.0 / 64) << v;
    }
  }
  // Buckets are contiguous.
  for (int b = 0; b + 1 < LatencyHistogram::kBuckets; ++b) {
    ASSERT_EQ(LatencyHistogram::BucketLow(b) + LatencyHistogram::BucketWidth(b),
              LatencyHistogram::BucketLow(b + 1))
        << b;
  }
  EXPECT_EQ(LatencyHistogram::BucketOf(uint64_t{1} << 50), LatencyHistogram::kBuckets - 1);
}

TEST(LatencyHistogramTest, PercentilesWithinOnePercent) {
  LatencyHistogram h;
  EXPECT_EQ(h.ValueAtPercentile(50), 0);
  std::mt19937_64 rng(7);
  std::vector<uint64_t> values;
  for (int i = 0; i < 10000; ++i) {
    uint64_t v = 1000 + rng() % 5000000;
    values.push_back(v);
    h.Record(v);
  }
  std::sort(values.begin(), values.end());
  EXPECT_EQ(h.Count(), 10000u);
  for (double p : {1.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    size_t rank = static_cast<size_t>(std::ceil(p / 100 * values.size()));
    double exact = static_cast<double>(values[rank - 1]);
    EXPECT_NEAR(h.ValueAtPercentile(p), exact, exact * 0.01) << p;
  }
  h.Reset();
  EXPECT_EQ(h.Count(), 0u);
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  LatencyHistogram h;
  h.Record(5);
  h.Record(7);
  EXPECT_EQ(h.ValueAtPercentile(50), 5);
  EXPECT_EQ(h.ValueAtPercentile(100), 7);
}

// LATENCY HISTOGRAM's levels: 1024·2^k ns keyed by HdrHistogram's highest equivalent value in µs.
TEST(LatencyHistogramTest, CumulativeUsecAtRedisLevels) {
  LatencyHistogram h;
  std::vector<uint64_t> sums;
  h.AddTo(&sums);
  EXPECT_TRUE(LatencyHistogram::CumulativeUsec(sums).empty());
  h.Record(300);            // under 1024 ns: the first level
  h.Record(15000);          // the 16 µs level (up to 16511 ns)
  h.Record(15500);          //
  h.Record(40000);          // the 66 µs level (33024..66047 ns)
  h.Record(5000000000ULL);  // 5 s: clamped into the last level, as Redis clamps at 1 s
  sums.clear();
  h.AddTo(&sums);
  using Cdf = std::vector<std::pair<int64_t, uint64_t>>;
  EXPECT_EQ(LatencyHistogram::CumulativeUsec(sums), (Cdf{{1, 1}, {16, 3}, {66, 4}, {1082130, 5}}));
}

}  // namespace
}  // namespace lavik
