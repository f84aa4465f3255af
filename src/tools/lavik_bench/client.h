// The load-generating side of lavik-bench: connection setup and the per-thread event loop.
//
// A Worker owns a fixed set of connected, non-blocking sockets and drives them from one epoll
// loop on the thread that calls Run. Three modes share the loop:
//   closed loop  every connection keeps `pipeline` requests in flight; a reply triggers the next
//                request; latency is measured from the moment a request is written.
//   open loop    the worker's share of --rate is a fixed schedule of intended send times, dealt
//                round-robin to its connections (so each connection sends every C/R seconds);
//                a connection with `pipeline` requests in flight queues due requests, and latency
//                is measured from the intended send time, so a slow server is charged for the
//                wait it causes (no coordinated omission).
//   fill         connection g of C writes keys [min + N*g/C, min + N*(g+1)/C) once each with SET,
//                `pipeline` in flight, then stops.
// Only replies arriving between Timeline::measure_ns and end_ns are recorded (whenever their
// request was sent); earlier ones are warmup, later ones are never read.
//
// Thread safety: a Worker is used by one thread at a time; Stats are read after Run returns.

#ifndef LAVIK_TOOLS_LAVIK_BENCH_CLIENT_H_
#define LAVIK_TOOLS_LAVIK_BENCH_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tools/lavik_bench/histogram.h"
#include "tools/lavik_bench/options.h"

namespace lavik::bench {

// CLOCK_MONOTONIC in nanoseconds.
int64_t MonotonicNs();

// Opens a blocking TCP connection to host:port, then makes it non-blocking with TCP_NODELAY.
// Returns the fd, or -1 with *error set.
int ConnectTo(const std::string& host, int port, std::string* error);

// Key range [begin, end) written by connection `index` of `connections` in --fill mode; the
// ranges of all connections partition key_min..key_max exactly.
struct KeyRange {
  uint64_t begin;
  uint64_t end;
};
KeyRange FillRange(uint64_t key_min, uint64_t key_max, int index, int connections);

// Monotonic-clock instants of one run.
struct Timeline {
  int64_t start_ns = 0;    // load starts (open loop: the schedule's origin)
  int64_t measure_ns = 0;  // start + warmup: recording starts
  int64_t end_ns = 0;      // measure + duration: the run stops (unused by fill)
};

struct WorkerStats {
  LatencyHistogram histogram;
  // Open loop: how late each recorded request left the client (actual send - intended send).
  // Large values mean the client, not the server, fell behind its schedule.
  LatencyHistogram send_lag;
  uint64_t requests = 0;  // recorded replies (including misses and error replies)
  uint64_t misses = 0;    // nil replies to GET
  uint64_t error_replies = 0;
  uint64_t connection_errors = 0;  // failed or closed connections, protocol errors
  uint64_t keys_written = 0;       // fill: +OK replies to SET
  std::string first_error;         // text of the first error, for the report

  void Merge(const WorkerStats& other);
};

class Worker {
 public:
  // `fds`: connected non-blocking sockets, now owned by the worker; `first_index`: the global
  // index of fds[0] (connections are numbered 0..C-1 across workers); `worker_index` of
  // `opts.threads` spreads the open-loop schedules of the workers. `value` is the SET payload;
  // `opts` must outlive the worker.
  Worker(const Options& opts, int worker_index, int first_index, std::vector<int> fds,
         const std::string& value, uint64_t seed);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs the configured mode until t.end_ns (fill: until every key is answered or every
  // connection has failed).
  void Run(const Timeline& t);

  const WorkerStats& stats() const { return stats_; }

 private:
  struct Conn;

  void Issue(Conn* c, int64_t start_ns, int64_t lag_ns, bool is_get, uint64_t key);
  void IssueNext(Conn* c, int64_t start_ns, int64_t lag_ns);
  void Refill(Conn* c, int64_t now);
  void Flush(Conn* c);
  void OnReadable(Conn* c);
  void Fail(Conn* c, const std::string& why);
  void Dispatch(int64_t now);
  void MarkDirty(Conn* c);
  void SendDirty();
  int64_t Intended(uint64_t k) const;
  bool FillDone() const;

  const Options& opts_;
  std::string value_bulk_;  // "$<len>\r\n<value>\r\n", appended to every SET
  std::vector<std::unique_ptr<Conn>> conns_;
  std::vector<Conn*> dirty_;  // connections that got replies or backlog since the last send
  int epoll_fd_ = -1;
  Timeline timeline_;
  WorkerStats stats_;
  // Open loop: request k of this worker is due at start + offset_ns_ + k * period_ns_ and goes to
  // conns_[k % n]; next_k_ is the first not yet dealt out.
  double period_ns_ = 0;
  double offset_ns_ = 0;
  uint64_t next_k_ = 0;
  int worker_index_;
  int alive_ = 0;
};

}  // namespace lavik::bench

#endif  // LAVIK_TOOLS_LAVIK_BENCH_CLIENT_H_
