#include "storage/chunked.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/slot.h"
#include "storage/index.h"
#include "storage/recovery.h"
#include "storage/store.h"
#include "storage/test_data_file.h"

namespace lavik {
namespace {

using storage_test::Del;
using storage_test::Flush;
using storage_test::Get;
using storage_test::Put;
using storage_test::TestWorker;

ChunkRoot SampleRoot(uint64_t id, uint16_t slot, std::vector<uint64_t> numbers) {
  ChunkRoot r;
  r.slot = slot;
  r.id = id;
  uint64_t first = 0;
  for (uint64_t n : numbers) {
    r.chunks.push_back({first, n, 10});
    r.total += 10;
    first += uint64_t{1} << 50;
    r.next_number = std::max(r.next_number, n + 1);
  }
  return r;
}

TEST(ChunkKeyTest, RoutesToTheParentSlotForEverySlot) {
  for (int slot = 0; slot < kNumSlots; ++slot) {
    const std::string k = ChunkKey(static_cast<uint16_t>(slot), 0x1234, 7);
    ASSERT_EQ(KeyHashSlot(k), slot) << "slot " << slot;
    ASSERT_TRUE(IsChunkKey(k));
  }
  EXPECT_NE(ChunkKey(1, 2, 3), ChunkKey(1, 2, 4));
  EXPECT_NE(ChunkKey(1, 2, 3), ChunkKey(1, 5, 3));
  EXPECT_FALSE(IsChunkKey("plain"));
}

TEST(ChunkRootTest, EncodeParseRoundTripAndChunkOf) {
  ChunkRoot r = SampleRoot(42, 9, {3, 5, 8});
  r.flags = 1;
  const std::string bytes = EncodeChunkRoot(r);
  ASSERT_TRUE(IsChunkRoot(bytes));
  ChunkRoot p;
  ASSERT_TRUE(ParseChunkRoot(bytes, &p));
  EXPECT_EQ(p.flags, 1);
  EXPECT_EQ(p.slot, 9);
  EXPECT_EQ(p.id, 42u);
  EXPECT_EQ(p.total, 30u);
  EXPECT_EQ(p.next_number, 9u);
  ASSERT_EQ(p.chunks.size(), 3u);
  EXPECT_EQ(p.chunks[1].number, 5u);
  EXPECT_EQ(p.ChunkOf(0), 0u);
  EXPECT_EQ(p.ChunkOf((uint64_t{1} << 50) - 1), 0u);
  EXPECT_EQ(p.ChunkOf(uint64_t{1} << 50), 1u);
  EXPECT_EQ(p.ChunkOf(~uint64_t{0}), 2u);
  EXPECT_EQ(p.EndOf(2), 0u);
  // Damage: a truncated root, a count that does not add up.
  EXPECT_FALSE(ParseChunkRoot(bytes.substr(0, bytes.size() - 1), &p));
  std::string bad = bytes;
  bad[8] ^= 1;
  EXPECT_FALSE(ParseChunkRoot(bad, &p));
}

TEST(ChunkRegistryTest, DeathQueuesChunksRenameAndRewriteDoNot) {
  ChunkRegistry reg;
  const std::string root = EncodeChunkRoot(SampleRoot(7, 1, {1, 2}));
  reg.NoteWrite(100, root, true);
  EXPECT_EQ(reg.roots(), 1u);
  // RENAME: the destination gets the same root, then the source dies: nothing to free.
  reg.NoteWrite(200, root, true);
  reg.KeyDying(100);
  EXPECT_EQ(reg.pending(), 0u);
  // A rewrite of the same collection (new chunk numbers) is no death either.
  reg.NoteWrite(200, EncodeChunkRoot(SampleRoot(7, 1, {3, 4, 5})), true);
  EXPECT_EQ(reg.pending(), 0u);
  // Overwritten by a string: its current chunks go to the sweep.
  reg.NoteWrite(200, "a string", false);
  EXPECT_EQ(reg.pending(), 3u);
  std::vector<ChunkRegistry::Dead> dead = reg.Take(2);
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_EQ(dead[0].number, 3u);
  EXPECT_EQ(reg.pending(), 1u);
  reg.Clear();
  EXPECT_EQ(reg.pending(), 0u);
}

class ChunkStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(file_.ok()) << file_.error();
    store_ = std::move(file_.MakeStores(1)[0]);
  }
  // Runs CommitChunks on the worker.
  bool Commit(const ChunkCommit& c, uint64_t expected, bool* applied) {
    bool ok = false;
    std::string error;
    EXPECT_TRUE(
        worker_.Run([&]() -> Task { return CommitTask(c, expected, applied, &ok, &error); }));
    EXPECT_TRUE(error.empty()) << error;
    return ok;
  }
  Task CommitTask(const ChunkCommit& c, uint64_t expected, bool* applied, bool* ok,
                  std::string* error) {
    *ok = co_await CommitChunks(*store_, "coll", ValueType::kSet, expected, c, 0, applied, error);
  }
  bool Exists(uint16_t slot, uint64_t id, uint64_t n) {
    return store_->Lookup(ChunkKey(slot, id, n), 0).exists;
  }

  TestDataFile file_;
  std::unique_ptr<Store> store_;
  TestWorker worker_;
};

TEST_F(ChunkStoreTest, CommitWritesChunksThenRootAndHidesChunksFromSize) {
  const uint16_t slot = KeyHashSlot("coll");
  ChunkCommit c;
  c.root = SampleRoot(11, slot, {1, 2});
  c.written = {{1, "one"}, {2, "two"}};
  bool applied = false;
  ASSERT_TRUE(Commit(c, 0, &applied));
  EXPECT_TRUE(applied);
  EXPECT_TRUE(Exists(slot, 11, 1));
  EXPECT_TRUE(Exists(slot, 11, 2));
  EXPECT_EQ(store_->size(), 1u);  // only "coll" is a key
  EXPECT_EQ(store_->internal_records(), 2u);
  EXPECT_EQ(store_->records(), 3u);
  // SCAN and RANDOMKEY never meet a chunk.
  size_t seen = 0;
  store_->ScanIndex(0, 100, 0, [&](uint64_t, uint64_t l) {
    EXPECT_NE(loc::Type(l), ValueType::kChunk);
    ++seen;
  });
  EXPECT_EQ(seen, 1u);
  uint64_t fp, l;
  for (uint64_t rnd = 1; rnd < 50; ++rnd) {
    ASSERT_TRUE(store_->RandomEntry(rnd * 0x9E3779B97F4A7C15ULL, 0, &fp, &l));
    EXPECT_NE(loc::Type(l), ValueType::kChunk);
  }

  // Copy-on-write: chunk 2 replaced by 3; the root moves on, chunk 2 is deleted.
  const uint64_t root_loc = store_->Lookup("coll", 0).loc;
  ChunkCommit d;
  d.root = SampleRoot(11, slot, {1, 3});
  d.written = {{3, "three"}};
  d.replaced = {2};
  ASSERT_TRUE(Commit(d, root_loc, &applied));
  EXPECT_TRUE(applied);
  EXPECT_FALSE(Exists(slot, 11, 2));
  EXPECT_TRUE(Exists(slot, 11, 3));
  EXPECT_EQ(store_->internal_records(), 2u);
}

TEST_F(ChunkStoreTest, CommitAgainstAMovedRootDropsItsNewChunks) {
  const uint16_t slot = KeyHashSlot("coll");
  ChunkCommit c;
  c.root = SampleRoot(12, slot, {1});
  c.written = {{1, "one"}};
  bool applied = false;
  ASSERT_TRUE(Commit(c, 0, &applied));
  const uint64_t stale = store_->Lookup("coll", 0).loc;
  ASSERT_TRUE(Put(*store_, "coll", EncodeChunkRoot(c.root), 0, ValueType::kSet).ok());  // a writer
  ChunkCommit d;
  d.root = SampleRoot(12, slot, {2});
  d.written = {{2, "two"}};
  d.replaced = {1};
  ASSERT_TRUE(Commit(d, stale, &applied));
  EXPECT_FALSE(applied);
  EXPECT_FALSE(Exists(slot, 12, 2));  // ours, dropped
  EXPECT_TRUE(Exists(slot, 12, 1));   // still the root's
}

TEST_F(ChunkStoreTest, DeletedRootsChunksAreSweptInTheBackground) {
  const uint16_t slot = KeyHashSlot("coll");
  ChunkCommit c;
  std::vector<uint64_t> numbers;
  for (uint64_t n = 1; n <= 300; ++n) {
    numbers.push_back(n);
    c.written.emplace_back(n, "chunk" + std::to_string(n));
  }
  c.root = SampleRoot(13, slot, numbers);
  bool applied = false;
  ASSERT_TRUE(Commit(c, 0, &applied));
  EXPECT_EQ(store_->internal_records(), 300u);
  ASSERT_TRUE(Del(*store_, "coll").ok());
  EXPECT_EQ(store_->size(), 0u);  // the key is gone at once
  EXPECT_EQ(store_->chunks().pending(), 300u);
  // One slice of 100, then the rest.
  ASSERT_TRUE(worker_.Run([&]() -> Task { return SweepDeadChunks(*store_, 100); }));
  EXPECT_EQ(store_->chunks().pending(), 200u);
  EXPECT_EQ(store_->internal_records(), 200u);
  ASSERT_TRUE(worker_.Run([&]() -> Task { return SweepDeadChunks(*store_, 1000); }));
  EXPECT_EQ(store_->chunks().pending(), 0u);
  EXPECT_EQ(store_->internal_records(), 0u);
  EXPECT_FALSE(Exists(slot, 13, 1));
}

TEST(ChunkRecoveryTest, ALogScanQueuesChunksNoLiveRootNames) {
  TestDataFile file;
  ASSERT_TRUE(file.ok()) << file.error();
  const uint16_t slot = KeyHashSlot("coll");
  {
    auto stores = file.MakeStores(1);
    Store& s = *stores[0];
    // A crash between a first chunking's chunks and its root leaves chunks of an unnamed id.
    ASSERT_TRUE(Put(s, ChunkKey(slot, 77, 1), "orphan", 0, ValueType::kChunk).ok());
    ASSERT_TRUE(Put(s, ChunkKey(slot, 78, 1), "live", 0, ValueType::kChunk).ok());
    ASSERT_TRUE(
        Put(s, "coll", EncodeChunkRoot(SampleRoot(78, slot, {1})), 0, ValueType::kSet).ok());
    // A dead root whose chunks were not swept yet: its deletion is replayed too.
    ASSERT_TRUE(Put(s, ChunkKey(slot, 79, 1), "dead", 0, ValueType::kChunk).ok());
    ASSERT_TRUE(
        Put(s, "gone", EncodeChunkRoot(SampleRoot(79, slot, {1})), 0, ValueType::kSet).ok());
    s.chunks().Clear();  // as if the process died before the sweep ran
    ASSERT_TRUE(Del(s, "gone").ok());
    s.chunks().Clear();
    ASSERT_TRUE(Flush(s));
  }
  ASSERT_TRUE(file.Reopen()) << file.error();
  auto stores = file.MakeStores(1);
  RecoveryReport report;
  std::string error;
  ASSERT_TRUE(Recover(
      file.file(), TestDataFile::Ptrs(stores), [](uint16_t) { return 0; },
      [](const std::string&) {}, &report, &error))
      << error;
  Store& s = *stores[0];
  EXPECT_EQ(s.size(), 1u);  // "coll"
  EXPECT_EQ(s.internal_records(), 3u);
  std::vector<ChunkRegistry::Dead> dead = s.chunks().Take(10);
  std::set<uint64_t> ids;
  for (const auto& d : dead) ids.insert(d.id);
  EXPECT_EQ(ids, (std::set<uint64_t>{77, 79}));
  EXPECT_TRUE(s.chunks().referenced(78));
}

}  // namespace
}  // namespace lavik
