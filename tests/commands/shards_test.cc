#include "commands/shards.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "base/slot.h"
#include "storage/test_data_file.h"

namespace lavik {
namespace {

// Routing needs no running workers: the shards only remember their worker.
TestDataFile& SharedFile() {
  static TestDataFile file;
  return file;
}

ShardSet MakeShards(int n) {
  return ShardSet(std::vector<Worker*>(n, nullptr), SharedFile().MakeStores(n));
}

TEST(ShardSetTest, ShardsAreNumberedInOrder) {
  ShardSet set = MakeShards(5);
  EXPECT_EQ(set.size(), 5);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(set.at(i).id, i);
    EXPECT_EQ(set.at(i).worker, nullptr);
    EXPECT_FALSE(set.at(i).locked());
    EXPECT_TRUE(set.at(i).waiting.empty());
  }
}

TEST(ShardSetTest, SlotRangesAreContiguousAndCoverAllShards) {
  for (int n : {1, 2, 3, 4, 5, 7, 8, 16, 64, 256}) {
    ShardSet set = MakeShards(n);
    std::vector<int> slots_per_shard(n, 0);
    int prev = 0;
    for (int slot = 0; slot < kNumSlots; ++slot) {
      const int s = set.SlotShard(static_cast<uint16_t>(slot));
      ASSERT_EQ(s, slot * n / kNumSlots) << "n=" << n << " slot=" << slot;
      ASSERT_GE(s, prev) << "ranges must be contiguous";
      ASSERT_LE(s, prev + 1);
      ASSERT_LT(s, n);
      prev = s;
      ++slots_per_shard[s];
    }
    EXPECT_EQ(set.SlotShard(0), 0);
    EXPECT_EQ(set.SlotShard(kNumSlots - 1), n - 1);
    // Even split: shard sizes differ by at most one slot.
    int lo = kNumSlots;
    int hi = 0;
    for (int c : slots_per_shard) {
      lo = std::min(lo, c);
      hi = std::max(hi, c);
    }
    EXPECT_LE(hi - lo, 1) << "n=" << n;
    EXPECT_GT(lo, 0) << "n=" << n;
  }
}

TEST(ShardSetTest, ShardOfFollowsTheKeysSlot) {
  for (int n : {1, 2, 3, 4, 8, 13}) {
    ShardSet set = MakeShards(n);
    std::vector<int> hits(n, 0);
    for (int i = 0; i < 20000; ++i) {
      const std::string key = "key:" + std::to_string(i);
      const int s = set.ShardOf(key);
      ASSERT_EQ(s, KeyHashSlot(key) * n / kNumSlots) << key;
      ++hits[s];
    }
    for (int s = 0; s < n; ++s) EXPECT_GT(hits[s], 20000 / n / 2) << "n=" << n << " s=" << s;
  }
}

TEST(ShardSetTest, KnownSlotsLandInTheirRange) {
  // Redis Cluster reference slots: "foo" -> 12182, "bar" -> 5061, "" -> 0.
  ShardSet four = MakeShards(4);
  EXPECT_EQ(KeyHashSlot("foo"), 12182);
  EXPECT_EQ(four.ShardOf("foo"), 2);  // 12182 * 4 / 16384 = 2.97
  EXPECT_EQ(KeyHashSlot("bar"), 5061);
  EXPECT_EQ(four.ShardOf("bar"), 1);
  EXPECT_EQ(four.ShardOf(""), 0);
}

TEST(ShardSetTest, HashTagsShareAShard) {
  ShardSet set = MakeShards(8);
  for (int i = 0; i < 2000; ++i) {
    const std::string tag = "user" + std::to_string(i);
    const int s = set.ShardOf("{" + tag + "}");
    EXPECT_EQ(set.ShardOf("{" + tag + "}.following"), s) << tag;
    EXPECT_EQ(set.ShardOf("prefix:{" + tag + "}:suffix"), s) << tag;
    EXPECT_EQ(set.ShardOf(tag), s) << tag;  // the tag alone hashes the same bytes
    EXPECT_EQ(set.ShardOf("x{" + tag + "}y{other}"), s) << tag;  // only the first tag counts
  }
  // An empty tag is no tag: the whole key is hashed.
  EXPECT_EQ(set.ShardOf("{}abc"), set.SlotShard(KeyHashSlot("{}abc")));
  EXPECT_EQ(HashTagOf("{}abc"), "{}abc");
}

TEST(ShardSetTest, SingleShardTakesEverything) {
  ShardSet set = MakeShards(1);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(set.ShardOf("k" + std::to_string(i)), 0);
}

// A queued command: records that it ran and may take the lock again (as a multi-shard command
// waiting for the lock does).
struct QueuedItem : MailboxItem {
  Shard* shard = nullptr;
  std::vector<int>* ran = nullptr;
  int id = 0;
  bool relocks = false;

  QueuedItem(Shard* s, std::vector<int>* log, int item_id, bool lock_again)
      : shard(s), ran(log), id(item_id), relocks(lock_again) {
    run = [](MailboxItem* self) {
      auto* item = static_cast<QueuedItem*>(self);
      EXPECT_FALSE(item->shard->locked()) << "ran while the shard was locked";
      item->ran->push_back(item->id);
      if (item->relocks) item->shard->lock_owner = item;
    };
  }
};

TEST(ShardTest, UnlockWithNothingWaiting) {
  Shard shard(0, nullptr, std::move(SharedFile().MakeStores(1)[0]));
  int owner = 0;
  shard.lock_owner = &owner;
  EXPECT_TRUE(shard.locked());
  shard.Unlock();
  EXPECT_FALSE(shard.locked());
  EXPECT_TRUE(shard.waiting.empty());
}

TEST(ShardTest, UnlockRunsWaitersInFifoOrder) {
  Shard shard(0, nullptr, std::move(SharedFile().MakeStores(1)[0]));
  int owner = 0;
  shard.lock_owner = &owner;
  std::vector<int> ran;
  std::deque<QueuedItem> items;  // items are not movable (MailboxItem holds an atomic)
  for (int i = 0; i < 5; ++i) items.emplace_back(&shard, &ran, i, false);
  for (QueuedItem& item : items) shard.waiting.push_back(&item);

  shard.Unlock();
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(shard.locked());
  EXPECT_TRUE(shard.waiting.empty());
}

TEST(ShardTest, UnlockStopsWhenAWaiterRelocks) {
  Shard shard(0, nullptr, std::move(SharedFile().MakeStores(1)[0]));
  int owner = 0;
  shard.lock_owner = &owner;
  std::vector<int> ran;
  std::deque<QueuedItem> items;
  items.emplace_back(&shard, &ran, 0, false);
  items.emplace_back(&shard, &ran, 1, true);  // takes the lock: 2.. must keep waiting
  items.emplace_back(&shard, &ran, 2, false);
  items.emplace_back(&shard, &ran, 3, true);
  items.emplace_back(&shard, &ran, 4, false);
  items.emplace_back(&shard, &ran, 5, false);
  for (QueuedItem& item : items) shard.waiting.push_back(&item);

  shard.Unlock();
  EXPECT_EQ(ran, (std::vector<int>{0, 1}));
  EXPECT_EQ(shard.lock_owner, &items[1]);
  ASSERT_EQ(shard.waiting.size(), 4u);
  EXPECT_EQ(shard.waiting.front(), &items[2]);

  // Items queued while locked go behind the earlier ones.
  QueuedItem late(&shard, &ran, 6, false);
  shard.waiting.push_back(&late);

  shard.Unlock();
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(shard.lock_owner, &items[3]);
  ASSERT_EQ(shard.waiting.size(), 3u);

  shard.Unlock();
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_FALSE(shard.locked());
  EXPECT_TRUE(shard.waiting.empty());  // invariant: waiters only while locked
}

}  // namespace
}  // namespace lavik
