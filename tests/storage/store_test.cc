#include "storage/store.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/task.h"

namespace lavik {
namespace {

constexpr int64_t kNow = 1700000000000;  // a fixed "current" unix ms

std::string Key(int i) { return "key:" + std::to_string(i); }

Entry* Put(Store& store, std::string_view key, std::string_view value, int64_t expire_ms = 0) {
  bool created = false;
  Entry* e = store.LookupOrCreate(key, kNow, &created);
  store.WriteString(e, value);
  store.SetExpire(e, expire_ms);
  return e;
}

TEST(StoreTest, LookupReturnsLiveEntries) {
  Store store;
  Entry* e = Put(store, "k", "v");
  EXPECT_EQ(store.Lookup("k", kNow), e);
  EXPECT_EQ(store.Lookup("missing", kNow), nullptr);
  Entry* t = Put(store, "ttl", "v", kNow + 1000);
  EXPECT_EQ(store.Lookup("ttl", kNow), t);
  EXPECT_EQ(store.Lookup("ttl", kNow + 999), t);
  EXPECT_EQ(store.stats().expired_keys, 0u);
  // Plain Lookup is for writes and internal use: it does not count hits or misses.
  EXPECT_EQ(store.stats().keyspace_hits, 0u);
  EXPECT_EQ(store.stats().keyspace_misses, 0u);
}

TEST(StoreTest, LookupDeletesExpiredKeys) {
  Store store;
  Put(store, "gone", "v", kNow - 1);
  Put(store, "live", "v", kNow + 1);
  Put(store, "forever", "v");
  EXPECT_EQ(store.keys().size(), 3u);
  EXPECT_EQ(store.keys().expires(), 2u);

  EXPECT_EQ(store.Lookup("gone", kNow), nullptr);
  EXPECT_EQ(store.keys().Find("gone"), nullptr);  // really deleted, not just hidden
  EXPECT_EQ(store.keys().size(), 2u);
  EXPECT_EQ(store.keys().expires(), 1u);
  EXPECT_EQ(store.stats().expired_keys, 1u);

  // A second lookup finds nothing to expire.
  EXPECT_EQ(store.Lookup("gone", kNow), nullptr);
  EXPECT_EQ(store.stats().expired_keys, 1u);

  // Time moves on: the other key expires too; the one without TTL never does.
  EXPECT_EQ(store.Lookup("live", kNow + 2), nullptr);
  EXPECT_NE(store.Lookup("forever", kNow + 1000000000), nullptr);
  EXPECT_EQ(store.stats().expired_keys, 2u);
  EXPECT_EQ(store.keys().size(), 1u);
  EXPECT_EQ(store.keys().expires(), 0u);
}

TEST(StoreTest, LookupReadCountsHitsAndMisses) {
  Store store;
  Put(store, "a", "1");
  Put(store, "old", "1", kNow - 10);
  EXPECT_NE(store.LookupRead("a", kNow), nullptr);
  EXPECT_NE(store.LookupRead("a", kNow), nullptr);
  EXPECT_EQ(store.LookupRead("b", kNow), nullptr);
  EXPECT_EQ(store.LookupRead("old", kNow), nullptr);  // expired: a miss
  EXPECT_EQ(store.stats().keyspace_hits, 2u);
  EXPECT_EQ(store.stats().keyspace_misses, 2u);
  EXPECT_EQ(store.stats().expired_keys, 1u);
}

TEST(StoreTest, LookupOrCreate) {
  Store store;
  bool created = false;
  Entry* e = store.LookupOrCreate("k", kNow, &created);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(created);
  EXPECT_EQ(e->value, "");
  EXPECT_EQ(e->type, ValueType::kString);
  store.WriteString(e, "v");
  EXPECT_EQ(store.LookupOrCreate("k", kNow, &created), e);
  EXPECT_FALSE(created);

  // An expired key is replaced by a fresh one: no old value, no TTL.
  store.SetExpire(e, kNow - 1);
  Entry* fresh = store.LookupOrCreate("k", kNow, &created);
  EXPECT_TRUE(created);
  EXPECT_EQ(fresh->value, "");
  EXPECT_EQ(fresh->expire_ms, 0);
  EXPECT_EQ(store.keys().size(), 1u);
  EXPECT_EQ(store.keys().expires(), 0u);
  EXPECT_EQ(store.stats().expired_keys, 1u);
}

TEST(StoreTest, WriteStringKeepsTtlAndMakesAString) {
  Store store;
  Entry* e = Put(store, "k", "v", kNow + 5000);
  e->type = ValueType::kList;
  store.WriteString(e, std::string_view("bin\0ary", 7));
  EXPECT_EQ(e->type, ValueType::kString);
  EXPECT_EQ(e->value, std::string("bin\0ary", 7));
  EXPECT_EQ(e->expire_ms, kNow + 5000);
}

TEST(StoreTest, DeleteRenameFlush) {
  Store store;
  Entry* a = Put(store, "a", "1", kNow + 100);
  Put(store, "b", "2");
  Entry* c = store.Rename(a, "c");
  EXPECT_EQ(store.Lookup("a", kNow), nullptr);
  ASSERT_EQ(store.Lookup("c", kNow), c);
  EXPECT_EQ(c->value, "1");
  EXPECT_EQ(c->expire_ms, kNow + 100);
  store.Delete(c);
  EXPECT_EQ(store.Lookup("c", kNow), nullptr);
  EXPECT_EQ(store.keys().expires(), 0u);
  EXPECT_EQ(store.keys().size(), 1u);
  store.Flush();
  EXPECT_EQ(store.keys().size(), 0u);
  EXPECT_EQ(store.Lookup("b", kNow), nullptr);
  EXPECT_EQ(store.stats().expired_keys, 0u);  // deletes are not expiries
}

TEST(StoreTest, NoteWriteCountsDirty) {
  Store store;
  EXPECT_EQ(store.stats().dirty, 0u);
  store.NoteWrite();
  store.NoteWrite();
  EXPECT_EQ(store.stats().dirty, 2u);
}

TEST(StoreTest, ActiveExpireCycleRemovesOnlyExpiredKeys) {
  Store store;
  for (int i = 0; i < 5000; ++i) Put(store, "dead:" + std::to_string(i), "x", kNow - 1 - i);
  for (int i = 0; i < 500; ++i) Put(store, "ttl:" + std::to_string(i), "x", kNow + 1 + i);
  for (int i = 0; i < 500; ++i) Put(store, "plain:" + std::to_string(i), "x");

  // With a generous budget one cycle keeps sampling while most samples are expired. Sampling is
  // random, so a tail of expired keys may survive a cycle (as in Redis); later cycles get them.
  size_t deleted = store.ActiveExpireCycle(kNow, 1000000);
  EXPECT_GT(deleted, 3000u);
  for (int cycle = 0; cycle < 100000 && store.keys().expires() > 500; ++cycle) {
    deleted += store.ActiveExpireCycle(kNow, 1000000);
  }
  EXPECT_EQ(deleted, 5000u);
  EXPECT_EQ(store.stats().expired_keys, 5000u);
  EXPECT_EQ(store.keys().size(), 1000u);
  EXPECT_EQ(store.keys().expires(), 500u);
  for (int i = 0; i < 500; ++i) {
    EXPECT_NE(store.keys().Find("ttl:" + std::to_string(i)), nullptr) << i;
    EXPECT_NE(store.keys().Find("plain:" + std::to_string(i)), nullptr) << i;
  }
  for (int i = 0; i < 5000; i += 97) {
    EXPECT_EQ(store.keys().Find("dead:" + std::to_string(i)), nullptr) << i;
  }
  // Nothing left to do: cycles are cheap and delete nothing.
  EXPECT_EQ(store.ActiveExpireCycle(kNow, 1000000), 0u);
}

TEST(StoreTest, ActiveExpireCycleWithNothingToExpire) {
  Store store;
  EXPECT_EQ(store.ActiveExpireCycle(kNow, 1000), 0u);
  Put(store, "plain", "x");
  Put(store, "future", "x", kNow + 60000);
  EXPECT_EQ(store.ActiveExpireCycle(kNow, 1000), 0u);
  EXPECT_EQ(store.keys().size(), 2u);
}

TEST(StoreTest, ActiveExpireCycleRespectsATinyBudget) {
  Store store;
  for (int i = 0; i < 20000; ++i) Put(store, Key(i), "x", kNow - 1);
  // A zero budget still does one sampling round (progress is guaranteed), then stops.
  size_t deleted = store.ActiveExpireCycle(kNow, 0);
  EXPECT_GE(deleted, 1u);
  EXPECT_LE(deleted, 20u);
  EXPECT_EQ(store.keys().size(), 20000u - deleted);
}

// Collects a full SCAN, COUNT `count`, into key -> times seen.
std::unordered_map<std::string, int> FullScan(const Store& store, size_t count, int64_t now_ms) {
  std::unordered_map<std::string, int> seen;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    cursor = store.Scan(cursor, count, now_ms, [&](Entry* e) { ++seen[std::string(e->key())]; });
    ++calls;
  } while (cursor != 0 && calls < 1000000);
  return seen;
}

TEST(StoreTest, ScanSkipsExpiredEntriesWithoutDeletingThem) {
  Store store;
  for (int i = 0; i < 1000; ++i) {
    int64_t expire = 0;
    if (i % 4 == 1) expire = kNow - 1;     // expired
    if (i % 4 == 2) expire = kNow + 1000;  // live with TTL
    Put(store, Key(i), "v", expire);
  }
  for (size_t count : {1, 10, 1000}) {
    auto seen = FullScan(store, count, kNow);
    EXPECT_EQ(seen.size(), 750u) << count;
    for (int i = 0; i < 1000; ++i) {
      EXPECT_EQ(seen.count(Key(i)), i % 4 == 1 ? 0u : 1u) << i;
    }
  }
  EXPECT_EQ(store.keys().size(), 1000u);  // SCAN does not write
  EXPECT_EQ(store.stats().expired_keys, 0u);
}

TEST(StoreTest, ScanStepHonoursCount) {
  Store store;
  for (int i = 0; i < 5000; ++i) Put(store, Key(i), "v");
  uint64_t cursor = 0;
  size_t total = 0;
  int calls = 0;
  do {
    size_t emitted = 0;
    cursor = store.Scan(cursor, 10, kNow, [&](Entry*) { ++emitted; });
    // A step stops once it reached COUNT, but never splits a bucket.
    EXPECT_LE(emitted, 10u + 16u);
    total += emitted;
    ++calls;
  } while (cursor != 0);
  EXPECT_EQ(total, 5000u);
  EXPECT_GT(calls, 5000 / 30);
}

TEST(StoreTest, ScanOfEmptyOrAllExpiredStoreEnds) {
  Store store;
  int visits = 0;
  EXPECT_EQ(store.Scan(0, 10, kNow, [&](Entry*) { ++visits; }), 0u);
  for (int i = 0; i < 100; ++i) Put(store, Key(i), "v", kNow - 1);
  auto seen = FullScan(store, 10, kNow);
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(visits, 0);
}

Task ReadInto(Store* store, std::string_view key, std::string* out, bool* found) {
  Entry* e = store->LookupRead(key, kNow);
  *found = e != nullptr;
  if (e == nullptr) co_return;
  const std::string& v = co_await store->ReadValue(e);
  *out = v;
}

TEST(StoreTest, ReadValueInsideATask) {
  Store store;
  Put(store, "k", std::string(5000, 'z'));
  std::string out;
  bool found = false;
  // In-memory values are always ready, so the task completes synchronously.
  EXPECT_TRUE(ReadInto(&store, "k", &out, &found).Start(nullptr, nullptr));
  EXPECT_TRUE(found);
  EXPECT_EQ(out, std::string(5000, 'z'));

  EXPECT_TRUE(ReadInto(&store, "nope", &out, &found).Start(nullptr, nullptr));
  EXPECT_FALSE(found);
  EXPECT_EQ(store.stats().keyspace_hits, 1u);
  EXPECT_EQ(store.stats().keyspace_misses, 1u);
}

}  // namespace
}  // namespace lavik
