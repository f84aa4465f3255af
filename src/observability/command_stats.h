// CommandStats: per-command statistics as Redis keeps them (calls, time, rejected and failed
// calls, a latency histogram) and error-reply counts by error code, for INFO commandstats /
// errorstats / latencystats, CONFIG RESETSTAT and the Prometheus endpoint.
//
// Every worker owns one table: the request path adds to its own worker's counters with plain
// relaxed stores (StatCounter), so there is no lock, no locked instruction and no cache line
// shared between workers. Readers (INFO, /metrics) sum the tables while the workers run; each
// counter they read is some recent value of it.
//
// Time is wall time from dispatch to the reply being complete, so it includes waiting for the
// device and hops to other workers; Redis's usec counts only the command's execution.
//
// Thread safety: Record*/ResetWorker on the worker that owns table `worker` only; readers and
// the setters from any thread. Command ids are fixed at construction.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/flat_map.h"
#include "commands/command.h"
#include "commands/command_table.h"
#include "observability/latency_histogram.h"
#include "protocol/reply_writer.h"

namespace lavik {

class CommandStats {
 public:
  // Redis keeps at most this many distinct error codes; later new codes are not tracked
  // (total_error_replies still counts them).
  static constexpr int kMaxErrorCodes = 128;

  CommandStats(const CommandTable& table, int workers);
  ~CommandStats();
  CommandStats(const CommandStats&) = delete;
  CommandStats& operator=(const CommandStats&) = delete;

  // The stats id of a command or subcommand spec of the table; -1 if it is not in the table.
  int IdOf(const CommandSpec* spec) const;
  int size() const { return static_cast<int>(specs_.size()); }
  const CommandSpec& spec(int id) const { return *specs_[id]; }

  // --- Owner worker only ---
  void RecordCall(int worker, int id, int64_t ns, bool failed);
  void RecordRejected(int worker, int id);
  // Where a ReplyWriter reports the error replies written on this worker.
  ErrorSink* error_sink(int worker);
  void ResetWorker(int worker);

  // --- Any thread ---
  void set_latency_tracking(bool on) { tracking_.store(on, std::memory_order_relaxed); }
  bool latency_tracking() const { return tracking_.load(std::memory_order_relaxed); }
  // latency-tracking-info-percentiles, as CONFIG stores it ("50 99 99.9").
  void set_percentiles(std::string_view text);
  std::vector<double> percentiles() const;

  struct Totals {
    uint64_t calls = 0;
    uint64_t ns = 0;
    uint64_t rejected = 0;
    uint64_t failed = 0;
    std::vector<uint64_t> histogram;  // summed buckets; empty if the command never ran
  };
  // Summed over the workers, by id.
  Totals CommandTotals(int id, bool with_histogram) const;
  // Error codes with a nonzero count, summed over workers, sorted by code.
  std::vector<std::pair<std::string, uint64_t>> ErrorCounts() const;
  uint64_t total_error_replies() const;
  uint64_t worker_calls(int worker) const;

  // Appends the INFO sections that are wanted, in Redis 7.0's formats (each with its header and
  // a trailing blank line).
  void AppendInfo(bool commandstats, bool errorstats, bool latencystats, std::string* out) const;

 private:
  struct PerCommand;
  struct Table;

  std::vector<const CommandSpec*> specs_;  // by id
  // The spec's address, mixed (SpecKey), to its id: a lookup on every command, one probe or two.
  FlatMap<int> ids_;
  std::vector<std::unique_ptr<Table>> tables_;
  std::atomic<bool> tracking_{true};
  mutable std::mutex percentiles_mu_;
  std::vector<double> percentiles_{50, 99, 99.9};
};

// The percentile as Redis prints it in latencystats: "%f" with trailing zeros trimmed
// (50 -> "50", 99.9 -> "99.9").
std::string FormatPercentileLabel(double p);

}  // namespace lavik
