#include "observability/observability.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "base/clock.h"
#include "base/log.h"
#include "client/client_state.h"
#include "config/config.h"
#include "config/config_registry.h"

namespace lavik {
namespace {

int64_t ToInt(const std::string* v, int64_t dflt) {
  return v == nullptr ? dflt : std::strtoll(v->c_str(), nullptr, 10);
}

}  // namespace

Observability::Observability(const CommandTable& table, int workers) : stats(table, workers) {}

void Observability::WireConfig(ConfigRegistry* registry) {
  slowlog.set_threshold_us(ToInt(registry->Value("slowlog-log-slower-than"), 10000));
  slowlog.set_max_len(ToInt(registry->Value("slowlog-max-len"), 128));
  latency.set_threshold_ms(ToInt(registry->Value("latency-monitor-threshold"), 0));
  if (const std::string* v = registry->Value("latency-tracking")) {
    stats.set_latency_tracking(*v == "yes");
  }
  if (const std::string* v = registry->Value("latency-tracking-info-percentiles")) {
    stats.set_percentiles(*v);
  }
  UpdateSlowThreshold();
  registry->OnChange("slowlog-log-slower-than", [this](std::string_view v) {
    slowlog.set_threshold_us(std::strtoll(std::string(v).c_str(), nullptr, 10));
    UpdateSlowThreshold();
    return Status::Ok();
  });
  registry->OnChange("slowlog-max-len", [this](std::string_view v) {
    slowlog.set_max_len(std::strtoll(std::string(v).c_str(), nullptr, 10));
    return Status::Ok();
  });
  registry->OnChange("latency-monitor-threshold", [this](std::string_view v) {
    latency.set_threshold_ms(std::strtoll(std::string(v).c_str(), nullptr, 10));
    UpdateSlowThreshold();
    return Status::Ok();
  });
  registry->OnChange("latency-tracking", [this](std::string_view v) {
    stats.set_latency_tracking(v == "yes");
    return Status::Ok();
  });
  registry->OnChange("latency-tracking-info-percentiles", [this](std::string_view v) {
    stats.set_percentiles(v);
    return Status::Ok();
  });
}

void Observability::UpdateSlowThreshold() {
  int64_t ns = INT64_MAX;
  const int64_t slow_us = slowlog.threshold_us();
  if (slow_us >= 0 && slow_us < INT64_MAX / 1000) ns = slow_us * 1000;
  const int64_t lat_ms = latency.threshold_ms();
  if (lat_ms > 0 && lat_ms < INT64_MAX / 1000000) ns = std::min(ns, lat_ms * 1000000);
  slow_ns_.store(ns, std::memory_order_relaxed);
}

void Observability::Slow(const CommandSpec* spec, const ClientState* client,
                         std::span<const std::string_view> args, int64_t ns) {
  Slow(spec, client->conn->peer(), client->name, args, ns);
}

void Observability::Slow(const CommandSpec* spec, std::string_view peer, std::string_view name,
                         std::span<const std::string_view> args, int64_t ns) {
  const int64_t now_s = NowMs() / 1000;
  const int64_t us = ns / 1000;
  const int64_t slow_us = slowlog.threshold_us();
  if (slow_us >= 0 && us >= slow_us) {
    slowlog.Push(args, us, now_s, peer, name);
  }
  const int64_t lat_ms = latency.threshold_ms();
  if (lat_ms > 0 && ns / 1000000 >= lat_ms) {
    latency.AddSample((spec->flags & kCmdFast) ? "fast-command" : "command", now_s, ns / 1000000);
  }
}

bool Observability::BindMetrics(const Config& config, std::string* error) {
  if (config.metrics_port == 0) return true;
  const std::string address = config.bind.substr(0, config.bind.find(' '));
  if (!metrics.Bind(address, config.metrics_port, error)) {
    *error = "could not listen for metrics on " + *error;
    return false;
  }
  LogNotice("Serving Prometheus metrics on http://" + address + ":" +
            std::to_string(metrics.port()) + "/metrics");
  return true;
}

}  // namespace lavik
