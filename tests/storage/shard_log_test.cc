#include "storage/shard_log.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <random>
#include <string>
#include <vector>

#include "storage/data_file.h"
#include "storage/device.h"
#include "storage/format.h"
#include "storage/test_data_file.h"

namespace lavik {
namespace {

using Status = ShardLog::ReserveStatus;
using storage_test::HeldDevice;

struct Rec {
  uint64_t offset = 0;
  uint64_t segment_seq = 0;
  uint64_t seq = 0;
  std::string key;
  std::string value;
  size_t len() const { return RecordLength(key.size(), value.size()); }
};

// Reserves, encodes and commits one record.
Rec AppendRec(ShardLog& log, uint64_t seq, const std::string& key, const std::string& value) {
  Rec r;
  r.seq = seq;
  r.key = key;
  r.value = value;
  ShardLog::Slot slot;
  EXPECT_EQ(log.Reserve(r.len(), false, &slot), Status::kOk);
  if (slot.dst == nullptr) return r;
  RecordHeader h;
  h.seq = seq;
  EncodeRecord(h, key, value, slot.segment_seq, slot.dst);
  log.Commit(seq);
  r.offset = slot.offset;
  r.segment_seq = slot.segment_seq;
  return r;
}

void ExpectDecodes(const char* p, const Rec& r) {
  ASSERT_NE(p, nullptr) << "record at " << r.offset;
  RecordView v;
  ASSERT_EQ(DecodeRecord(p, r.len(), r.segment_seq, &v), RecordStatus::kOk) << r.offset;
  EXPECT_EQ(v.key, r.key);
  EXPECT_EQ(v.value, r.value);
  EXPECT_EQ(v.header.seq, r.seq);
}
void ExpectInMemory(const ShardLog& log, const Rec& r) {
  ExpectDecodes(log.InMemory(r.offset, r.len()), r);
}
void ExpectOnDisk(TestDataFile& f, const Rec& r) {
  std::string bytes = f.ReadBytes(r.offset, r.len());
  ExpectDecodes(bytes.data(), r);
}

std::string Value(std::mt19937_64& rng, size_t len) {
  std::string v(len, '\0');
  for (char& c : v) c = static_cast<char>('a' + rng() % 26);
  return v;
}

Task FlushTask(ShardLog* log, bool* ok) { co_await log->FlushAndSync(ok); }
Task WaitTask(ShardLog* log, uint64_t seq, int* state) {
  *state = 1;
  bool ok = co_await log->WaitDurable(seq);
  *state = ok ? 2 : 3;
}
Task SpaceTask(ShardLog* log, Rec* out, bool* done) {
  co_await log->SpaceAvailable();
  *out = AppendRec(*log, 1000, "after-space", "v");
  *done = true;
}

class ShardLogTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(file_.ok()) << file_.error(); }
  std::unique_ptr<ShardLog> MakeLog(Device* dev, SyncPolicy policy, size_t buffer_bytes,
                                    size_t max_buffers, uint32_t shard = 0) {
    return std::make_unique<ShardLog>(file_.file(), dev, shard, policy, buffer_bytes, max_buffers);
  }
  bool Flush(ShardLog& log) {
    bool ok = false;
    return storage_test::RunInline(FlushTask(&log, &ok)) && ok;
  }

  TestDataFile file_;
  FileDevice dev_{file_.file() ? file_.file()->fd() : -1};
};

TEST_F(ShardLogTest, ReserveCommitAndReadBackFromMemory) {
  auto log = MakeLog(&dev_, SyncPolicy::kNo, 64 << 10, 4, /*shard=*/2);
  EXPECT_EQ(log->open_segment(), DataFile::kNoSegment);
  EXPECT_EQ(log->max_record(), (64u << 10) - kBlockSize);
  Rec a = AppendRec(*log, 1, "alpha", "one");
  const uint32_t seg = log->open_segment();
  ASSERT_NE(seg, DataFile::kNoSegment);
  EXPECT_EQ(file_.file()->state(seg), DataFile::SegState::kLog);
  EXPECT_EQ(a.offset, file_.file()->SegmentOffset(seg) + kSegmentPayloadOffset);
  EXPECT_EQ(a.segment_seq, file_.file()->seq(seg).load());
  Rec b = AppendRec(*log, 2, "beta", std::string(100, 'b'));
  EXPECT_EQ(b.offset, a.offset + a.len());
  EXPECT_EQ(b.offset % kRecordAlign, 0u);
  EXPECT_EQ(log->last_seq(), 2u);
  EXPECT_EQ(log->durable_seq(), 0u);
  ExpectInMemory(*log, a);
  ExpectInMemory(*log, b);
  EXPECT_EQ(log->InMemory(b.offset + b.len(), 8), nullptr);  // not appended yet
  EXPECT_EQ(dev_.writes(), 0u);                              // nothing is written until asked

  ASSERT_TRUE(Flush(*log));
  EXPECT_EQ(log->durable_seq(), 2u);
  ExpectOnDisk(file_, a);
  ExpectOnDisk(file_, b);
  SegmentHeader h;
  std::string head = file_.ReadBytes(file_.file()->SegmentOffset(seg), kSegmentHeaderSize);
  ASSERT_TRUE(DecodeSegmentHeader(head.data(), &h));
  EXPECT_EQ(h.kind, SegmentKind::kLog);
  EXPECT_EQ(h.seq, a.segment_seq);
  EXPECT_EQ(h.shard, 2u);
}

TEST_F(ShardLogTest, RecordsStayReadableAcrossBufferRollOver) {
  auto log = MakeLog(&dev_, SyncPolicy::kNo, 16 << 10, 128);
  std::mt19937_64 rng(1);
  std::vector<Rec> recs;
  for (uint64_t i = 1; i <= 200; ++i) {
    const size_t len = rng() % 3000;
    recs.push_back(AppendRec(*log, i, "k" + std::to_string(i), Value(rng, len)));
  }
  // One segment, back to back, across many 16 KiB buffers.
  for (size_t i = 1; i < recs.size(); ++i) {
    ASSERT_EQ(recs[i].offset, recs[i - 1].offset + recs[i - 1].len());
  }
  EXPECT_GT(recs.back().offset - recs.front().offset, 10u * (16 << 10));
  EXPECT_LE(log->buffer_memory(), 128u * (16 << 10));
  for (const Rec& r : recs) ExpectInMemory(*log, r);
  ASSERT_TRUE(Flush(*log));
  for (const Rec& r : recs) ExpectOnDisk(file_, r);
  // Written buffers were recycled: the old records are on the device only.
  EXPECT_EQ(log->InMemory(recs.front().offset, recs.front().len()), nullptr);
  ExpectInMemory(*log, recs.back());
  EXPECT_GT(dev_.writes(), 10u);
}

TEST_F(ShardLogTest, PartialTailFlushesThenAppendsKeepTheBlockWhole) {
  // Flushing the open buffer's tail, appending into the same block and flushing again rewrites
  // the block: every record stays intact on the device.
  auto log = MakeLog(&dev_, SyncPolicy::kNo, 16 << 10, 4);
  std::mt19937_64 rng(2);
  std::vector<Rec> recs;
  for (uint64_t i = 1; i <= 60; ++i) {
    recs.push_back(AppendRec(*log, i, "p" + std::to_string(i), Value(rng, 50 + rng() % 900)));
    if (i % 3 == 0) log->Kick(true);
  }
  ASSERT_TRUE(Flush(*log));
  for (const Rec& r : recs) ExpectOnDisk(file_, r);
}

TEST_F(ShardLogTest, BusyWhileEveryBufferWaitsForTheDevice) {
  HeldDevice dev(file_.file()->fd());
  auto log = MakeLog(&dev, SyncPolicy::kNo, 16 << 10, 2);
  ShardLog::Slot slot;
  const std::string v(4000, 'x');
  uint64_t seq = 0;
  Status st;
  while ((st = log->Reserve(RecordLength(4, v.size()), false, &slot)) == Status::kOk) {
    RecordHeader h;
    h.seq = ++seq;
    EncodeRecord(h, "kkkk", v, slot.segment_seq, slot.dst);
    log->Commit(seq);
    ASSERT_LT(seq, 100u);
  }
  EXPECT_EQ(st, Status::kBusy);
  EXPECT_EQ(log->buffer_memory(), 2u * (16 << 10));  // max_buffers is a hard cap

  dev.hold = true;
  Rec after;
  bool done = false;
  EXPECT_FALSE(SpaceTask(log.get(), &after, &done).Start(nullptr, nullptr));
  EXPECT_FALSE(done);
  log->Kick(false);  // writes the queued full buffer (held by the device)
  ASSERT_EQ(dev.pending(), 1u);
  EXPECT_EQ(dev.front_kind(), IoRequest::Kind::kWrite);
  EXPECT_FALSE(done);
  dev.hold = false;
  ASSERT_TRUE(dev.Step());
  EXPECT_TRUE(done);  // the written buffer came back and woke the waiter
  ExpectInMemory(*log, after);
  ASSERT_TRUE(Flush(*log));
  ExpectOnDisk(file_, after);
}

TEST_F(ShardLogTest, SegmentRollOverSealsTheFullSegment) {
  auto log = MakeLog(&dev_, SyncPolicy::kNo, 1 << 20, 4);
  std::mt19937_64 rng(3);
  const std::string big = Value(rng, 512 << 10);
  std::vector<Rec> recs;
  uint32_t first_seg = DataFile::kNoSegment;
  for (uint64_t i = 1; i <= 16; ++i) {
    recs.push_back(AppendRec(*log, i, "big" + std::to_string(i), big));
    if (i == 1) first_seg = log->open_segment();
    log->Kick(false);
  }
  // 15 records of 512 KiB fit in an 8 MiB segment after its header; the 16th does not.
  const uint32_t second_seg = log->open_segment();
  ASSERT_NE(second_seg, first_seg);
  ASSERT_EQ(log->sealed().size(), 1u);
  EXPECT_EQ(log->sealed()[0], first_seg);
  EXPECT_EQ(file_.file()->SegmentOf(recs[14].offset), first_seg);
  EXPECT_EQ(recs[15].offset, file_.file()->SegmentOffset(second_seg) + kSegmentPayloadOffset);
  EXPECT_GT(recs[15].segment_seq, recs[14].segment_seq);
  const uint64_t end = file_.file()->SegmentOffset(first_seg) + file_.file()->segment_size();
  EXPECT_LE(recs[14].offset + recs[14].len(), end);
  ASSERT_TRUE(Flush(*log));
  for (const Rec& r : recs) ExpectOnDisk(file_, r);

  // ForceNewSegment: the next record opens a newer segment; CloseSegment seals the open one.
  log->ForceNewSegment();
  Rec c = AppendRec(*log, 17, "c", "v");
  EXPECT_NE(log->open_segment(), second_seg);
  EXPECT_GT(c.segment_seq, recs[15].segment_seq);
  EXPECT_EQ(log->sealed().size(), 2u);
  log->CloseSegment();
  EXPECT_EQ(log->open_segment(), DataFile::kNoSegment);
  EXPECT_EQ(log->sealed().size(), 3u);
  ExpectInMemory(*log, c);  // queued for writing, still served from memory
  log->ForgetSealed(second_seg);
  EXPECT_EQ(log->sealed().size(), 2u);
  ASSERT_TRUE(Flush(*log));
  ExpectOnDisk(file_, c);
}

TEST_F(ShardLogTest, NoSpaceWhenTheFileIsFullButTheReserveIsUsable) {
  TestDataFile small(kDefaultDataOffset + 3 * kDefaultSegmentSize);
  ASSERT_TRUE(small.ok());
  FileDevice dev(small.file()->fd());
  ShardLog log(small.file(), &dev, 0, SyncPolicy::kNo, 1 << 20, 4);
  ShardLog::Slot slot;
  const size_t len = (1 << 20) - kBlockSize;
  int placed = 0;
  Status st;
  while ((st = log.Reserve(len, false, &slot)) == Status::kOk) {
    log.Commit(++placed);  // the bytes stay zero: this test only counts room
    log.Kick(false);
  }
  EXPECT_EQ(st, Status::kNoSpace);
  EXPECT_EQ(placed, 8);  // one segment (3 minus the reserve of 2) holds 8 such records
  EXPECT_EQ(log.Reserve(len, true, &slot), Status::kOk);
}

TEST_F(ShardLogTest, WaitDurableGroupsManyRecordsIntoOneSync) {
  HeldDevice dev(file_.file()->fd());
  dev.hold = true;
  auto log = MakeLog(&dev, SyncPolicy::kAlways, 64 << 10, 4);
  std::vector<Rec> recs;
  recs.push_back(AppendRec(*log, 1, "first", "v1"));
  int state[6] = {};
  // The first waiter starts the write of record 1.
  EXPECT_FALSE(WaitTask(log.get(), 1, &state[1]).Start(nullptr, nullptr));
  ASSERT_EQ(dev.pending(), 1u);
  EXPECT_EQ(dev.front_kind(), IoRequest::Kind::kWrite);
  // Four more clients append and wait while that write is in flight.
  for (uint64_t i = 2; i <= 5; ++i) {
    recs.push_back(AppendRec(*log, i, "k" + std::to_string(i), "v" + std::to_string(i)));
    EXPECT_FALSE(WaitTask(log.get(), i, &state[i]).Start(nullptr, nullptr));
  }
  EXPECT_EQ(dev.pending(), 1u);  // one write in flight at a time
  ASSERT_TRUE(dev.Step());       // write of record 1 done: records 2..5 go in one more write
  ASSERT_EQ(dev.pending(), 1u);
  EXPECT_EQ(dev.front_kind(), IoRequest::Kind::kWrite);
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(state[i], 1) << "resumed before its record was synced";
  ASSERT_TRUE(dev.Step());
  ASSERT_EQ(dev.pending(), 1u);
  EXPECT_EQ(dev.front_kind(), IoRequest::Kind::kSync);
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(state[i], 1) << "resumed before the sync completed";
  ASSERT_TRUE(dev.Step());
  EXPECT_EQ(dev.pending(), 0u);
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(state[i], 2);
  EXPECT_EQ(dev.writes(), 2u);
  EXPECT_EQ(dev.syncs(), 1u);
  EXPECT_EQ(log->durable_seq(), 5u);
  for (const Rec& r : recs) ExpectOnDisk(file_, r);

  // Already durable: no suspension, no I/O.
  int again = 0;
  EXPECT_TRUE(WaitTask(log.get(), 3, &again).Start(nullptr, nullptr));
  EXPECT_EQ(again, 2);
  EXPECT_EQ(dev.syncs(), 1u);
}

TEST_F(ShardLogTest, WaitDurableWithAnInlineDeviceCompletesAtOnce) {
  auto log = MakeLog(&dev_, SyncPolicy::kAlways, 64 << 10, 4);
  for (uint64_t i = 1; i <= 50; ++i) AppendRec(*log, i, "k" + std::to_string(i), "value");
  int state = 0;
  EXPECT_TRUE(WaitTask(log.get(), 50, &state).Start(nullptr, nullptr));
  EXPECT_EQ(state, 2);
  EXPECT_EQ(dev_.writes(), 1u);  // 50 records, one write, one sync
  EXPECT_EQ(dev_.syncs(), 1u);
  EXPECT_EQ(log->durable_seq(), 50u);
}

TEST_F(ShardLogTest, FlushAndSyncWritesEverythingAndSyncs) {
  auto log = MakeLog(&dev_, SyncPolicy::kNo, 16 << 10, 8);
  std::vector<Rec> recs;
  for (uint64_t i = 1; i <= 20; ++i) {
    recs.push_back(AppendRec(*log, i, "f" + std::to_string(i), std::string(1500, 'f')));
  }
  ASSERT_TRUE(Flush(*log));
  EXPECT_EQ(log->durable_seq(), 20u);
  const uint64_t syncs = dev_.syncs();
  EXPECT_GE(syncs, 1u);
  EXPECT_FALSE(log->has_waiters());
  for (const Rec& r : recs) ExpectOnDisk(file_, r);
  // Nothing new and everything already synced: neither a write nor another sync.
  const uint64_t writes = dev_.writes();
  ASSERT_TRUE(Flush(*log));
  EXPECT_EQ(dev_.writes(), writes);
  EXPECT_EQ(dev_.syncs(), syncs);
}

TEST_F(ShardLogTest, TickUnderEverysecWritesTheTailAndSyncsOncePerSecond) {
  auto log = MakeLog(&dev_, SyncPolicy::kEverysec, 64 << 10, 4);
  Rec a = AppendRec(*log, 1, "a", "1");
  log->Tick(NowMs());
  EXPECT_EQ(dev_.writes(), 1u);
  EXPECT_EQ(dev_.syncs(), 1u);  // the first sync is due at once
  EXPECT_EQ(log->durable_seq(), 1u);
  ExpectOnDisk(file_, a);
  Rec b = AppendRec(*log, 2, "b", "2");
  log->Tick(NowMs());
  EXPECT_EQ(dev_.writes(), 2u);  // the tail is written every tick...
  EXPECT_EQ(dev_.syncs(), 1u);   // ...but synced at most once a second
  EXPECT_EQ(log->durable_seq(), 1u);
  ExpectOnDisk(file_, b);
}

TEST_F(ShardLogTest, WritesGoOnWhileASyncIsInFlight) {
  // A device's cache flush can take hundreds of milliseconds; the writer must not wait for it,
  // or every buffer fills and appends stall until it is done.
  HeldDevice dev(file_.file()->fd());
  auto log = MakeLog(&dev, SyncPolicy::kEverysec, 16 << 10, 2);
  Rec first = AppendRec(*log, 1, "first", "v1");
  dev.hold = true;
  log->Tick(NowMs());
  ASSERT_EQ(dev.pending(), 1u);
  EXPECT_EQ(dev.front_kind(), IoRequest::Kind::kWrite);
  ASSERT_TRUE(dev.Step());  // written: the first sync is due at once
  ASSERT_EQ(dev.pending(), 1u);
  ASSERT_EQ(dev.front_kind(), IoRequest::Kind::kSync);

  // With the sync held, appends fill the first buffer and its write is issued beside the sync
  // (4 records of ~4 KiB: one move to the second buffer, never a third).
  std::vector<Rec> recs;
  const std::string v(4000, 'w');
  uint64_t seq = 1;
  for (int i = 0; i < 4; ++i) {
    recs.push_back(AppendRec(*log, ++seq, "k" + std::to_string(i), v));
    log->Kick(false);
  }
  ASSERT_GE(dev.pending(), 2u) << "a write waited for the sync";
  EXPECT_EQ(dev.kind_at(0), IoRequest::Kind::kSync);
  EXPECT_EQ(dev.kind_at(1), IoRequest::Kind::kWrite);
  ASSERT_TRUE(dev.StepAt(1));  // the write lands while the sync is still in flight
  EXPECT_EQ(log->durable_seq(), 0u);
  const uint64_t written_during_sync = seq;

  // The sync covers only what was written before it started.
  ASSERT_TRUE(dev.StepAt(0));
  EXPECT_EQ(log->durable_seq(), 1u);
  EXPECT_FALSE(log->failed());
  dev.hold = false;
  while (dev.Step()) {
  }
  ASSERT_TRUE(Flush(*log));
  EXPECT_GE(log->durable_seq(), written_during_sync);
  ExpectOnDisk(file_, first);
  for (const Rec& r : recs) ExpectOnDisk(file_, r);
}

TEST_F(ShardLogTest, EverysecAlsoSyncsEveryQuarterOfTheBuffersWritten) {
  // 8 buffers of 16 KiB: a sync after every 32 KiB written, not only once a second.
  auto log = MakeLog(&dev_, SyncPolicy::kEverysec, 16 << 10, 8);
  AppendRec(*log, 1, "a", "1");
  log->Tick(NowMs());
  ASSERT_EQ(dev_.syncs(), 1u);  // the first sync is due at once
  const std::string v(3000, 'q');
  uint64_t seq = 1;
  for (int i = 0; i < 40; ++i) {  // ~120 KiB of records, written as buffers fill
    AppendRec(*log, ++seq, "q" + std::to_string(i), v);
    log->Kick(false);
  }
  EXPECT_GE(dev_.writes(), 5u);
  // Well within the second, yet a sync after every 32 KiB written (the inline device completes
  // each at once), each covering what was written before it.
  const uint64_t after_first = dev_.bytes_written() - (4u << 10);  // the first write's block
  EXPECT_GE(after_first, 96u << 10);
  EXPECT_GE(dev_.syncs(), 1 + 3u);
  EXPECT_LE(dev_.syncs(), 1 + after_first / (32u << 10));
  EXPECT_GT(log->durable_seq(), 1u);
  EXPECT_LT(log->durable_seq(), seq);
}

TEST_F(ShardLogTest, FlushAndSyncWaitsForASyncInFlight) {
  HeldDevice dev(file_.file()->fd());
  auto log = MakeLog(&dev, SyncPolicy::kEverysec, 64 << 10, 4);
  AppendRec(*log, 1, "a", "1");
  log->Tick(NowMs());  // written and synced at once (the first sync is due)
  ASSERT_EQ(dev.syncs(), 1u);
  Rec b = AppendRec(*log, 2, "b", "2");
  dev.hold = true;
  log->Kick(true);
  ASSERT_EQ(dev.pending(), 1u);
  ASSERT_TRUE(dev.Step());  // b's write; the next periodic sync is not due yet
  ASSERT_EQ(dev.pending(), 0u);
  // A client waiting for b starts a sync, held by the device.
  int state = 0;
  EXPECT_FALSE(WaitTask(log.get(), 2, &state).Start(nullptr, nullptr));
  ASSERT_EQ(dev.pending(), 1u);
  ASSERT_EQ(dev.front_kind(), IoRequest::Kind::kSync);
  bool ok = false;
  bool done = false;
  auto flush = [](ShardLog* l, bool* ok, bool* done) -> Task {
    co_await l->FlushAndSync(ok);
    *done = true;
  };
  EXPECT_FALSE(flush(log.get(), &ok, &done).Start(nullptr, nullptr));
  EXPECT_FALSE(done) << "returned with a sync in flight";
  dev.hold = false;
  ASSERT_TRUE(dev.Step());
  while (dev.Step()) {
  }
  EXPECT_TRUE(done);
  EXPECT_TRUE(ok);
  EXPECT_EQ(state, 2);
  EXPECT_EQ(log->durable_seq(), 2u);
  ExpectOnDisk(file_, b);
}

TEST_F(ShardLogTest, WriteFailureFailsTheLogAndWakesWaiters) {
  HeldDevice dev(file_.file()->fd());
  auto log = MakeLog(&dev, SyncPolicy::kAlways, 64 << 10, 4);
  AppendRec(*log, 1, "a", "1");
  dev.fail_with = -EIO;
  int state = 0;
  EXPECT_TRUE(WaitTask(log.get(), 1, &state).Start(nullptr, nullptr));
  EXPECT_EQ(state, 3);
  EXPECT_TRUE(log->failed());
  EXPECT_NE(log->error().find("write"), std::string::npos) << log->error();
  ShardLog::Slot slot;
  EXPECT_EQ(log->Reserve(64, false, &slot), Status::kFailed);
}

}  // namespace
}  // namespace lavik
