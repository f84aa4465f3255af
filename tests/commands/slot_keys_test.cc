#include "commands/slot_keys.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/db_key.h"
#include "base/slot.h"
#include "storage/index.h"
#include "storage/store.h"
#include "storage/test_data_file.h"

namespace lavik {
namespace {

using storage_test::Del;
using storage_test::Put;
using storage_test::RunInline;

// The cluster layout for one test: set before its stores are built, reset afterwards.
class SlotLayout {
 public:
  SlotLayout() { Index::SetSlotFingerprints(true); }
  ~SlotLayout() { Index::SetSlotFingerprints(false); }
};

std::vector<std::string> Keys(Store& st, uint16_t slot, size_t max, int64_t now = 0) {
  std::vector<std::string> out;
  RunInline(KeysInSlot(st, slot, max, now == 0 ? NowMs() : now, &out));
  return out;
}

TEST(SlotFingerprintTest, PlainLayoutIsUnchanged) {
  ASSERT_FALSE(Index::slot_fingerprints());
  const uint64_t plain = Index::Fingerprint("hello");
  SlotLayout on;
  const uint64_t fp = Index::Fingerprint("hello");
  EXPECT_NE(fp, plain);
  EXPECT_EQ(Index::FpSlot(fp), KeyHashSlot("hello"));
  EXPECT_EQ(Index::FpDb(fp), 0);
  // The low 49 random bits are XXH3's, as in the plain layout.
  EXPECT_EQ(fp & ((uint64_t{1} << Index::kSlotShift) - 1),
            plain & ((uint64_t{1} << Index::kSlotShift) - 1));
  // Hash tags share a slot, so their fingerprints share the top bits.
  EXPECT_EQ(Index::FpSlot(Index::Fingerprint("{user1}.a")),
            Index::FpSlot(Index::Fingerprint("{user1}.b")));
  // Other databases keep the plain layout (a cluster has only database 0).
  const std::string d3 = DbKey(3, "hello");
  EXPECT_EQ(Index::FpDb(Index::Fingerprint(d3)), 3);
  // A database-0 key that needs the prefix hashes its client key's slot.
  const std::string odd = DbKey(0, "\xff\xfdx");
  EXPECT_EQ(Index::FpSlot(Index::Fingerprint(odd)), KeyHashSlot("\xff\xfdx"));
  for (int i = 0; i < 1000; ++i) EXPECT_NE(Index::Fingerprint(std::to_string(i)), 0u);
}

class SlotKeysTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(file_.ok()) << file_.error(); }
  SlotLayout layout_;  // before file_ and the stores
  TestDataFile file_;
};

TEST_F(SlotKeysTest, CountsAndListsEveryKeyOfASlot) {
  auto st = std::move(file_.MakeStores(1)[0]);
  std::map<uint16_t, std::set<std::string>> want;
  for (int i = 0; i < 20000; ++i) {
    const std::string k = "key:" + std::to_string(i);
    ASSERT_TRUE(Put(*st, k, "v").ok());
    want[KeyHashSlot(k)].insert(k);
  }
  // Hash-tagged keys crowd one slot.
  for (int i = 0; i < 500; ++i) {
    const std::string k = "{tag}:" + std::to_string(i);
    ASSERT_TRUE(Put(*st, k, "v").ok());
    want[KeyHashSlot(k)].insert(k);
  }
  // Other databases are not counted.
  ASSERT_TRUE(Put(*st, DbKey(2, "key:1"), "v").ok());
  size_t total = 0;
  for (int slot = 0; slot < kNumSlots; ++slot) {
    const auto s = static_cast<uint16_t>(slot);
    const auto it = want.find(s);
    const size_t n = it == want.end() ? 0 : it->second.size();
    ASSERT_EQ(CountKeysInSlot(*st, s), n) << slot;
    const std::vector<std::string> got = Keys(*st, s, 1'000'000);
    ASSERT_EQ(std::set<std::string>(got.begin(), got.end()),
              it == want.end() ? std::set<std::string>{} : it->second)
        << slot;
    ASSERT_EQ(got.size(), n);
    total += n;
  }
  EXPECT_EQ(total, 20500u);
  const uint16_t tag = KeyHashSlot("{tag}");
  EXPECT_EQ(Keys(*st, tag, 7).size(), 7u);
  EXPECT_TRUE(Keys(*st, tag, 0).empty());
}

TEST_F(SlotKeysTest, CountFollowsOverwritesDeletesExpiryAndFlushes) {
  auto st = std::move(file_.MakeStores(1)[0]);
  const uint16_t s = KeyHashSlot("{a}");
  ASSERT_TRUE(Put(*st, "{a}1", "x").ok());
  ASSERT_TRUE(Put(*st, "{a}2", "x").ok());
  ASSERT_TRUE(Put(*st, "{a}1", "overwritten").ok());
  EXPECT_EQ(CountKeysInSlot(*st, s), 2u);
  ASSERT_TRUE(Del(*st, "{a}2").ok());
  EXPECT_EQ(CountKeysInSlot(*st, s), 1u);
  // A key with a TTL that passed: skipped by KeysInSlot at once, counted until reclaimed (as
  // Redis counts it), uncounted by the lazy expiry of a look-up.
  const int64_t now = NowMs();
  ASSERT_TRUE(Put(*st, "{a}3", "x", now + 50).ok());
  EXPECT_EQ(CountKeysInSlot(*st, s), 2u);
  EXPECT_EQ(Keys(*st, s, 10, now + 100), std::vector<std::string>{"{a}1"});
  EXPECT_FALSE(st->Lookup("{a}3", now + 100).exists);
  EXPECT_EQ(CountKeysInSlot(*st, s), 1u);
  // Internal records (a chunked collection's chunks) are not keys.
  ASSERT_TRUE(Put(*st, "{a}chunk", "c", 0, ValueType::kChunk).ok());
  EXPECT_EQ(CountKeysInSlot(*st, s), 1u);
  EXPECT_EQ(Keys(*st, s, 10), std::vector<std::string>{"{a}1"});
  st->Clear();
  EXPECT_EQ(CountKeysInSlot(*st, s), 0u);
  EXPECT_TRUE(Keys(*st, s, 10).empty());
}

TEST(SlotKeysPlainTest, PlainLayoutHasNoSlots) {
  TestDataFile file;
  ASSERT_TRUE(file.ok());
  auto st = std::move(file.MakeStores(1)[0]);
  ASSERT_TRUE(Put(*st, "k", "v").ok());
  EXPECT_EQ(CountKeysInSlot(*st, KeyHashSlot("k")), 0u);
  EXPECT_TRUE(Keys(*st, KeyHashSlot("k"), 10).empty());
}

// GETKEYSINSLOT's cost at 1M keys (printed; doc/index.md): finding every slot's keys in the index,
// then reading their names. FileDevice reads the O_DIRECT data file synchronously (queue depth
// 1), so the second figure is the disk's depth-1 rate, not the worker's (32 reads in flight).
TEST_F(SlotKeysTest, RateOverAMillionKeys) {
  StoreOptions o;
  o.cache_bytes = 0;
  auto st = std::move(file_.MakeStores(1, o)[0]);
  constexpr int kKeys = 1'000'000;
  const std::string value(100, 'v');
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(Put(*st, "key:" + std::to_string(i), value).ok());
    if (i % 8192 == 8191) {
      ASSERT_TRUE(storage_test::Flush(*st));  // no flusher without a worker
    }
  }
  ASSERT_TRUE(storage_test::Flush(*st));
  st->log().CloseSegment();
  ASSERT_TRUE(storage_test::Flush(*st));
  const int64_t now = NowMs();
  const auto t0 = std::chrono::steady_clock::now();
  size_t counted = 0;
  for (int slot = 0; slot < kNumSlots; ++slot) {
    counted += CountKeysInSlot(*st, static_cast<uint16_t>(slot));
  }
  const auto t1 = std::chrono::steady_clock::now();
  size_t found = 0;
  std::vector<std::pair<uint64_t, uint64_t>> entries;
  for (int slot = 0; slot < kNumSlots; ++slot) {
    SlotEntries(*st, static_cast<uint16_t>(slot), 1'000'000, now, &entries);
    found += entries.size();
  }
  const auto t2 = std::chrono::steady_clock::now();
  constexpr int kReadSlots = 256;  // ~16k keys: their names come from the device
  size_t listed = 0, listed_want = 0;
  for (int slot = 0; slot < kReadSlots; ++slot) {
    listed += Keys(*st, static_cast<uint16_t>(slot), 1'000'000, now).size();
    listed_want += CountKeysInSlot(*st, static_cast<uint16_t>(slot));
  }
  const auto t3 = std::chrono::steady_clock::now();
  EXPECT_EQ(counted, static_cast<size_t>(kKeys));
  EXPECT_EQ(found, static_cast<size_t>(kKeys));
  EXPECT_EQ(listed, listed_want);
  const double count_s = std::chrono::duration<double>(t1 - t0).count();
  const double find_s = std::chrono::duration<double>(t2 - t1).count();
  const double read_s = std::chrono::duration<double>(t3 - t2).count();
  std::printf(
      "1M keys: COUNTKEYSINSLOT x16384 %.3f ms; index part of GETKEYSINSLOT over every slot "
      "%.3f s = %.0f keys/s; with the names read (depth 1) %.0f keys/s\n",
      count_s * 1e3, find_s, kKeys / find_s, static_cast<double>(listed) / read_s);
}

}  // namespace
}  // namespace lavik
