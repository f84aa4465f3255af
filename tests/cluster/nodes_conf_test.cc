// nodes.conf as Cluster::Start reads it (cluster_state.cc): Redis's format loads back, and a bad
// file is refused with an error naming its line, before the bus port is bound.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "cluster/cluster.h"

namespace lavik {
namespace {

constexpr const char* kMe = "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca";
constexpr const char* kOther = "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1";

class NodesConf : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/lavik-nodes-conf-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/nodes.conf";
  }
  void TearDown() override {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  // Start's error for a file holding `text` ("" if it started).
  // The tests run as separate processes, two at a time (ctest -j2): each test that binds has its
  // own port.
  std::string StartWith(const std::string& text, std::string* nodes = nullptr, int port = 7290) {
    std::ofstream(path_) << text;
    Cluster::Options o;
    o.config_file = path_;
    o.port = port;  // the bus binds port + 10000 only when the file is good (h-cluster2's range)
    o.bind = "127.0.0.1";
    Cluster c(o);
    std::string error;
    const bool ok = c.Start(&error);
    if (ok && nodes != nullptr) c.Nodes(nodes);
    c.Stop();
    return ok ? "" : error;
  }
  std::string Line(const std::string& rest) { return std::string(kMe) + " " + rest + "\n"; }

  std::string dir_, path_;
};

TEST_F(NodesConf, RedisFileLoadsBack) {
  std::string nodes;
  const std::string text =
      std::string(kOther) + " 127.0.0.1:7002@17002,host-b master - 0 1700000000000 2 connected " +
      "5461-10922 [7-<-" + kOther + "]\n" +
      Line("127.0.0.1:7290@17290 myself,master - 0 0 1 connected 0-5460 10923") +
      "vars currentEpoch 2 lastVoteEpoch 0\n";
  ASSERT_EQ(StartWith(text, &nodes), "");
  EXPECT_NE(nodes.find(std::string(kMe) + " 127.0.0.1:7290@17290 myself,master - 0 0 1 connected "
                                          "0-5460 10923"),
            std::string::npos)
      << nodes;
  EXPECT_NE(nodes.find(std::string(kOther) + " 127.0.0.1:7002@17002,host-b master - "),
            std::string::npos)
      << nodes;
  EXPECT_NE(nodes.find("5461-10922"), std::string::npos) << nodes;
}

TEST_F(NodesConf, EmptyFileMakesANewNode) { EXPECT_EQ(StartWith("\n", nullptr, 7291), ""); }

TEST_F(NodesConf, BadFilesNameTheLine) {
  const std::string good = Line("127.0.0.1:7290@17290 myself,master - 0 0 1 connected 0-10");
  const std::string vars = "vars currentEpoch 1 lastVoteEpoch 0\n";
  struct Case {
    std::string text;
    std::string why;
  };
  const Case cases[] = {
      {good + "short line\n", "line 2: too few fields"},
      {vars + "abc 127.0.0.1:7002@17002 master - 0 0 2 connected\n", "line 2: bad node name"},
      {Line("127.0.0.1-7290 myself,master - 0 0 1 connected"), "line 1: bad address"},
      {Line("127.0.0.1:72x0@17290 myself,master - 0 0 1 connected"), "line 1: bad port"},
      {Line("127.0.0.1:7290@99999 myself,master - 0 0 1 connected"), "line 1: bad bus port"},
      {Line("127.0.0.1:7290@17290 myself,captain - 0 0 1 connected"), "line 1: unknown flag"},
      {Line("127.0.0.1:7290@17290 myself,master xyz 0 0 1 connected"), "line 1: bad master name"},
      {Line("127.0.0.1:7290@17290 myself,master - 0 soon 1 connected"),
       "line 1: bad ping or pong time"},
      {Line("127.0.0.1:7290@17290 myself,master - 0 0 -1 connected"), "line 1: bad config epoch"},
      {Line("127.0.0.1:7290@17290 myself,master - 0 0 1 linked"), "line 1: bad link state"},
      {Line("127.0.0.1:7290@17290 myself,master - 0 0 1 connected 0-16384"),
       "line 1: bad slot range"},
      {Line("127.0.0.1:7290@17290 myself,master - 0 0 1 connected 10-5"), "line 1: bad slot range"},
      {Line("127.0.0.1:7290@17290 myself,master - 0 0 1 connected 1a"), "line 1: bad slot range"},
      {Line("127.0.0.1:7290@17290 myself,master - 0 0 1 connected [5->-abc]"),
       "line 1: bad open slot"},
      {Line(std::string("127.0.0.1:7290@17290 myself,master - 0 0 1 connected [x->-") + kOther +
            "]"),
       "line 1: bad slot"},
      {good + "vars currentEpoch\n", "line 2: a vars name without a value"},
      {good + "vars currentEpoch ten lastVoteEpoch 0\n", "line 2: bad vars value"},
      {good + std::string(kOther) + " 127.0.0.1:7002@17002 myself,master - 0 0 2 connected\n",
       "line 2: a second myself node"},
      {std::string(kOther) + " 127.0.0.1:7002@17002 master - 0 0 2 connected\n" + vars,
       "no myself line"},
  };
  for (const Case& c : cases) {
    const std::string error = StartWith(c.text);
    EXPECT_NE(error.find("corrupted cluster config file \"" + path_ + "\" (" + c.why + ")"),
              std::string::npos)
        << c.text << " -> " << error;
  }
}

}  // namespace
}  // namespace lavik
