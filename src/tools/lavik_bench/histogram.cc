#include "tools/lavik_bench/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace lavik::bench {

size_t LatencyHistogram::BucketIndex(uint64_t us) {
  if (us > kMaxTrackableUs) us = kMaxTrackableUs;
  if (us < kLinearLimit) return static_cast<size_t>(us);
  // m >= kSubBucketBits + 1: the position of the leading 1 bit.
  const int m = std::bit_width(us) - 1;
  const int shift = m - kSubBucketBits;
  const uint64_t mantissa = us >> shift;  // in [kSubBucketCount, 2 * kSubBucketCount)
  return kLinearLimit + static_cast<size_t>(m - kSubBucketBits - 1) * kSubBucketCount +
         static_cast<size_t>(mantissa - kSubBucketCount);
}

uint64_t LatencyHistogram::BucketLowest(size_t index) {
  if (index < kLinearLimit) return index;
  const size_t rel = index - kLinearLimit;
  const int shift = static_cast<int>(rel / kSubBucketCount) + 1;
  const uint64_t mantissa = kSubBucketCount + rel % kSubBucketCount;
  return mantissa << shift;
}

uint64_t LatencyHistogram::BucketHighest(size_t index) {
  if (index < kLinearLimit) return index;
  const size_t rel = index - kLinearLimit;
  const int shift = static_cast<int>(rel / kSubBucketCount) + 1;
  return BucketLowest(index) + (uint64_t{1} << shift) - 1;
}

void LatencyHistogram::Reset() {
  counts_.fill(0);
  count_ = 0;
  clamped_ = 0;
  min_ = 0;
  max_ = 0;
  sum_ = 0;
}

void LatencyHistogram::Record(int64_t us) {
  uint64_t v = us < 0 ? 0 : static_cast<uint64_t>(us);
  if (v > kMaxTrackableUs) {
    v = kMaxTrackableUs;
    ++clamped_;
  }
  ++counts_[BucketIndex(v)];
  if (count_ == 0 || v < min_) min_ = v;
  if (v > max_) max_ = v;
  ++count_;
  sum_ += v;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < kBucketCount; ++i) counts_[i] += other.counts_[i];
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
  clamped_ += other.clamped_;
  sum_ += other.sum_;
}

uint64_t LatencyHistogram::ValueAtPercentile(double q) const {
  if (count_ == 0) return 0;
  if (q >= 100.0) return max_;
  if (q < 0.0) q = 0.0;
  // The rank of the sample at q: at least one sample, so q = 0 gives the minimum.
  uint64_t rank = static_cast<uint64_t>(std::ceil(q / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < kBucketCount; ++i) {
    seen += counts_[i];
    // Never report beyond the exact maximum (the top bucket may be wider than what it holds).
    if (seen >= rank) return std::min(BucketHighest(i), max_);
  }
  return max_;
}

}  // namespace lavik::bench
