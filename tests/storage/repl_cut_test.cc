// Replication cuts (doc/storage-format.md "Replication cut"): the superblock's consistency
// point, the rollback to it at recovery, and what a cut keeps from being reclaimed.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
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

ReplCut SomeCut(uint32_t shards) {
  ReplCut cut;
  const std::string id = "0123456789abcdef0123456789abcdef01234567";
  std::copy(id.begin(), id.end(), cut.replid.begin());
  cut.offset = 123456789;
  cut.db = 5;
  cut.count = shards;
  for (uint32_t i = 0; i < shards; ++i) cut.shards[i] = CutPosition{10 + i, 1000 * i, 20 + i};
  return cut;
}

TEST(ReplCutFormatTest, RoundTripsInTheSuperblock) {
  Superblock sb;
  sb.generation = 7;
  sb.cut = SomeCut(3);
  std::string block(kBlockSize, '\0');
  EncodeSuperblock(sb, block.data());
  Superblock back;
  ASSERT_EQ(DecodeSuperblock(block.data(), &back), SuperblockStatus::kOk);
  EXPECT_EQ(back, sb);
  EXPECT_TRUE(back.cut.valid());

  sb.cut = SomeCut(kMaxCutShards);
  EncodeSuperblock(sb, block.data());
  ASSERT_EQ(DecodeSuperblock(block.data(), &back), SuperblockStatus::kOk);
  EXPECT_EQ(back.cut, sb.cut);
}

TEST(ReplCutFormatTest, NoCutLeavesTheBlockAsBeforeAndADamagedOneFailsTheCopy) {
  Superblock sb;
  std::string block(kBlockSize, '\0');
  EncodeSuperblock(sb, block.data());
  EXPECT_EQ(block.find_first_not_of('\0', 512), std::string::npos);  // a file from before cuts
  Superblock back;
  ASSERT_EQ(DecodeSuperblock(block.data(), &back), SuperblockStatus::kOk);
  EXPECT_FALSE(back.cut.valid());

  sb.cut = SomeCut(2);
  EncodeSuperblock(sb, block.data());
  block[530] ^= 1;  // inside the cut: its own crc catches it, the other copy is used
  EXPECT_EQ(DecodeSuperblock(block.data(), &back), SuperblockStatus::kBadCrc);
}

class ReplCutTest : public ::testing::Test {
 protected:
  // A capped file of 12 segments, one shard, small write buffers (a 300 KB value is large).
  ReplCutTest() : file_(kDefaultDataOffset + 12 * kDefaultSegmentSize) {}
  void SetUp() override {
    ASSERT_TRUE(file_.ok()) << file_.error();
    options_.cache_bytes = 0;
    options_.buffer_bytes = 256 << 10;
    store_ = std::move(file_.MakeStores(1, options_)[0]);
  }
  Store& s() { return *store_; }
  DataFile& f() { return *file_.file(); }

  void Set(const std::string& key, const std::string& value) {
    ASSERT_TRUE(Put(s(), key, value).ok()) << key;
    if (++since_tick_ >= 32) {
      since_tick_ = 0;
      s().Tick(NowMs());
    }
  }
  // The data as they stand, key by key.
  std::map<std::string, std::string> Data(const std::vector<std::string>& keys) {
    std::map<std::string, std::string> out;
    for (const std::string& k : keys) {
      ReadOutcome r = Get(s(), k);
      EXPECT_TRUE(r.ok() || r.not_found()) << k << ": " << r.error;
      if (r.ok()) out[k] = r.value;
    }
    return out;
  }
  // Captures this (only) shard's position, syncs it and writes the cut, as a replica's
  // Replica::TakeCut does; returns the capture number.
  uint64_t WriteCut(int64_t offset) {
    ReplCut cut = SomeCut(1);
    cut.offset = offset;
    uint64_t number = 0;
    const uint64_t epoch = f().cut_epoch();
    cut.shards[0] = s().CaptureCut(&number);
    EXPECT_TRUE(Flush(s()));
    bool stale = true;
    std::string error;
    EXPECT_TRUE(f().SetReplCut(cut, epoch, &stale, &error)) << error;
    EXPECT_FALSE(stale);
    s().CutDurable(number);
    return number;
  }
  // A restart after a crash: whatever reached the file stays, the write buffers are lost.
  RecoveryReport Restart(bool rollback) {
    store_.reset();
    EXPECT_TRUE(file_.Reopen()) << file_.error();
    store_ = std::move(file_.MakeStores(1, options_)[0]);
    RecoveryReport report;
    std::string error;
    std::vector<Store*> stores{store_.get()};
    EXPECT_TRUE(Recover(
        file_.file(), stores, [](uint16_t) { return 0; }, [](const std::string&) {}, &report,
        &error, rollback))
        << error;
    return report;
  }

  TestDataFile file_;
  StoreOptions options_;
  std::unique_ptr<Store> store_;
  TestWorker worker_;
  int since_tick_ = 0;
};

TEST_F(ReplCutTest, ARollbackKeepsExactlyWhatTheCutHeld) {
  std::vector<std::string> keys;
  for (int i = 0; i < 400; ++i) keys.push_back("k:" + std::to_string(i));
  for (const std::string& k : keys) Set(k, k + ":v1:" + std::string(3000, 'a'));
  Set("large:before", std::string(300 << 10, 'L'));  // a large record of its own run
  keys.push_back("large:before");
  WriteCut(1000);
  const std::map<std::string, std::string> at_cut = Data(keys);
  ASSERT_EQ(at_cut.size(), 401u);

  // After the cut: overwrites, deletions, new keys, a large record, and enough to fill new
  // segments; all of it on the device.
  for (int i = 0; i < 400; i += 2) Set(keys[i], keys[i] + ":v2:" + std::string(9000, 'b'));
  for (int i = 1; i < 400; i += 7) ASSERT_TRUE(Del(s(), keys[i]).ok());
  for (int i = 0; i < 100; ++i) Set("new:" + std::to_string(i), "n");
  Set("large:after", std::string(300 << 10, 'M'));
  Set("large:before", "small now");
  ASSERT_TRUE(Flush(s()));
  keys.push_back("large:after");
  for (int i = 0; i < 100; ++i) keys.push_back("new:" + std::to_string(i));
  ASSERT_NE(Data(keys), at_cut);

  RecoveryReport report = Restart(true);
  EXPECT_TRUE(report.rolled_back);
  EXPECT_GT(report.dropped_records + report.dropped_segments, 0u);
  EXPECT_EQ(Data(keys), at_cut);
  EXPECT_TRUE(f().superblock().cut.valid());  // kept: the data are that cut again
  EXPECT_EQ(f().superblock().cut.offset, 1000);

  // What was dropped is gone from the file: a later start without a rollback finds the same.
  Set("k:0", "written after the restart");
  ASSERT_TRUE(Flush(s()));
  std::map<std::string, std::string> want = at_cut;
  want["k:0"] = "written after the restart";
  report = Restart(false);
  EXPECT_FALSE(report.rolled_back);
  EXPECT_EQ(Data(keys), want);
  EXPECT_FALSE(f().superblock().cut.valid());  // cleared: this run's writes are not in it
}

TEST_F(ReplCutTest, WithoutARollbackTheNewestDataStayAndTheCutIsCleared) {
  for (int i = 0; i < 50; ++i) Set("k:" + std::to_string(i), "v1");
  WriteCut(10);
  for (int i = 0; i < 50; ++i) Set("k:" + std::to_string(i), "v2");
  ASSERT_TRUE(Flush(s()));
  RecoveryReport report = Restart(false);
  EXPECT_FALSE(report.rolled_back);
  EXPECT_EQ(Get(s(), "k:49").value, "v2");
  EXPECT_FALSE(f().superblock().cut.valid());
}

TEST_F(ReplCutTest, FlushallFlushdbAndSwapdbVoidTheCut) {
  Set("k", "v");
  WriteCut(10);
  const uint64_t epoch = f().cut_epoch();
  std::string error;
  ASSERT_TRUE(f().SetFlushSeq(f().peek_next_segment_seq(), &error)) << error;
  EXPECT_FALSE(f().superblock().cut.valid());
  EXPECT_NE(f().cut_epoch(), epoch);
  // A cut captured before the void is refused.
  bool stale = false;
  ASSERT_TRUE(f().SetReplCut(SomeCut(1), epoch, &stale, &error));
  EXPECT_TRUE(stale);
  EXPECT_FALSE(f().superblock().cut.valid());

  WriteCut(20);
  ASSERT_TRUE(f().SetDbFlushSeq(3, f().peek_next_segment_seq(), &error)) << error;
  EXPECT_FALSE(f().superblock().cut.valid());
  WriteCut(30);
  std::array<uint8_t, kMaxDatabases> map = f().superblock().db_map;
  std::swap(map[0], map[1]);
  ASSERT_TRUE(f().SetDbMap(map, &error)) << error;
  EXPECT_FALSE(f().superblock().cut.valid());
  WriteCut(40);
  ASSERT_TRUE(f().ClearReplCut(&error)) << error;
  EXPECT_FALSE(f().superblock().cut.valid());
}

void SetTrue(void* flag) { *static_cast<bool*>(flag) = true; }

// On the worker: a defrag pass over a segment whose old records a durable cut names. Its copies
// are made, but the segment is not freed until a newer cut is durable (`release`: by a newer
// cut, else by voiding the cuts).
Task DefragWaitsForACut(Store* s, uint32_t victim, bool release_by_cut, bool* held, bool* freed) {
  bool done = false;
  Task d = s->Defrag(true);
  if (d.Start(&SetTrue, &done)) co_return;
  for (int turn = 0; turn < 200 && !done; ++turn) {
    s->EndOfTurn();
    s->Tick(NowMs());
    co_await YieldToLoop();
  }
  *held = !done && s->file().state(victim) == SegState::kLog && s->defrag_running();
  if (release_by_cut) {
    uint64_t number = 0;
    s->CaptureCut(&number);
    bool synced = false;
    co_await s->FlushAndSync(&synced);
    s->CutDurable(number);
  } else {
    s->CutsVoided();
  }
  for (int turn = 0; turn < 2000 && !done; ++turn) {
    s->EndOfTurn();
    s->Tick(NowMs());
    co_await YieldToLoop();
  }
  *freed = done && s->file().state(victim) == SegState::kFree;
}

class ReplCutDefragTest : public ReplCutTest, public ::testing::WithParamInterface<bool> {};

TEST_P(ReplCutDefragTest, DefragFreesASegmentACutMayNeedOnlyAfterANewerCut) {
  for (int i = 0; i < 300; ++i) Set("old:" + std::to_string(i), std::string(2000, 'o'));
  const uint32_t victim = f().SegmentOf(loc::Offset(s().Lookup("old:0", NowMs()).loc));
  ASSERT_TRUE(Flush(s()));
  s().log().CloseSegment();
  WriteCut(100);  // names the old records
  for (int i = 0; i < 300; i += 10) Set("old:" + std::to_string(i), "newer");  // still few
  for (int i = 0; i < 300; ++i) {
    if (i % 10 != 0) Set("old:" + std::to_string(i), "newer");
  }
  ASSERT_TRUE(Flush(s()));
  bool held = false, freed = false;
  ASSERT_TRUE(worker_.Run(
      [&] { return DefragWaitsForACut(store_.get(), victim, GetParam(), &held, &freed); }));
  EXPECT_TRUE(held) << "the segment was freed while the durable cut still named its records";
  EXPECT_TRUE(freed);
}

INSTANTIATE_TEST_SUITE_P(Release, ReplCutDefragTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "ByANewerCut" : "ByAVoid"; });

TEST_F(ReplCutTest, ADeadLargeRunIsFreedOnlyAfterANewerCut) {
  Set("large", std::string(300 << 10, 'L'));
  const uint32_t run = f().SegmentOf(loc::Offset(s().Lookup("large", NowMs()).loc));
  ASSERT_EQ(f().state(run), SegState::kLarge);
  WriteCut(7);
  Set("large", "small");  // the run is dead, but the cut names it
  ASSERT_TRUE(worker_.RunServing(store_.get(), [this]() -> Task {
    return [](Store* st) -> Task {
      for (int i = 0; i < 20; ++i) {
        st->Tick(NowMs());
        co_await YieldToLoop();
      }
    }(store_.get());
  }));
  EXPECT_EQ(f().state(run), SegState::kLarge);
  WriteCut(8);
  ASSERT_TRUE(worker_.RunServing(store_.get(), [this, run]() -> Task {
    return [](Store* st, DataFile* file, uint32_t seg) -> Task {
      for (int i = 0; i < 2000 && file->state(seg) != SegState::kFree; ++i) {
        st->Tick(NowMs());
        co_await YieldToLoop();
      }
    }(store_.get(), file_.file(), run);
  }));
  EXPECT_EQ(f().state(run), SegState::kFree);
}

}  // namespace
}  // namespace lavik
