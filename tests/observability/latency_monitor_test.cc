#include "observability/latency_monitor.h"

#include <gtest/gtest.h>

namespace lavik {
namespace {

TEST(LatencyMonitorTest, OneSamplePerSecondKeepsTheLarger) {
  LatencyMonitor m;
  m.AddSample("command", 100, 5);
  m.AddSample("command", 100, 9);
  m.AddSample("command", 100, 2);
  m.AddSample("command", 101, 3);
  auto h = m.History("command");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0], std::make_pair(int64_t{100}, int64_t{9}));
  EXPECT_EQ(h[1], std::make_pair(int64_t{101}, int64_t{3}));
  auto latest = m.LatestAll();
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].event, "command");
  EXPECT_EQ(latest[0].time_s, 101);
  EXPECT_EQ(latest[0].latest_ms, 3);
  EXPECT_EQ(latest[0].max_ms, 9);
  EXPECT_TRUE(m.History("nope").empty());
}

TEST(LatencyMonitorTest, KeepsTheLast160Samples) {
  LatencyMonitor m;
  for (int i = 1; i <= 200; ++i) m.AddSample("fast-command", i, i);
  auto h = m.History("fast-command");
  ASSERT_EQ(h.size(), 160u);
  EXPECT_EQ(h.front().first, 41);
  EXPECT_EQ(h.back().first, 200);
}

TEST(LatencyMonitorTest, ResetNamedOrAll) {
  LatencyMonitor m;
  m.AddSample("command", 1, 1);
  m.AddSample("fast-command", 1, 1);
  std::vector<std::string_view> names = {"command", "other"};
  EXPECT_EQ(m.Reset(names), 1);
  EXPECT_EQ(m.LatestAll().size(), 1u);
  EXPECT_EQ(m.Reset({}), 1);
  EXPECT_TRUE(m.LatestAll().empty());
}

}  // namespace
}  // namespace lavik
