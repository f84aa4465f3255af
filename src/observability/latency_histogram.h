// LatencyHistogram: a log-linear histogram of durations in nanoseconds, for INFO latencystats,
// LATENCY-style percentiles and the Prometheus summary.
//
// Layout: values below 64 ns have a bucket each; above, every power-of-two range [2^e, 2^(e+1))
// is cut into 64 equal buckets, up to 2^37 ns (~137 s; longer values land in the last bucket).
// A bucket's width is at most 1/64 of its lower bound and a percentile reports the bucket's
// midpoint, so the error is at most 1/128 (< 1%). 2048 buckets, 16 KiB: allocated per command
// and worker only when the command first runs there.
//
// Thread safety: one writer (the owning worker) and any number of readers. Counts are relaxed
// atomics written with a plain load+store (no locked instruction), as StatCounter; a reader sees
// each bucket's count at some recent moment, which is all a percentile needs.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

namespace lavik {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;  // buckets per power of two
  static constexpr int kMaxExp = 37;          // values up to 2^37 ns
  static constexpr int kBuckets = kSub + (kMaxExp - kSubBits) * kSub;

  // Bucket of a value (clamped to the last bucket).
  static int BucketOf(uint64_t ns) {
    if (ns < static_cast<uint64_t>(kSub)) return static_cast<int>(ns);
    const int e = 63 - __builtin_clzll(ns);
    if (e >= kMaxExp) return kBuckets - 1;
    const int sub = static_cast<int>((ns >> (e - kSubBits)) - kSub);
    return kSub + (e - kSubBits) * kSub + sub;
  }
  // Smallest value of a bucket, and its width.
  static uint64_t BucketLow(int b) {
    if (b < kSub) return static_cast<uint64_t>(b);
    const int e = kSubBits + (b - kSub) / kSub;
    const uint64_t sub = static_cast<uint64_t>((b - kSub) % kSub);
    return (uint64_t{1} << e) + (sub << (e - kSubBits));
  }
  static uint64_t BucketWidth(int b) {
    if (b < kSub) return 1;
    return uint64_t{1} << (kSubBits + (b - kSub) / kSub - kSubBits);
  }

  // Owner thread.
  void Record(uint64_t ns) {
    std::atomic<uint64_t>& c = counts_[BucketOf(ns)];
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void Reset() {
    for (auto& c : counts_) c.store(0, std::memory_order_relaxed);
  }

  // Any thread.
  uint64_t Count() const;
  // The value (ns) at percentile p (0..100]: the midpoint of the bucket holding the
  // ceil(p% of count)-th smallest sample (exact below 64 ns). 0 if empty.
  double ValueAtPercentile(double p) const;
  // Adds this histogram's counts into `sums` (kBuckets entries).
  void AddTo(std::vector<uint64_t>* sums) const;
  // The same percentile over summed counts (several workers' histograms).
  static double PercentileOf(const std::vector<uint64_t>& sums, double p);
  // LATENCY HISTOGRAM's cumulative distribution of summed counts, as Redis 7.0 reports its
  // HdrHistogram (two significant digits, 1024 ns to 1 s): at the levels 1024·2^k ns, the count
  // of durations up to the level's highest equivalent value, keyed by that value in µs (1, 2, 4,
  // 8, 16, 33, 66...); only levels where the count grows. Durations under 1024 ns count in the
  // first level and those over 1 s in the last, as Redis clamps them.
  static std::vector<std::pair<int64_t, uint64_t>> CumulativeUsec(
      const std::vector<uint64_t>& sums);

 private:
  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
};

}  // namespace lavik
