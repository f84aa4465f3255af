#include "observability/metrics_http.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

// GCC 12 with -fsanitize=address reports a false -Wmaybe-uninitialized inside libstdc++'s
// <regex> (std::function in _State); the warning is in the library's code, not ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#include <set>
#include <sstream>

namespace lavik {
namespace {

MetricsSnapshot Sample() {
  MetricsSnapshot s;
  MetricsSnapshot::Command get;
  get.name = "get";
  get.calls = 3;
  get.failed = 1;
  get.seconds = 0.00012;
  get.quantiles = {{0.5, 0.00004}, {0.99, 0.00005}};
  s.commands.push_back(get);
  MetricsSnapshot::Command cfg;
  cfg.name = "config|get";
  cfg.calls = 1;
  s.commands.push_back(cfg);
  s.errors = {{"WRONGTYPE", 1}};
  s.worker_commands = {2, 2};
  s.keys = 7;
  return s;
}

// Checks every line against the text exposition format 0.0.4.
void ExpectValidExposition(const std::string& text) {
  static const std::regex kHelp(R"(# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*)");
  static const std::regex kType(
      R"(# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|summary|histogram|untyped))");
  static const std::regex kSample(
      R"([a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*")*\})? [-+]?([0-9.]+([eE][-+]?[0-9]+)?|NaN|Inf))");
  ASSERT_FALSE(text.empty());
  ASSERT_EQ(text.back(), '\n');
  std::istringstream in(text);
  std::string line;
  std::set<std::string> typed;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP", 0) == 0) {
      EXPECT_TRUE(std::regex_match(line, kHelp)) << line;
    } else if (line.rfind("# TYPE", 0) == 0) {
      EXPECT_TRUE(std::regex_match(line, kType)) << line;
      EXPECT_TRUE(typed.insert(line.substr(7, line.find(' ', 7) - 7)).second) << line;
    } else {
      EXPECT_TRUE(std::regex_match(line, kSample)) << line;
    }
  }
}

TEST(MetricsRenderTest, ValidExpositionWithCommandLabels) {
  std::string text = RenderPrometheus(Sample());
  ExpectValidExposition(text);
  EXPECT_NE(text.find("lavik_commands_total{cmd=\"get\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("lavik_commands_total{cmd=\"config|get\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("lavik_command_latency_seconds{cmd=\"get\",quantile=\"0.99\"} 5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("lavik_command_errors_total{code=\"WRONGTYPE\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("lavik_worker_commands_total{worker=\"1\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("lavik_keys 7\n"), std::string::npos);
}

TEST(MetricsRenderTest, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

std::string Fetch(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return "";
  send(fd, request.data(), request.size(), 0);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

TEST(MetricsHttpTest, ServesMetricsAnd404And405) {
  MetricsHttp http;
  std::string error;
  ASSERT_TRUE(http.Start(
      "127.0.0.1", 0, [] { return std::string("lavik_up 1\n"); }, &error))
      << error;
  std::string r = Fetch(http.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(r.find("\r\n\r\nlavik_up 1\n"), std::string::npos);
  EXPECT_EQ(Fetch(http.port(), "GET / HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(Fetch(http.port(), "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);

  MetricsHttp other;
  EXPECT_FALSE(other.Start(
      "127.0.0.1", http.port(), [] { return std::string(); }, &error));
  EXPECT_NE(error.find("Address already in use"), std::string::npos) << error;
  http.Stop();
}

}  // namespace
}  // namespace lavik
