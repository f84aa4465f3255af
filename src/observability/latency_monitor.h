// LatencyMonitor: Redis's latency monitor (LATENCY LATEST / HISTORY / RESET). Each event
// ("command", "fast-command") keeps its latest 160 samples, one per second at most (a later
// sample in the same second keeps the larger latency), and its all-time maximum.
//
// Thread safety: any thread. The threshold is an atomic the request path reads; samples are
// added under a mutex, only by commands at least latency-monitor-threshold ms long.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lavik {

class LatencyMonitor {
 public:
  static constexpr int kSamples = 160;

  struct Latest {
    std::string event;
    int64_t time_s;
    int64_t latest_ms;
    int64_t max_ms;
  };

  // latency-monitor-threshold in milliseconds; 0 disables the monitor.
  void set_threshold_ms(int64_t ms) { threshold_ms_.store(ms, std::memory_order_relaxed); }
  int64_t threshold_ms() const { return threshold_ms_.load(std::memory_order_relaxed); }

  void AddSample(std::string_view event, int64_t time_s, int64_t latency_ms);
  // Every event's latest sample and maximum, by event name.
  std::vector<Latest> LatestAll() const;
  // The event's samples, oldest first, as (Unix time, ms); empty for an unknown event.
  std::vector<std::pair<int64_t, int64_t>> History(std::string_view event) const;
  // Drops the named events (all if none are named); returns how many existed.
  int Reset(std::span<const std::string_view> events);

 private:
  struct Series {
    struct Sample {
      int64_t time_s = 0;  // 0 = unused
      int64_t ms = 0;
    };
    std::array<Sample, kSamples> samples{};
    int next = 0;
    int64_t max_ms = 0;
  };

  std::atomic<int64_t> threshold_ms_{0};
  mutable std::mutex mu_;
  std::map<std::string, Series, std::less<>> events_;
};

}  // namespace lavik
