// Point-in-time snapshots of a Store (src/storage/snapshot.cc, Store::BeginSnapshot): the view
// holds every key as it was at the start while writes, deletions, creations, TTL changes and
// expiries go on; nothing the view names is reclaimed while it is open.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "storage/format.h"
#include "storage/index.h"
#include "storage/store.h"
#include "storage/test_data_file.h"

namespace lavik {
namespace {

using storage_test::Del;
using storage_test::Flush;
using storage_test::Get;
using storage_test::GetAt;
using storage_test::Put;
using storage_test::TestWorker;

constexpr uint64_t kSnap = 7;

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(file_.ok()) << file_.error();
    StoreOptions o;
    o.cache_bytes = 0;
    o.buffer_bytes = 64 << 10;
    store_ = std::move(file_.MakeStores(1, o)[0]);
  }
  Store& s() { return *store_; }

  // The whole walk of database 0 through the view: key → (value, expire_ms), slice by slice,
  // `between` running after each slice (the writes a worker serves meanwhile).
  std::map<std::string, std::pair<std::string, int64_t>> Walk(
      const std::function<void(uint64_t cursor)>& between = nullptr, size_t count = 4) {
    std::map<std::string, std::pair<std::string, int64_t>> out;
    uint64_t cursor = 0;
    do {
      std::vector<std::pair<uint64_t, uint64_t>> entries;
      cursor = s().SnapshotScan(kSnap, cursor, count, 0,
                                [&](uint64_t fp, uint64_t l) { entries.emplace_back(fp, l); });
      for (const auto& [fp, l] : entries) {
        Store::SnapshotReads view(s(), kSnap);
        storage_test::ReadOutcome at = GetAt(s(), fp, l);
        EXPECT_TRUE(at.ok()) << at.error;
        storage_test::ReadOutcome r = Get(s(), at.key);
        EXPECT_TRUE(r.ok()) << at.key << ": " << r.error;
        EXPECT_TRUE(out.emplace(at.key, std::make_pair(r.value, r.info.expire_ms)).second)
            << at.key << " walked twice";
      }
      if (between) between(cursor);
    } while (cursor != 0);
    s().SnapshotDbDone(kSnap, 0);
    return out;
  }

  TestDataFile file_;
  std::unique_ptr<Store> store_;
};

TEST_F(SnapshotTest, TheViewHoldsEveryKeyAsItWasAtTheStart) {
  std::map<std::string, std::pair<std::string, int64_t>> want;
  const int64_t ttl = NowMs() + 3'600'000;
  for (int i = 0; i < 200; ++i) {
    const std::string k = "k" + std::to_string(i);
    const std::string v = "v" + std::to_string(i);
    const int64_t e = i % 10 == 0 ? ttl : 0;
    ASSERT_TRUE(Put(s(), k, v, e).ok());
    want[k] = {v, e};
  }
  s().BeginSnapshot(kSnap);
  EXPECT_EQ(s().SnapshotDbSize(kSnap, 0), 200u);
  EXPECT_EQ(s().SnapshotDbExpires(kSnap, 0), 20u);
  // Before the walk: overwrite, delete, create, drop a TTL, add one.
  ASSERT_TRUE(Put(s(), "k1", "changed").ok());
  ASSERT_TRUE(Del(s(), "k2").ok());
  ASSERT_TRUE(Put(s(), "new-before", "x").ok());
  ASSERT_TRUE(Put(s(), "k10", "v10").ok());         // TTL dropped
  ASSERT_TRUE(Put(s(), "k3", "v3", ttl + 5).ok());  // TTL added
  int n = 0;
  auto got = Walk([&](uint64_t) {
    // While it runs: every key is written again, some deleted, more created.
    for (int i = 0; i < 200; i += 7) {
      const std::string k = "k" + std::to_string(i);
      if (++n % 3 == 0) {
        ASSERT_TRUE(Del(s(), k).ok());
      } else {
        ASSERT_TRUE(Put(s(), k, "during" + std::to_string(n)).ok());
      }
    }
    ASSERT_TRUE(Put(s(), "new-" + std::to_string(n), "y").ok());
  });
  EXPECT_EQ(got, want);
  // The normal view sees the writes.
  EXPECT_EQ(Get(s(), "k1").value, "changed");
  EXPECT_EQ(Get(s(), "k7").value.substr(0, 6), "during");
  EXPECT_TRUE(Get(s(), "new-before").ok());
  EXPECT_GT(s().snapshot_saved(), 0u);
  s().EndSnapshot(kSnap);
  EXPECT_FALSE(s().snapshot_active());
  EXPECT_EQ(s().snapshot_saved(), 0u);
}

TEST_F(SnapshotTest, KeysAlreadyWalkedAreNotSavedAgain) {
  for (int i = 0; i < 400; ++i) ASSERT_TRUE(Put(s(), "k" + std::to_string(i), "v").ok());
  s().BeginSnapshot(kSnap);
  std::vector<std::pair<uint64_t, std::string>> fps;
  for (int i = 0; i < 400; ++i) {
    const std::string k = "k" + std::to_string(i);
    fps.emplace_back(Index::Fingerprint(k), k);
  }
  std::sort(fps.begin(), fps.end());
  bool checked = false;
  Walk(
      [&](uint64_t cursor) {
        if (checked || cursor == 0) return;
        checked = true;
        // The next slice marks everything below `cursor` walked: writing one of those keys
        // afterwards saves nothing; one above it is saved.
        s().SnapshotScan(kSnap, cursor, 0, 0, [](uint64_t, uint64_t) {});
        const std::string below = fps.front().second;
        const std::string above = fps.back().second;
        ASSERT_LT(fps.front().first, cursor);
        ASSERT_GT(fps.back().first, cursor);
        const size_t before = s().snapshot_saved();
        ASSERT_TRUE(Put(s(), below, "w").ok());
        EXPECT_EQ(s().snapshot_saved(), before);
        ASSERT_TRUE(Put(s(), above, "w").ok());
        EXPECT_EQ(s().snapshot_saved(), before + 1);
      },
      64);
  EXPECT_TRUE(checked);
  s().EndSnapshot(kSnap);
}

TEST_F(SnapshotTest, AnExpiredKeyStaysInTheViewUntilItsOwnTtl) {
  const int64_t soon = NowMs() + 50;
  ASSERT_TRUE(Put(s(), "short", "v", soon).ok());
  ASSERT_TRUE(Put(s(), "long", "w").ok());
  s().BeginSnapshot(kSnap);
  // The active cycle expires it after the start: the view still has it, with its TTL...
  while (NowMs() <= soon) {
  }
  EXPECT_EQ(s().ActiveExpireCycle(NowMs(), 1000), 1u);
  EXPECT_TRUE(Get(s(), "short").not_found());
  {
    Store::SnapshotReads view(s(), kSnap);
    KeyInfo info = s().Lookup("short", soon - 1);
    EXPECT_TRUE(info.exists);
    EXPECT_EQ(info.expire_ms, soon);
    // ...and, read at a time past it, is absent, as for any reader (nothing is expired).
    EXPECT_FALSE(s().Lookup("short", NowMs()).exists);
    EXPECT_TRUE(s().Lookup("long", NowMs()).exists);
  }
  s().EndSnapshot(kSnap);
}

TEST_F(SnapshotTest, ALargeRecordReplacedDuringTheWalkIsKeptUntilItEnds) {
  const std::string big(300 << 10, 'b');  // above the 64 KiB write buffer: a run of its own
  ASSERT_TRUE(Put(s(), "big", big).ok());
  ASSERT_TRUE(Flush(s()));
  s().BeginSnapshot(kSnap);
  ASSERT_TRUE(Put(s(), "big", "small").ok());
  const size_t free_before = file_.file()->free_segments();
  TestWorker w;
  ASSERT_TRUE(w.Call([&] { s().Tick(NowMs()); }));
  EXPECT_EQ(file_.file()->free_segments(), free_before);  // the run is not released
  auto got = Walk();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got["big"].first, big);
  s().EndSnapshot(kSnap);
  ASSERT_TRUE(w.Call([&] { s().Tick(NowMs()); }));
  EXPECT_GT(file_.file()->free_segments(), free_before);  // released once the view is gone
  EXPECT_EQ(Get(s(), "big").value, "small");
}

TEST_F(SnapshotTest, DefragFreesNoSegmentWhileASnapshotIsOpen) {
  // Sealed segments of records that are then all overwritten: defrag would free them.
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 300; ++i) {
      ASSERT_TRUE(Put(s(), "k" + std::to_string(i), std::string(1000, 'a' + round)).ok());
    }
    ASSERT_TRUE(Flush(s()));
    s().log().CloseSegment();
  }
  for (int i = 0; i < 300; i += 2) ASSERT_TRUE(Del(s(), "k" + std::to_string(i)).ok());
  ASSERT_TRUE(Flush(s()));
  s().log().CloseSegment();
  s().BeginSnapshot(kSnap);
  for (int i = 1; i < 300; i += 2) {
    ASSERT_TRUE(Put(s(), "k" + std::to_string(i), std::string(1000, 'z')).ok());
  }
  TestWorker w;
  const uint64_t freed = s().stats().defrag_segments;
  ASSERT_TRUE(w.RunServing(store_.get(), [this] { return s().Defrag(true); }));
  EXPECT_EQ(s().stats().defrag_segments, freed);
  auto got = Walk();
  EXPECT_EQ(got.size(), 150u);
  for (const auto& [k, v] : got) EXPECT_EQ(v.first, std::string(1000, 'b')) << k;
  s().EndSnapshot(kSnap);
  ASSERT_TRUE(w.RunServing(store_.get(), [this] { return s().Defrag(true); }));
  EXPECT_GT(s().stats().defrag_segments, freed);
  for (int i = 1; i < 300; i += 2) {
    EXPECT_EQ(Get(s(), "k" + std::to_string(i)).value, std::string(1000, 'z'));
  }
}

TEST_F(SnapshotTest, ReadingAnOldVersionKeepsTheCurrentOneCached) {
  StoreOptions o;
  o.buffer_bytes = 64 << 10;  // with a value cache
  store_ = std::move(file_.MakeStores(1, o)[0]);
  ASSERT_TRUE(Put(s(), "a", "old").ok());
  s().BeginSnapshot(kSnap);
  ASSERT_TRUE(Put(s(), "a", "new").ok());  // cached at its new location
  {
    Store::SnapshotReads view(s(), kSnap);
    EXPECT_EQ(Get(s(), "a").value, "old");
  }
  const uint64_t hits = s().cache().hits();
  EXPECT_EQ(Get(s(), "a").value, "new");
  EXPECT_EQ(s().cache().hits(), hits + 1);
  s().EndSnapshot(kSnap);
}

TEST_F(SnapshotTest, TwoSnapshotsAreIndependent) {
  ASSERT_TRUE(Put(s(), "a", "1").ok());
  s().BeginSnapshot(1);
  ASSERT_TRUE(Put(s(), "a", "2").ok());
  s().BeginSnapshot(kSnap);
  ASSERT_TRUE(Put(s(), "a", "3").ok());
  {
    Store::SnapshotReads view(s(), 1);
    EXPECT_EQ(Get(s(), "a").value, "1");
  }
  {
    Store::SnapshotReads view(s(), kSnap);
    EXPECT_EQ(Get(s(), "a").value, "2");
  }
  EXPECT_EQ(Get(s(), "a").value, "3");
  s().EndSnapshot(1);
  EXPECT_TRUE(s().snapshot_active());
  s().EndSnapshot(kSnap);
  EXPECT_FALSE(s().snapshot_active());
}

// The walk's segment pass (doc/rdb.md "Walk speed"), as server/rdb_save.cc runs it: each record
// of the segments listed at the start that the view names, then the index walk for the rest
// (a large record); writes go on between records. Each key once, as it was at the start.
TEST_F(SnapshotTest, TheSegmentPassAndTheIndexWalkGiveEveryKeyOnceAsAtTheStart) {
  std::map<std::string, std::pair<std::string, int64_t>> want;
  const int64_t ttl = NowMs() + 3'600'000;
  for (int round = 0; round < 3; ++round) {  // older versions in the earlier segments
    for (int i = round * 100; i < 300; ++i) {
      const std::string k = "k" + std::to_string(i);
      const std::string v = std::to_string(round) + std::string(500, 'v');
      const int64_t e = i % 10 == 0 ? ttl : 0;
      ASSERT_TRUE(Put(s(), k, v, e).ok());
      want[k] = {v, e};
    }
    ASSERT_TRUE(Flush(s()));
    s().log().CloseSegment();
  }
  for (int i = 300; i < 340; ++i) {  // the open segment, partly still in the write buffer
    const std::string k = "k" + std::to_string(i);
    ASSERT_TRUE(Put(s(), k, "tail").ok());
    want[k] = {"tail", 0};
  }
  const std::string large(100 << 10, 'L');  // past one record: a large run of its own
  ASSERT_TRUE(Put(s(), "large", large).ok());
  want["large"] = {large, 0};
  for (int i = 0; i < 340; i += 9) {
    const std::string k = "k" + std::to_string(i);
    ASSERT_TRUE(Del(s(), k).ok());
    want.erase(k);
  }
  s().BeginSnapshot(kSnap);
  ASSERT_GE(s().SnapshotSegments(kSnap), 4u);
  int n = 0;
  auto write_some = [&] {
    ++n;
    ASSERT_TRUE(Put(s(), "k" + std::to_string(n * 13 % 340), "during").ok());
    ASSERT_TRUE(Del(s(), "k" + std::to_string(n * 7 % 340)).ok());
    ASSERT_TRUE(Put(s(), "new" + std::to_string(n), "x").ok());
    ASSERT_TRUE(Put(s(), "large", "small now").ok());
  };
  write_some();
  std::map<std::string, std::pair<std::string, int64_t>> got;
  size_t records = 0;
  for (size_t i = 0; i < s().SnapshotSegments(kSnap); ++i) {
    AlignedBuffer buf;
    uint32_t seg = 0;
    uint64_t base = 0, size = 0, seq = 0;
    bool ok = false;
    ASSERT_TRUE(storage_test::RunInline(
        s().ReadSnapshotSegment(kSnap, i, &buf, &seg, &base, &size, &seq, &ok)));
    ASSERT_TRUE(ok) << "segment " << i;
    RecordScanner scanner(buf.data(), size, seq);
    RecordView v;
    while (scanner.Next(&v)) {
      const uint64_t off = base + scanner.end_offset() - v.length;
      KeyInfo info;
      {
        Store::SnapshotReads view(s(), kSnap);
        info = s().LookupRead(v.key, NowMs());
      }
      if (!v.header.tombstone() && info.exists && loc::Offset(info.loc) == off) {
        EXPECT_TRUE(
            got.emplace(std::string(v.key), std::make_pair(std::string(v.value), info.expire_ms))
                .second)
            << v.key << " framed twice";
      }
      s().SnapshotScanned(kSnap, seg, off + v.length);
      if (++records % 25 == 0) write_some();
    }
  }
  EXPECT_EQ(got.size(), want.size() - 1);  // all but the large record
  auto rest = Walk([&](uint64_t) { write_some(); });
  EXPECT_EQ(rest.size(), 1u);
  for (const auto& [k, v] : rest) EXPECT_TRUE(got.emplace(k, v).second) << k << " in both passes";
  EXPECT_EQ(got, want);
  s().EndSnapshot(kSnap);
}

}  // namespace
}  // namespace lavik
