#include "observability/command_stats.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "observability/worker_stats.h"

namespace lavik {

struct CommandStats::PerCommand {
  StatCounter calls;
  StatCounter ns;
  StatCounter rejected;
  StatCounter failed;
  // Created by the owner on the command's first call there; freed with the table.
  std::atomic<LatencyHistogram*> histogram{nullptr};
};

// One worker's counters. It is also the ErrorSink of the ReplyWriters used on that worker.
struct CommandStats::Table final : ErrorSink {
  struct ErrorSlot {
    char code[32];
    size_t len = 0;
    StatCounter count;
  };

  explicit Table(int n) : commands(new PerCommand[n]), size(n) {}
  ~Table() {
    for (int i = 0; i < size; ++i) delete commands[i].histogram.load();
  }

  void OnErrorReply(std::string_view text) override {
    total_errors.Add();
    // The code is the first word, as Redis takes it: up to the first space within 32 bytes;
    // an error without one counts as ERR.
    std::string_view head = text.substr(0, 32);
    size_t space = head.find(' ');
    std::string_view code = space == std::string_view::npos ? "ERR" : head.substr(0, space);
    const int n = error_count.load(std::memory_order_relaxed);
    for (int i = 0; i < n; ++i) {
      if (std::string_view(errors[i].code, errors[i].len) == code) {
        errors[i].count.Add();
        return;
      }
    }
    if (n == kMaxErrorCodes) return;
    // A slot's code is written once, before it is published; readers never see it change.
    std::memcpy(errors[n].code, code.data(), code.size());
    errors[n].len = code.size();
    errors[n].count.Add();
    error_count.store(n + 1, std::memory_order_release);
  }

  std::unique_ptr<PerCommand[]> commands;
  const int size;
  std::array<ErrorSlot, kMaxErrorCodes> errors;
  std::atomic<int> error_count{0};
  StatCounter total_errors;
  StatCounter calls;  // all commands run by this worker's clients (its load)
};

namespace {

// A spec's address as a FlatMap key, its low bits spread: the multiply moves the address's
// varying bits up, the shift brings them back down. Both steps are one-to-one, so two specs
// never share a key.
uint64_t SpecKey(const CommandSpec* spec) {
  const uint64_t h = reinterpret_cast<uintptr_t>(spec) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 32);
}

}  // namespace

CommandStats::CommandStats(const CommandTable& table, int workers) {
  for (const CommandSpec* s : table.all()) {
    specs_.push_back(s);
    for (const CommandSpec& sub : s->subcommands) specs_.push_back(&sub);
  }
  for (int i = 0; i < size(); ++i) ids_.Put(SpecKey(specs_[i]), i);
  for (int w = 0; w < workers; ++w) tables_.push_back(std::make_unique<Table>(size()));
}

CommandStats::~CommandStats() = default;

int CommandStats::IdOf(const CommandSpec* spec) const {
  const int* id = ids_.Find(SpecKey(spec));
  return id != nullptr ? *id : -1;
}

void CommandStats::RecordCall(int worker, int id, int64_t ns, bool failed) {
  Table& t = *tables_[worker];
  t.calls.Add();
  if (id < 0) return;
  PerCommand& c = t.commands[id];
  c.calls.Add();
  c.ns.Add(static_cast<uint64_t>(ns));
  if (failed) c.failed.Add();
  if (tracking_.load(std::memory_order_relaxed)) {
    LatencyHistogram* h = c.histogram.load(std::memory_order_relaxed);
    if (h == nullptr) {
      h = new LatencyHistogram();
      c.histogram.store(h, std::memory_order_release);
    }
    h->Record(static_cast<uint64_t>(ns));
  }
}

ErrorSink* CommandStats::error_sink(int worker) { return tables_[worker].get(); }

void CommandStats::RecordRejected(int worker, int id) {
  if (id >= 0) tables_[worker]->commands[id].rejected.Add();
}

void CommandStats::ResetWorker(int worker) {
  Table& t = *tables_[worker];
  for (int i = 0; i < t.size; ++i) {
    PerCommand& c = t.commands[i];
    c.calls.Reset();
    c.ns.Reset();
    c.rejected.Reset();
    c.failed.Reset();
    // The histogram stays allocated (a reader may hold it); only its counts go.
    if (LatencyHistogram* h = c.histogram.load(std::memory_order_relaxed)) h->Reset();
  }
  const int n = t.error_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) t.errors[i].count.Reset();
  t.total_errors.Reset();
  t.calls.Reset();
}

void CommandStats::set_percentiles(std::string_view text) {
  std::vector<double> ps;
  std::string s(text);
  const char* p = s.c_str();
  while (*p != '\0') {
    char* end = nullptr;
    double v = std::strtod(p, &end);
    if (end == p) break;
    ps.push_back(v);
    p = end;
    while (*p == ' ') ++p;
  }
  std::lock_guard<std::mutex> lock(percentiles_mu_);
  percentiles_ = std::move(ps);
}

std::vector<double> CommandStats::percentiles() const {
  std::lock_guard<std::mutex> lock(percentiles_mu_);
  return percentiles_;
}

CommandStats::Totals CommandStats::CommandTotals(int id, bool with_histogram) const {
  Totals t;
  for (const auto& table : tables_) {
    const PerCommand& c = table->commands[id];
    t.calls += c.calls.Get();
    t.ns += c.ns.Get();
    t.rejected += c.rejected.Get();
    t.failed += c.failed.Get();
    if (with_histogram) {
      if (const LatencyHistogram* h = c.histogram.load(std::memory_order_acquire)) {
        h->AddTo(&t.histogram);
      }
    }
  }
  return t;
}

std::vector<std::pair<std::string, uint64_t>> CommandStats::ErrorCounts() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const auto& table : tables_) {
    const int n = table->error_count.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
      std::string code(table->errors[i].code, table->errors[i].len);
      uint64_t count = table->errors[i].count.Get();
      auto it =
          std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == code; });
      if (it == out.end()) {
        out.emplace_back(std::move(code), count);
      } else {
        it->second += count;
      }
    }
  }
  std::erase_if(out, [](const auto& e) { return e.second == 0; });
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t CommandStats::total_error_replies() const {
  uint64_t n = 0;
  for (const auto& table : tables_) n += table->total_errors.Get();
  return n;
}

uint64_t CommandStats::worker_calls(int worker) const { return tables_[worker]->calls.Get(); }

std::string FormatPercentileLabel(double p) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%f", p);
  std::string s(buf);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

void CommandStats::AppendInfo(bool commandstats, bool errorstats, bool latencystats,
                              std::string* out) const {
  char buf[160];
  if (commandstats) {
    out->append("# Commandstats\r\n");
    for (int id = 0; id < size(); ++id) {
      Totals t = CommandTotals(id, false);
      if (t.calls == 0 && t.rejected == 0 && t.failed == 0) continue;
      const uint64_t usec = t.ns / 1000;
      std::snprintf(buf, sizeof(buf),
                    ":calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,"
                    "failed_calls=%llu\r\n",
                    static_cast<unsigned long long>(t.calls), static_cast<unsigned long long>(usec),
                    t.calls == 0 ? 0.0 : static_cast<double>(usec) / static_cast<double>(t.calls),
                    static_cast<unsigned long long>(t.rejected),
                    static_cast<unsigned long long>(t.failed));
      out->append("cmdstat_").append(specs_[id]->name).append(buf);
    }
    out->append("\r\n");
  }
  if (errorstats) {
    out->append("# Errorstats\r\n");
    for (const auto& [code, count] : ErrorCounts()) {
      out->append("errorstat_").append(code).append(":count=").append(std::to_string(count));
      out->append("\r\n");
    }
    out->append("\r\n");
  }
  if (latencystats) {
    out->append("# Latencystats\r\n");
    if (latency_tracking()) {
      const std::vector<double> ps = percentiles();
      for (int id = 0; id < size(); ++id) {
        Totals t = CommandTotals(id, true);
        // Never ran since start-up or the last CONFIG RESETSTAT.
        if (std::all_of(t.histogram.begin(), t.histogram.end(),
                        [](uint64_t c) { return c == 0; })) {
          continue;
        }
        out->append("latency_percentiles_usec_").append(specs_[id]->name).append(":");
        for (size_t i = 0; i < ps.size(); ++i) {
          if (i > 0) out->append(",");
          std::snprintf(buf, sizeof(buf), "=%.3f",
                        LatencyHistogram::PercentileOf(t.histogram, ps[i]) / 1000.0);
          out->append("p").append(FormatPercentileLabel(ps[i])).append(buf);
        }
        out->append("\r\n");
      }
    }
    out->append("\r\n");
  }
}

}  // namespace lavik
