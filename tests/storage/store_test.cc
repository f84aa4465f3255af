#include "storage/store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "storage/format.h"
#include "storage/index.h"
#include "storage/test_data_file.h"

namespace lavik {
namespace {

using storage_test::Del;
using storage_test::DelIf;
using storage_test::Flush;
using storage_test::Get;
using storage_test::GetAt;
using storage_test::HeldDevice;
using storage_test::Put;
using storage_test::PutIf;
using storage_test::ReadOutcome;
using storage_test::TestWorker;

std::string Value(size_t len, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string v(len, '\0');
  for (char& c : v) c = static_cast<char>(rng());
  return v;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(file_.ok()) << file_.error(); }
  std::unique_ptr<Store> Make(StoreOptions o = {}) { return std::move(file_.MakeStores(1, o)[0]); }
  static StoreOptions NoCache() {
    StoreOptions o;
    o.cache_bytes = 0;
    return o;
  }
  // Makes the log write and forget its buffers, so reads have to go to the device.
  static void Evict(Store& s) {
    ASSERT_TRUE(Flush(s));
    s.log().CloseSegment();
    ASSERT_TRUE(Flush(s));
  }
  uint64_t OffsetOf(Store& s, std::string_view key) {
    return loc::Offset(s.Lookup(key, NowMs()).loc);
  }

  TestDataFile file_;
};

TEST_F(StoreTest, WriteThenReadServesTheValueFromTheCache) {
  auto s = Make();
  ASSERT_TRUE(Put(*s, "greeting", "hello").ok());
  EXPECT_EQ(s->size(), 1u);
  EXPECT_EQ(s->stats().dirty, 1u);
  KeyInfo info = s->Lookup("greeting", NowMs());
  EXPECT_TRUE(info.exists);
  EXPECT_EQ(info.type, ValueType::kString);
  EXPECT_EQ(info.expire_ms, 0);
  ReadOutcome r = Get(*s, "greeting");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value, "hello");
  EXPECT_EQ(r.info.loc, info.loc);
  EXPECT_EQ(s->cache().hits(), 1u);
  EXPECT_EQ(s->stats().buffer_reads, 0u);
  EXPECT_EQ(s->stats().device_reads, 0u);
  EXPECT_TRUE(Get(*s, "missing").not_found());
}

TEST_F(StoreTest, ReadsComeFromTheWriteBufferThenFromTheDevice) {
  auto s = Make(NoCache());
  std::map<std::string, std::string> want;
  for (int i = 0; i < 200; ++i) {
    std::string key = "key:" + std::to_string(i);
    want[key] = Value(1 + (i * 37) % 3000, i);
    ASSERT_TRUE(Put(*s, key, want[key]).ok());
  }
  ReadOutcome r = Get(*s, "key:7");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value, want["key:7"]);
  EXPECT_EQ(s->stats().buffer_reads, 1u);
  EXPECT_EQ(s->stats().device_reads, 0u);

  Evict(*s);
  for (const auto& [key, value] : want) {
    ReadOutcome got = Get(*s, key);
    ASSERT_TRUE(got.ok()) << key << ": " << got.error;
    EXPECT_EQ(got.value, value) << key;
  }
  EXPECT_EQ(s->stats().device_reads, want.size());
  EXPECT_EQ(s->stats().buffer_reads, 1u);
  EXPECT_EQ(s->stats().corrupt_records, 0u);
}

TEST_F(StoreTest, ADeviceReadCoversOnlyTheSectorsHoldingTheRecord) {
  auto s = Make(NoCache());
  const uint64_t align = file_.file()->read_align();
  ASSERT_GE(align, 512u);
  ASSERT_LE(align, kIoAlign);
  ASSERT_EQ(align & (align - 1), 0u);
  std::map<std::string, std::string> want;
  for (int i = 0; i < 300; ++i) {
    std::string key = "key:" + std::to_string(i);
    want[key] = Value(1024, i);
    ASSERT_TRUE(Put(*s, key, want[key]).ok());
  }
  Evict(*s);
  const uint64_t reads0 = s->device().reads();
  const uint64_t bytes0 = s->device().bytes_read();
  for (const auto& [key, value] : want) {
    ReadOutcome got = Get(*s, key);
    ASSERT_TRUE(got.ok()) << key << ": " << got.error;
    EXPECT_EQ(got.value, value) << key;
  }
  const uint64_t reads = s->device().reads() - reads0;
  const uint64_t bytes = s->device().bytes_read() - bytes0;
  EXPECT_EQ(reads, want.size());
  // One read per record, of the aligned run of sectors around it: for a 1 KiB value on 512 B
  // sectors at most 2 KiB, never two 4 KiB blocks.
  const uint64_t record = RecordLength(std::string("key:299").size(), 1024);
  const uint64_t most = (record + align - 1 + align - 1) / align * align;
  EXPECT_LE(bytes, reads * most);
  if (align == 512) {
    EXPECT_LE(bytes, reads * 2048);
  }
}

TEST_F(StoreTest, TypeAndTtlAreKeptAndReplacedByTheNextWrite) {
  auto s = Make();
  const int64_t expire = NowMs() + 3'600'000;
  ASSERT_TRUE(Put(*s, "h", "fields", expire, ValueType::kHash).ok());
  KeyInfo info = s->Lookup("h", NowMs());
  EXPECT_EQ(info.type, ValueType::kHash);
  EXPECT_EQ(info.expire_ms, expire);
  EXPECT_EQ(s->expires(), 1u);
  ReadOutcome r = Get(*s, "h");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.info.type, ValueType::kHash);
  EXPECT_EQ(r.info.expire_ms, expire);
  // A plain write replaces the type and drops the TTL.
  ASSERT_TRUE(Put(*s, "h", "now a string").ok());
  info = s->Lookup("h", NowMs());
  EXPECT_EQ(info.type, ValueType::kString);
  EXPECT_EQ(info.expire_ms, 0);
  EXPECT_EQ(s->expires(), 0u);
}

TEST_F(StoreTest, OverwriteReplacesTheValueAndMovesTheLiveBytes) {
  auto s = Make(NoCache());
  ASSERT_TRUE(Put(*s, "k", "first value").ok());
  const uint32_t seg = file_.file()->SegmentOf(OffsetOf(*s, "k"));
  EXPECT_EQ(file_.file()->live_bytes(seg).load(),
            static_cast<int64_t>(RecordLength(1, strlen("first value"))));
  const uint64_t loc1 = s->Lookup("k", NowMs()).loc;
  ASSERT_TRUE(Put(*s, "k", std::string(500, 'z')).ok());
  EXPECT_NE(s->Lookup("k", NowMs()).loc, loc1);
  EXPECT_EQ(file_.file()->live_bytes(seg).load(), static_cast<int64_t>(RecordLength(1, 500)));
  EXPECT_EQ(s->size(), 1u);
  EXPECT_EQ(Get(*s, "k").value, std::string(500, 'z'));
  Evict(*s);
  EXPECT_EQ(Get(*s, "k").value, std::string(500, 'z'));
}

TEST_F(StoreTest, WriteIfAppliesOnlyAtTheExpectedLocation) {
  auto s = Make();
  bool applied = false;
  ASSERT_TRUE(PutIf(*s, "k", 0, "created", &applied).ok());
  EXPECT_TRUE(applied);
  ASSERT_TRUE(PutIf(*s, "k", 0, "again", &applied).ok());
  EXPECT_FALSE(applied);  // must not exist, but does
  EXPECT_EQ(Get(*s, "k").value, "created");
  const uint64_t at = s->Lookup("k", NowMs()).loc;
  ASSERT_TRUE(PutIf(*s, "k", at, "updated", &applied).ok());
  EXPECT_TRUE(applied);
  EXPECT_EQ(Get(*s, "k").value, "updated");
  ASSERT_TRUE(PutIf(*s, "k", at, "stale", &applied).ok());  // someone wrote in between
  EXPECT_FALSE(applied);
  EXPECT_EQ(Get(*s, "k").value, "updated");
  EXPECT_EQ(s->stats().dirty, 2u);
}

TEST_F(StoreTest, DeleteWritesATombstoneThatStaysOnTheDevice) {
  auto s = Make(NoCache());
  ASSERT_TRUE(Put(*s, "doomed", "value").ok());
  ASSERT_TRUE(Put(*s, "kept", "value").ok());
  const uint64_t origin = file_.file()->peek_next_segment_seq();
  bool existed = false;
  ASSERT_TRUE(Del(*s, "doomed", &existed).ok());
  EXPECT_TRUE(existed);
  EXPECT_TRUE(Get(*s, "doomed").not_found());
  EXPECT_FALSE(s->Lookup("doomed", NowMs()).exists);
  EXPECT_EQ(s->size(), 1u);
  ASSERT_EQ(s->tombstone_count(), 1u);
  ASSERT_TRUE(Del(*s, "doomed", &existed).ok());
  EXPECT_FALSE(existed);
  EXPECT_EQ(s->tombstone_count(), 1u);  // deleting a missing key writes nothing

  // The tombstone record: flag, key and the origin segment seq as its value.
  ASSERT_TRUE(Flush(*s));
  const auto [tomb_loc, tomb_origin] = *s->tombstones().begin();
  EXPECT_EQ(tomb_origin, origin);
  const uint64_t off = loc::Offset(tomb_loc);
  std::string bytes = file_.ReadBytes(off, loc::Len(tomb_loc));
  RecordView v;
  ASSERT_EQ(DecodeRecord(bytes.data(), bytes.size(),
                         file_.file()->seq(file_.file()->SegmentOf(off)).load(), &v),
            RecordStatus::kOk);
  EXPECT_TRUE(v.header.tombstone());
  EXPECT_EQ(v.key, "doomed");
  uint64_t decoded = 0;
  ASSERT_TRUE(DecodeTombstoneOrigin(v.value, &decoded));
  EXPECT_EQ(decoded, origin);

  // DeleteIf: only at the expected location.
  bool applied = true;
  ASSERT_TRUE(DelIf(*s, "kept", 12345 * 8, &applied).ok());
  EXPECT_FALSE(applied);
  EXPECT_TRUE(s->Lookup("kept", NowMs()).exists);
  ASSERT_TRUE(DelIf(*s, "kept", s->Lookup("kept", NowMs()).loc, &applied).ok());
  EXPECT_TRUE(applied);
  EXPECT_EQ(s->size(), 0u);
  EXPECT_EQ(s->tombstone_count(), 2u);
}

TEST_F(StoreTest, LookupRemovesAnExpiredKeyAndCountsIt) {
  auto s = Make();
  const int64_t t = NowMs() + 60'000;
  ASSERT_TRUE(Put(*s, "session", "data", t).ok());
  ASSERT_TRUE(Put(*s, "forever", "data").ok());
  EXPECT_EQ(s->expires(), 1u);
  // Redis: a key expires once now > its time.
  EXPECT_TRUE(s->Lookup("session", t).exists);
  EXPECT_FALSE(s->ExpiredFp(Index::Fingerprint("session"), t));
  EXPECT_TRUE(s->ExpiredFp(Index::Fingerprint("session"), t + 1));
  EXPECT_FALSE(s->LookupRead("session", t + 1).exists);
  EXPECT_EQ(s->stats().expired_keys, 1u);
  EXPECT_EQ(s->stats().keyspace_misses, 1u);
  EXPECT_EQ(s->size(), 1u);
  EXPECT_EQ(s->expires(), 0u);
  EXPECT_EQ(s->tombstone_count(), 1u);  // the expired record is kept as the key's marker
  EXPECT_TRUE(Get(*s, "session", t + 1, /*count_stats=*/true).not_found());
  EXPECT_EQ(s->stats().keyspace_misses, 2u);
  EXPECT_EQ(s->stats().expired_keys, 1u);
  ASSERT_TRUE(Get(*s, "forever", t + 1, true).ok());
  EXPECT_EQ(s->stats().keyspace_hits, 1u);
}

TEST_F(StoreTest, ActiveExpireCycleRemovesExpiredKeys) {
  auto s = Make();
  const int64_t now = NowMs();
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(Put(*s, "short:" + std::to_string(i), "v", now + 10).ok());
  }
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(Put(*s, "long:" + std::to_string(i), "v", now + 3'600'000).ok());
    ASSERT_TRUE(Put(*s, "plain:" + std::to_string(i), "v").ok());
  }
  EXPECT_EQ(s->ActiveExpireCycle(now, 100'000), 0u);  // nothing is due yet
  size_t removed = 0;
  for (int round = 0; round < 1000 && s->expires() > 100; ++round) {
    removed += s->ActiveExpireCycle(now + 20, 100'000);
  }
  EXPECT_EQ(removed, 300u);
  EXPECT_EQ(s->stats().expired_keys, 300u);
  EXPECT_EQ(s->size(), 200u);
  EXPECT_EQ(s->expires(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(s->Lookup("long:" + std::to_string(i), now + 20).exists);
    EXPECT_TRUE(s->Lookup("plain:" + std::to_string(i), now + 20).exists);
  }
}

TEST_F(StoreTest, ScanEntriesReadBackWithTheirKeys) {
  auto s = Make(NoCache());
  std::map<std::string, std::string> want;
  for (int i = 0; i < 50; ++i) {
    want["scan:" + std::to_string(i)] = "value " + std::to_string(i);
    ASSERT_TRUE(Put(*s, "scan:" + std::to_string(i), want["scan:" + std::to_string(i)]).ok());
  }
  std::vector<std::pair<uint64_t, uint64_t>> entries;
  s->ForEachEntry([&](uint64_t fp, uint64_t l) { entries.emplace_back(fp, l); });
  ASSERT_EQ(entries.size(), want.size());
  std::map<std::string, std::string> got;
  for (auto [fp, l] : entries) {
    ReadOutcome r = GetAt(*s, fp, l);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(Index::Fingerprint(r.key), fp);
    got[r.key] = r.value;
  }
  EXPECT_EQ(got, want);
}

TEST_F(StoreTest, AppendfsyncAlwaysWriteIsDurableWhenItReturns) {
  StoreOptions o;
  o.sync = SyncPolicy::kAlways;
  auto s = Make(o);
  ASSERT_TRUE(Put(*s, "k", "v").ok());
  EXPECT_EQ(s->log().durable_seq(), s->seq());
  EXPECT_GE(s->device().syncs(), 1u);
  const uint64_t off = OffsetOf(*s, "k");
  std::string bytes = file_.ReadBytes(off, RecordLength(1, 1));
  RecordView v;
  ASSERT_EQ(DecodeRecord(bytes.data(), bytes.size(),
                         file_.file()->seq(file_.file()->SegmentOf(off)).load(), &v),
            RecordStatus::kOk);
  EXPECT_EQ(v.value, "v");
}

// TryWriteNow is Write without a coroutine: the same record, index entry, TTL and cached value;
// it declines (doing nothing) whenever Write would have to wait.
TEST_F(StoreTest, TryWriteNowWritesAsWriteDoesOrDeclines) {
  auto s = Make();
  const int64_t expire = NowMs() + 100000;
  ASSERT_TRUE(s->TryWriteNow("now", ValueType::kString, "value", expire));
  EXPECT_EQ(s->stats().dirty, 1u);
  KeyInfo info = s->Lookup("now", NowMs());
  ASSERT_TRUE(info.exists);
  EXPECT_EQ(info.expire_ms, expire);
  ASSERT_NE(s->CachedValue("now", info), nullptr);
  EXPECT_EQ(*s->CachedValue("now", info), "value");
  Evict(*s);
  ReadOutcome r = Get(*s, "now");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value, "value");

  StoreOptions always;
  always.sync = SyncPolicy::kAlways;  // a write waits for the device: never at once
  auto a = Make(always);
  EXPECT_FALSE(a->TryWriteNow("k", ValueType::kString, "v", 0));
  EXPECT_FALSE(a->Lookup("k", NowMs()).exists);
  EXPECT_EQ(a->stats().dirty, 0u);

  StoreOptions tight;
  tight.buffer_bytes = 16 << 10;
  tight.max_buffers = 2;
  auto t = Make(tight);
  int written = 0;
  while (
      t->TryWriteNow("k" + std::to_string(written), ValueType::kString, Value(4000, written), 0)) {
    ASSERT_LT(++written, 100) << "the buffers never filled";
  }
  EXPECT_FALSE(t->Lookup("k" + std::to_string(written), NowMs()).exists);
  EXPECT_EQ(t->stats().dirty, static_cast<uint64_t>(written));
}

TEST_F(StoreTest, CorruptRecordOnTheDeviceIsReportedNotServed) {
  auto s = Make(NoCache());
  ASSERT_TRUE(Put(*s, "victim", "precious value").ok());
  ASSERT_TRUE(Put(*s, "bystander", "fine").ok());
  Evict(*s);
  const uint64_t off = OffsetOf(*s, "victim");
  std::string byte = file_.ReadBytes(off + kRecordHeaderSize + 6 + 3, 1);
  byte[0] ^= 0x20;
  file_.WriteBytes(off + kRecordHeaderSize + 6 + 3, byte);
  ReadOutcome r = Get(*s, "victim");
  EXPECT_EQ(r.status, ReadResult::Status::kError);
  EXPECT_NE(r.error.find("corruption"), std::string::npos) << r.error;
  EXPECT_EQ(r.value, "");
  EXPECT_EQ(s->stats().corrupt_records, 1u);
  ReadOutcome ok = Get(*s, "bystander");
  ASSERT_TRUE(ok.ok()) << ok.error;
  EXPECT_EQ(ok.value, "fine");
  EXPECT_EQ(s->stats().corrupt_records, 1u);
}

TEST_F(StoreTest, WritesGetNoSpaceWhenFullButDeletesAndReadsStillWork) {
  TestDataFile small(kDefaultDataOffset + 4 * kDefaultSegmentSize);
  ASSERT_TRUE(small.ok());
  StoreOptions o;
  o.cache_bytes = 0;
  o.buffer_bytes = 256 << 10;
  auto s = std::move(small.MakeStores(1, o)[0]);
  const std::string v(60 << 10, 'x');
  int written = 0;
  WriteResult w;
  while ((w = Put(*s, "fill:" + std::to_string(written), v)).ok()) {
    ++written;
    s->Tick(NowMs());  // the worker's timer: writes full buffers
    ASSERT_LT(written, 1000);
  }
  EXPECT_EQ(w.status, WriteResult::Status::kNoSpace);
  EXPECT_NE(w.error.find("no space left"), std::string::npos) << w.error;
  EXPECT_GT(written, 200);  // two of four segments; the other two are the reserve
  bool existed = false;
  ASSERT_TRUE(Del(*s, "fill:0", &existed).ok());
  EXPECT_TRUE(existed);
  ASSERT_TRUE(Flush(*s));
  ReadOutcome r = Get(*s, "fill:1");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value, v);
}

TEST_F(StoreTest, LargeRecordOfSeveralSegmentsIsWrittenReadAndReleased) {
  StoreOptions o = NoCache();
  o.buffer_bytes = 64 << 10;
  auto s = Make(o);
  ASSERT_TRUE(Put(*s, "small", "before").ok());
  const uint32_t log_seg = s->log().open_segment();
  // Above 16 MiB the location word cannot hold the length: three segments.
  const std::string big = Value((16 << 20) + 100, 1);
  const size_t free_before = file_.file()->free_segments();
  ASSERT_TRUE(Put(*s, "big", big).ok());
  const uint32_t first = file_.file()->SegmentOf(OffsetOf(*s, "big"));
  EXPECT_EQ(file_.file()->state(first), DataFile::SegState::kLarge);
  EXPECT_EQ(file_.file()->state(first + 1), DataFile::SegState::kLargeTail);
  EXPECT_EQ(file_.file()->state(first + 2), DataFile::SegState::kLargeTail);
  SegmentHeader h;
  std::string head = file_.ReadBytes(file_.file()->SegmentOffset(first), kSegmentHeaderSize);
  ASSERT_TRUE(DecodeSegmentHeader(head.data(), &h));
  EXPECT_EQ(h.kind, SegmentKind::kLarge);
  EXPECT_EQ(h.run_length, 3u);
  ReadOutcome r = Get(*s, "big");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value, big);
  // Later appends land in a newer segment than the run (log order).
  ASSERT_TRUE(Put(*s, "small", "after").ok());
  EXPECT_NE(s->log().open_segment(), log_seg);
  EXPECT_GT(file_.file()->seq(s->log().open_segment()).load(), h.seq);

  // Overwritten: the run is freed at the next tick, with a free header first.
  const size_t free_with_run = file_.file()->free_segments();
  ASSERT_TRUE(Put(*s, "big", "small now").ok());
  TestWorker w;
  ASSERT_TRUE(w.Call([&] { s->Tick(NowMs()); }));
  EXPECT_EQ(file_.file()->free_segments(), free_with_run + 3);
  EXPECT_GE(file_.file()->free_segments() + 1, free_before);  // (+1: the new log segment)
  EXPECT_EQ(file_.file()->state(first), DataFile::SegState::kFree);
  head = file_.ReadBytes(file_.file()->SegmentOffset(first), kSegmentHeaderSize);
  ASSERT_TRUE(DecodeSegmentHeader(head.data(), &h));
  EXPECT_EQ(h.kind, SegmentKind::kFree);
  EXPECT_EQ(Get(*s, "big").value, "small now");
}

// Regression test; before this change (src/storage/store.cc, Store::Append/AppendLarge): a write
// of a key whose large record was still on its way to the device landed at once, and the large
// record was then dropped as older (an APPEND that had read the value before it was lost under
// it; on a replica the two arrived in the other order). Now the later write waits for it.
TEST_F(StoreTest, AWriteOfAKeyWaitsForItsLargeRecordInFlight) {
  StoreOptions o = NoCache();
  o.buffer_bytes = 64 << 10;
  auto held = std::make_unique<HeldDevice>(file_.file()->fd());
  HeldDevice* dev = held.get();
  Store s(0, file_.file(), std::move(held), o);
  ASSERT_TRUE(Put(s, "k", "old").ok());
  ASSERT_TRUE(Put(s, "other", "x").ok());
  const uint64_t old_loc = s.Lookup("k", NowMs()).loc;
  const std::string big = Value(1 << 20, 2);
  dev->hold = true;
  WriteResult big_w = storage_test::Unfinished();
  Task big_t = storage_test::WriteTask(&s, "k", ValueType::kString, big, 0, &big_w);
  ASSERT_FALSE(big_t.Start(nullptr, nullptr));  // its write waits in the device
  ASSERT_EQ(dev->pending(), 1u);
  // An APPEND's write, from the value it read before: it waits, then finds the key moved.
  bool applied = true;
  WriteResult cas_w = storage_test::Unfinished();
  Task cas_t = storage_test::WriteIfTask(&s, "k", old_loc, ValueType::kString, "old+tail", 0,
                                         &applied, &cas_w);
  EXPECT_FALSE(cas_t.Start(nullptr, nullptr));
  WriteResult set_w = storage_test::Unfinished();
  Task set_t = storage_test::WriteTask(&s, "k", ValueType::kString, "small", 0, &set_w);
  EXPECT_FALSE(set_t.Start(nullptr, nullptr));
  EXPECT_TRUE(Get(s, "k").value == "old");  // reads go on meanwhile
  ASSERT_TRUE(Put(s, "other", "y").ok());   // and so do writes of other keys
  EXPECT_EQ(dev->pending(), 1u);
  dev->hold = false;
  ASSERT_TRUE(dev->Step());  // the large record lands, then the waiting writes run
  EXPECT_TRUE(big_w.ok()) << big_w.error;
  EXPECT_TRUE(cas_w.ok()) << cas_w.error;
  EXPECT_FALSE(applied);
  EXPECT_TRUE(set_w.ok()) << set_w.error;
  EXPECT_TRUE(Get(s, "k").value == "small");
}

// Regression test; before 2bc9dd6 (src/storage/store.cc, Store::Unaccount): a large record's run is
// released only when its location word has no length (records above 16 MiB). A record larger than a
// write buffer but at most 16 MiB — with the default 2 MiB buffers, every value of 2..16 MiB —
// keeps its segments forever once overwritten or deleted, and after a restart too (its kind-2
// header stays).
TEST_F(StoreTest, LargeRecordUpTo16MiBIsReleasedWhenOverwritten) {
  StoreOptions o = NoCache();
  o.buffer_bytes = 64 << 10;
  auto s = Make(o);
  const std::string big = Value(300 << 10, 2);
  ASSERT_TRUE(Put(*s, "big", big).ok());
  const uint32_t first = file_.file()->SegmentOf(OffsetOf(*s, "big"));
  ASSERT_EQ(file_.file()->state(first), DataFile::SegState::kLarge);
  ReadOutcome r = Get(*s, "big");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value, big);
  ASSERT_TRUE(Put(*s, "other", "x").ok());  // opens the log segment first
  const size_t free_with_run = file_.file()->free_segments();
  ASSERT_TRUE(Put(*s, "big", big + "!").ok());  // a new run; the old one is dead
  const size_t after_second = file_.file()->free_segments();
  EXPECT_EQ(after_second, free_with_run - 1);
  TestWorker w;
  ASSERT_TRUE(w.Call([&] { s->Tick(NowMs()); }));
  EXPECT_EQ(file_.file()->state(first), DataFile::SegState::kFree);
  EXPECT_EQ(file_.file()->free_segments(), after_second + 1);
  EXPECT_EQ(Get(*s, "big").value, big + "!");
}

// Regression test; before 2bc9dd6 (src/storage/store.cc, Store::ExpireEntry +
// Store::SweepTombstones): an expired large record stays as the key's marker with origin = its
// run's seq + 1, but the run itself counts in DataFile::MinLiveSeq (kLarge), so min_live <= seq <
// origin and the marker — and with it the whole run — is never dropped; defrag does not look at
// large runs either.
TEST_F(StoreTest, ExpiredLargeRecordIsEventuallyReleased) {
  StoreOptions o = NoCache();
  o.buffer_bytes = 64 << 10;
  auto s = Make(o);
  const int64_t now = NowMs();
  ASSERT_TRUE(Put(*s, "big", Value((16 << 20) + 100, 3), now + 1000).ok());
  // Looked up at `now`, not the wall clock: writing 16 MiB can take over a second under ASan on
  // a busy machine, and the key would then have expired already (no location to take).
  const KeyInfo big = s->Lookup("big", now);
  ASSERT_TRUE(big.exists);
  const uint32_t first = file_.file()->SegmentOf(loc::Offset(big.loc));
  EXPECT_FALSE(s->Lookup("big", now + 2000).exists);
  EXPECT_EQ(s->stats().expired_keys, 1u);
  TestWorker w;
  size_t swept = 0;
  ASSERT_TRUE(w.Call([&] {
    s->Tick(NowMs());
    swept = s->SweepTombstones();
    s->Tick(NowMs());
  }));
  EXPECT_EQ(swept, 1u);
  EXPECT_EQ(file_.file()->state(first), DataFile::SegState::kFree);
}

// Regression test; before 2bc9dd6 (src/storage/store.cc, AppendLarge; src/storage/shard_log.cc,
// ShardLog::Tick): under appendfsync everysec a large record is written but never synced: it does
// not move the log's written seq, so the once-a-second sync never sees anything to sync (only a
// later small write's sync covers it by chance).
TEST_F(StoreTest, LargeRecordIsSyncedWithinASecondUnderEverysec) {
  StoreOptions o = NoCache();
  o.sync = SyncPolicy::kEverysec;
  o.buffer_bytes = 64 << 10;
  auto s = Make(o);
  ASSERT_TRUE(Put(*s, "big", Value(200 << 10, 4)).ok());
  const int64_t now = NowMs();
  s->Tick(now);
  s->Tick(now + 1500);
  s->Tick(now + 3000);
  EXPECT_GE(s->device().syncs(), 1u);
}

Task WriteMany(Store* s, int n, size_t value_len, int* done) {
  for (int i = 0; i < n; ++i) {
    WriteResult w = co_await s->Write("many:" + std::to_string(i), ValueType::kString,
                                      std::string(value_len, 'm'), 0);
    EXPECT_TRUE(w.ok()) << w.error;
    *done = i + 1;
  }
}

// Regression test; before 2bc9dd6 (src/storage/store.h, Store::EndOfTurn; src/storage/shard_log.h,
// SpaceAwaiter): a write that found every buffer full waits in SpaceAvailable(), but nothing starts
// writing the queued buffers: EndOfTurn kicks the log only when a client waits for durability or
// under appendfsync always. Under everysec/no the writer stalls until the next timer Tick (100 ms),
// which also caps a shard's write throughput at max_buffers * buffer_bytes per tick.
TEST_F(StoreTest, WriterWaitingForABufferResumesAtTheEndOfTheTurn) {
  StoreOptions o;
  o.sync = SyncPolicy::kEverysec;
  o.buffer_bytes = 16 << 10;
  o.max_buffers = 2;
  auto s = Make(o);
  int done = 0;
  const bool finished = WriteMany(s.get(), 20, 4000, &done).Start(nullptr, nullptr);
  ASSERT_FALSE(finished);  // all buffers full: the writer waits
  const int stalled_at = done;
  s->EndOfTurn();  // what the worker runs after every loop turn
  EXPECT_EQ(done, 20) << "the writer stalled at " << stalled_at;
  // Let the timer rescue it, so the coroutine never outlives the test.
  for (int i = 0; i < 100 && done < 20; ++i) s->Tick(NowMs());
  ASSERT_EQ(done, 20);
}

}  // namespace
}  // namespace lavik
