// Whole lavik-bench runs (fill, closed loop, open loop, failures) against a small in-process
// RESP server on 127.0.0.1.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protocol/request_parser.h"
#include "tools/lavik_bench/client.h"
#include "tools/lavik_bench/options.h"
#include "tools/lavik_bench/report.h"
#include "tools/lavik_bench/runner.h"

namespace lavik::bench {
namespace {

// A single-threaded RESP server on 127.0.0.1: SET stores, GET answers the value or nil, a GET of
// key "13" answers an error, any other command answers +OK. It counts every SET per key.
class FakeServer {
 public:
  FakeServer() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len), 0);
    EXPECT_EQ(listen(listen_fd_, 128), 0);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    close(listen_fd_);
  }
  int port() const { return port_; }
  void Preload(const std::string& key, const std::string& value) {
    std::lock_guard<std::mutex> lock(mu_);
    data_[key] = value;
  }
  std::map<std::string, int> set_counts() {
    std::lock_guard<std::mutex> lock(mu_);
    return set_counts_;
  }
  std::map<std::string, std::string> data() {
    std::lock_guard<std::mutex> lock(mu_);
    return data_;
  }
  // After this many replies in total, the server closes every connection.
  void CloseAfter(int replies) { close_after_ = replies; }

 private:
  struct Client {
    int fd = -1;
    std::string in;
    std::unique_ptr<RequestParser> parser = std::make_unique<RequestParser>();
  };

  void Serve(Client* c, std::string* out) {
    size_t off = 0;
    while (c->parser->Parse(c->in.data() + off, c->in.size() - off) ==
           RequestParser::Status::kDone) {
      const auto args = c->parser->args();
      off += c->parser->consumed();
      std::lock_guard<std::mutex> lock(mu_);
      ++replies_;
      if (args.size() == 3 && args[0] == "SET") {
        data_[std::string(args[1])] = std::string(args[2]);
        ++set_counts_[std::string(args[1])];
        *out += "+OK\r\n";
      } else if (args.size() == 2 && args[0] == "GET") {
        const auto it = data_.find(std::string(args[1]));
        if (args[1] == "13") {
          *out += "-ERR thirteen\r\n";
        } else if (it == data_.end()) {
          *out += "$-1\r\n";
        } else {
          *out += "$" + std::to_string(it->second.size()) + "\r\n" + it->second + "\r\n";
        }
      } else {
        *out += "+OK\r\n";
      }
    }
    c->in.erase(0, off);
  }

  void Loop() {
    std::vector<Client> clients;
    while (!stop_) {
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      for (const Client& c : clients) fds.push_back({c.fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), 10) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        Client c;
        c.fd = accept(listen_fd_, nullptr, nullptr);
        clients.push_back(std::move(c));
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        Client& c = clients[i - 1];
        if (c.fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char buf[65536];
        const ssize_t n = recv(c.fd, buf, sizeof(buf), 0);
        if (n <= 0) {
          close(c.fd);
          c.fd = -1;
          continue;
        }
        c.in.append(buf, static_cast<size_t>(n));
        std::string out;
        Serve(&c, &out);
        // Blocking sockets: the reply is written whole.
        for (size_t done = 0; done < out.size();) {
          const ssize_t w = send(c.fd, out.data() + done, out.size() - done, MSG_NOSIGNAL);
          if (w <= 0) break;
          done += static_cast<size_t>(w);
        }
        if (close_after_ > 0 && replies_ >= close_after_) {
          for (Client& other : clients) {
            if (other.fd >= 0) close(other.fd);
            other.fd = -1;
          }
        }
      }
      std::erase_if(clients, [](const Client& c) { return c.fd < 0; });
    }
    for (const Client& c : clients) close(c.fd);
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> close_after_{0};
  int replies_ = 0;  // guarded by mu_
  std::mutex mu_;
  std::map<std::string, int> set_counts_;
  std::map<std::string, std::string> data_;
  std::thread thread_;
};

Options LocalOptions(int port) {
  Options o;
  o.port = port;
  o.value_size = 100;
  o.duration_s = 0.3;
  return o;
}

TEST(RunTest, FillWritesEveryKeyExactlyOnce) {
  FakeServer server;
  Options o = LocalOptions(server.port());
  o.fill = true;
  o.key_min = 3;
  o.key_max = 2002;
  o.connections = 7;
  o.threads = 2;
  o.pipeline = 16;
  RunResult r;
  std::string error;
  ASSERT_TRUE(RunBenchmark(o, 1, &r, &error)) << error;
  EXPECT_TRUE(r.FillExact(o));
  EXPECT_EQ(r.stats.keys_written, 2000u);
  const auto counts = server.set_counts();
  ASSERT_EQ(counts.size(), 2000u);
  for (uint64_t k = 3; k <= 2002; ++k) EXPECT_EQ(counts.at(std::to_string(k)), 1) << k;
  EXPECT_EQ(server.data().at("3"), MakeValue(100));
  EXPECT_NE(FormatFillText(o, r).find("2000 of 2000 keys written"), std::string::npos);
  EXPECT_NE(FormatFillJson(o, r).find("\"keys_written\":2000"), std::string::npos);
}

TEST(RunTest, ClosedLoopCountsRequestsMissesAndErrors) {
  FakeServer server;
  for (int k = 1; k <= 20; ++k) server.Preload(std::to_string(k), "v");
  Options o = LocalOptions(server.port());
  o.key_max = 40;  // half the keys miss, and key 13 answers an error
  o.connections = 4;
  o.threads = 2;
  o.pipeline = 4;
  o.warmup_s = 0.1;
  RunResult r;
  std::string error;
  ASSERT_TRUE(RunBenchmark(o, 99, &r, &error)) << error;
  EXPECT_GT(r.stats.requests, 100u);
  EXPECT_EQ(r.stats.histogram.count(), r.stats.requests);
  EXPECT_GT(r.stats.misses, r.stats.requests / 4);
  EXPECT_LT(r.stats.misses, r.stats.requests * 3 / 4);
  EXPECT_GT(r.stats.error_replies, 0u);
  EXPECT_EQ(r.stats.first_error, "-ERR thirteen");
  EXPECT_EQ(r.stats.connection_errors, 0u);
  EXPECT_NEAR(r.duration_s, 0.3, 1e-6);
  EXPECT_TRUE(server.set_counts().empty());  // ratio 1:0 sends no SET
}

TEST(RunTest, RatioAndSequentialKeys) {
  FakeServer server;
  Options o = LocalOptions(server.port());
  o.get_ratio = 1;
  o.set_ratio = 3;
  o.key_pattern = KeyPattern::kSequential;
  o.key_max = 1000000;
  o.connections = 1;
  RunResult r;
  std::string error;
  ASSERT_TRUE(RunBenchmark(o, 5, &r, &error)) << error;
  const auto counts = server.set_counts();
  ASSERT_GT(counts.size(), 10u);
  // One connection walks the keys in order: each written key is written once, and keys
  // 1, 2, 3 (the first cycle: GET 1, SET 2, SET 3, SET 4) go GET, SET, SET, SET.
  EXPECT_EQ(counts.count("1"), 0u);
  EXPECT_EQ(counts.at("2"), 1);
  EXPECT_EQ(counts.at("4"), 1);
  EXPECT_EQ(counts.count("5"), 0u);
  for (const auto& [key, n] : counts) EXPECT_EQ(n, 1) << key;
}

TEST(RunTest, OpenLoopKeepsToTheSchedule) {
  FakeServer server;
  Options o = LocalOptions(server.port());
  o.rate = 2000;
  o.connections = 4;
  o.threads = 2;
  o.duration_s = 0.5;
  o.key_max = 100;
  RunResult r;
  std::string error;
  ASSERT_TRUE(RunBenchmark(o, 3, &r, &error)) << error;
  // Never more than the schedule holds (1000 requests in the window, plus one per connection
  // at the edge); the lower bound leaves room for a loaded test machine.
  EXPECT_LE(r.stats.requests, 1000u + 4u);
  EXPECT_GE(r.stats.requests, 700u);
  EXPECT_EQ(r.Sustained(o), r.ops_per_sec() >= 0.97 * 2000);
  EXPECT_EQ(r.stats.histogram.count(), r.stats.requests);
  EXPECT_EQ(r.stats.send_lag.count(), r.stats.requests);
  // Latency counts from the intended send time, so it includes the client's own lag.
  EXPECT_GE(r.stats.histogram.ValueAtPercentile(50), r.stats.send_lag.min());
}

TEST(RunTest, ServerClosingIsAConnectionError) {
  FakeServer server;
  server.CloseAfter(50);
  Options o = LocalOptions(server.port());
  o.connections = 3;
  o.duration_s = 5;  // ends early: every connection fails
  RunResult r;
  std::string error;
  ASSERT_TRUE(RunBenchmark(o, 1, &r, &error)) << error;
  EXPECT_EQ(r.stats.connection_errors, 3u);
  EXPECT_EQ(r.errors(), 3u);
  EXPECT_FALSE(r.stats.first_error.empty());
}

TEST(RunTest, ConnectFailureIsReported) {
  // Bind a port and close it again: nothing listens there any more.
  int port;
  {
    FakeServer server;
    port = server.port();
  }
  Options o = LocalOptions(port);
  o.connections = 2;
  RunResult r;
  std::string error;
  EXPECT_FALSE(RunBenchmark(o, 1, &r, &error));
  EXPECT_NE(error.find("connect"), std::string::npos) << error;
}

}  // namespace
}  // namespace lavik::bench
