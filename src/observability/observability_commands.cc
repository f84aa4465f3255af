// Operator commands: SLOWLOG (GET, LEN, RESET, HELP) and LATENCY (LATEST, HISTORY, RESET,
// HISTOGRAM, HELP).
// The figures they show are recorded by the dispatcher through Observability.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "base/numbers.h"
#include "client/services.h"
#include "commands/command.h"
#include "commands/command_table.h"
#include "observability/observability.h"
#include "protocol/errors.h"

namespace lavik {
namespace {

void ReplyLines(ReplyWriter* w, std::span<const char* const> lines) {
  w->Array(lines.size());
  for (const char* l : lines) w->Simple(l);
}

Task SlowlogGet(Context& ctx) {
  int64_t count = 10;
  if (ctx.args.size() > 3) {
    ctx.reply->Error(SubcommandSyntaxError(ctx.args[0], ctx.args[1]));
    co_return;
  }
  if (ctx.args.size() == 3 && (!ParseInt64(ctx.args[2], &count) || count < -1)) {
    ctx.reply->Error("ERR count should be greater than or equal to -1");
    co_return;
  }
  std::vector<SlowLog::Entry> entries = ctx.services->observability->slowlog.Get(count);
  ReplyWriter& w = *ctx.reply;
  w.Array(entries.size());
  for (const SlowLog::Entry& e : entries) {
    w.Array(6);
    w.Integer(static_cast<int64_t>(e.id));
    w.Integer(e.time_s);
    w.Integer(e.duration_us);
    w.Array(e.argv.size());
    for (const std::string& a : e.argv) w.Bulk(a);
    w.Bulk(e.peer);
    w.Bulk(e.name);
  }
}

Task SlowlogLen(Context& ctx) {
  ctx.reply->Integer(static_cast<int64_t>(ctx.services->observability->slowlog.Len()));
  co_return;
}

Task SlowlogReset(Context& ctx) {
  ctx.services->observability->slowlog.Reset();
  ctx.reply->Ok();
  co_return;
}

Task SlowlogHelp(Context& ctx) {
  static const char* const kLines[] = {
      "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET [<count>]",
      "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
      "    Entries are made of:",
      "    id, timestamp, time in microseconds, arguments array, client IP and port,",
      "    client name",
      "LEN",
      "    Return the length of the slowlog.",
      "RESET",
      "    Reset the slowlog.",
      "HELP",
      "    Prints this help.",
  };
  ReplyLines(ctx.reply, kLines);
  co_return;
}

Task LatencyLatest(Context& ctx) {
  std::vector<LatencyMonitor::Latest> all = ctx.services->observability->latency.LatestAll();
  ReplyWriter& w = *ctx.reply;
  w.Array(all.size());
  for (const LatencyMonitor::Latest& l : all) {
    w.Array(4);
    w.Bulk(l.event);
    w.Integer(l.time_s);
    w.Integer(l.latest_ms);
    w.Integer(l.max_ms);
  }
  co_return;
}

Task LatencyHistory(Context& ctx) {
  auto samples = ctx.services->observability->latency.History(ctx.args[2]);
  ReplyWriter& w = *ctx.reply;
  w.Array(samples.size());
  for (const auto& [time_s, ms] : samples) {
    w.Array(2);
    w.Integer(time_s);
    w.Integer(ms);
  }
  co_return;
}

Task LatencyReset(Context& ctx) {
  ctx.reply->Integer(ctx.services->observability->latency.Reset(ctx.args.subspan(2)));
  co_return;
}

// LATENCY HISTOGRAM [command ...]: per command, its calls and the cumulative distribution of
// its latencies (LatencyHistogram::CumulativeUsec). Named commands that never ran, or that Lavik
// does not know, are left out; a container names its subcommands, as in Redis.
Task LatencyHistogramCommand(Context& ctx) {
  const CommandStats& stats = ctx.services->observability->stats;
  std::vector<std::pair<const CommandSpec*, std::vector<uint64_t>>> found;
  auto add = [&](const CommandSpec* spec) {
    const int id = stats.IdOf(spec);
    if (id < 0) return;
    CommandStats::Totals t = stats.CommandTotals(id, true);
    if (std::any_of(t.histogram.begin(), t.histogram.end(), [](uint64_t c) { return c != 0; })) {
      found.emplace_back(spec, std::move(t.histogram));
    }
  };
  if (ctx.args.size() == 2) {
    for (int id = 0; id < stats.size(); ++id) add(&stats.spec(id));
  } else {
    for (std::string_view name : ctx.args.subspan(2)) {
      const size_t bar = name.find('|');
      const CommandSpec* spec = ctx.services->commands->Find(name.substr(0, bar));
      if (spec != nullptr && bar != std::string_view::npos) {
        spec = CommandTable::FindSubcommand(*spec, name.substr(bar + 1));
      }
      if (spec == nullptr) continue;
      add(spec);
      for (const CommandSpec& sub : spec->subcommands) add(&sub);
    }
  }
  ReplyWriter& w = *ctx.reply;
  w.Map(found.size());
  for (const auto& [spec, histogram] : found) {
    const std::vector<std::pair<int64_t, uint64_t>> cdf =
        LatencyHistogram::CumulativeUsec(histogram);
    w.Bulk(spec->name);
    w.Map(2);
    w.Bulk("calls");
    w.Integer(static_cast<int64_t>(cdf.empty() ? 0 : cdf.back().second));
    w.Bulk("histogram_usec");
    w.Map(cdf.size());
    for (const auto& [usec, count] : cdf) {
      w.Integer(usec);
      w.Integer(static_cast<int64_t>(count));
    }
  }
  co_return;
}

Task LatencyHelp(Context& ctx) {
  // Only the subcommands Lavik has (no DOCTOR or GRAPH).
  static const char* const kLines[] = {
      "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "HISTORY <event>",
      "    Return time-latency samples for the <event> class.",
      "LATEST",
      "    Return the latest latency samples for all events.",
      "RESET [<event> ...]",
      "    Reset latency data of one or more <event> classes.",
      "    (default: reset all data for all event classes)",
      "HISTOGRAM [COMMAND ...]",
      "    Return a cumulative distribution of latencies in the format of a histogram for the "
      "specified command names.",
      "    If no commands are specified then all histograms are replied.",
      "HELP",
      "    Prints this help.",
  };
  ReplyLines(ctx.reply, kLines);
  co_return;
}

constexpr uint32_t kAdmin = kCmdHome | kCmdAdmin | kCmdLoading | kCmdStale;
constexpr uint32_t kHelp = kCmdHome | kCmdLoading | kCmdStale;

const CommandSpec kSlowlogSubcommands[] = {
    {"slowlog|get", -2, kAdmin, 0, 0, 0, &SlowlogGet, "@admin @slow @dangerous", "server",
     "Get the slow log's entries", "2.2.12"},
    {"slowlog|len", 2, kAdmin, 0, 0, 0, &SlowlogLen, "@admin @slow @dangerous", "server",
     "Get the slow log's length", "2.2.12"},
    {"slowlog|reset", 2, kAdmin, 0, 0, 0, &SlowlogReset, "@admin @slow @dangerous", "server",
     "Clear all entries from the slow log", "2.2.12"},
    {"slowlog|help", 2, kHelp, 0, 0, 0, &SlowlogHelp, "@slow", "server",
     "Show helpful text about the different subcommands", "6.2.0"},
};

const CommandSpec kLatencySubcommands[] = {
    {"latency|latest", 2, kAdmin | kCmdNoScript, 0, 0, 0, &LatencyLatest, "@admin @slow @dangerous",
     "server", "Return the latest latency samples for all events.", "2.8.13"},
    {"latency|history", 3, kAdmin | kCmdNoScript, 0, 0, 0, &LatencyHistory,
     "@admin @slow @dangerous", "server", "Return timestamp-latency samples for the event.",
     "2.8.13"},
    {"latency|reset", -2, kAdmin | kCmdNoScript, 0, 0, 0, &LatencyReset, "@admin @slow @dangerous",
     "server", "Reset latency data for one or more events.", "2.8.13"},
    {"latency|histogram", -2, kAdmin | kCmdNoScript, 0, 0, 0, &LatencyHistogramCommand,
     "@admin @slow @dangerous", "server",
     "Return the cumulative distribution of latencies of a subset of commands or all.", "7.0.0"},
    {"latency|help", 2, kHelp, 0, 0, 0, &LatencyHelp, "@slow", "server",
     "Show helpful text about the different subcommands.", "2.8.13"},
};

const CommandSpec kObservabilityCommands[] = {
    {"slowlog", -2, kCmdHome, 0, 0, 0, nullptr, "@slow", "server",
     "A container for slow log commands", "2.2.12", kSlowlogSubcommands},
    {"latency", -2, kCmdHome, 0, 0, 0, nullptr, "@slow", "server",
     "A container for latency diagnostics commands", "2.8.13", kLatencySubcommands},
};

}  // namespace

std::span<const CommandSpec> ObservabilityCommands() { return kObservabilityCommands; }

}  // namespace lavik
