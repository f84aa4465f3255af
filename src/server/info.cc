// INFO: Redis's sections and field names, filled from every worker's counters and shard.
#include <strings.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/db_key.h"
#include "blocking/list_blocking.h"
#include "cluster/cluster.h"
#include "net/connection.h"
#include "replication/master.h"
#include "replication/replica.h"
#include "runtime/shard_hop.h"
#include "scripting/scripting.h"
#include "server/memory_guard.h"
#include "server/server.h"
#include "storage/store.h"
#include "tracking/tracking.h"

namespace lavik {
namespace {

struct ShardFigures {
  uint64_t keys = 0;
  uint64_t expires = 0;
  std::array<uint64_t, kMaxDatabases> db_keys{};  // per physical database
  std::array<uint64_t, kMaxDatabases> db_expires{};
  StoreStats stats;
  uint64_t cache_bytes = 0;
  uint64_t cache_capacity = 0;
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  MemoryFigures memory;
  uint64_t tombstones = 0;
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t syncs = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  bool defrag_running = false;
  uint64_t lazyfree_pending = 0;  // chunks of dead chunked collections not yet freed
  uint64_t lazyfreed = 0;         // chunks the background sweep freed
  uint64_t chunk_records = 0;
};

std::string Human(uint64_t bytes) {
  const char* units[] = {"B", "K", "M", "G", "T"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof(buf), "%lluB", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f%s", v, units[u]);
  }
  return buf;
}

bool Wanted(const std::vector<std::string>& sections, const char* name, bool is_default) {
  if (sections.empty()) return is_default;
  for (const std::string& s : sections) {
    if (s == "all" || s == "everything" || (s == "default" && is_default) || s == name) return true;
  }
  return false;
}

void Field(std::string* out, const char* name, const std::string& value) {
  out->append(name).append(":").append(value).append("\r\n");
}
void Field(std::string* out, const char* name, uint64_t value) {
  Field(out, name, std::to_string(value));
}

}  // namespace

Task Info(Context& ctx) {
  std::vector<std::string> sections;
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    std::string s(ctx.args[i]);
    for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    sections.push_back(std::move(s));
  }
  Server* server = ctx.server;
  const int n = server->worker_count();
  std::vector<ShardFigures> figures(n);
  for (int w = 0; w < n; ++w) {
    co_await ShardHop(server->worker(w), [&, w]() {
      Store& st = server->shards().at(w).store;
      ShardFigures& f = figures[w];
      f.keys = st.size();
      f.expires = st.expires();
      for (int d = 0; d < kMaxDatabases; ++d) {
        f.db_keys[static_cast<size_t>(d)] = st.db_size(d);
        f.db_expires[static_cast<size_t>(d)] = st.db_expires(d);
      }
      f.stats = st.stats();
      f.cache_bytes = st.cache().bytes();
      f.cache_capacity = st.cache().capacity();
      f.cache_hits = st.cache().hits();
      f.cache_misses = st.cache().misses();
      f.tombstones = st.tombstone_count();
      f.reads = st.device().reads();
      f.writes = st.device().writes();
      f.syncs = st.device().syncs();
      f.bytes_read = st.device().bytes_read();
      f.bytes_written = st.device().bytes_written();
      f.defrag_running = st.defrag_running();
      f.lazyfree_pending = st.chunks().pending();
      f.lazyfreed = st.stats().lazyfreed_chunks;
      f.chunk_records = st.internal_records();
      f.memory = MeasureWorker(*server, w);
    });
  }
  ShardFigures total;
  for (const ShardFigures& f : figures) {
    total.keys += f.keys;
    total.expires += f.expires;
    for (size_t d = 0; d < kMaxDatabases; ++d) {
      total.db_keys[d] += f.db_keys[d];
      total.db_expires[d] += f.db_expires[d];
    }
    total.cache_bytes += f.cache_bytes;
    total.cache_capacity += f.cache_capacity;
    total.cache_hits += f.cache_hits;
    total.cache_misses += f.cache_misses;
    total.tombstones += f.tombstones;
    total.lazyfree_pending += f.lazyfree_pending;
    total.lazyfreed += f.lazyfreed;
    total.chunk_records += f.chunk_records;
    total.reads += f.reads;
    total.writes += f.writes;
    total.syncs += f.syncs;
    total.bytes_read += f.bytes_read;
    total.bytes_written += f.bytes_written;
    total.defrag_running |= f.defrag_running;
    total.memory.Add(f.memory);
    total.stats.corrupt_records += f.stats.corrupt_records;
    total.stats.device_reads += f.stats.device_reads;
    total.stats.defrag_segments += f.stats.defrag_segments;
    total.stats.defrag_records += f.stats.defrag_records;
    total.stats.tombstones_dropped += f.stats.tombstones_dropped;
    total.stats.keyspace_hits += f.stats.keyspace_hits;
    total.stats.keyspace_misses += f.stats.keyspace_misses;
    total.stats.expired_keys += f.stats.expired_keys;
    total.stats.dirty += f.stats.dirty;
  }
  uint64_t commands = 0, connections = 0, rejected = 0, reads = 0, writes = 0;
  for (int w = 0; w < n; ++w) {
    reads += Connection::io_counts(w).reads.Get();
    writes += Connection::io_counts(w).writes.Get();
    commands += server->stats(w).commands.Get();
    connections += server->stats(w).connections_received.Get();
    rejected += server->stats(w).rejected_connections.Get();
  }

  const int64_t now_ms = NowMs();
  const int64_t uptime = (now_ms - server->start_time_ms()) / 1000;
  std::string out;
  if (Wanted(sections, "server", true)) {
    utsname u;
    uname(&u);
    out += "# Server\r\n";
    Field(&out, "redis_version", "7.0.15");
    Field(&out, "lavik_version", LAVIK_VERSION);
    Field(&out, "redis_git_sha1", "00000000");
    Field(&out, "redis_git_dirty", 0);
    Field(&out, "redis_mode", "standalone");
    Field(&out, "os", std::string(u.sysname) + " " + u.release + " " + u.machine);
    Field(&out, "arch_bits", 64);
    Field(&out, "multiplexing_api", "io_uring");
    Field(&out, "gcc_version",
          std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
              std::to_string(__GNUC_PATCHLEVEL__));
    Field(&out, "process_id", static_cast<uint64_t>(getpid()));
    Field(&out, "process_supervised", "no");
    Field(&out, "run_id", server->run_id());
    Field(&out, "tcp_port", static_cast<uint64_t>(server->listening_port()));
    Field(&out, "server_time_usec", static_cast<uint64_t>(NowUs()));
    Field(&out, "uptime_in_seconds", static_cast<uint64_t>(uptime));
    Field(&out, "uptime_in_days", static_cast<uint64_t>(uptime / 86400));
    Field(&out, "hz", 10);
    Field(&out, "configured_hz", 10);
    Field(&out, "executable", "lavik");
    Field(&out, "config_file", server->config().config_file);
    Field(&out, "io_threads_active", 0);
    // As Redis: only while SHUTDOWN (or a signal) waits for lagging replicas.
    if (const int64_t left = server->shutdown_in_ms(); left >= 0) {
      Field(&out, "shutdown_in_milliseconds", static_cast<uint64_t>(left));
    }
    Field(&out, "worker_threads", static_cast<uint64_t>(n));
    out += "\r\n";
  }
  if (Wanted(sections, "clients", true)) {
    out += "# Clients\r\n";
    Field(&out, "connected_clients", static_cast<uint64_t>(server->connected_clients().load()));
    Field(&out, "cluster_connections",
          server->cluster() != nullptr ? server->cluster()->connections() : 0);
    Field(&out, "maxclients", static_cast<uint64_t>(server->maxclients()));
    Field(&out, "client_recent_max_input_buffer", 0);
    Field(&out, "client_recent_max_output_buffer", 0);
    Field(&out, "blocked_clients", ListBlockedClients());
    Field(&out, "tracking_clients", static_cast<uint64_t>(server->tracking().clients()));
    Field(&out, "clients_in_timeout_table", 0);
    out += "\r\n";
  }
  if (Wanted(sections, "memory", true)) {
    // used_memory is what Lavik holds in DRAM: index (+ TTL table), value cache, write buffers,
    // client buffers and registered buffers — the sum --max-memory admission checks
    // (memory_guard.h). The allocator's total is shown as used_memory_allocator.
    const MemoryFigures& m = total.memory;
    uint64_t used = m.Total();
    uint64_t rss = ProcessRssBytes();
    uint64_t limit = server->memory_guard().limit();
    out += "# Memory\r\n";
    Field(&out, "used_memory", used);
    Field(&out, "used_memory_human", Human(used));
    Field(&out, "used_memory_index", m.index);
    Field(&out, "used_memory_cache", m.cache);
    Field(&out, "used_memory_buffers", m.buffers);
    Field(&out, "used_memory_clients", m.clients);
    Field(&out, "used_memory_registered", m.registered);
    Field(&out, "used_memory_not_evictable", m.NonEvictable());
    Field(&out, "used_memory_allocator", AllocatorBytes());
    Field(&out, "used_memory_rss", rss);
    Field(&out, "used_memory_rss_human", Human(rss));
    Field(&out, "used_memory_peak", used);
    Field(&out, "used_memory_peak_human", Human(used));
    Field(&out, "used_memory_lua", ScriptVmBytes());  // every worker's Lua state
    Field(&out, "used_memory_vm_eval", ScriptVmBytes());
    Field(&out, "used_memory_lua_human", Human(ScriptVmBytes()));
    Field(&out, "used_memory_scripts_eval", ScriptCacheBytes());
    Field(&out, "number_of_cached_scripts", ScriptCacheCount());
    Field(&out, "maxmemory", limit);  // the effective limit: min(max-memory, maxmemory)
    Field(&out, "maxmemory_human", Human(limit));
    Field(&out, "oom_rejecting_writes", server->memory_guard().oom() ? 1 : 0);
    Field(&out, "maxmemory_policy", "noeviction");
    Field(&out, "mem_fragmentation_ratio",
          used == 0 ? std::string("0.00") : std::to_string(static_cast<double>(rss) / used));
    Field(&out, "mem_allocator", "libc");
    Field(&out, "lazyfree_pending_objects", total.lazyfree_pending);
    Field(&out, "lazyfreed_objects", total.lazyfreed);
    out += "\r\n";
  }
  if (Wanted(sections, "persistence", true)) {
    out += "# Persistence\r\n";
    const bool loading = server->replica().loading();  // a replica's full sync
    Field(&out, "loading", loading ? 1 : 0);
    Field(&out, "async_loading", 0);
    const SaveState& save = server->save_state();
    const uint64_t saved = save.dirty_at_save.load();
    const int64_t save_start = save.current_start_ms.load();
    Field(&out, "rdb_changes_since_last_save",
          total.stats.dirty > saved ? total.stats.dirty - saved : 0);
    Field(&out, "rdb_bgsave_in_progress", save.in_progress.load() ? 1 : 0);
    Field(&out, "rdb_last_save_time", static_cast<uint64_t>(save.last_save_s.load()));
    Field(&out, "rdb_last_bgsave_status", save.last_ok.load() ? "ok" : "err");
    Field(&out, "rdb_last_bgsave_time_sec", std::to_string(save.last_bgsave_s.load()));
    Field(&out, "rdb_current_bgsave_time_sec",
          std::to_string(save_start == 0 ? -1 : (now_ms - save_start) / 1000));
    Field(&out, "rdb_saves", save.saves.load());
    Field(&out, "aof_enabled", 0);
    Field(&out, "aof_rewrite_in_progress", 0);
    if (loading) server->replica().AppendLoadingInfo(&out);
    out += "\r\n";
  }
  if (Wanted(sections, "stats", true)) {
    out += "# Stats\r\n";
    Field(&out, "total_connections_received", connections);
    Field(&out, "total_commands_processed", commands);
    Field(&out, "rejected_connections", rejected);
    Field(&out, "sync_full", static_cast<uint64_t>(server->master().sync_full.load()));
    Field(&out, "sync_partial_ok", static_cast<uint64_t>(server->master().sync_partial_ok.load()));
    Field(&out, "sync_partial_err",
          static_cast<uint64_t>(server->master().sync_partial_err.load()));
    Field(&out, "expired_keys", total.stats.expired_keys);
    Field(&out, "evicted_keys", 0);
    Field(&out, "keyspace_hits", total.stats.keyspace_hits);
    Field(&out, "keyspace_misses", total.stats.keyspace_misses);
    Field(&out, "cache_hits", total.cache_hits);
    Field(&out, "cache_misses", total.cache_misses);
    Field(&out, "pubsub_channels", 0);
    Field(&out, "pubsub_patterns", 0);
    Field(&out, "tracking_total_keys", server->tracking().total_keys());
    Field(&out, "tracking_total_items", server->tracking().total_items());
    Field(&out, "tracking_total_prefixes", server->tracking().total_prefixes());
    Field(&out, "total_error_replies", server->observability().stats.total_error_replies());
    Field(&out, "total_reads_processed", reads);
    Field(&out, "total_writes_processed", writes);
    Field(&out, "io_threaded_reads_processed", 0);  // no I/O threads: workers do their own I/O
    Field(&out, "io_threaded_writes_processed", 0);
    out += "\r\n";
  }
  if (Wanted(sections, "storage", true)) {
    DataFile& file = server->data_file();
    const uint64_t seg_size = file.segment_size();
    const uint64_t segs = file.segment_count();
    const uint64_t free_segs = file.free_segments();
    uint64_t live = 0;
    for (uint32_t s = 0; s < segs; ++s) {
      int64_t b = file.live_bytes(s).load(std::memory_order_relaxed);
      if (b > 0) live += static_cast<uint64_t>(b);
    }
    const uint64_t used_bytes = (segs - free_segs) * seg_size;
    char ratio[32];
    std::snprintf(ratio, sizeof(ratio), "%.3f",
                  used_bytes == 0 ? 1.0 : static_cast<double>(live) / used_bytes);
    out += "# Storage\r\n";
    Field(&out, "data_file", file.path());
    Field(&out, "data_file_size", file.file_size());
    Field(&out, "data_file_growable", file.growable() ? 1 : 0);
    Field(&out, "direct_io", file.direct_io() ? 1 : 0);
    Field(&out, "segment_size", seg_size);
    Field(&out, "segments_total", segs);
    Field(&out, "segments_free", free_segs);
    Field(&out, "segments_used", segs - free_segs);
    Field(&out, "bytes_used", used_bytes);
    Field(&out, "bytes_live", live);
    Field(&out, "live_ratio", ratio);
    Field(&out, "keys", total.keys);
    Field(&out, "tombstones", total.tombstones);
    Field(&out, "chunk_records", total.chunk_records);
    Field(&out, "cache_capacity", total.cache_capacity);
    Field(&out, "cache_bytes", total.cache_bytes);
    Field(&out, "cache_hits", total.cache_hits);
    Field(&out, "cache_misses", total.cache_misses);
    Field(&out, "device_reads", total.reads);
    Field(&out, "device_writes", total.writes);
    Field(&out, "device_syncs", total.syncs);
    Field(&out, "device_bytes_read", total.bytes_read);
    Field(&out, "device_bytes_written", total.bytes_written);
    Field(&out, "corrupt_records", total.stats.corrupt_records);
    Field(&out, "defrag_running", total.defrag_running ? 1 : 0);
    Field(&out, "defrag_paused", server->defrag_paused() ? 1 : 0);
    Field(&out, "defrag_segments_reclaimed", total.stats.defrag_segments);
    Field(&out, "defrag_records_moved", total.stats.defrag_records);
    Field(&out, "defrag_bytes_reclaimed", file.bytes_reclaimed());
    Field(&out, "tombstones_dropped", total.stats.tombstones_dropped);
    Field(&out, "recovery_from_checkpoint", server->recovery().from_checkpoint ? 1 : 0);
    Field(&out, "recovery_ms", static_cast<uint64_t>(server->recovery().elapsed_ms));
    // A replica's consistency point (doc/replication.md "A replica killed -9 continues").
    Field(&out, "replica_cut_offset", std::to_string(file.cut_offset()));
    Field(&out, "recovery_rolled_back_records", server->recovery().dropped_records);
    out += "\r\n";
  }
  if (Wanted(sections, "replication", true)) {
    out += "# Replication\r\n";
    server->replica().AppendInfo(&out);
    out += "\r\n";
  }
  if (Wanted(sections, "cpu", true)) {
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char buf[64];
    out += "# CPU\r\n";
    std::snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(ru.ru_stime.tv_sec),
                  static_cast<long>(ru.ru_stime.tv_usec));
    Field(&out, "used_cpu_sys", buf);
    std::snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(ru.ru_utime.tv_sec),
                  static_cast<long>(ru.ru_utime.tv_usec));
    Field(&out, "used_cpu_user", buf);
    out += "\r\n";
  }
  if (Wanted(sections, "modules", true)) out += "# Modules\r\n\r\n";  // Lavik loads none
  server->observability().stats.AppendInfo(Wanted(sections, "commandstats", false),
                                           Wanted(sections, "errorstats", true),
                                           Wanted(sections, "latencystats", false), &out);
  if (Wanted(sections, "cluster", true)) {
    out += "# Cluster\r\n";
    Field(&out, "cluster_enabled", server->cluster() != nullptr ? 1 : 0);
    out += "\r\n";
  }
  if (Wanted(sections, "keyspace", true)) {
    out += "# Keyspace\r\n";
    for (int d = 0; d < DbMap::Count(); ++d) {
      const auto p = static_cast<size_t>(DbMap::Physical(d));
      if (total.db_keys[p] == 0) continue;
      const std::string name = "db" + std::to_string(d);
      Field(&out, name.c_str(),
            "keys=" + std::to_string(total.db_keys[p]) +
                ",expires=" + std::to_string(total.db_expires[p]) + ",avg_ttl=0");
    }
    out += "\r\n";
  }
  // Redis ends the text without the final blank line.
  if (out.size() >= 2) out.resize(out.size() - 2);
  ctx.reply->Verbatim(out);
}

}  // namespace lavik
