// MEMORY USAGE / STATS / DOCTOR / PURGE / MALLOC-STATS / HELP (doc/commands.md, "MEMORY").
//
// USAGE counts what a key costs Lavik: the device bytes of its record (and of every chunk record
// of a chunked collection), its share of the key index (the index's bytes over its entries),
// of the TTL table when it has a TTL, and what the value cache is charged for any of those
// records it holds. Lavik's sizes are exact, so SAMPLES is checked as Redis does but changes
// nothing. STATS uses Redis's field names with Lavik's figures: its DRAM (INFO used_memory) is
// total.allocated, the index and TTL table are db.0's overheads, the value cache is the
// dataset; figures Lavik has no counterpart for (replication backlog, AOF, Lua) are 0.
#include <malloc.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/numbers.h"
#include "commands/multi_shard.h"
#include "protocol/errors.h"
#include "runtime/shard_hop.h"
#include "server/command_registry.h"
#include "server/memory_guard.h"
#include "server/server.h"
#include "storage/chunk_format.h"
#include "storage/index.h"
#include "storage/store.h"

namespace lavik {
namespace {

// Below this much DRAM MEMORY DOCTOR declines to judge, as Redis does under 5 MB.
constexpr uint64_t kDoctorMinBytes = 5 << 20;

// The index, TTL-table and cache bytes of one record, and its device bytes.
uint64_t RecordFootprint(const Store& st, uint64_t fp, const KeyInfo& info) {
  uint64_t bytes = st.LargeLen(info.loc) + st.cache().ChargeOf(fp, info.loc);
  if (st.records() > 0) bytes += st.index_memory() / st.records();
  if (info.expire_ms != 0 && st.expires() > 0) bytes += st.ttl_memory() / st.expires();
  return bytes;
}

// Redis's argument rules: [SAMPLES count] any number of times, count >= 0.
bool UsageArgsOrReply(Context& ctx) {
  for (size_t j = 3; j < ctx.args.size(); ++j) {
    if (!EqualsNoCase(ctx.args[j], "samples") || j + 1 >= ctx.args.size()) {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
    int64_t samples;
    if (!ParseInt64(ctx.args[++j], &samples)) {
      ctx.reply->Error(kErrNotInteger);
      return false;
    }
    if (samples < 0) {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
  }
  return true;
}

Task MemoryUsage(Context& ctx) {
  if (!UsageArgsOrReply(ctx)) co_return;
  const std::string_view key = ctx.args[2];
  bool exists = false;
  uint64_t bytes = 0;
  std::string error;
  KeyPlan plan(ctx, std::vector<std::string_view>{key});
  co_await plan.Lock();
  co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
    const KeyInfo info = st.Lookup(key, ctx.now_ms);
    if (!info.exists) co_return;
    exists = true;
    bytes = RecordFootprint(st, Index::Fingerprint(key), info);
    if (!IsChunkableType(info.type)) co_return;
    ReadResult r = co_await st.ReadValue(key, info);
    if (r.status == ReadResult::Status::kError) {
      error = r.error;
      co_return;
    }
    ChunkRoot root;
    if (!r.ok() || !IsChunkRoot(r.value) || !ParseChunkRoot(r.value, &root)) co_return;
    for (const ChunkRef& c : root.chunks) {
      const std::string chunk = ChunkKey(root.slot, root.id, c.number);
      const KeyInfo ci = st.Lookup(chunk, ctx.now_ms);
      if (ci.exists) bytes += RecordFootprint(st, Index::Fingerprint(chunk), ci);
    }
  });
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else if (!exists) {
    ctx.reply->Null();
  } else {
    ctx.reply->Integer(static_cast<int64_t>(bytes));
  }
}

struct StatsFigures {
  MemoryFigures memory;
  uint64_t index = 0;  // the key index alone
  uint64_t ttl = 0;    // the TTL table
  uint64_t keys = 0;
};

Task GatherStats(Server* server, StatsFigures* out) {
  for (int w = 0; w < server->worker_count(); ++w) {
    co_await ShardHop(server->worker(w), [server, w, out]() {
      const Store& st = server->shards().at(w).store;
      out->memory.Add(MeasureWorker(*server, w));
      out->index += st.index_memory();
      out->ttl += st.ttl_memory();
      out->keys += st.size();
    });
  }
}

double Ratio(uint64_t a, uint64_t b) { return b == 0 ? 0 : static_cast<double>(a) / b; }

Task MemoryStats(Context& ctx) {
  StatsFigures f;
  co_await GatherStats(ctx.server, &f);
  const MemoryFigures& m = f.memory;
  const uint64_t total = m.Total();
  const uint64_t overhead = m.NonEvictable();
  const uint64_t dataset = total - overhead;  // the value cache
  const uint64_t allocated = AllocatorBytes();
  const uint64_t rss = ProcessRssBytes();
  ReplyWriter& w = *ctx.reply;
  w.Map(f.keys > 0 ? 28 : 27);
  auto field = [&w](std::string_view name, uint64_t v) {
    w.Bulk(name);
    w.Integer(static_cast<int64_t>(v));
  };
  auto ratio = [&w](std::string_view name, double v) {
    w.Bulk(name);
    w.Double(v);
  };
  field("peak.allocated", total);  // Lavik keeps no peak: INFO's used_memory_peak is the same
  field("total.allocated", total);
  field("startup.allocated", 0);
  field("replication.backlog", 0);
  field("clients.slaves", 0);
  field("clients.normal", m.clients);
  field("cluster.links", 0);
  field("aof.buffer", 0);
  field("lua.caches", 0);
  field("functions.caches", 0);
  if (f.keys > 0) {
    w.Bulk("db.0");
    w.Map(3);
    field("overhead.hashtable.main", f.index);
    field("overhead.hashtable.expires", f.ttl);
    field("overhead.hashtable.slot-to-keys", 0);
  }
  field("overhead.total", overhead);
  field("keys.count", f.keys);
  field("keys.bytes-per-key", f.keys == 0 ? 0 : total / f.keys);
  field("dataset.bytes", dataset);
  ratio("dataset.percentage", Ratio(dataset * 100, total));
  ratio("peak.percentage", 100.0);
  field("allocator.allocated", allocated);
  field("allocator.active", allocated);
  field("allocator.resident", rss);
  ratio("allocator-fragmentation.ratio", 1.0);
  field("allocator-fragmentation.bytes", 0);
  ratio("allocator-rss.ratio", Ratio(rss, allocated));
  field("allocator-rss.bytes", rss > allocated ? rss - allocated : 0);
  ratio("rss-overhead.ratio", 1.0);
  field("rss-overhead.bytes", 0);
  ratio("fragmentation", Ratio(rss, total));
  field("fragmentation.bytes", rss > total ? rss - total : 0);
}

Task MemoryDoctor(Context& ctx) {
  StatsFigures f;
  co_await GatherStats(ctx.server, &f);
  // Redis's own texts. Lavik's DRAM is index, cache and buffers it sizes itself, so of Redis's
  // checks (peak, fragmentation, replica and client buffers, scripts) none applies.
  if (f.memory.Total() < kDoctorMinBytes) {
    ctx.reply->Verbatim(
        "Hi Sam, this instance is empty or is using very little memory, my issues detector "
        "can't be used in these conditions. Please, leave for your mission on Earth and fill it "
        "with some data. The new Sam and I will be back to our programming as soon as I "
        "finished rebooting.\n");
  } else {
    ctx.reply->Verbatim(
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what "
        "occurs on this base.\n");
  }
}

Task MemoryPurge(Context& ctx) {
  malloc_trim(0);  // hand freed heap pages back to the system (glibc's purge)
  ctx.reply->Ok();
  co_return;
}

Task MemoryMallocStats(Context& ctx) {
  ctx.reply->Bulk("Stats not supported for the current allocator");  // Redis without jemalloc
  co_return;
}

Task MemoryHelp(Context& ctx) {
  static const char* kLines[] = {
      "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return memory problems reports.",
      "MALLOC-STATS",
      "    Return internal statistics report from the memory allocator.",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "STATS",
      "    Return information about the memory usage of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply->Array(std::size(kLines));
  for (const char* line : kLines) ctx.reply->Simple(line);
  co_return;
}

constexpr uint32_t kSrv = kCmdHome;

const CommandSpec kMemorySubcommands[] = {
    {"memory|doctor", 2, kSrv, 0, 0, 0, &MemoryDoctor, "@slow", "server",
     "Outputs a report on memory problems.", "4.0.0"},
    {"memory|help", 2, kSrv | kCmdLoading | kCmdStale, 0, 0, 0, &MemoryHelp, "@slow", "server",
     "Returns helpful text about the different subcommands.", "4.0.0"},
    {"memory|malloc-stats", 2, kSrv, 0, 0, 0, &MemoryMallocStats, "@slow", "server",
     "Returns the allocator's statistics.", "4.0.0"},
    {"memory|purge", 2, kSrv, 0, 0, 0, &MemoryPurge, "@slow", "server",
     "Asks the allocator to release memory.", "4.0.0"},
    {"memory|stats", 2, kSrv, 0, 0, 0, &MemoryStats, "@slow", "server",
     "Returns details about memory usage.", "4.0.0"},
    {"memory|usage", -3, kSrv | kCmdReadOnly, 2, 2, 1, &MemoryUsage, "@read @slow", "server",
     "Estimates the memory usage of a key.", "4.0.0"},
};

const CommandSpec kMemoryCommands[] = {
    {"memory", -2, 0, 0, 0, 0, nullptr, "@slow", "server",
     "A container for memory diagnostics commands.", "4.0.0", kMemorySubcommands},
};

}  // namespace

std::span<const CommandSpec> MemoryCommands() { return kMemoryCommands; }

}  // namespace lavik
