// The Prometheus endpoint: MetricsHttp serves GET /metrics over HTTP/1.x from one small thread
// of its own, and RenderPrometheus turns a MetricsSnapshot into the text exposition format
// 0.0.4. The metric names and meanings are listed in doc/observability.md.
//
// The thread blocks in poll/accept (scrapes are rare) and never runs on a worker; the render
// callback gathers the figures (posting to the workers and waiting with a timeout). Requests:
// GET or HEAD /metrics → 200; another path → 404; another method → 405. One request per
// connection, then close.
//
// Thread safety: Start/Stop from one thread (the server's main thread); the render callback runs
// on the metrics thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "storage/device.h"

namespace lavik {

struct MetricsSnapshot {
  struct Command {
    std::string name;  // "get", "config|set"
    uint64_t calls = 0;
    uint64_t rejected = 0;
    uint64_t failed = 0;
    double seconds = 0;                                // total time
    std::vector<std::pair<double, double>> quantiles;  // (quantile 0..1, seconds)
  };
  std::vector<Command> commands;
  std::vector<std::pair<std::string, uint64_t>> errors;  // by error code
  uint64_t error_replies = 0;
  std::vector<uint64_t> worker_commands;  // by worker id
  uint64_t commands_processed = 0;
  int64_t connected_clients = 0;
  uint64_t connections_received = 0;
  uint64_t rejected_connections = 0;
  double uptime_seconds = 0;
  bool shards_complete = true;  // every worker answered in time

  uint64_t keys = 0;
  uint64_t expires = 0;
  uint64_t expired_keys = 0;
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t memory_index = 0;
  uint64_t memory_cache = 0;
  uint64_t memory_buffers = 0;
  uint64_t memory_rss = 0;
  uint64_t cache_capacity = 0;
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t storage_capacity = 0;  // data file size
  uint64_t storage_used = 0;      // bytes of segments in use
  uint64_t storage_live = 0;      // bytes of live records in them
  uint64_t segments_total = 0;
  uint64_t segments_free = 0;
  uint64_t defrag_segments = 0;
  uint64_t defrag_records = 0;
  uint64_t defrag_bytes = 0;
  bool defrag_running = false;
  uint64_t device_reads = 0;
  uint64_t device_writes = 0;
  uint64_t device_syncs = 0;
  uint64_t device_bytes_read = 0;
  uint64_t device_bytes_written = 0;
  IoLatency device_latency[3];  // by IoRequest::Kind: read, write, sync
  uint64_t slowlog_entries = 0;
};

// The text exposition format 0.0.4: a HELP and a TYPE line per metric family, then its samples.
std::string RenderPrometheus(const MetricsSnapshot& s);
// A label value with \, " and newline escaped as the format requires.
std::string EscapeLabelValue(std::string_view v);

class MetricsHttp {
 public:
  using Render = std::function<std::string()>;

  MetricsHttp() = default;
  ~MetricsHttp() { Stop(); }
  MetricsHttp(const MetricsHttp&) = delete;
  MetricsHttp& operator=(const MetricsHttp&) = delete;

  // Binds address:port (numeric IPv4/IPv6, "*" for any). False with a message such as
  // "127.0.0.1:9121: Address already in use".
  bool Bind(const std::string& address, int port, std::string* error);
  // Starts the thread on the bound socket.
  void Serve(Render render);
  bool Start(const std::string& address, int port, Render render, std::string* error) {
    if (!Bind(address, port, error)) return false;
    Serve(std::move(render));
    return true;
  }
  // Stops and joins the thread (no-op if not running).
  void Stop();
  int port() const { return port_; }

 private:
  void Loop();
  void Serve(int fd);

  Render render_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Stop() wakes the poll
  int port_ = 0;
  std::thread thread_;
};

}  // namespace lavik
