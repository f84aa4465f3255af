#include "storage/stream_record.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lavik {
namespace {

// A stream with entries 1-0, 2-5 (master fields), 7-0 (its own fields) and one group.
struct Sample {
  std::vector<std::string_view> master = {"f", "g"};
  std::vector<std::string> bodies;
  Stream s;

  Sample() {
    const std::string_view a[] = {"f", "1", "g", "x"};
    const std::string_view b[] = {"f", "2", "g", ""};
    const std::string_view c[] = {"other", std::string_view("\0\xff", 2)};
    bodies = {EncodeEntryBody(master, a, 4), EncodeEntryBody(master, b, 4),
              EncodeEntryBody(master, c, 2)};
    s.master_fields = master;
    s.entries = {{{1, 0}, bodies[0]}, {{2, 5}, bodies[1]}, {{7, 0}, bodies[2]}};
    s.last_id = {9, 1};
    s.entries_added = 4;
    s.max_deleted_id = {8, 0};
    StreamGroup g;
    g.name = "grp";
    g.last_id = {2, 5};
    g.entries_read = 2;
    g.consumers = {{"alice", 100, 90}, {"bob", 200, -1}};
    g.pending = {{{1, 0}, 1, 150, 3}, {{2, 5}, 0, 160, 1}};
    s.groups.push_back(g);
  }
};

std::vector<std::string_view> Fields(const Stream& s, size_t i) {
  std::vector<std::string_view> out;
  EXPECT_TRUE(EntryFields(s.master_fields, s.entries[i].body, &out));
  return out;
}

TEST(StreamRecordTest, RoundTripKeepsEverything) {
  Sample in;
  const std::string enc = EncodeStream(in.s);
  Stream out;
  ASSERT_TRUE(DecodeStream(enc, &out));
  EXPECT_EQ(out.last_id, (StreamId{9, 1}));
  EXPECT_EQ(out.entries_added, 4u);
  EXPECT_EQ(out.max_deleted_id, (StreamId{8, 0}));
  ASSERT_EQ(out.entries.size(), 3u);
  EXPECT_EQ(out.entries[1].id, (StreamId{2, 5}));
  EXPECT_EQ(Fields(out, 0), (std::vector<std::string_view>{"f", "1", "g", "x"}));
  EXPECT_EQ(Fields(out, 1), (std::vector<std::string_view>{"f", "2", "g", ""}));
  EXPECT_EQ(Fields(out, 2),
            (std::vector<std::string_view>{"other", std::string_view("\0\xff", 2)}));
  ASSERT_EQ(out.groups.size(), 1u);
  const StreamGroup& g = out.groups[0];
  EXPECT_EQ(g.name, "grp");
  EXPECT_EQ(g.last_id, (StreamId{2, 5}));
  EXPECT_EQ(g.entries_read, 2);
  ASSERT_EQ(g.consumers.size(), 2u);
  EXPECT_EQ(g.consumers[1].name, "bob");
  EXPECT_EQ(g.consumers[1].active_ms, -1);
  ASSERT_EQ(g.pending.size(), 2u);
  EXPECT_EQ(g.pending[0].consumer, 1u);
  EXPECT_EQ(g.pending[0].delivery_count, 3u);
  EXPECT_EQ(g.pending[1].delivery_ms, 160);
  uint32_t len;
  StreamId last;
  ASSERT_TRUE(DecodeStreamHeader(enc, &len, &last));
  EXPECT_EQ(len, 3u);
  EXPECT_EQ(last, (StreamId{9, 1}));
}

TEST(StreamRecordTest, MasterFieldsAreStoredOnce) {
  const std::vector<std::string_view> master = {"a-long-field-name"};
  const std::string_view same[] = {"a-long-field-name", "v"};
  const std::string_view other[] = {"another-name", "v"};
  EXPECT_LT(EncodeEntryBody(master, same, 2).size(), EncodeEntryBody(master, other, 2).size());
  EXPECT_EQ(EncodeEntryBody(master, same, 2).size(), 3u);  // header, length, "v"
}

TEST(StreamRecordTest, EmptyStreamKeepsItsMetadata) {
  Stream s;
  s.last_id = {5, 0};
  s.entries_added = 3;
  Stream out;
  ASSERT_TRUE(DecodeStream(EncodeStream(s), &out));
  EXPECT_TRUE(out.entries.empty());
  EXPECT_EQ(out.last_id, (StreamId{5, 0}));
  EXPECT_EQ(out.entries_added, 3u);
}

TEST(StreamRecordTest, RejectsDamagedEncodings) {
  Sample in;
  const std::string enc = EncodeStream(in.s);
  Stream out;
  EXPECT_FALSE(DecodeStream("", &out));
  for (size_t cut = 1; cut < enc.size(); cut += 7) {
    EXPECT_FALSE(DecodeStream(enc.substr(0, enc.size() - cut), &out)) << cut;
  }
  EXPECT_FALSE(DecodeStream(enc + "x", &out));
  std::string bad = enc;
  bad[1] = 'L';
  EXPECT_FALSE(DecodeStream(bad, &out));
  bad = enc;
  bad[4] = 100;  // more entries than the area holds
  EXPECT_FALSE(DecodeStream(bad, &out));
}

TEST(StreamRecordTest, AppendMatchesDecodeAndEncode) {
  Sample in;
  const std::string enc = EncodeStream(in.s);
  const std::string_view same[] = {"f", "3", "g", "y"};
  const std::string_view other[] = {"z", "1"};
  std::string appended, twice;
  ASSERT_TRUE(AppendStreamEntry(enc, {9, 2}, same, 4, &appended));
  ASSERT_TRUE(AppendStreamEntry(appended, {12, 0}, other, 2, &twice));
  Stream out;
  ASSERT_TRUE(DecodeStream(twice, &out));
  ASSERT_EQ(out.entries.size(), 5u);
  EXPECT_EQ(out.last_id, (StreamId{12, 0}));
  EXPECT_EQ(out.entries_added, 6u);
  EXPECT_EQ(out.max_deleted_id, (StreamId{8, 0}));
  EXPECT_EQ(out.entries[3].id, (StreamId{9, 2}));
  EXPECT_EQ(Fields(out, 3), (std::vector<std::string_view>{"f", "3", "g", "y"}));
  EXPECT_EQ(Fields(out, 4), (std::vector<std::string_view>{"z", "1"}));
  EXPECT_EQ(Fields(out, 0), (std::vector<std::string_view>{"f", "1", "g", "x"}));
  ASSERT_EQ(out.groups.size(), 1u);
  EXPECT_EQ(out.groups[0].pending.size(), 2u);
  // The same bytes as decoding, appending and encoding again.
  EXPECT_EQ(EncodeStream(out), twice);
  // An empty stream (never written, or emptied with its master fields kept) takes the entry.
  std::string first;
  ASSERT_TRUE(AppendStreamEntry(EncodeStream(Stream()), {5, 0}, other, 2, &first));
  ASSERT_TRUE(DecodeStream(first, &out));
  EXPECT_EQ(out.master_fields, (std::vector<std::string_view>{"z"}));
  EXPECT_EQ(Fields(out, 0), (std::vector<std::string_view>{"z", "1"}));
  Stream emptied = in.s;
  emptied.entries.clear();
  ASSERT_TRUE(AppendStreamEntry(EncodeStream(emptied), {20, 0}, same, 4, &first));
  ASSERT_TRUE(DecodeStream(first, &out));
  ASSERT_EQ(out.entries.size(), 1u);
  EXPECT_EQ(out.entries[0].id, (StreamId{20, 0}));
  EXPECT_EQ(Fields(out, 0), (std::vector<std::string_view>{"f", "3", "g", "y"}));
  EXPECT_FALSE(AppendStreamEntry(enc.substr(0, 20), {20, 0}, same, 4, &first));
}

TEST(StreamRecordTest, SearchAndIds) {
  Sample in;
  EXPECT_EQ(in.s.LowerBound({2, 0}), 1u);
  EXPECT_EQ(in.s.UpperBound({2, 5}), 2u);
  EXPECT_EQ(in.s.Find({7, 0}), 2);
  EXPECT_EQ(in.s.Find({7, 1}), -1);
  StreamId id;
  EXPECT_TRUE((StreamId{1, UINT64_MAX}).Incr(&id));
  EXPECT_EQ(id, (StreamId{2, 0}));
  EXPECT_FALSE(kMaxStreamId.Incr(&id));
  EXPECT_TRUE((StreamId{2, 0}).Decr(&id));
  EXPECT_EQ(id, (StreamId{1, UINT64_MAX}));
  EXPECT_FALSE(kMinStreamId.Decr(&id));
  EXPECT_EQ((StreamId{12, 3}).ToString(), "12-3");
}

TEST(StreamRecordTest, GroupHelpers) {
  Sample in;
  StreamGroup& g = in.s.groups[0];
  EXPECT_EQ(g.FindConsumer("bob"), 1);
  EXPECT_EQ(g.FindConsumer("carol"), -1);
  EXPECT_EQ(g.FindPending({2, 5}), 1);
  EXPECT_EQ(g.PendingOf(0), 1u);
  EXPECT_EQ(g.RemoveConsumer(0), 1u);  // alice and her pending entry go; bob is now 0
  ASSERT_EQ(g.pending.size(), 1u);
  EXPECT_EQ(g.pending[0].consumer, 0u);
  EXPECT_EQ(g.consumers[0].name, "bob");
}

TEST(StreamRecordTest, EntriesReadEstimate) {
  Stream s;
  EXPECT_EQ(s.EstimateEntriesRead({1, 0}), 0);  // nothing ever added
  Sample in;
  // last id (9-1) is exact; beyond it is unknown; the deletion at 8-0 makes the rest unknown.
  EXPECT_EQ(in.s.EstimateEntriesRead({9, 1}), 4);
  EXPECT_EQ(in.s.EstimateEntriesRead({10, 0}), kEntriesReadUnknown);
  EXPECT_EQ(in.s.EstimateEntriesRead({1, 0}), kEntriesReadUnknown);
  in.s.max_deleted_id = {};
  EXPECT_EQ(in.s.EstimateEntriesRead({1, 0}), 2);  // the first entry: added - length + 1
  EXPECT_EQ(in.s.EstimateEntriesRead({0, 5}), 1);  // before it: added - length
  EXPECT_FALSE(in.s.RangeHasTombstones({0, 0}, kMaxStreamId));
  in.s.max_deleted_id = {3, 0};
  EXPECT_TRUE(in.s.RangeHasTombstones({2, 0}, kMaxStreamId));
  EXPECT_FALSE(in.s.RangeHasTombstones({4, 0}, kMaxStreamId));
}

}  // namespace
}  // namespace lavik
