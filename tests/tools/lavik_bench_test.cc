// Tests of lavik-bench's pieces: the latency histogram, option parsing, reply framing, the fill
// key split and the report formats. Whole runs are in lavik_bench_run_test.cc.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tools/lavik_bench/client.h"
#include "tools/lavik_bench/histogram.h"
#include "tools/lavik_bench/options.h"
#include "tools/lavik_bench/reply_parser.h"
#include "tools/lavik_bench/report.h"
#include "tools/lavik_bench/runner.h"

namespace lavik::bench {
namespace {

// ---- LatencyHistogram ----

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  for (uint64_t v = 0; v < LatencyHistogram::kLinearLimit; ++v) {
    const size_t i = LatencyHistogram::BucketIndex(v);
    EXPECT_EQ(LatencyHistogram::BucketLowest(i), v);
    EXPECT_EQ(LatencyHistogram::BucketHighest(i), v);
  }
}

TEST(LatencyHistogramTest, BucketsAreContiguousAndWithinOnePercent) {
  // Every bucket starts right after the previous one ends, and is at most 1/128 of its values.
  for (size_t i = 1; i < LatencyHistogram::kBucketCount; ++i) {
    const uint64_t lo = LatencyHistogram::BucketLowest(i);
    const uint64_t hi = LatencyHistogram::BucketHighest(i);
    ASSERT_EQ(lo, LatencyHistogram::BucketHighest(i - 1) + 1) << i;
    ASSERT_LE(static_cast<double>(hi - lo), lo / 128.0) << i;
    ASSERT_EQ(LatencyHistogram::BucketIndex(lo), i);
    ASSERT_EQ(LatencyHistogram::BucketIndex(hi), i);
  }
  EXPECT_EQ(LatencyHistogram::BucketHighest(LatencyHistogram::kBucketCount - 1),
            LatencyHistogram::kMaxTrackableUs);
  // 60 s is well inside the tracked range.
  EXPECT_LT(LatencyHistogram::BucketIndex(60'000'000), LatencyHistogram::kBucketCount - 1);
}

TEST(LatencyHistogramTest, PercentilesOfAUniformSampleWithinOnePercent) {
  LatencyHistogram h;
  for (int64_t v = 1; v <= 100000; ++v) h.Record(v);
  EXPECT_EQ(h.count(), 100000u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 100000u);
  EXPECT_NEAR(h.mean(), 50000.5, 1e-6);
  for (const double q : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99}) {
    const double want = q * 1000;  // the q-th percentile of 1..100000
    const double got = static_cast<double>(h.ValueAtPercentile(q));
    EXPECT_LE(std::fabs(got - want) / want, 0.01) << q << ": " << got;
    EXPECT_GE(got, want) << q;  // the bucket's highest value, never below the true one
  }
  EXPECT_EQ(h.ValueAtPercentile(100), 100000u);
  EXPECT_EQ(h.ValueAtPercentile(0), 1u);
}

TEST(LatencyHistogramTest, PercentilesFollowTheRankRule) {
  LatencyHistogram h;
  for (int i = 0; i < 99; ++i) h.Record(10);
  h.Record(200);
  EXPECT_EQ(h.ValueAtPercentile(50), 10u);
  EXPECT_EQ(h.ValueAtPercentile(99), 10u);  // 99 of 100 samples are <= 10
  EXPECT_EQ(h.ValueAtPercentile(99.5), 200u);
  EXPECT_EQ(h.ValueAtPercentile(99.99), 200u);
}

TEST(LatencyHistogramTest, RandomValuesStayWithinOnePercent) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(6.0, 2.0);  // ~400 us median, long tail
  std::vector<uint64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t v = static_cast<uint64_t>(std::min(dist(rng), 5e9));
    values.push_back(v);
    h.Record(static_cast<int64_t>(v));
  }
  std::sort(values.begin(), values.end());
  for (const double q : {50.0, 99.0, 99.9, 99.99}) {
    const size_t rank = static_cast<size_t>(std::ceil(q / 100 * values.size()));
    const double want = static_cast<double>(values[rank - 1]);
    const double got = static_cast<double>(h.ValueAtPercentile(q));
    EXPECT_LE(std::fabs(got - want), want * 0.01 + 1) << q;
  }
}

TEST(LatencyHistogramTest, MergeEqualsRecordingEverything) {
  LatencyHistogram a, b, all;
  for (int64_t v = 0; v < 5000; ++v) {
    const int64_t x = v * v % 100003;
    (v % 3 == 0 ? a : b).Record(x);
    all.Record(x);
  }
  LatencyHistogram merged;
  merged.Merge(a);
  merged.Merge(b);
  merged.Merge(LatencyHistogram());  // empty: no effect
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_DOUBLE_EQ(merged.mean(), all.mean());
  for (const double q : {0.0, 25.0, 50.0, 99.0, 99.9, 99.99, 100.0}) {
    EXPECT_EQ(merged.ValueAtPercentile(q), all.ValueAtPercentile(q)) << q;
  }
}

TEST(LatencyHistogramTest, EmptyNegativeClampedAndReset) {
  LatencyHistogram h;
  EXPECT_EQ(h.ValueAtPercentile(50), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
  h.Record(-5);
  EXPECT_EQ(h.max(), 0u);
  h.Record(int64_t{1} << 40);
  EXPECT_EQ(h.clamped(), 1u);
  EXPECT_EQ(h.max(), LatencyHistogram::kMaxTrackableUs);
  h.Reset();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.clamped(), 0u);
}

// ---- Options ----

bool Parse(std::vector<const char*> args, Options* o, std::string* error) {
  args.insert(args.begin(), "lavik-bench");
  return ParseOptions(static_cast<int>(args.size()), args.data(), o, error);
}

TEST(OptionsTest, Defaults) {
  Options o;
  std::string error;
  ASSERT_TRUE(Parse({}, &o, &error)) << error;
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.port, 6379);
  EXPECT_EQ(o.connections, 50);
  EXPECT_EQ(o.threads, 1);
  EXPECT_EQ(o.pipeline, 1);
  EXPECT_EQ(o.get_ratio, 1);
  EXPECT_EQ(o.set_ratio, 0);
  EXPECT_EQ(o.key_min, 1u);
  EXPECT_EQ(o.key_max, 1000000u);
  EXPECT_EQ(o.key_pattern, KeyPattern::kRandom);
  EXPECT_EQ(o.value_size, 1024);
  EXPECT_EQ(o.duration_s, 10);
  EXPECT_EQ(o.warmup_s, 0);
  EXPECT_FALSE(o.open_loop());
  EXPECT_FALSE(o.fill);
  EXPECT_FALSE(o.json);
  EXPECT_FALSE(o.seed_given);
}

TEST(OptionsTest, EveryOptionInBothSpellings) {
  Options o;
  std::string error;
  ASSERT_TRUE(Parse(
      {"--host",        "localhost",  "--port=7000",      "--connections", "816", "--threads=24",
       "--pipeline",    "8",          "--ratio=10:1",     "--key-min",     "5",   "--key-max=99",
       "--key-pattern", "sequential", "--value-size=256", "--duration",    "2.5", "--warmup=1",
       "--rate",        "2.4e6",      "--seed=42",        "--json"},
      &o, &error))
      << error;
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.port, 7000);
  EXPECT_EQ(o.connections, 816);
  EXPECT_EQ(o.threads, 24);
  EXPECT_EQ(o.pipeline, 8);
  EXPECT_EQ(o.get_ratio, 10);
  EXPECT_EQ(o.set_ratio, 1);
  EXPECT_EQ(o.key_min, 5u);
  EXPECT_EQ(o.key_max, 99u);
  EXPECT_EQ(o.key_count(), 95u);
  EXPECT_EQ(o.key_pattern, KeyPattern::kSequential);
  EXPECT_EQ(o.value_size, 256);
  EXPECT_EQ(o.duration_s, 2.5);
  EXPECT_EQ(o.warmup_s, 1);
  EXPECT_EQ(o.rate, 2.4e6);
  EXPECT_TRUE(o.open_loop());
  EXPECT_TRUE(o.seed_given);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_TRUE(o.json);

  ASSERT_TRUE(Parse({"--fill", "--ratio", "0:1", "--key-min", "0"}, &o, &error)) << error;
  EXPECT_TRUE(o.fill);
  EXPECT_EQ(o.get_ratio, 0);
  EXPECT_EQ(o.set_ratio, 1);
  EXPECT_EQ(o.key_min, 0u);

  ASSERT_TRUE(Parse({"--help"}, &o, &error));
  EXPECT_TRUE(o.help);
  ASSERT_TRUE(Parse({"-h"}, &o, &error));
  EXPECT_TRUE(o.help);
  EXPECT_NE(UsageText().find("--rate"), std::string::npos);
}

TEST(OptionsTest, RejectsBadInput) {
  const std::vector<std::vector<const char*>> cases = {
      {"--bogus", "1"},
      {"--bogus"},
      {"connections"},
      {"--port"},
      {"--port", "0"},
      {"--port", "65536"},
      {"--host", "example.com"},
      {"--connections", "0"},
      {"--connections", "-1"},
      {"--connections", "1x"},
      {"--threads", "0"},
      {"--threads", "5", "--connections", "4"},
      {"--pipeline", "0"},
      {"--ratio", "1"},
      {"--ratio", "0:0"},
      {"--ratio", "1:-1"},
      {"--ratio", ":1"},
      {"--key-min", "-1"},
      {"--key-min", "10", "--key-max", "9"},
      {"--key-max", "18446744073709551615"},
      {"--key-pattern", "zipf"},
      {"--value-size", "-1"},
      {"--duration", "0"},
      {"--duration", "-1"},
      {"--duration", "inf"},
      {"--duration", "nan"},
      {"--warmup", "-1"},
      {"--rate", "0"},
      {"--rate", "0x10"},
      {"--fill", "--rate", "1000"},
      {"--json=1"},
  };
  for (const auto& args : cases) {
    Options o;
    std::string error;
    std::string joined;
    for (const char* a : args) joined += std::string(a) + " ";
    EXPECT_FALSE(Parse(args, &o, &error)) << joined;
    EXPECT_FALSE(error.empty()) << joined;
  }
}

// ---- Reply framing ----

struct Framed {
  ParseStatus status;
  Reply reply;
  size_t consumed = 0;
};

Framed Frame(const std::string& s) {
  Framed f;
  f.status = ParseReply(s.data(), s.size(), &f.reply, &f.consumed);
  return f;
}

TEST(ReplyParserTest, RecognizesEachKind) {
  const struct {
    std::string wire;
    ReplyKind kind;
  } cases[] = {
      {"+OK\r\n", ReplyKind::kSimple},
      {"-ERR wrong\r\n", ReplyKind::kError},
      {":-42\r\n", ReplyKind::kInteger},
      {"$3\r\nabc\r\n", ReplyKind::kBulk},
      {"$0\r\n\r\n", ReplyKind::kBulk},
      {"$-1\r\n", ReplyKind::kNil},
      {"*-1\r\n", ReplyKind::kNil},
      {"_\r\n", ReplyKind::kNil},
      {"*2\r\n$1\r\na\r\n*1\r\n:1\r\n", ReplyKind::kAggregate},
      {"%1\r\n+k\r\n+v\r\n", ReplyKind::kAggregate},
      {"!5\r\nERR x\r\n", ReplyKind::kError},
      {",1.5\r\n", ReplyKind::kOther},
      {"|1\r\n+a\r\n+b\r\n+OK\r\n", ReplyKind::kSimple},
  };
  for (const auto& c : cases) {
    const Framed f = Frame(c.wire + "+next\r\n");
    ASSERT_EQ(f.status, ParseStatus::kDone) << c.wire;
    EXPECT_EQ(f.reply.kind, c.kind) << c.wire;
    EXPECT_EQ(f.consumed, c.wire.size()) << c.wire;
    // Every strict prefix is incomplete, never an error.
    for (size_t n = 0; n < c.wire.size(); ++n) {
      EXPECT_EQ(Frame(c.wire.substr(0, n)).status, ParseStatus::kNeedMore) << c.wire << " " << n;
    }
  }
  EXPECT_EQ(Frame(":-42\r\n").reply.integer, -42);
  EXPECT_EQ(Frame("$3\r\nabc\r\n").reply.integer, 3);
  // A bulk payload may hold CR LF.
  EXPECT_EQ(Frame("$4\r\n\r\n\r\n\r\n").consumed, 10u);
}

TEST(ReplyParserTest, RejectsGarbage) {
  for (const std::string wire : {"hello\r\n", "$x\r\n", "$-2\r\n", "$3\r\nabcde", ":1\rx",
                                 "$99999999999999999999\r\n", "*1\r\n?\r\n"}) {
    EXPECT_EQ(Frame(wire).status, ParseStatus::kError) << wire;
  }
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "*1\r\n";
  EXPECT_EQ(Frame(deep + ":1\r\n").status, ParseStatus::kError);
}

// ---- Fill key split ----

TEST(FillRangeTest, PartitionsTheKeysExactly) {
  const struct {
    uint64_t min, max;
    int connections;
  } cases[] = {
      {1, 100000, 50},       {1, 7, 3}, {1, 3, 10}, {0, 0, 4}, {5, 5, 1}, {1, 1000000007, 97},
      {0, UINT64_MAX - 1, 7}};
  for (const auto& c : cases) {
    uint64_t expect = c.min;
    for (int i = 0; i < c.connections; ++i) {
      const KeyRange r = FillRange(c.min, c.max, i, c.connections);
      ASSERT_EQ(r.begin, expect) << c.max << " " << i;
      ASSERT_LE(r.begin, r.end);
      expect = r.end;
    }
    EXPECT_EQ(expect - 1, c.max);  // the last range ends right after key_max
  }
}

// ---- Reports ----

TEST(ReportTest, JsonHasTheDocumentedFields) {
  Options o;
  o.rate = 1000;
  RunResult r;
  r.duration_s = 2;
  r.stats.requests = 1900;
  r.stats.misses = 3;
  r.stats.error_replies = 1;
  r.stats.connection_errors = 1;
  r.stats.first_error = "ERR \"quoted\"";
  for (int i = 0; i < 100; ++i) r.stats.histogram.Record(1000 + i);
  const std::string json = FormatJson(o, r);
  for (const char* field :
       {"\"ops_per_sec\":950.0", "\"p50_ms\":1.055",  // 1049 us, reported as its bucket's top
        "\"p99_ms\":", "\"p999_ms\":", "\"p9999_ms\":", "\"misses\":3", "\"errors\":2",
        "\"requests\":1900", "\"duration_s\":2.000", "\"sustained\":false",
        "\"requested_rate\":1000.0", "\"achieved_rate\":950.0", "\"connections\":50",
        "\"pipeline\":1", "\"ratio\":\"1:0\"", "\"first_error\":\"ERR \\\"quoted\\\"\""}) {
    EXPECT_NE(json.find(field), std::string::npos) << field << " in " << json;
  }
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.substr(json.size() - 2), "}\n");
  EXPECT_EQ(json.find('\n'), json.size() - 1);  // one line
  EXPECT_NE(FormatText(o, r).find("NS (achieved 950)"), std::string::npos);

  r.stats.requests = 1940;  // exactly 97%
  EXPECT_TRUE(r.Sustained(o));
  EXPECT_NE(FormatText(o, r).find("sustained (achieved 970)"), std::string::npos);
  o.rate = 0;
  EXPECT_NE(FormatJson(o, r).find("\"requested_rate\":null"), std::string::npos);
  EXPECT_NE(FormatJson(o, r).find("\"sustained\":true"), std::string::npos);
}

}  // namespace
}  // namespace lavik::bench
