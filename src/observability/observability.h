// Observability: what the server records about the commands it runs — per-command statistics
// (command_stats.h), the slow log (slowlog.h), the latency monitor (latency_monitor.h) — and the
// Prometheus endpoint (metrics_http.h). The dispatcher calls CommandRejected / CommandDone; the
// CONFIG parameters that steer them are wired to the registry here.
//
// The request path pays one or two clock readings (server/dispatcher.cc: a pipelined command
// starts where the previous one ended), a few relaxed counter updates on its own worker, a
// binary search for the command's id and one comparison against the smallest slow threshold;
// only commands above it take a lock (slow log, latency monitor).
//
// Thread safety: CommandRejected/CommandDone run on the worker named by `worker`; everything else
// may be called from any thread (the registry hooks run under the server's CONFIG mutex).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "commands/command.h"
#include "observability/command_stats.h"
#include "observability/latency_monitor.h"
#include "observability/metrics_http.h"
#include "observability/slowlog.h"

namespace lavik {

class ClientState;
class ConfigRegistry;
struct Config;

class Observability {
 public:
  Observability(const CommandTable& table, int workers);

  // Takes the current values of slowlog-log-slower-than, slowlog-max-len,
  // latency-monitor-threshold, latency-tracking and latency-tracking-info-percentiles and follows
  // their CONFIG SET changes.
  void WireConfig(ConfigRegistry* registry);

  // Worker `worker`: a command refused before it ran (arity, NOAUTH).
  void CommandRejected(int worker, const CommandSpec* spec) {
    stats.RecordRejected(worker, stats.IdOf(spec));
  }
  // Worker `worker` (the client's): the reply of a command that started at `start_ns`
  // (MonotonicNs) is complete. `failed`: it replied with an error. Returns the clock reading
  // taken for it (MonotonicNs), for the caller to start the client's next command at.
  int64_t CommandDone(int worker, const CommandSpec* spec, const ClientState* client,
                      std::span<const std::string_view> args, int64_t start_ns, bool failed) {
    const int64_t now = MonotonicNs();
    const int64_t ns = now - start_ns;
    stats.RecordCall(worker, stats.IdOf(spec), ns, failed);
    if (ns >= slow_ns_.load(std::memory_order_relaxed)) Slow(spec, client, args, ns);
    return now;
  }
  // The same from the worker that ran the command (not the client's), for a reply it sent itself
  // (Connection::LendSocket): records the call unless it is slow enough for the slow log or the
  // latency monitor, whose entries read the client; then it records nothing and returns false,
  // and the caller leaves the reply to the client's worker, which calls CommandDone.
  bool CommandDoneAway(int worker, const CommandSpec* spec, int64_t start_ns, bool failed) {
    const int64_t ns = MonotonicNs() - start_ns;
    if (ns >= slow_ns_.load(std::memory_order_relaxed)) return false;
    stats.RecordCall(worker, stats.IdOf(spec), ns, failed);
    return true;
  }
  // The same, for a command that ran `ns` on another worker and whose client may be gone (our
  // master's stream run apart): its address and name as SLOWLOG shows them.
  void CommandRanFor(int worker, const CommandSpec* spec, std::string_view peer,
                     std::string_view name, std::span<const std::string_view> args, int64_t ns,
                     bool failed) {
    stats.RecordCall(worker, stats.IdOf(spec), ns, failed);
    if (ns >= slow_ns_.load(std::memory_order_relaxed)) Slow(spec, peer, name, args, ns);
  }

  // With --metrics-port: BindMetrics binds the first --bind address (before the workers start,
  // so a taken port fails start-up), StartMetrics (server/metrics_collect.h) starts the thread once
  // they run.
  bool BindMetrics(const Config& config, std::string* error);
  void StopMetrics() { metrics.Stop(); }

  CommandStats stats;
  SlowLog slowlog;
  LatencyMonitor latency;
  MetricsHttp metrics;

 private:
  void Slow(const CommandSpec* spec, const ClientState* client,
            std::span<const std::string_view> args, int64_t ns);
  void Slow(const CommandSpec* spec, std::string_view peer, std::string_view name,
            std::span<const std::string_view> args, int64_t ns);
  void UpdateSlowThreshold();

  // The smallest duration (ns) either the slow log or the latency monitor wants; INT64_MAX when
  // both are off.
  std::atomic<int64_t> slow_ns_{INT64_MAX};
};

// SLOWLOG, LATENCY (observability_commands.cc).
std::span<const CommandSpec> ObservabilityCommands();

}  // namespace lavik
