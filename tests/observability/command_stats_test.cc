#include "observability/command_stats.h"

#include <gtest/gtest.h>

#include "server/command_registry.h"

namespace lavik {
namespace {

class CommandStatsTest : public ::testing::Test {
 protected:
  int Id(std::string_view name) {
    size_t bar = name.find('|');
    const CommandSpec* s = table_.Find(name.substr(0, bar));
    if (s != nullptr && bar != std::string_view::npos) {
      s = CommandTable::FindSubcommand(*s, name.substr(bar + 1));
    }
    return stats_.IdOf(s);
  }

  CommandTable table_{AllCommandFamilies()};
  CommandStats stats_{table_, 2};
};

TEST_F(CommandStatsTest, EveryCommandAndSubcommandHasAnId) {
  EXPECT_GE(Id("get"), 0);
  EXPECT_GE(Id("config|get"), 0);
  EXPECT_NE(Id("config|get"), Id("config"));
  EXPECT_EQ(stats_.spec(Id("config|get")).name, "config|get");
  EXPECT_EQ(stats_.IdOf(nullptr), -1);
}

TEST_F(CommandStatsTest, IdsAreOneToOneWithSpecs) {
  for (int id = 0; id < stats_.size(); ++id) {
    EXPECT_EQ(stats_.IdOf(&stats_.spec(id)), id) << stats_.spec(id).name;
  }
  const CommandSpec foreign = stats_.spec(Id("get"));  // a copy: same name, not the table's
  EXPECT_EQ(stats_.IdOf(&foreign), -1);
}

TEST_F(CommandStatsTest, SumsWorkersInRedisFormat) {
  stats_.RecordCall(0, Id("get"), 10000, false);
  stats_.RecordCall(1, Id("get"), 20000, true);
  stats_.RecordRejected(1, Id("get"));
  stats_.RecordRejected(0, Id("config"));
  std::string out;
  stats_.AppendInfo(true, false, false, &out);
  EXPECT_NE(out.find("# Commandstats\r\n"), std::string::npos);
  EXPECT_NE(
      out.find(
          "cmdstat_get:calls=2,usec=30,usec_per_call=15.00,rejected_calls=1,failed_calls=1\r\n"),
      std::string::npos)
      << out;
  EXPECT_NE(
      out.find("cmdstat_config:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0"),
      std::string::npos)
      << out;
  EXPECT_EQ(out.find("cmdstat_set"), std::string::npos);
  EXPECT_EQ(stats_.worker_calls(0), 1u);
  EXPECT_EQ(stats_.worker_calls(1), 1u);

  out.clear();
  stats_.set_percentiles("50 99.9 100");
  stats_.AppendInfo(false, false, true, &out);
  EXPECT_NE(out.find("latency_percentiles_usec_get:p50=10.048,p99.9=20.096,p100=20.096\r\n"),
            std::string::npos)
      << out;
  stats_.set_latency_tracking(false);
  out.clear();
  stats_.AppendInfo(false, false, true, &out);
  EXPECT_EQ(out, "# Latencystats\r\n\r\n");

  stats_.ResetWorker(0);
  stats_.ResetWorker(1);
  out.clear();
  stats_.set_latency_tracking(true);
  stats_.AppendInfo(true, true, true, &out);
  EXPECT_EQ(out, "# Commandstats\r\n\r\n# Errorstats\r\n\r\n# Latencystats\r\n\r\n");
}

TEST_F(CommandStatsTest, ErrorsByCode) {
  ErrorSink* s0 = stats_.error_sink(0);
  ErrorSink* s1 = stats_.error_sink(1);
  s0->OnErrorReply("WRONGTYPE Operation against a key holding the wrong kind of value");
  s1->OnErrorReply("WRONGTYPE Operation against a key holding the wrong kind of value");
  s1->OnErrorReply("ERR syntax error");
  s0->OnErrorReply("NOSPACEHERE");  // no space: counted as ERR, as Redis does
  EXPECT_EQ(stats_.total_error_replies(), 4u);
  std::string out;
  stats_.AppendInfo(false, true, false, &out);
  EXPECT_EQ(out, "# Errorstats\r\nerrorstat_ERR:count=2\r\nerrorstat_WRONGTYPE:count=2\r\n\r\n");
  for (int i = 0; i < 200; ++i) s0->OnErrorReply("E" + std::to_string(i) + " x");
  EXPECT_LE(stats_.ErrorCounts().size(), static_cast<size_t>(CommandStats::kMaxErrorCodes) + 1);
}

TEST(FormatPercentileLabelTest, TrimsLikeRedis) {
  EXPECT_EQ(FormatPercentileLabel(50), "50");
  EXPECT_EQ(FormatPercentileLabel(99.9), "99.9");
  EXPECT_EQ(FormatPercentileLabel(99.99), "99.99");
  EXPECT_EQ(FormatPercentileLabel(100), "100");
  EXPECT_EQ(FormatPercentileLabel(0.5), "0.5");
}

}  // namespace
}  // namespace lavik
