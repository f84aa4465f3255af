#include "pubsub/pubsub_batch.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lavik {
namespace {

// One receiver as ForEach reports it, copied out of the batch.
struct Seen {
  uint64_t id;
  PubSubKind kind;
  std::string pattern, channel, payload;
  bool operator==(const Seen&) const = default;
};

std::vector<Seen> All(const PubSubBatch& b) {
  std::vector<Seen> out;
  b.ForEach([&](uint64_t id, PubSubKind kind, std::string_view pattern, std::string_view channel,
                std::string_view payload) {
    out.push_back(Seen{id, kind, std::string(pattern), std::string(channel), std::string(payload)});
  });
  return out;
}

TEST(PubSubBatchTest, EmptyBatchVisitsNothing) {
  PubSubBatch b;
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(All(b).empty());
}

TEST(PubSubBatchTest, MessagesKeepOrderAndTheirReceivers) {
  PubSubBatch b;
  const std::string p1 = "news.*", p2 = "n*";
  b.Begin(PubSubKind::kChannel, "news.a", "first");
  b.AddDirect(1);
  b.AddDirect(2);
  b.AddMatched(3, p1);
  b.AddMatched(4, p1);
  b.AddMatched(3, p2);  // one client through two patterns: two receivers, as Redis counts
  b.Begin(PubSubKind::kShard, "s", "second");
  b.AddDirect(2);
  b.Begin(PubSubKind::kChannel, "news.b", "");  // empty payload
  b.AddMatched(4, p1);
  EXPECT_EQ(b.messages(), 3u);
  const std::vector<Seen> want = {
      {1, PubSubKind::kChannel, "", "news.a", "first"},
      {2, PubSubKind::kChannel, "", "news.a", "first"},
      {3, PubSubKind::kPattern, "news.*", "news.a", "first"},
      {4, PubSubKind::kPattern, "news.*", "news.a", "first"},
      {3, PubSubKind::kPattern, "n*", "news.a", "first"},
      {2, PubSubKind::kShard, "", "s", "second"},
      {4, PubSubKind::kPattern, "news.*", "news.b", ""},
  };
  EXPECT_EQ(All(b), want);
}

TEST(PubSubBatchTest, BinaryNamesAndPayloadsSurvive) {
  PubSubBatch b;
  const std::string channel("c\0h", 3), payload("\r\n\0x", 4), pattern("c\0*", 3);
  b.Begin(PubSubKind::kChannel, channel, payload);
  b.AddMatched(7, pattern);
  const std::vector<Seen> want = {{7, PubSubKind::kPattern, pattern, channel, payload}};
  EXPECT_EQ(All(b), want);
}

TEST(PubSubBatchTest, ClearEmptiesAndTheBatchIsReusable) {
  PubSubBatch b;
  const std::string p = "x*";
  b.Begin(PubSubKind::kChannel, "x1", "a");
  b.AddMatched(1, p);
  const size_t used = b.footprint();
  EXPECT_GT(used, 0u);
  b.Clear();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.footprint(), 0u);
  // The same pattern object after Clear is stored again, not pointed at stale bytes.
  b.Begin(PubSubKind::kChannel, "x2", "b");
  b.AddMatched(1, p);
  const std::vector<Seen> want = {{1, PubSubKind::kPattern, "x*", "x2", "b"}};
  EXPECT_EQ(All(b), want);
}

TEST(PubSubBatchTest, FootprintGrowsWithPayloads) {
  PubSubBatch b;
  b.Begin(PubSubKind::kChannel, "c", std::string(1000, 'p'));
  b.AddDirect(1);
  EXPECT_GE(b.footprint(), 1001u);
}

}  // namespace
}  // namespace lavik
