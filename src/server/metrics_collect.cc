// The Prometheus endpoint's data: a snapshot of every worker's store figures and the server's
// counters, gathered by posting to each worker (observability/metrics_http.h serves it).
#include "server/metrics_collect.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "base/clock.h"
#include "runtime/mailbox.h"
#include "server/server.h"
#include "storage/store.h"

namespace lavik {
namespace {

constexpr int64_t kGatherTimeoutMs = 1000;
constexpr double kQuantiles[] = {0.5, 0.9, 0.99, 0.999};

uint64_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// What one shard reports to a scrape; read on its worker (Store is owner-thread only).
struct ShardFigures {
  uint64_t keys = 0, expires = 0, index = 0, cache = 0, cache_capacity = 0, buffers = 0;
  uint64_t cache_hits = 0, cache_misses = 0, reads = 0, writes = 0, syncs = 0;
  uint64_t bytes_read = 0, bytes_written = 0;
  IoLatency latency[3];
  StoreStats stats;
  bool defrag_running = false;
};

// A scrape's rendezvous with the workers. Shared with the posted items, so a worker that
// answers after the scrape gave up still writes into live memory.
struct Gather {
  std::mutex mu;
  std::condition_variable cv;
  int pending = 0;
  std::vector<ShardFigures> figures;
};

struct GatherItem : MailboxItem {
  std::shared_ptr<Gather> gather;
  Store* store = nullptr;
  int worker = 0;

  static void Run(MailboxItem* item) {
    auto* self = static_cast<GatherItem*>(item);
    const Store& st = *self->store;
    ShardFigures f;
    f.keys = st.size();
    f.expires = st.expires();
    f.index = st.index_memory() + st.ttl_memory();
    f.cache = st.cache().bytes();
    f.cache_capacity = st.cache().capacity();
    f.cache_hits = st.cache().hits();
    f.cache_misses = st.cache().misses();
    f.buffers = st.log().buffer_memory();
    f.stats = st.stats();
    f.reads = st.device().reads();
    f.writes = st.device().writes();
    f.syncs = st.device().syncs();
    f.bytes_read = st.device().bytes_read();
    f.bytes_written = st.device().bytes_written();
    for (int k = 0; k < 3; ++k) f.latency[k] = st.device().latency(static_cast<IoRequest::Kind>(k));
    f.defrag_running = st.defrag_running();
    {
      std::lock_guard<std::mutex> lock(self->gather->mu);
      self->gather->figures[self->worker] = f;
      --self->gather->pending;
    }
    self->gather->cv.notify_one();
    delete self;
  }
};

MetricsSnapshot Collect(Server* server, Observability* obs) {
  MetricsSnapshot s;
  const int n = server->worker_count();
  auto gather = std::make_shared<Gather>();
  gather->figures.resize(n);
  gather->pending = n;
  for (int w = 0; w < n; ++w) {
    auto* item = new GatherItem();
    item->gather = gather;
    item->store = &server->shards().at(w).store;
    item->worker = w;
    item->run = &GatherItem::Run;
    server->worker(w)->Post(item);
  }
  std::vector<ShardFigures> figures;
  {
    std::unique_lock<std::mutex> lock(gather->mu);
    s.shards_complete = gather->cv.wait_for(lock, std::chrono::milliseconds(kGatherTimeoutMs),
                                            [&] { return gather->pending == 0; });
    figures = gather->figures;  // a late worker's zeros stay zeros
  }
  for (const ShardFigures& f : figures) {
    s.keys += f.keys;
    s.expires += f.expires;
    s.memory_index += f.index;
    s.memory_cache += f.cache;
    s.memory_buffers += f.buffers;
    s.cache_capacity += f.cache_capacity;
    s.cache_hits += f.cache_hits;
    s.cache_misses += f.cache_misses;
    s.device_reads += f.reads;
    s.device_writes += f.writes;
    s.device_syncs += f.syncs;
    s.device_bytes_read += f.bytes_read;
    s.device_bytes_written += f.bytes_written;
    for (int k = 0; k < 3; ++k) {
      IoLatency& to = s.device_latency[k];
      to.count += f.latency[k].count;
      to.total_us += f.latency[k].total_us;
      for (int i = 0; i < IoLatency::kBuckets; ++i) to.buckets[i] += f.latency[k].buckets[i];
    }
    s.expired_keys += f.stats.expired_keys;
    s.keyspace_hits += f.stats.keyspace_hits;
    s.keyspace_misses += f.stats.keyspace_misses;
    s.defrag_segments += f.stats.defrag_segments;
    s.defrag_records += f.stats.defrag_records;
    s.defrag_running |= f.defrag_running;
  }
  s.memory_rss = RssBytes();

  DataFile& file = server->data_file();
  s.storage_capacity = file.file_size();
  s.segments_total = file.segment_count();
  s.segments_free = file.free_segments();
  s.storage_used = (s.segments_total - s.segments_free) * file.segment_size();
  for (uint32_t seg = 0; seg < s.segments_total; ++seg) {
    int64_t b = file.live_bytes(seg).load(std::memory_order_relaxed);
    if (b > 0) s.storage_live += static_cast<uint64_t>(b);
  }
  s.defrag_bytes = file.bytes_reclaimed();

  for (int w = 0; w < n; ++w) {
    s.commands_processed += server->stats(w).commands.Get();
    s.connections_received += server->stats(w).connections_received.Get();
    s.rejected_connections += server->stats(w).rejected_connections.Get();
    s.worker_commands.push_back(obs->stats.worker_calls(w));
  }
  s.connected_clients = server->connected_clients().load();
  s.uptime_seconds = static_cast<double>(NowMs() - server->start_time_ms()) / 1000.0;

  const CommandStats& cs = obs->stats;
  for (int id = 0; id < cs.size(); ++id) {
    CommandStats::Totals t = cs.CommandTotals(id, true);
    if (t.calls == 0 && t.rejected == 0 && t.failed == 0) continue;
    MetricsSnapshot::Command c;
    c.name = std::string(cs.spec(id).name);
    c.calls = t.calls;
    c.rejected = t.rejected;
    c.failed = t.failed;
    c.seconds = static_cast<double>(t.ns) / 1e9;
    if (!t.histogram.empty()) {
      for (double q : kQuantiles) {
        c.quantiles.emplace_back(q, LatencyHistogram::PercentileOf(t.histogram, q * 100) / 1e9);
      }
    }
    s.commands.push_back(std::move(c));
  }
  s.errors = cs.ErrorCounts();
  s.error_replies = cs.total_error_replies();
  s.slowlog_entries = obs->slowlog.Len();
  return s;
}

}  // namespace

void StartMetrics(Server* server, Observability* obs) {
  if (server->config().metrics_port == 0) return;
  obs->metrics.Serve([obs, server]() { return RenderPrometheus(Collect(server, obs)); });
}

}  // namespace lavik
