#include "storage/stream_chunks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "storage/chunked.h"

namespace lavik {
namespace {

// `n` entries with ids (1000 + i / per_ms, i % per_ms) and small bodies.
struct Entries {
  std::vector<std::string> bodies;
  std::vector<StreamEntry> e;

  Entries(size_t n, size_t per_ms, size_t body_size = 5) {
    bodies.reserve(n);
    for (size_t i = 0; i < n; ++i) bodies.push_back(std::string(body_size, char('a' + i % 26)));
    for (size_t i = 0; i < n; ++i) e.push_back({{1000 + i / per_ms, i % per_ms}, bodies[i]});
  }
};

TEST(StreamChunks, EncodeDecodeRoundTrip) {
  Entries x(300, 7);
  const std::string c = EncodeStreamChunk(x.e.data(), x.e.size());
  std::vector<StreamEntry> back;
  ASSERT_TRUE(DecodeStreamChunk(c, &back));
  ASSERT_EQ(back.size(), x.e.size());
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].id, x.e[i].id);
    EXPECT_EQ(back[i].body, x.e[i].body);
  }
  uint32_t count;
  uint64_t last_ms;
  ASSERT_TRUE(StreamChunkHeader(c, &count, &last_ms));
  EXPECT_EQ(count, 300u);
  EXPECT_EQ(last_ms, x.e.back().id.ms);
}

TEST(StreamChunks, AppendEqualsEncode) {
  Entries x(50, 3);
  std::string c = EncodeStreamChunk(x.e.data(), 1);
  for (size_t i = 1; i < x.e.size(); ++i) {
    std::string next;
    ASSERT_TRUE(AppendStreamChunk(c, x.e[i].id, x.e[i].body, &next));
    c = next;
  }
  EXPECT_EQ(c, EncodeStreamChunk(x.e.data(), x.e.size()));
  std::string out;
  EXPECT_FALSE(AppendStreamChunk(c, {1, 0}, "b", &out));  // below the last ms
}

TEST(StreamChunks, DamagedChunksAreRejected) {
  Entries x(20, 2);
  const std::string c = EncodeStreamChunk(x.e.data(), x.e.size());
  std::vector<StreamEntry> out;
  for (size_t cut = 0; cut < c.size(); ++cut) {
    out.clear();
    EXPECT_FALSE(DecodeStreamChunk(c.substr(0, cut), &out)) << cut;
  }
  std::string bad = c;
  bad[4] ^= 1;  // the last ms no longer matches
  EXPECT_FALSE(DecodeStreamChunk(bad, &out));
}

TEST(StreamChunks, CutsOnlyWhereTheMsChanges) {
  Entries x(10000, 3);
  const std::vector<size_t> cuts = StreamChunkCuts(x.e, 0, x.e.size());
  ASSERT_GT(cuts.size(), 5u);
  EXPECT_EQ(cuts[0], 0u);
  for (size_t k = 1; k < cuts.size(); ++k) {
    EXPECT_NE(x.e[cuts[k]].id.ms, x.e[cuts[k] - 1].id.ms);
    EXPECT_LE(cuts[k] - cuts[k - 1], kStreamChunkEntries + 3);
  }
  // One ms for everything: no cut is possible.
  Entries same(5000, 100000);
  EXPECT_EQ(StreamChunkCuts(same.e, 0, same.e.size()).size(), 1u);
  // Big bodies: cut by bytes.
  Entries big(100, 1, 2000);
  const std::vector<size_t> by_bytes = StreamChunkCuts(big.e, 0, big.e.size());
  EXPECT_GT(by_bytes.size(), 5u);
  EXPECT_LE(by_bytes[1], kStreamChunkBytes / 2000 + 1);
}

TEST(StreamChunks, MetaKeepsHeaderMasterAndGroups) {
  Stream s;
  const std::vector<std::string_view> master = {"f", "g"};
  s.master_fields = master;
  s.last_id = {77, 3};
  s.entries_added = 1234;
  s.max_deleted_id = {50, 0};
  StreamGroup g;
  g.name = "grp";
  g.last_id = {60, 1};
  g.entries_read = 99;
  g.consumers.push_back({"alice", 5, 6});
  g.pending.push_back({{60, 1}, 0, 7, 2});
  s.groups.push_back(g);
  Entries x(3, 1);
  s.entries = x.e;  // not part of the meta
  const std::string tail = EncodeStreamMeta(s);
  Stream back;
  ASSERT_TRUE(DecodeStreamMeta(tail, &back));
  EXPECT_TRUE(back.entries.empty());
  EXPECT_EQ(back.last_id, s.last_id);
  EXPECT_EQ(back.entries_added, 1234u);
  EXPECT_EQ(back.max_deleted_id, s.max_deleted_id);
  ASSERT_EQ(back.master_fields.size(), 2u);
  EXPECT_EQ(back.master_fields[1], "g");
  ASSERT_EQ(back.groups.size(), 1u);
  EXPECT_EQ(back.groups[0].consumers[0].name, "alice");
  EXPECT_EQ(back.groups[0].pending[0].delivery_count, 2u);
}

TEST(StreamChunks, RootTailRoundTrips) {
  ChunkRoot r;
  r.flags = kRootFlagTail;
  r.slot = 12;
  r.total = 5;
  r.id = 42;
  r.next_number = 3;
  r.chunks = {{0, 1, 2}, {900, 2, 3}};
  r.tail = "metadata bytes";
  ChunkRoot back;
  ASSERT_TRUE(ParseChunkRoot(EncodeChunkRoot(r), &back));
  EXPECT_EQ(back.tail, r.tail);
  EXPECT_EQ(back.chunks.size(), 2u);
  EXPECT_EQ(back.chunks[1].first, 900u);
  // Without the flag trailing bytes are damage, as before.
  r.flags = 0;
  EXPECT_FALSE(ParseChunkRoot(EncodeChunkRoot(r) + "x", &back));
  EXPECT_TRUE(ParseChunkRoot(EncodeChunkRoot(r), &back));
  EXPECT_TRUE(back.tail.empty());
}

}  // namespace
}  // namespace lavik
