#include "tools/lavik_bench/report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace lavik::bench {
namespace {

std::string Printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Printf(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return std::string(buf, n < 0 ? 0 : std::min<size_t>(static_cast<size_t>(n), sizeof(buf) - 1));
}

double Ms(uint64_t us) { return static_cast<double>(us) / 1000.0; }

// A JSON string literal: quotes, backslashes and control bytes escaped.
std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (const unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(ch));
    } else if (ch < 0x20) {
      out += Printf("\\u%04x", ch);
    } else {
      out.push_back(static_cast<char>(ch));
    }
  }
  return out + "\"";
}

std::string Ratio(const Options& o) { return Printf("%d:%d", o.get_ratio, o.set_ratio); }

const char* Pattern(const Options& o) {
  return o.key_pattern == KeyPattern::kRandom ? "random" : "sequential";
}

}  // namespace

std::string FormatText(const Options& o, const RunResult& r) {
  const LatencyHistogram& h = r.stats.histogram;
  std::string out = Printf(
      "lavik-bench %s:%d  %s, connections %d, threads %d, pipeline %d, GET:SET %s, "
      "keys %" PRIu64 "..%" PRIu64 " %s, value %d B\n",
      o.host.c_str(), o.port, o.open_loop() ? "open loop" : "closed loop", o.connections, o.threads,
      o.pipeline, Ratio(o).c_str(), o.key_min, o.key_max, Pattern(o), o.value_size);
  out += Printf("measured %.2f s after %.2f s warmup, %" PRIu64 " requests\n", r.duration_s,
                o.warmup_s, r.stats.requests);
  if (o.open_loop()) {
    if (r.Sustained(o)) {
      out += Printf("rate %.0f req/s: sustained (achieved %.0f)\n", o.rate, r.ops_per_sec());
    } else {
      out += Printf("rate %.0f req/s: NS (achieved %.0f)\n", o.rate, r.ops_per_sec());
    }
  }
  out += Printf("%12s %9s %9s %9s %9s %9s %9s\n", "ops/s", "p50 ms", "p99 ms", "p99.9 ms",
                "p99.99 ms", "misses", "errors");
  out += Printf("%12.0f %9.3f %9.3f %9.3f %9.3f %9" PRIu64 " %9" PRIu64 "\n", r.ops_per_sec(),
                Ms(h.ValueAtPercentile(50)), Ms(h.ValueAtPercentile(99)),
                Ms(h.ValueAtPercentile(99.9)), Ms(h.ValueAtPercentile(99.99)), r.stats.misses,
                r.errors());
  out += Printf("min %.3f ms, mean %.3f ms, max %.3f ms\n", Ms(h.min()), h.mean() / 1000.0,
                Ms(h.max()));
  if (o.open_loop()) {
    out += Printf("client send lag behind schedule: p50 %.3f ms, p99 %.3f ms\n",
                  Ms(r.stats.send_lag.ValueAtPercentile(50)),
                  Ms(r.stats.send_lag.ValueAtPercentile(99)));
  }
  if (!r.stats.first_error.empty()) out += "first error: " + r.stats.first_error + "\n";
  return out;
}

std::string FormatJson(const Options& o, const RunResult& r) {
  const LatencyHistogram& h = r.stats.histogram;
  std::string out = "{\"mode\":";
  out += o.open_loop() ? "\"open\"" : "\"closed\"";
  out += Printf(",\"ops_per_sec\":%.1f", r.ops_per_sec());
  out += Printf(",\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"p9999_ms\":%.3f",
                Ms(h.ValueAtPercentile(50)), Ms(h.ValueAtPercentile(99)),
                Ms(h.ValueAtPercentile(99.9)), Ms(h.ValueAtPercentile(99.99)));
  out += Printf(",\"min_ms\":%.3f,\"mean_ms\":%.3f,\"max_ms\":%.3f", Ms(h.min()), h.mean() / 1000.0,
                Ms(h.max()));
  out += Printf(",\"misses\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"error_replies\":%" PRIu64
                ",\"connection_errors\":%" PRIu64,
                r.stats.misses, r.errors(), r.stats.error_replies, r.stats.connection_errors);
  out += Printf(",\"requests\":%" PRIu64 ",\"duration_s\":%.3f,\"warmup_s\":%.3f", r.stats.requests,
                r.duration_s, o.warmup_s);
  out += Printf(",\"sustained\":%s", r.Sustained(o) ? "true" : "false");
  out += o.open_loop() ? Printf(",\"requested_rate\":%.1f", o.rate) : ",\"requested_rate\":null";
  out += Printf(",\"achieved_rate\":%.1f", r.ops_per_sec());
  out += Printf(",\"connections\":%d,\"threads\":%d,\"pipeline\":%d,\"ratio\":%s", o.connections,
                o.threads, o.pipeline, JsonString(Ratio(o)).c_str());
  out += Printf(",\"key_min\":%" PRIu64 ",\"key_max\":%" PRIu64 ",\"key_pattern\":\"%s\"",
                o.key_min, o.key_max, Pattern(o));
  out += Printf(",\"value_size\":%d,\"seed\":%" PRIu64, o.value_size, r.seed);
  if (o.open_loop()) {
    out += Printf(",\"send_lag_p50_ms\":%.3f,\"send_lag_p99_ms\":%.3f",
                  Ms(r.stats.send_lag.ValueAtPercentile(50)),
                  Ms(r.stats.send_lag.ValueAtPercentile(99)));
  }
  out += ",\"first_error\":" +
         (r.stats.first_error.empty() ? std::string("null") : JsonString(r.stats.first_error));
  out += "}\n";
  return out;
}

std::string FormatFillText(const Options& o, const RunResult& r) {
  const double rate = r.duration_s > 0 ? r.stats.keys_written / r.duration_s : 0;
  std::string out =
      Printf("fill %s:%d: %" PRIu64 " of %" PRIu64 " keys written (%" PRIu64 "..%" PRIu64
             ", value %d B) in %.3f s, %.0f keys/s, errors %" PRIu64 "\n",
             o.host.c_str(), o.port, r.stats.keys_written, o.key_count(), o.key_min, o.key_max,
             o.value_size, r.duration_s, rate, r.errors());
  if (!r.stats.first_error.empty()) out += "first error: " + r.stats.first_error + "\n";
  return out;
}

std::string FormatFillJson(const Options& o, const RunResult& r) {
  const double rate = r.duration_s > 0 ? r.stats.keys_written / r.duration_s : 0;
  std::string out = "{\"mode\":\"fill\"";
  out += Printf(",\"keys_written\":%" PRIu64 ",\"keys_expected\":%" PRIu64, r.stats.keys_written,
                o.key_count());
  out += Printf(",\"keys_per_sec\":%.1f,\"duration_s\":%.3f", rate, r.duration_s);
  out += Printf(",\"errors\":%" PRIu64 ",\"connections\":%d,\"pipeline\":%d,\"value_size\":%d",
                r.errors(), o.connections, o.pipeline, o.value_size);
  out += ",\"first_error\":" +
         (r.stats.first_error.empty() ? std::string("null") : JsonString(r.stats.first_error));
  out += "}\n";
  return out;
}

}  // namespace lavik::bench
