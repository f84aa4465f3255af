#include "commands/collection_chunks.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "commands/collection_access.h"
#include "storage/test_data_file.h"

namespace lavik {
namespace {

using storage_test::TestWorker;

std::string Member(int i) { return "member:" + std::to_string(i); }

class CollectionChunksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(file_.ok()) << file_.error();
    store_ = std::move(file_.MakeStores(1)[0]);
  }

  // SADD of members [from, to) (one command), on the worker.
  void Add(int from, int to) {
    std::vector<std::string> owned;
    for (int i = from; i < to; ++i) owned.push_back(Member(i));
    std::vector<std::string_view> members(owned.begin(), owned.end());
    Change(members, false);
  }
  void Remove(int from, int to) {
    std::vector<std::string> owned;
    for (int i = from; i < to; ++i) owned.push_back(Member(i));
    std::vector<std::string_view> members(owned.begin(), owned.end());
    Change(members, true);
  }
  void Change(const std::vector<std::string_view>& members, bool erase) {
    std::string error;
    bool ok = false;
    ASSERT_TRUE(worker_.Run([&]() -> Task { return ChangeTask(members, erase, &ok, &error); }));
    ASSERT_TRUE(ok) << error;
  }
  Task ChangeTask(const std::vector<std::string_view>& members, bool erase, bool* ok,
                  std::string* error) {
    *ok = co_await RewriteCollection(
        *store_, "s", ValueType::kSet, 0,
        [&](const CollectionView& v, bool, std::string* out) {
          std::vector<CollectionChange> changes;
          for (std::string_view m : members) changes.push_back({m, {}, erase});
          *out = ApplyChanges(v, std::move(changes), false);
          return Rewrite::kWrite;
        },
        error, ReadScope::Members(members));
  }
  // Reads "s" with `scope` on the worker.
  CollectionRead Read(ReadScope scope = {}) {
    CollectionRead out;
    std::string error;
    bool ok = false;
    EXPECT_TRUE(worker_.Run([&]() -> Task { return ReadTask(scope, &out, &ok, &error); }));
    EXPECT_TRUE(ok) << error;
    return out;
  }
  Task ReadTask(ReadScope scope, CollectionRead* out, bool* ok, std::string* error) {
    *ok = co_await ReadCollection(*store_, "s", ValueType::kSet, 0, false, true, out, error, scope);
  }
  std::set<std::string> All() {
    CollectionRead r = Read();
    std::set<std::string> out;
    for (uint32_t i = 0; i < r.view.size(); ++i) out.emplace(r.view.field(i));
    EXPECT_EQ(out.size(), r.view.size());
    return out;
  }

  TestDataFile file_;
  std::unique_ptr<Store> store_;
  TestWorker worker_;
};

TEST_F(CollectionChunksTest, SmallStaysOneRecordLargeBecomesChunked) {
  Add(0, 1000);
  CollectionRead small = Read();
  EXPECT_FALSE(small.chunked);
  EXPECT_EQ(store_->internal_records(), 0u);
  Add(1000, 20000);
  CollectionRead big = Read();
  ASSERT_TRUE(big.chunked);
  EXPECT_EQ(big.size, 20000u);
  EXPECT_GE(big.root.chunks.size(), 4u);
  EXPECT_EQ(store_->internal_records(), big.root.chunks.size());
  EXPECT_EQ(store_->size(), 1u);
  for (const ChunkRef& c : big.root.chunks) EXPECT_LE(c.count, 2 * kChunkEntries);
  std::set<std::string> all = All();
  EXPECT_EQ(all.size(), 20000u);
  EXPECT_TRUE(all.count(Member(19999)));
}

TEST_F(CollectionChunksTest, APointWriteRewritesOnlyItsChunk) {
  Add(0, 20000);
  CollectionRead before = Read();
  ASSERT_TRUE(before.chunked);
  const std::string extra = "extra";
  const std::vector<std::string_view> one = {extra};
  CollectionRead point = Read(ReadScope::Members(one));
  ASSERT_EQ(point.covered.size(), 1u);
  EXPECT_LT(point.view.size(), 2 * kChunkEntries);
  Change(one, false);
  CollectionRead after = Read();
  ASSERT_EQ(after.root.chunks.size(), before.root.chunks.size());
  size_t differing = 0;
  for (size_t i = 0; i < after.root.chunks.size(); ++i) {
    differing += after.root.chunks[i].number != before.root.chunks[i].number;
  }
  EXPECT_EQ(differing, 1u);
  EXPECT_EQ(after.size, 20001u);
  EXPECT_EQ(store_->internal_records(), after.root.chunks.size());  // the old chunk deleted
  // Count-only and scan scopes read the root and a chunk, not everything.
  CollectionRead count = Read(ReadScope::Count());
  EXPECT_EQ(count.size, 20001u);
  EXPECT_TRUE(count.chunk_bytes.empty());
  CollectionRead scan = Read(ReadScope::Scan(0, 10));
  EXPECT_EQ(scan.covered.size(), 1u);
  EXPECT_EQ(scan.scan_next, after.root.chunks[1].first);
}

TEST_F(CollectionChunksTest, GrowingChunksSplitShrinkingCollectionsCollapse) {
  Add(0, 20000);
  const size_t chunks = Read().root.chunks.size();
  Add(20000, 80000);
  CollectionRead grown = Read();
  EXPECT_GT(grown.root.chunks.size(), chunks);
  for (const ChunkRef& c : grown.root.chunks) EXPECT_LE(c.count, 2 * kChunkEntries);
  EXPECT_EQ(All().size(), 80000u);
  // Emptying one chunk (all of its members, in one point write) drops it.
  const std::string probe = Member(123);
  const std::vector<std::string_view> probe_v = {probe};
  CollectionRead one = Read(ReadScope::Members(probe_v));
  ASSERT_EQ(one.covered.size(), 1u);
  std::vector<std::string> owned;
  for (uint32_t i = 0; i < one.view.size(); ++i) owned.emplace_back(one.view.field(i));
  std::vector<std::string_view> its(owned.begin(), owned.end());
  Change(its, true);
  CollectionRead dropped = Read();
  EXPECT_EQ(dropped.root.chunks.size(), grown.root.chunks.size() - 1);
  EXPECT_EQ(dropped.size, 80000u - owned.size());
  EXPECT_EQ(All().size(), 80000u - owned.size());
  EXPECT_EQ(store_->internal_records(), dropped.root.chunks.size());
  // A write that holds the whole collection and leaves it small goes back to one record; the
  // chunks go to the sweep.
  Remove(0, 79000);
  std::set<std::string> want;
  for (int i = 79000; i < 80000; ++i) want.insert(Member(i));
  for (const std::string& m : owned) want.erase(m);
  CollectionRead shrunk = Read();
  EXPECT_FALSE(shrunk.chunked);
  EXPECT_EQ(shrunk.size, want.size());
  EXPECT_GT(store_->chunks().pending(), 0u);
  ASSERT_TRUE(worker_.Run([&]() -> Task { return SweepDeadChunks(*store_, 100000); }));
  EXPECT_EQ(store_->internal_records(), 0u);
  EXPECT_EQ(All(), want);
  // Emptying deletes the key.
  Remove(79000, 80000);
  EXPECT_FALSE(Read().info.exists);
}

}  // namespace
}  // namespace lavik
