// LatencyHistogram: a log-linear (HdrHistogram-style) histogram of latencies in microseconds.
//
// Values 0..255 us each have their own bucket (exact). Above that, every power-of-two range
// [2^m, 2^(m+1)) is split into 128 equal sub-buckets, so a bucket is at most 1/128 (0.78%) of
// the values it holds: any reported percentile is within 0.78% of the true recorded value.
// Values above kMaxTrackableUs (~35 minutes) are clamped to it and counted in clamped().
// The layout is fixed, so two histograms merge by adding counts (one per client thread, merged
// at the end); memory is ~26 KiB and Record never allocates.
//
// Percentiles follow HdrHistogram's convention (as redis-benchmark and memtier_benchmark print
// them): the smallest recorded value v such that at least q% of the samples are <= v, reported
// as the highest value equivalent to v's bucket.
//
// Thread safety: none; one histogram per thread, Merge after the threads have stopped.

#ifndef LAVIK_TOOLS_LAVIK_BENCH_HISTOGRAM_H_
#define LAVIK_TOOLS_LAVIK_BENCH_HISTOGRAM_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace lavik::bench {

class LatencyHistogram {
 public:
  // 128 sub-buckets per power of two: 7 bits of mantissa below the leading 1 bit.
  static constexpr int kSubBucketBits = 7;
  static constexpr uint64_t kSubBucketCount = uint64_t{1} << kSubBucketBits;
  // Values below this (256) are exact: one bucket per microsecond.
  static constexpr uint64_t kLinearLimit = kSubBucketCount * 2;
  // Largest magnitude tracked: values < 2^(kMaxExponent+1) us (2^31 us ~ 35.8 min).
  static constexpr int kMaxExponent = 30;
  static constexpr uint64_t kMaxTrackableUs = (uint64_t{1} << (kMaxExponent + 1)) - 1;
  static constexpr size_t kBucketCount =
      kLinearLimit + (kMaxExponent - kSubBucketBits) * kSubBucketCount;

  LatencyHistogram() { Reset(); }

  // Adds one sample of `us` microseconds (negative values count as 0).
  void Record(int64_t us);

  // Adds every sample of `other` to this histogram.
  void Merge(const LatencyHistogram& other);

  void Reset();

  uint64_t count() const { return count_; }
  uint64_t clamped() const { return clamped_; }
  // Exact extremes and mean of the recorded (clamped) values; 0 when empty.
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_) / count_; }

  // The value at percentile `q` (0..100) in microseconds, see the header comment; 0 when empty.
  // q >= 100 returns the exact maximum.
  uint64_t ValueAtPercentile(double q) const;

  // Bucket arithmetic, public for the tests.
  static size_t BucketIndex(uint64_t us);
  static uint64_t BucketLowest(size_t index);
  static uint64_t BucketHighest(size_t index);

 private:
  std::array<uint64_t, kBucketCount> counts_;
  uint64_t count_ = 0;
  uint64_t clamped_ = 0;
  uint64_t min_ = 0;
  uint64_t max_ = 0;
  uint64_t sum_ = 0;
};

}  // namespace lavik::bench

#endif  // LAVIK_TOOLS_LAVIK_BENCH_HISTOGRAM_H_
