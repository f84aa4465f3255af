// lavik-pubsub-bench: PUBLISH → subscriber delivery latency (bench/pubsub.sh).
//
// S subscriber connections each SUBSCRIBE to their own channel ("psb:<i>"); P publisher
// connections send PUBLISH at a fixed total rate (open loop: the schedule does not slow down
// when the server does), round-robin over the channels, so each published message is delivered
// to exactly one subscriber and "messages/s" means both published and delivered. Each payload
// starts with the send time (CLOCK_MONOTONIC, ns, 16 hex digits) and is padded to --size bytes;
// the subscriber thread takes the receive time as soon as it has parsed the message, and the
// difference is the delivery latency (client send buffers, server and both kernels included).
//
// Two threads: one paces and writes the publishers (and discards their integer replies), one
// reads the subscribers with epoll. Output: one line of key=value pairs.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  std::string host = "127.0.0.1";
  int port = 6379;
  int publishers = 64;
  int subscribers = 100;
  int rate = 20000;  // messages per second, all publishers together
  int seconds = 10;
  int warmup = 2;  // seconds whose messages are not measured
  int size = 128;
};

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "lavik-pubsub-bench: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

int Connect(const Options& o) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) Die("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(o.port));
  if (inet_pton(AF_INET, o.host.c_str(), &a.sin_addr) != 1) Die("bad host " + o.host);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) Die("connect");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

void SendAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) Die("send");
    off += static_cast<size_t>(n);
  }
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Parses one RESP array of bulk strings (a pub/sub message or confirmation, '*' or '>') from
// buf[pos..]; fills up to 4 element views and returns the position after it, or 0 if incomplete.
size_t ParseArray(const std::string& buf, size_t pos, std::string_view* elems, int* count) {
  auto line = [&](size_t p, int64_t* v) -> size_t {
    size_t e = buf.find("\r\n", p);
    if (e == std::string::npos) return 0;
    *v = std::strtoll(buf.c_str() + p + 1, nullptr, 10);
    return e + 2;
  };
  if (pos >= buf.size()) return 0;
  int64_t n;
  size_t p = line(pos, &n);
  if (p == 0) return 0;
  *count = static_cast<int>(n);
  for (int64_t i = 0; i < n; ++i) {
    if (p >= buf.size()) return 0;
    int64_t len;
    if (buf[p] == ':') {  // a confirmation's count
      p = line(p, &len);
      if (p == 0) return 0;
      continue;
    }
    p = line(p, &len);
    if (p == 0) return 0;
    if (len < 0) continue;
    if (buf.size() < p + static_cast<size_t>(len) + 2) return 0;
    if (i < 4) elems[i] = std::string_view(buf.data() + p, static_cast<size_t>(len));
    p += static_cast<size_t>(len) + 2;
  }
  return p;
}

struct SubResult {
  std::vector<uint32_t> lat_us;
  uint64_t received = 0;
};

void RunSubscribers(const Options& o, const std::vector<int>& fds, int64_t measure_from,
                    int64_t stop_at, std::atomic<int>* ready, SubResult* out) {
  int ep = epoll_create1(0);
  std::vector<std::string> bufs(fds.size());
  for (size_t i = 0; i < fds.size(); ++i) {
    SetNonBlocking(fds[i]);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
  }
  out->lat_us.reserve(static_cast<size_t>(o.rate) * static_cast<size_t>(o.seconds));
  int confirmed = 0;
  char chunk[1 << 16];
  epoll_event events[128];
  while (NowNs() < stop_at) {
    int n = epoll_wait(ep, events, 128, 100);
    for (int k = 0; k < n; ++k) {
      size_t i = events[k].data.u64;
      for (;;) {
        ssize_t r = recv(fds[i], chunk, sizeof(chunk), 0);
        if (r <= 0) break;
        bufs[i].append(chunk, static_cast<size_t>(r));
        if (r < static_cast<ssize_t>(sizeof(chunk))) break;
      }
      std::string& b = bufs[i];
      size_t pos = 0;
      for (;;) {
        std::string_view el[4];
        int count = 0;
        size_t next = ParseArray(b, pos, el, &count);
        if (next == 0) break;
        pos = next;
        if (count == 3 && el[0] == "message" && el[2].size() >= 16) {
          const int64_t now = NowNs();
          const int64_t sent = static_cast<int64_t>(
              std::strtoull(std::string(el[2].substr(0, 16)).c_str(), nullptr, 16));
          ++out->received;
          if (sent >= measure_from) {
            out->lat_us.push_back(static_cast<uint32_t>(std::max<int64_t>(0, now - sent) / 1000));
          }
        } else if (count == 3 && el[0] == "subscribe") {
          ready->fetch_add(1);
          ++confirmed;
        }
      }
      b.erase(0, pos);
    }
  }
  close(ep);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    std::string v = argv[i + 1];
    if (k == "--host")
      o.host = v;
    else if (k == "--port")
      o.port = std::atoi(v.c_str());
    else if (k == "--publishers")
      o.publishers = std::atoi(v.c_str());
    else if (k == "--subscribers")
      o.subscribers = std::atoi(v.c_str());
    else if (k == "--rate")
      o.rate = std::atoi(v.c_str());
    else if (k == "--seconds")
      o.seconds = std::atoi(v.c_str());
    else if (k == "--warmup")
      o.warmup = std::atoi(v.c_str());
    else if (k == "--size")
      o.size = std::atoi(v.c_str());
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (o.size < 16 || o.rate <= 0 || o.publishers <= 0 || o.subscribers <= 0) {
    std::fprintf(stderr, "need --size >= 16 and positive counts\n");
    return 2;
  }
  std::vector<int> subs, pubs;
  for (int i = 0; i < o.subscribers; ++i) {
    subs.push_back(Connect(o));
    std::string ch = "psb:" + std::to_string(i);
    SendAll(subs.back(),
            "*2\r\n$9\r\nSUBSCRIBE\r\n$" + std::to_string(ch.size()) + "\r\n" + ch + "\r\n");
  }
  for (int i = 0; i < o.publishers; ++i) pubs.push_back(Connect(o));

  const int64_t start = NowNs() + 300'000'000;  // subscriptions settle first
  const int64_t measure_from = start + int64_t{o.warmup} * 1000000000;
  const int64_t end = measure_from + int64_t{o.seconds} * 1000000000;
  std::atomic<int> ready{0};
  SubResult result;
  std::thread sub_thread(RunSubscribers, std::cref(o), std::cref(subs), measure_from,
                         end + 500'000'000, &ready, &result);
  while (ready.load() < o.subscribers) usleep(1000);

  // Publishers: pre-built commands; only the 16 timestamp digits change per message.
  std::vector<std::string> cmds(static_cast<size_t>(o.subscribers));
  std::vector<size_t> ts_offset(cmds.size());
  for (int i = 0; i < o.subscribers; ++i) {
    std::string ch = "psb:" + std::to_string(i);
    std::string c = "*3\r\n$7\r\nPUBLISH\r\n$" + std::to_string(ch.size()) + "\r\n" + ch + "\r\n$" +
                    std::to_string(o.size) + "\r\n";
    ts_offset[static_cast<size_t>(i)] = c.size();
    c += std::string(static_cast<size_t>(o.size), 'p') + "\r\n";
    cmds[static_cast<size_t>(i)] = c;
  }
  for (int fd : pubs) SetNonBlocking(fd);
  std::vector<std::string> pending(pubs.size());
  uint64_t sent = 0;
  uint64_t next_channel = 0;
  char sink[1 << 16];
  while (NowNs() < start) usleep(200);
  for (;;) {
    const int64_t now = NowNs();
    if (now >= end) break;
    const uint64_t due =
        static_cast<uint64_t>((now - start) / 1000) * static_cast<uint64_t>(o.rate) / 1000000;
    while (sent < due) {
      std::string& c = cmds[next_channel % cmds.size()];
      char ts[17];
      std::snprintf(ts, sizeof(ts), "%016" PRIx64, static_cast<uint64_t>(NowNs()));
      std::memcpy(c.data() + ts_offset[next_channel % cmds.size()], ts, 16);
      pending[sent % pubs.size()] += c;
      ++next_channel;
      ++sent;
    }
    for (size_t i = 0; i < pubs.size(); ++i) {
      while (recv(pubs[i], sink, sizeof(sink), 0) > 0) {
      }
      std::string& p = pending[i];
      if (p.empty()) continue;
      ssize_t n = send(pubs[i], p.data(), p.size(), MSG_NOSIGNAL);
      if (n > 0) p.erase(0, static_cast<size_t>(n));
    }
    // Pace in ~50 µs steps: fine enough for 200k/s (10 messages a step) without a busy spin.
    timespec nap{0, 50000};
    nanosleep(&nap, nullptr);
  }
  sub_thread.join();
  std::vector<uint32_t>& lat = result.lat_us;
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) -> uint32_t {
    if (lat.empty()) return 0;
    size_t idx = static_cast<size_t>(p * static_cast<double>(lat.size() - 1));
    return lat[idx];
  };
  const double secs = static_cast<double>(end - start) / 1e9;
  std::printf("rate_target=%d published=%" PRIu64 " received=%" PRIu64
              " measured=%zu "
              "achieved_per_s=%.0f p50_us=%u p90_us=%u p99_us=%u p999_us=%u max_us=%u\n",
              o.rate, sent, result.received, lat.size(), static_cast<double>(sent) / secs,
              pct(0.50), pct(0.90), pct(0.99), pct(0.999), lat.empty() ? 0 : lat.back());
  for (int fd : subs) close(fd);
  for (int fd : pubs) close(fd);
  return 0;
}
