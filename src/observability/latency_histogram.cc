#include "observability/latency_histogram.h"

#include <cmath>

namespace lavik {

uint64_t LatencyHistogram::Count() const {
  uint64_t n = 0;
  for (const auto& c : counts_) n += c.load(std::memory_order_relaxed);
  return n;
}

void LatencyHistogram::AddTo(std::vector<uint64_t>* sums) const {
  sums->resize(kBuckets, 0);
  for (int b = 0; b < kBuckets; ++b) (*sums)[b] += counts_[b].load(std::memory_order_relaxed);
}

double LatencyHistogram::ValueAtPercentile(double p) const {
  std::vector<uint64_t> sums;
  AddTo(&sums);
  return PercentileOf(sums, p);
}

double LatencyHistogram::PercentileOf(const std::vector<uint64_t>& sums, double p) {
  uint64_t total = 0;
  for (uint64_t c : sums) total += c;
  if (total == 0) return 0;
  // The rank of the sample that p% of the samples are at or below (at least the first).
  uint64_t rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(total)));
  if (rank < 1) rank = 1;
  if (rank > total) rank = total;
  uint64_t seen = 0;
  for (int b = 0; b < static_cast<int>(sums.size()); ++b) {
    seen += sums[b];
    if (seen >= rank) {
      if (b < kSub) return static_cast<double>(b);
      return static_cast<double>(BucketLow(b)) + static_cast<double>(BucketWidth(b)) / 2.0;
    }
  }
  return 0;
}

}  // namespace lavik
