#include "observability/metrics_http.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/clock.h"
#include "net/listener.h"

namespace lavik {
namespace {

constexpr size_t kMaxRequest = 8192;
constexpr int64_t kRequestTimeoutUs = 2 * 1000 * 1000;  // a slow client cannot hold the thread

void AppendDouble(std::string* out, double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  out->append(buf);
}

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}

  void Family(std::string_view name, std::string_view type, std::string_view help) {
    out_->append("# HELP ").append(name).append(" ").append(help).append("\n");
    out_->append("# TYPE ").append(name).append(" ").append(type).append("\n");
  }
  // name{labels} value
  void Sample(std::string_view name, std::string_view labels, double v) {
    out_->append(name);
    if (!labels.empty()) out_->append("{").append(labels).append("}");
    out_->append(" ");
    AppendDouble(out_, v);
    out_->append("\n");
  }
  void Gauge(std::string_view name, std::string_view help, double v) {
    Family(name, "gauge", help);
    Sample(name, "", v);
  }
  void Counter(std::string_view name, std::string_view help, double v) {
    Family(name, "counter", help);
    Sample(name, "", v);
  }

 private:
  std::string* out_;
};

// A histogram bound in seconds, shortest exact form ("1e-06", "0.001024").
std::string FormatLe(double seconds) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.10g", seconds);
  return buf;
}

std::string Label(std::string_view key, std::string_view value) {
  return std::string(key) + "=\"" + EscapeLabelValue(value) + "\"";
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void Respond(int fd, std::string_view status, std::string_view content_type, std::string_view body,
             bool head, std::string_view extra_headers = "") {
  std::string r = "HTTP/1.1 ";
  r.append(status).append("\r\nContent-Type: ").append(content_type);
  r.append("\r\nContent-Length: ").append(std::to_string(body.size()));
  r.append("\r\nConnection: close\r\n").append(extra_headers).append("\r\n");
  if (!head) r.append(body);
  SendAll(fd, r);
}

}  // namespace

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string RenderPrometheus(const MetricsSnapshot& s) {
  std::string out;
  Writer w(&out);
  w.Gauge("lavik_up", "1 if every worker answered this scrape in time (0: shard figures partial).",
          s.shards_complete ? 1 : 0);
  w.Gauge("lavik_uptime_seconds", "Seconds since the server started.", s.uptime_seconds);

  w.Family("lavik_commands_total", "counter", "Commands run to completion, by command.");
  for (const auto& c : s.commands) w.Sample("lavik_commands_total", Label("cmd", c.name), c.calls);
  w.Family("lavik_command_failed_total", "counter",
           "Commands that ran and replied with an error, by command.");
  for (const auto& c : s.commands) {
    w.Sample("lavik_command_failed_total", Label("cmd", c.name), c.failed);
  }
  w.Family("lavik_command_rejected_total", "counter",
           "Commands refused before running (arity, NOAUTH), by command.");
  for (const auto& c : s.commands) {
    w.Sample("lavik_command_rejected_total", Label("cmd", c.name), c.rejected);
  }
  w.Family("lavik_command_latency_seconds", "summary",
           "Time from dispatch to complete reply (device reads and worker hops included).");
  for (const auto& c : s.commands) {
    const std::string cmd = Label("cmd", c.name);
    for (const auto& [q, v] : c.quantiles) {
      char qs[32];
      std::snprintf(qs, sizeof(qs), "%g", q);
      w.Sample("lavik_command_latency_seconds", cmd + "," + Label("quantile", qs), v);
    }
    w.Sample("lavik_command_latency_seconds_sum", cmd, c.seconds);
    w.Sample("lavik_command_latency_seconds_count", cmd, c.calls);
  }
  w.Family("lavik_command_errors_total", "counter", "Error replies, by error code.");
  for (const auto& [code, n] : s.errors) {
    w.Sample("lavik_command_errors_total", Label("code", code), n);
  }
  w.Counter("lavik_error_replies_total", "Error replies of every kind.", s.error_replies);
  w.Counter("lavik_commands_processed_total",
            "Commands dispatched (INFO total_commands_processed).", s.commands_processed);
  w.Family("lavik_worker_commands_total", "counter",
           "Commands run for the clients of each worker thread (its load).");
  for (size_t i = 0; i < s.worker_commands.size(); ++i) {
    w.Sample("lavik_worker_commands_total", Label("worker", std::to_string(i)),
             s.worker_commands[i]);
  }

  w.Gauge("lavik_connected_clients", "Client connections open now.", s.connected_clients);
  w.Counter("lavik_connections_received_total", "Client connections accepted.",
            s.connections_received);
  w.Counter("lavik_rejected_connections_total", "Connections refused (maxclients).",
            s.rejected_connections);

  w.Gauge("lavik_keys", "Keys stored.", s.keys);
  w.Gauge("lavik_keys_with_expiry", "Keys with a time to live.", s.expires);
  w.Counter("lavik_expired_keys_total", "Keys removed because their time to live passed.",
            s.expired_keys);
  w.Counter("lavik_keyspace_hits_total", "Key lookups that found the key.", s.keyspace_hits);
  w.Counter("lavik_keyspace_misses_total", "Key lookups that did not find the key.",
            s.keyspace_misses);

  w.Family("lavik_memory_bytes", "gauge",
           "Memory by use: the DRAM index (with TTLs), the value cache, write buffers, and the "
           "process's resident set.");
  w.Sample("lavik_memory_bytes", Label("kind", "index"), s.memory_index);
  w.Sample("lavik_memory_bytes", Label("kind", "cache"), s.memory_cache);
  w.Sample("lavik_memory_bytes", Label("kind", "buffers"), s.memory_buffers);
  w.Sample("lavik_memory_bytes", Label("kind", "rss"), s.memory_rss);

  w.Gauge("lavik_cache_capacity_bytes", "Value cache capacity.", s.cache_capacity);
  w.Counter("lavik_cache_hits_total", "Value reads served from the cache.", s.cache_hits);
  w.Counter("lavik_cache_misses_total", "Value reads that went to the device.", s.cache_misses);

  w.Gauge("lavik_storage_capacity_bytes", "Size of the data file.", s.storage_capacity);
  w.Gauge("lavik_storage_used_bytes", "Bytes of data-file segments in use.", s.storage_used);
  w.Gauge("lavik_storage_live_bytes", "Bytes of live records in the segments in use.",
          s.storage_live);
  w.Gauge("lavik_storage_segments", "Segments in the data file.", s.segments_total);
  w.Gauge("lavik_storage_segments_free", "Free segments.", s.segments_free);

  w.Counter("lavik_defrag_segments_reclaimed_total", "Segments emptied and freed by defrag.",
            s.defrag_segments);
  w.Counter("lavik_defrag_records_moved_total", "Live records defrag re-appended.",
            s.defrag_records);
  w.Counter("lavik_defrag_bytes_reclaimed_total", "Bytes defrag gave back to the free pool.",
            s.defrag_bytes);
  w.Gauge("lavik_defrag_running", "1 while a defrag pass runs on some worker.",
          s.defrag_running ? 1 : 0);

  w.Family("lavik_device_ops_total", "counter", "Data-file operations submitted, by kind.");
  w.Sample("lavik_device_ops_total", Label("op", "read"), s.device_reads);
  w.Sample("lavik_device_ops_total", Label("op", "write"), s.device_writes);
  w.Sample("lavik_device_ops_total", Label("op", "sync"), s.device_syncs);
  w.Family("lavik_device_bytes_total", "counter", "Data-file bytes transferred, by direction.");
  w.Sample("lavik_device_bytes_total", Label("op", "read"), s.device_bytes_read);
  w.Sample("lavik_device_bytes_total", Label("op", "write"), s.device_bytes_written);
  w.Family("lavik_device_latency_seconds", "histogram",
           "Data-file operation latency, submit to completion (io_uring queueing included).");
  static constexpr const char* kOps[3] = {"read", "write", "sync"};
  for (int k = 0; k < 3; ++k) {
    const IoLatency& l = s.device_latency[k];
    const std::string op = Label("op", kOps[k]);
    uint64_t cumulative = 0;
    for (int i = 0; i < IoLatency::kBuckets - 1; ++i) {
      cumulative += l.buckets[i];
      // Bucket i counts requests under 2^i us.
      const double le = static_cast<double>(uint64_t{1} << i) / 1e6;
      w.Sample("lavik_device_latency_seconds_bucket", op + "," + Label("le", FormatLe(le)),
               cumulative);
    }
    w.Sample("lavik_device_latency_seconds_bucket", op + "," + Label("le", "+Inf"), l.count);
    w.Sample("lavik_device_latency_seconds_sum", op, static_cast<double>(l.total_us) / 1e6);
    w.Sample("lavik_device_latency_seconds_count", op, l.count);
  }

  w.Gauge("lavik_slowlog_entries", "Entries in the slow log.", s.slowlog_entries);
  return out;
}

bool MetricsHttp::Bind(const std::string& address, int port, std::string* error) {
  const int fd = OpenListeningSocket(address, port, 16, &port_, error);
  if (fd < 0) return false;
  wake_fd_ = eventfd(0, EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    *error = std::string("eventfd: ") + std::strerror(errno);
    close(fd);
    return false;
  }
  listen_fd_ = fd;
  return true;
}

void MetricsHttp::Serve(Render render) {
  render_ = std::move(render);
  thread_ = std::thread([this]() { Loop(); });
}

void MetricsHttp::Stop() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
    thread_.join();
  }
  if (listen_fd_ >= 0) close(listen_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
}

void MetricsHttp::Loop() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    Serve(fd);
    close(fd);
  }
}

void MetricsHttp::Serve(int fd) {
  std::string req;
  const int64_t deadline = MonotonicUs() + kRequestTimeoutUs;
  while (req.find("\r\n\r\n") == std::string::npos && req.find("\n\n") == std::string::npos) {
    const int64_t left_ms = (deadline - MonotonicUs()) / 1000;
    if (left_ms <= 0 || req.size() > kMaxRequest) return;
    pollfd p[2] = {{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(p, 2, static_cast<int>(left_ms)) <= 0 || p[1].revents != 0) return;
    char buf[2048];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return;
    req.append(buf, static_cast<size_t>(n));
  }
  // Request line: METHOD SP target SP version.
  const size_t eol = req.find_first_of("\r\n");
  std::string_view line(req.data(), eol);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) {
    Respond(fd, "400 Bad Request", "text/plain; charset=utf-8", "Bad Request\n", false);
    return;
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view path = target.substr(0, target.find('?'));
  if (path != "/metrics") {
    Respond(fd, "404 Not Found", "text/plain; charset=utf-8", "Not Found\n", method == "HEAD");
    return;
  }
  if (method != "GET" && method != "HEAD") {
    Respond(fd, "405 Method Not Allowed", "text/plain; charset=utf-8", "Method Not Allowed\n",
            false, "Allow: GET, HEAD\r\n");
    return;
  }
  Respond(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", render_(), method == "HEAD");
}

}  // namespace lavik
