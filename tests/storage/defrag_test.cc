// Defrag (src/storage/defrag.cc, Store::Defrag): runs on a worker because it yields to the loop
// between slices of relocated records.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/slot.h"
#include "runtime/shard_hop.h"
#include "storage/format.h"
#include "storage/recovery.h"
#include "storage/store.h"
#include "storage/test_data_file.h"

namespace lavik {
namespace {

using storage_test::Del;
using storage_test::Flush;
using storage_test::Get;
using storage_test::Put;
using storage_test::ReadOutcome;
using storage_test::TestWorker;
using SegState = DataFile::SegState;

constexpr uint64_t kSeg = kDefaultSegmentSize;

std::string ValueFor(const std::string& key, int version, size_t len) {
  std::string v = key + "#" + std::to_string(version) + "|";
  while (v.size() < len) v += static_cast<char>('a' + (v.size() * 7 + version) % 26);
  v.resize(len);
  return v;
}

class DefragTest : public ::testing::Test {
 protected:
  // A capped file of 10 segments, one shard.
  DefragTest() : file_(kDefaultDataOffset + 10 * kSeg) {}
  void SetUp() override {
    ASSERT_TRUE(file_.ok()) << file_.error();
    options_.cache_bytes = 0;
    options_.buffer_bytes = 256 << 10;
    store_ = std::move(file_.MakeStores(1, options_)[0]);
  }
  Store& s() { return *store_; }
  DataFile& f() { return *file_.file(); }

  void Set(const std::string& key, int version, size_t len = 2000, int64_t expire_ms = 0) {
    std::string v = ValueFor(key, version, len);
    WriteResult w = Put(s(), key, v, expire_ms);
    ASSERT_TRUE(w.ok()) << key << ": " << w.error;
    want_[key] = v;
    if (++since_tick_ >= 32) {
      since_tick_ = 0;
      s().Tick(NowMs());  // the worker's timer writes full buffers
    }
  }
  void Remove(const std::string& key) {
    bool existed = false;
    ASSERT_TRUE(Del(s(), key, &existed).ok());
    ASSERT_TRUE(existed) << key;
    want_.erase(key);
  }
  uint32_t SegmentOfKey(const std::string& key) {
    return f().SegmentOf(loc::Offset(s().Lookup(key, NowMs()).loc));
  }
  // Seals the open segment after writing everything buffered.
  void Seal() {
    ASSERT_TRUE(Flush(s()));
    s().log().CloseSegment();
  }
  void Defrag() {
    ASSERT_TRUE(worker_.RunServing(store_.get(), [this] { return s().Defrag(true); }));
  }
  void ExpectState(const char* when) {
    EXPECT_EQ(s().size(), want_.size()) << when;
    for (const auto& [key, value] : want_) {
      ReadOutcome r = Get(s(), key);
      ASSERT_TRUE(r.ok()) << when << ": " << key << ": " << r.error;
      ASSERT_EQ(r.value, value) << when << ": " << key;
    }
  }
  void Restart() {
    ASSERT_TRUE(Flush(s()));
    store_.reset();
    ASSERT_TRUE(file_.Reopen()) << file_.error();
    store_ = std::move(file_.MakeStores(1, options_)[0]);
    RecoveryReport report;
    std::string error;
    std::vector<Store*> stores{store_.get()};
    ASSERT_TRUE(Recover(
        file_.file(), stores, [](uint16_t) { return 0; }, [](const std::string&) {}, &report,
        &error))
        << error;
    EXPECT_EQ(report.corrupt, 0u);
  }

  TestDataFile file_;
  StoreOptions options_;
  std::unique_ptr<Store> store_;
  TestWorker worker_;
  std::map<std::string, std::string> want_;
  int since_tick_ = 0;
};

TEST_F(DefragTest, FreesSparseSegmentsAndKeepsEveryLiveKey) {
  for (int i = 0; i < 1500; ++i) Set("k:" + std::to_string(i), 1, 8000);
  const uint32_t first = SegmentOfKey("k:0");
  // Overwrite nine keys in ten: the first segments are left sparse.
  for (int i = 0; i < 1500; ++i) {
    if (i % 10 != 0) Set("k:" + std::to_string(i), 2, 8000);
  }
  ASSERT_TRUE(Flush(s()));
  ASSERT_GE(s().log().sealed().size(), 2u);
  const double payload = static_cast<double>(kSeg - kBlockSize);
  EXPECT_LT(static_cast<double>(f().live_bytes(first).load()) / payload, 0.15);
  const size_t free_before = f().free_segments();
  const size_t sealed_before = s().log().sealed().size();

  Defrag();
  EXPECT_EQ(s().stats().defrag_segments, 1u);
  EXPECT_EQ(f().state(first), SegState::kFree);
  EXPECT_GT(s().stats().defrag_records, 80u);  // the tenth of its ~1040 records still live
  EXPECT_LT(s().stats().defrag_records, 130u);
  EXPECT_EQ(s().log().sealed().size(), sealed_before - 1);
  SegmentHeader h;
  std::string head = file_.ReadBytes(f().SegmentOffset(first), kSegmentHeaderSize);
  ASSERT_TRUE(DecodeSegmentHeader(head.data(), &h));
  EXPECT_EQ(h.kind, SegmentKind::kFree);
  EXPECT_GT(f().bytes_reclaimed(), 0u);
  ExpectState("after one pass");

  Defrag();
  EXPECT_EQ(s().stats().defrag_segments, 2u);
  EXPECT_GE(f().free_segments(), free_before + 1);  // (the relocations may open one segment)
  ExpectState("after two passes");

  Restart();
  ExpectState("after a restart");
}

TEST_F(DefragTest, TheSparsestSealedSegmentIsChosen) {
  for (int i = 0; i < 800; ++i) Set("x:" + std::to_string(i), 1);
  const uint32_t half = SegmentOfKey("x:0");
  Seal();
  for (int i = 0; i < 800; ++i) Set("y:" + std::to_string(i), 1);
  const uint32_t sparse = SegmentOfKey("y:0");
  Seal();
  for (int i = 0; i < 800; i += 2) Set("x:" + std::to_string(i), 2);
  for (int i = 0; i < 800; ++i) {
    if (i % 10 != 0) Set("y:" + std::to_string(i), 2);
  }
  ASSERT_TRUE(Flush(s()));
  ASSERT_NE(half, sparse);
  EXPECT_GT(f().live_bytes(half).load(), 4 * f().live_bytes(sparse).load());

  Defrag();
  EXPECT_EQ(s().stats().defrag_segments, 1u);
  EXPECT_EQ(s().stats().defrag_records, 80u);
  EXPECT_EQ(f().state(sparse), SegState::kFree);
  EXPECT_EQ(f().state(half), SegState::kLog);
  ExpectState("after defrag");
}

TEST_F(DefragTest, NothingHappensWithPlentyOfSpaceOrWhenPaused) {
  TestDataFile big;  // grows without a cap: space is never low
  ASSERT_TRUE(big.ok());
  auto store = std::move(big.MakeStores(1, options_)[0]);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(Put(*store, "a" + std::to_string(i), "v").ok());
  ASSERT_TRUE(Flush(*store));
  store->log().CloseSegment();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(Put(*store, "a" + std::to_string(i), "w").ok());
  ASSERT_TRUE(worker_.Run([&] { return store->Defrag(false); }));
  EXPECT_EQ(store->stats().defrag_segments, 0u);
  store->set_defrag_paused(true);
  ASSERT_TRUE(worker_.Run([&] { return store->Defrag(true); }));
  EXPECT_EQ(store->stats().defrag_segments, 0u);
  store->set_defrag_paused(false);
  ASSERT_TRUE(worker_.Run([&] { return store->Defrag(true); }));
  EXPECT_EQ(store->stats().defrag_segments, 1u);
}

TEST_F(DefragTest, DeletionMarkersAreRelocatedNotResurrected) {
  // A: the keys' first versions.
  for (int i = 0; i < 1000; ++i) Set("k:" + std::to_string(i), 1);
  const uint32_t a = SegmentOfKey("k:0");
  Seal();
  // B: deletes, short TTLs over those keys, and filler that is overwritten below.
  const int64_t now = NowMs();
  for (int i = 0; i < 200; ++i) Remove("k:" + std::to_string(i));
  for (int i = 200; i < 250; ++i) Set("k:" + std::to_string(i), 2, 100, now + 30);
  for (int i = 0; i < 500; ++i) Set("f:" + std::to_string(i), 1);
  const uint32_t b = SegmentOfKey("f:0");
  Seal();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = 200; i < 250; ++i) {
    EXPECT_FALSE(s().Lookup("k:" + std::to_string(i), NowMs()).exists);
    want_.erase("k:" + std::to_string(i));
  }
  for (int i = 0; i < 500; ++i) Set("f:" + std::to_string(i), 2);
  ASSERT_TRUE(Flush(s()));
  EXPECT_EQ(s().tombstone_count(), 250u);

  Defrag();  // B is nearly all dead: only the 250 markers are still needed
  EXPECT_EQ(f().state(b), SegState::kFree);
  EXPECT_EQ(s().stats().defrag_records, 250u);
  EXPECT_EQ(s().tombstone_count(), 250u);
  EXPECT_EQ(s().SweepTombstones(), 0u);  // A still holds older versions of those keys
  ExpectState("after defrag of B");
  Restart();
  ExpectState("after a restart");
  for (int i = 0; i < 250; ++i) {
    EXPECT_TRUE(Get(s(), "k:" + std::to_string(i)).not_found()) << i;
  }
  EXPECT_EQ(s().tombstone_count(), 250u);

  // Once A is gone too, nothing older can resurface: the tomb raider drops the markers. (The
  // segment holding the relocated markers may be the sparsest and go first.)
  for (int pass = 0; pass < 4 && f().state(a) != SegState::kFree; ++pass) Defrag();
  EXPECT_EQ(f().state(a), SegState::kFree);
  EXPECT_EQ(s().SweepTombstones(), 250u);
  EXPECT_EQ(s().tombstone_count(), 0u);
  EXPECT_EQ(s().stats().tombstones_dropped, 250u);
  ExpectState("after defrag of A");
  Restart();
  ExpectState("after the second restart");
  for (int i = 0; i < 250; ++i) {
    EXPECT_TRUE(Get(s(), "k:" + std::to_string(i)).not_found()) << i;
  }
}

// Regression test; before 2bc9dd6 (src/storage/defrag.cc, DefragSegment, the `marker` branch): a
// record whose TTL has passed but whose key nobody touched since (still in the index, not yet a
// registered marker) is neither relocated nor kept: `tombstones_.find(old_loc)` misses and the
// record is skipped as if swept. The segment is freed, so the key's deletion marker is gone and its
// older version in an older segment comes back at the next restart.
TEST_F(DefragTest, ExpiredButUntouchedKeyIsNotResurrectedByDefrag) {
  for (int i = 0; i < 100; ++i) Set("old:" + std::to_string(i), 1);
  Set("ghost", 1);  // no TTL, in the first segment
  Seal();
  const int64_t expire = NowMs() + 100;
  Set("ghost", 2, 100, expire);  // a TTL, in the segment defrag will free
  const uint32_t b = SegmentOfKey("ghost");
  for (int i = 0; i < 300; ++i) Set("f:" + std::to_string(i), 1);
  Seal();
  for (int i = 0; i < 300; ++i) Set("f:" + std::to_string(i), 2);
  ASSERT_TRUE(Flush(s()));
  while (NowMs() <= expire + 5) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  want_.erase("ghost");

  Defrag();
  ASSERT_EQ(f().state(b), SegState::kFree);
  Restart();
  EXPECT_TRUE(Get(s(), "ghost").not_found()) << "the expired key came back from the dead";
  ExpectState("after a restart");
}

// Regression test; before 2bc9dd6 (src/storage/defrag.cc, DefragSegment): the victim is read from
// the device without first writing the log buffers that still hold its tail. A segment sealed a
// moment ago (its last buffer queued or in flight — one write at a time) reads as zeros from there,
// the scan stops early, the live records after that point are not relocated, and the segment is
// freed: their reads fail verification at once and the keys are gone after a restart.
TEST_F(DefragTest, VictimWhoseTailIsStillBufferedLosesNothing) {
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(Put(s(), "b:" + std::to_string(i), ValueFor("b", i, 500)).ok());
    want_["b:" + std::to_string(i)] = ValueFor("b", i, 500);
  }
  const uint32_t victim = SegmentOfKey("b:0");
  s().log().CloseSegment();  // sealed; its buffers are queued but not written yet
  for (int i = 0; i < 1000; ++i) {
    if (i % 10 == 0) continue;
    ASSERT_TRUE(Put(s(), "b:" + std::to_string(i), "new").ok());
    want_["b:" + std::to_string(i)] = "new";
  }
  Defrag();
  EXPECT_EQ(f().state(victim), SegState::kFree);
  ExpectState("after defrag");
  Restart();
  ExpectState("after a restart");
}

void SetTrue(void* flag) { *static_cast<bool*>(flag) = true; }

// Runs on the worker: a defrag pass that yields mid-way, FLUSHALL (the steps
// src/commands/key_family.cc Flush takes, for one shard) while it is suspended, then waits for
// the pass to end.
Task FlushallDuringDefrag(Store* s, bool* defrag_suspended, bool* flushed) {
  bool defrag_done = false;
  Task d = s->Defrag(true);
  if (d.Start(&SetTrue, &defrag_done)) co_return;
  *defrag_suspended = true;
  const uint64_t flush_seq = s->BeginFlush();
  bool ok = false;
  co_await s->PrepareFlush(&ok);
  std::string error;
  *flushed = ok && s->CommitFlush(flush_seq, &error);
  s->ReleaseFlushed(flush_seq);
  while (!defrag_done) {
    s->EndOfTurn();
    s->Tick(NowMs());
    co_await YieldToLoop();
  }
}

// Regression test; before 2bc9dd6 (src/storage/defrag.cc, DefragSegment; src/storage/store.cc,
// Store::ReleaseFlushed): a FLUSHALL that runs while a defrag pass is suspended (it yields every 64
// records, and waits for the device) releases the victim with the other sealed segments; the pass
// then resumes, writes a free header over the segment (which a shard may have reopened as its log
// by then) and releases it a second time: the allocator holds it twice and hands it out twice.
TEST_F(DefragTest, FlushallDuringDefragDoesNotFreeASegmentTwice) {
  for (int i = 0; i < 300; ++i) Set("old:" + std::to_string(i), 1);
  Seal();
  for (int i = 0; i < 300; i += 2) Set("old:" + std::to_string(i), 2);
  ASSERT_TRUE(Flush(s()));
  bool suspended = false, flushed = false;
  ASSERT_TRUE(
      worker_.Run([&] { return FlushallDuringDefrag(store_.get(), &suspended, &flushed); }));
  ASSERT_TRUE(suspended);
  ASSERT_TRUE(flushed);
  EXPECT_EQ(s().size(), 0u);
  // Every free segment must come out of the allocator once.
  std::vector<uint32_t> got;
  uint32_t seg;
  while ((seg = f().AllocateSegment(SegState::kLog, 0, true)) != DataFile::kNoSegment) {
    got.push_back(seg);
  }
  std::sort(got.begin(), got.end());
  auto twice = std::adjacent_find(got.begin(), got.end());
  EXPECT_TRUE(twice == got.end()) << "segment " << *twice << " was handed out twice";
}

}  // namespace
}  // namespace lavik
