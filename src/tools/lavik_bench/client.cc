#include "tools/lavik_bench/client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/numbers.h"
#include "tools/lavik_bench/reply_parser.h"

namespace lavik::bench {
namespace {

constexpr size_t kReadChunk = 16 * 1024;
constexpr int kMaxEvents = 256;
// Open loop: requests dealt out per Dispatch call, so a worker that fell far behind its schedule
// still gets back to reading replies between batches.
constexpr int kMaxDispatchBatch = 4096;

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void AppendBulk(std::string* out, const char* data, size_t len) {
  char digits[kMaxInt64Chars];
  out->push_back('$');
  out->append(digits, FormatUint64(len, digits));
  out->append("\r\n", 2);
  out->append(data, len);
  out->append("\r\n", 2);
}

std::string ErrnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int ConnectTo(const std::string& host, int port, std::string* error) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    *error = "bad IPv4 address " + host;
    return -1;
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = ErrnoText("socket");
    return -1;
  }
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    *error = ErrnoText(("connect to " + host + ":" + std::to_string(port)).c_str());
    close(fd);
    return -1;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  const int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    *error = ErrnoText("fcntl");
    close(fd);
    return -1;
  }
  return fd;
}

KeyRange FillRange(uint64_t key_min, uint64_t key_max, int index, int connections) {
  // 128-bit so N * (index + 1) cannot overflow for any key range.
  const unsigned __int128 n = static_cast<unsigned __int128>(key_max - key_min) + 1;
  const auto at = [&](int i) {
    return static_cast<uint64_t>(key_min +
                                 n * static_cast<unsigned>(i) / static_cast<unsigned>(connections));
  };
  return {at(index), at(index + 1)};
}

void WorkerStats::Merge(const WorkerStats& other) {
  histogram.Merge(other.histogram);
  send_lag.Merge(other.send_lag);
  requests += other.requests;
  misses += other.misses;
  error_replies += other.error_replies;
  connection_errors += other.connection_errors;
  keys_written += other.keys_written;
  if (first_error.empty()) first_error = other.first_error;
}

struct Worker::Conn {
  struct InFlight {
    int64_t start_ns;  // send time (closed loop, fill) or intended send time (open loop)
    int64_t lag_ns;    // open loop: actual send time - start_ns
    bool is_get;
  };

  int fd = -1;
  int local = 0;  // index within this worker
  bool dead = false;
  bool want_out = false;  // EPOLLOUT registered
  bool dirty = false;     // listed in dirty_: may have requests to send
  bool finished = false;  // fill: range done and answered
  uint64_t rng = 0;
  uint64_t cursor = 0;  // sequential pattern: next key
  uint32_t cycle = 0;   // position in the GET:SET cycle
  uint64_t fill_next = 0;
  uint64_t fill_end = 0;
  uint64_t backlog = 0;        // open loop: due but not yet sent
  uint64_t sent = 0;           // open loop: requests sent so far (the j of the next one)
  std::vector<InFlight> ring;  // in-flight requests, FIFO, capacity = pipeline
  size_t ring_head = 0;
  size_t in_flight = 0;
  std::string out;
  size_t out_off = 0;
  std::vector<char> in;
  size_t in_begin = 0;
  size_t in_end = 0;
};

Worker::Worker(const Options& opts, int worker_index, int first_index, std::vector<int> fds,
               const std::string& value, uint64_t seed)
    : opts_(opts), worker_index_(worker_index) {
  value_bulk_.reserve(value.size() + 32);
  AppendBulk(&value_bulk_, value.data(), value.size());
  const uint32_t cycle_len = static_cast<uint32_t>(opts.get_ratio + opts.set_ratio);
  for (size_t i = 0; i < fds.size(); ++i) {
    auto c = std::make_unique<Conn>();
    const int g = first_index + static_cast<int>(i);
    c->fd = fds[i];
    c->local = static_cast<int>(i);
    // An independent stream per connection: the base seed and the index, mixed.
    uint64_t s = seed ^ (0xD1B54A32D192ED03ull * (static_cast<uint64_t>(g) + 1));
    c->rng = SplitMix64(&s);
    const KeyRange r = FillRange(opts.key_min, opts.key_max, g, opts.connections);
    c->cursor = r.begin;  // sequential pattern: connections start spread over the range
    c->fill_next = r.begin;
    c->fill_end = r.end;
    c->cycle = static_cast<uint32_t>(g) % cycle_len;
    c->ring.resize(static_cast<size_t>(opts.pipeline));
    c->in.resize(kReadChunk * 2);
    conns_.push_back(std::move(c));
  }
  alive_ = static_cast<int>(conns_.size());
}

Worker::~Worker() {
  for (auto& c : conns_) {
    if (c->fd >= 0) close(c->fd);
  }
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

void Worker::Issue(Conn* c, int64_t start_ns, int64_t lag_ns, bool is_get, uint64_t key) {
  char digits[kMaxInt64Chars];
  const size_t key_len = FormatUint64(key, digits);
  if (is_get) {
    c->out.append("*2\r\n$3\r\nGET\r\n", 13);
    AppendBulk(&c->out, digits, key_len);
  } else {
    c->out.append("*3\r\n$3\r\nSET\r\n", 13);
    AppendBulk(&c->out, digits, key_len);
    c->out.append(value_bulk_);
  }
  const size_t slot = (c->ring_head + c->in_flight) % c->ring.size();
  c->ring[slot] = {start_ns, lag_ns, is_get};
  ++c->in_flight;
}

void Worker::IssueNext(Conn* c, int64_t start_ns, int64_t lag_ns) {
  const bool is_get = c->cycle < static_cast<uint32_t>(opts_.get_ratio);
  if (++c->cycle == static_cast<uint32_t>(opts_.get_ratio + opts_.set_ratio)) c->cycle = 0;
  uint64_t key;
  if (opts_.key_pattern == KeyPattern::kRandom) {
    // Multiply-shift maps 64 random bits onto the range; the bias is below 2^-64 * N.
    const unsigned __int128 n = static_cast<unsigned __int128>(opts_.key_max - opts_.key_min) + 1;
    key = opts_.key_min + static_cast<uint64_t>((SplitMix64(&c->rng) * n) >> 64);
  } else {
    key = c->cursor;
    c->cursor = c->cursor >= opts_.key_max ? opts_.key_min : c->cursor + 1;
  }
  Issue(c, start_ns, lag_ns, is_get, key);
}

int64_t Worker::Intended(uint64_t k) const {
  return timeline_.start_ns +
         static_cast<int64_t>(offset_ns_ + static_cast<double>(k) * period_ns_);
}

void Worker::Refill(Conn* c, int64_t now) {
  if (c->dead) return;
  const size_t cap = c->ring.size();
  if (opts_.fill) {
    while (c->in_flight < cap && c->fill_next < c->fill_end) {
      Issue(c, now, 0, /*is_get=*/false, c->fill_next++);
    }
    if (!c->finished && c->in_flight == 0 && c->fill_next >= c->fill_end) {
      c->finished = true;
      --alive_;
    }
  } else if (opts_.open_loop()) {
    const uint64_t n = conns_.size();
    while (c->backlog > 0 && c->in_flight < cap) {
      --c->backlog;
      const int64_t intended = Intended(static_cast<uint64_t>(c->local) + c->sent * n);
      IssueNext(c, intended, now - intended);
      ++c->sent;
    }
  } else {
    while (c->in_flight < cap) IssueNext(c, now, 0);
  }
  Flush(c);
}

void Worker::Flush(Conn* c) {
  if (c->dead || c->out_off == c->out.size()) return;
  const ssize_t n =
      send(c->fd, c->out.data() + c->out_off, c->out.size() - c->out_off, MSG_NOSIGNAL);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
    Fail(c, ErrnoText("send"));
    return;
  }
  if (n > 0) c->out_off += static_cast<size_t>(n);
  const bool drained = c->out_off == c->out.size();
  if (drained) {
    c->out.clear();
    c->out_off = 0;
  }
  if (drained == c->want_out) {
    // Register EPOLLOUT while output is pending, drop it once drained.
    c->want_out = !drained;
    epoll_event ev{};
    ev.events = EPOLLIN | (c->want_out ? EPOLLOUT : 0u);
    ev.data.ptr = c;
    epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c->fd, &ev);
  }
}

void Worker::Fail(Conn* c, const std::string& why) {
  if (c->dead) return;
  c->dead = true;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->fd, nullptr);
  close(c->fd);
  c->fd = -1;
  ++stats_.connection_errors;
  if (stats_.first_error.empty()) stats_.first_error = why;
  if (!c->finished) --alive_;
  c->finished = true;
}

void Worker::OnReadable(Conn* c) {
  if (c->in.size() - c->in_end < kReadChunk) {
    if (c->in_begin > 0) {
      std::memmove(c->in.data(), c->in.data() + c->in_begin, c->in_end - c->in_begin);
      c->in_end -= c->in_begin;
      c->in_begin = 0;
    }
    if (c->in.size() - c->in_end < kReadChunk) c->in.resize(c->in.size() * 2);
  }
  const ssize_t got = recv(c->fd, c->in.data() + c->in_end, c->in.size() - c->in_end, 0);
  if (got == 0) {
    Fail(c, "connection closed by the server");
    return;
  }
  if (got < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) Fail(c, ErrnoText("recv"));
    return;
  }
  c->in_end += static_cast<size_t>(got);
  const int64_t now = MonotonicNs();
  // Replies are recorded by arrival: one within [measure, end] counts, whenever it was sent, so
  // an open loop that fell behind during warmup still shows its achieved rate and full delay.
  const bool in_window = now >= timeline_.measure_ns && now <= timeline_.end_ns;
  Reply reply;
  size_t used = 0;
  for (;;) {
    const ParseStatus s =
        ParseReply(c->in.data() + c->in_begin, c->in_end - c->in_begin, &reply, &used);
    if (s == ParseStatus::kNeedMore) break;
    if (s == ParseStatus::kError || c->in_flight == 0) {
      Fail(c, s == ParseStatus::kError ? "protocol error in a reply" : "unexpected reply");
      return;
    }
    const Conn::InFlight req = c->ring[c->ring_head];
    c->ring_head = (c->ring_head + 1) % c->ring.size();
    --c->in_flight;
    const bool is_error = reply.kind == ReplyKind::kError;
    if (is_error && stats_.first_error.empty()) {
      const char* line = c->in.data() + c->in_begin;
      stats_.first_error.assign(line, std::min<size_t>(used, 200));
      while (!stats_.first_error.empty() &&
             (stats_.first_error.back() == '\n' || stats_.first_error.back() == '\r')) {
        stats_.first_error.pop_back();
      }
    }
    c->in_begin += used;
    if (opts_.fill) {
      if (is_error || reply.kind != ReplyKind::kSimple) {
        ++stats_.error_replies;
      } else {
        ++stats_.keys_written;
      }
    } else if (in_window) {
      ++stats_.requests;
      if (is_error) ++stats_.error_replies;
      if (req.is_get && reply.kind == ReplyKind::kNil) ++stats_.misses;
      stats_.histogram.Record((now - req.start_ns + 500) / 1000);  // ns -> us, rounded
      if (opts_.open_loop()) stats_.send_lag.Record((req.lag_ns + 500) / 1000);
    }
  }
  if (c->in_begin == c->in_end) c->in_begin = c->in_end = 0;
  MarkDirty(c);
}

void Worker::MarkDirty(Conn* c) {
  if (!c->dirty) {
    c->dirty = true;
    dirty_.push_back(c);
  }
}

void Worker::SendDirty() {
  for (Conn* c : dirty_) {
    c->dirty = false;
    // Closed loop: each request's clock starts right before its own send.
    Refill(c, MonotonicNs());
  }
  dirty_.clear();
}

void Worker::Dispatch(int64_t now) {
  const uint64_t n = conns_.size();
  for (int i = 0; i < kMaxDispatchBatch && Intended(next_k_) <= now; ++i) {
    Conn* c = conns_[next_k_ % n].get();
    ++next_k_;
    if (c->dead) continue;
    ++c->backlog;
    MarkDirty(c);
  }
}

void Worker::Run(const Timeline& t) {
  timeline_ = t;
  // Sub-millisecond schedules need precise wakeups; the default 50 us timer slack would add to
  // every open-loop latency.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    for (auto& c : conns_) Fail(c.get(), ErrnoText("epoll_create1"));
    return;
  }
  for (auto& c : conns_) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = c.get();
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c->fd, &ev) != 0) Fail(c.get(), ErrnoText("epoll"));
  }
  if (opts_.open_loop() && !conns_.empty()) {
    // This worker's share of the rate; workers are offset by a fraction of a period so their
    // sends interleave instead of coinciding.
    const double share = opts_.rate * static_cast<double>(conns_.size()) / opts_.connections;
    period_ns_ = 1e9 / share;
    offset_ns_ = period_ns_ * worker_index_ / opts_.threads;
  }
  timespec start_ts{static_cast<time_t>(t.start_ns / 1000000000), t.start_ns % 1000000000};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &start_ts, nullptr) == EINTR) {
  }
  if (!opts_.open_loop()) {
    const int64_t now = MonotonicNs();
    for (auto& c : conns_) Refill(c.get(), now);
  }
  epoll_event events[kMaxEvents];
  for (;;) {
    int64_t now = MonotonicNs();
    if (!opts_.fill && now >= t.end_ns) break;
    if (opts_.open_loop()) Dispatch(now);
    // Sends go out after the whole batch of replies is read, so the time spent sending on
    // one connection is not charged to the replies still waiting on the others.
    SendDirty();
    if (alive_ == 0) break;
    now = MonotonicNs();
    timespec timeout{};
    timespec* timeout_ptr = nullptr;
    if (!opts_.fill) {
      int64_t deadline = t.end_ns;
      if (opts_.open_loop()) deadline = std::min(deadline, Intended(next_k_));
      const int64_t wait = std::max<int64_t>(0, deadline - now);
      timeout = {static_cast<time_t>(wait / 1000000000), wait % 1000000000};
      timeout_ptr = &timeout;
    }
    const int ready = epoll_pwait2(epoll_fd_, events, kMaxEvents, timeout_ptr, nullptr);
    for (int i = 0; i < ready; ++i) {
      Conn* c = static_cast<Conn*>(events[i].data.ptr);
      if (c->dead) continue;
      if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) OnReadable(c);
      if (!c->dead && (events[i].events & EPOLLOUT)) Flush(c);
    }
  }
}

}  // namespace lavik::bench
