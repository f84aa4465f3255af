#include "observability/latency_monitor.h"

namespace lavik {

void LatencyMonitor::AddSample(std::string_view event, int64_t time_s, int64_t latency_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) it = events_.emplace(std::string(event), Series{}).first;
  Series& s = it->second;
  if (latency_ms > s.max_ms) s.max_ms = latency_ms;
  Series::Sample& prev = s.samples[(s.next + kSamples - 1) % kSamples];
  if (prev.time_s == time_s) {
    if (latency_ms > prev.ms) prev.ms = latency_ms;
    return;
  }
  s.samples[s.next] = {time_s, latency_ms};
  s.next = (s.next + 1) % kSamples;
}

std::vector<LatencyMonitor::Latest> LatencyMonitor::LatestAll() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Latest> out;
  for (const auto& [name, s] : events_) {
    const Series::Sample& last = s.samples[(s.next + kSamples - 1) % kSamples];
    out.push_back({name, last.time_s, last.ms, s.max_ms});
  }
  return out;
}

std::vector<std::pair<int64_t, int64_t>> LatencyMonitor::History(std::string_view event) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<int64_t, int64_t>> out;
  auto it = events_.find(event);
  if (it == events_.end()) return out;
  const Series& s = it->second;
  for (int j = 0; j < kSamples; ++j) {
    const Series::Sample& x = s.samples[(s.next + j) % kSamples];
    if (x.time_s != 0) out.emplace_back(x.time_s, x.ms);
  }
  return out;
}

int LatencyMonitor::Reset(std::span<const std::string_view> events) {
  std::lock_guard<std::mutex> lock(mu_);
  if (events.empty()) {
    int n = static_cast<int>(events_.size());
    events_.clear();
    return n;
  }
  int n = 0;
  for (std::string_view e : events) {
    auto it = events_.find(e);
    if (it != events_.end()) {
      events_.erase(it);
      ++n;
    }
  }
  return n;
}

}  // namespace lavik
