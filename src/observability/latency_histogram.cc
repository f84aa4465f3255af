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

std::vector<std::pair<int64_t, uint64_t>> LatencyHistogram::CumulativeUsec(
    const std::vector<uint64_t>& sums) {
  std::vector<std::pair<int64_t, uint64_t>> out;
  uint64_t total = 0;
  for (uint64_t c : sums) total += c;
  if (total == 0) return out;
  constexpr int kLastLevel = 20;  // 2^30 ns: the level holding Redis's 1 s ceiling
  uint64_t cumulative = 0;
  uint64_t previous = 0;
  size_t b = 0;
  for (int k = 0; k <= kLastLevel && cumulative < total; ++k) {
    // 1024·2^k ns and the values HdrHistogram holds as equal to it (1/128 of it more).
    const uint64_t bound = (uint64_t{1} << (10 + k)) + (uint64_t{1} << (3 + k));
    while (b < sums.size() && (k == kLastLevel || BucketLow(static_cast<int>(b)) < bound)) {
      cumulative += sums[b++];
    }
    if (cumulative > previous) {
      out.emplace_back(static_cast<int64_t>((bound - 1) / 1000), cumulative);
    }
    previous = cumulative;
  }
  return out;
}

}  // namespace lavik
