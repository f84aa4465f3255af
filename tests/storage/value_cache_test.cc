#include "storage/value_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <list>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>

namespace lavik {
namespace {

constexpr size_t kOverhead = ValueCache::kEntryOverhead;

size_t Charge(size_t value_size) { return value_size + kOverhead; }

// A cache that holds exactly n entries of `value_size` bytes.
size_t CapacityFor(size_t n, size_t value_size) { return n * Charge(value_size); }

std::string Value(uint64_t fp, size_t size) {
  std::string v(size, 'a' + static_cast<char>(fp % 26));
  std::string id = std::to_string(fp);
  for (size_t i = 0; i < id.size() && i < size; ++i) v[i] = id[i];
  return v;
}

// The shard's read path: serve from the cache or "read the device" and cache the value.
bool ReadThrough(ValueCache& cache, uint64_t fp, size_t value_size) {
  if (cache.Get(fp, /*loc=*/fp * 4096) != nullptr) return true;
  cache.Put(fp, fp * 4096, Value(fp, value_size));
  return false;
}

TEST(ValueCacheTest, HitAfterPut) {
  ValueCache cache(64 << 10);
  cache.Put(7, 100, "hello");
  const std::string* v = cache.Get(7, 100);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, "hello");
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.bytes(), Charge(5));
  EXPECT_EQ(cache.Get(8, 100), nullptr);
}

TEST(ValueCacheTest, LocMismatchMissesAndDrops) {
  ValueCache cache(64 << 10);
  cache.Put(7, 100, "old");
  EXPECT_EQ(cache.Get(7, 200), nullptr);  // the index points at a newer version
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(cache.Get(7, 100), nullptr);  // dropped, not merely hidden
  cache.Put(7, 200, "new");
  ASSERT_NE(cache.Get(7, 200), nullptr);
  EXPECT_EQ(*cache.Get(7, 200), "new");
}

TEST(ValueCacheTest, PutReplacesEntryForFingerprint) {
  ValueCache cache(64 << 10);
  cache.Put(7, 100, std::string(1000, 'x'));
  cache.Put(7, 200, "yy");
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.bytes(), Charge(2));
  EXPECT_EQ(cache.Get(7, 100), nullptr);  // the old version is gone (and this drops the new one)
  cache.Put(7, 300, "zzz");
  ASSERT_NE(cache.Get(7, 300), nullptr);
  EXPECT_EQ(*cache.Get(7, 300), "zzz");
}

TEST(ValueCacheTest, MoveRetags) {
  ValueCache cache(64 << 10);
  cache.Put(1, 100, "one");
  cache.Move(1, 100, 500);
  ASSERT_NE(cache.Get(1, 500), nullptr);
  EXPECT_EQ(*cache.Get(1, 500), "one");
  cache.Move(1, 100, 500);  // repeated: already at new_loc, kept
  ASSERT_NE(cache.Get(1, 500), nullptr);
  EXPECT_EQ(cache.bytes(), Charge(3));

  cache.Put(2, 100, "two");
  cache.Move(2, 300, 400);  // the cached copy is from neither location: stale, dropped
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.Get(2, 100), nullptr);

  cache.Move(3, 1, 2);  // not cached: nothing happens
  EXPECT_EQ(cache.entries(), 1u);
}

TEST(ValueCacheTest, EraseAndClear) {
  ValueCache cache(64 << 10);
  for (uint64_t fp = 1; fp <= 10; ++fp) cache.Put(fp, fp, Value(fp, 20));
  EXPECT_EQ(cache.entries(), 10u);
  cache.Erase(3);
  cache.Erase(99);  // absent: no-op
  EXPECT_EQ(cache.entries(), 9u);
  EXPECT_EQ(cache.bytes(), 9 * Charge(20));
  EXPECT_EQ(cache.Get(3, 3), nullptr);
  ASSERT_NE(cache.Get(4, 4), nullptr);

  uint64_t hits = cache.hits(), misses = cache.misses();
  cache.Clear();
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(cache.ghost_entries(), 0u);
  EXPECT_EQ(cache.hits(), hits);  // counters are cumulative
  EXPECT_EQ(cache.misses(), misses);
  EXPECT_EQ(cache.Get(4, 4), nullptr);
  cache.Put(4, 4, "back");
  EXPECT_NE(cache.Get(4, 4), nullptr);
}

TEST(ValueCacheTest, CapacityZeroDisables) {
  ValueCache cache(0);
  cache.Put(1, 1, "x");
  EXPECT_EQ(cache.Get(1, 1), nullptr);
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(cache.misses(), 1u);

  cache.SetCapacity(64 << 10);
  cache.Put(1, 1, "x");
  EXPECT_NE(cache.Get(1, 1), nullptr);
  cache.SetCapacity(0);  // disabling drops everything
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(cache.Get(1, 1), nullptr);
  cache.Put(2, 2, "y");
  EXPECT_EQ(cache.entries(), 0u);
}

TEST(ValueCacheTest, SetCapacityShrinkEvicts) {
  ValueCache cache(CapacityFor(100, 50));
  for (uint64_t fp = 0; fp < 100; ++fp) cache.Put(fp, fp, Value(fp, 50));
  EXPECT_EQ(cache.entries(), 100u);
  EXPECT_EQ(cache.evictions(), 0u);

  cache.SetCapacity(CapacityFor(30, 50));
  EXPECT_LE(cache.bytes(), cache.capacity());
  EXPECT_EQ(cache.entries(), 30u);
  EXPECT_EQ(cache.evictions(), 70u);
  EXPECT_LE(cache.ghost_entries(), cache.entries());
  // The survivors are still served correctly.
  int found = 0;
  for (uint64_t fp = 0; fp < 100; ++fp) {
    if (const std::string* v = cache.Get(fp, fp)) {
      EXPECT_EQ(*v, Value(fp, 50));
      ++found;
    }
  }
  EXPECT_EQ(found, 30);

  cache.SetCapacity(CapacityFor(100, 50));  // growing evicts nothing
  EXPECT_EQ(cache.entries(), 30u);
  cache.SetCapacity(kOverhead / 2);  // smaller than any entry
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(ValueCacheTest, BigValuesNotCached) {
  ValueCache cache(80000);  // a value may use up to 10000 bytes
  cache.Put(1, 1, std::string(10000, 'a'));
  EXPECT_NE(cache.Get(1, 1), nullptr);
  cache.Put(2, 2, std::string(10001, 'b'));
  EXPECT_EQ(cache.Get(2, 2), nullptr);
  EXPECT_EQ(cache.entries(), 1u);
  // Replacing a cached value with one too big still drops the old version.
  cache.Put(1, 3, std::string(20000, 'c'));
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);

  ValueCache tiny(kOverhead - 1);  // even an empty value's overhead does not fit
  tiny.Put(1, 1, "");
  EXPECT_EQ(tiny.entries(), 0u);
  EXPECT_EQ(tiny.bytes(), 0u);
}

TEST(ValueCacheTest, ValueLargerThanSmallShareIsKept) {
  // 12.5% of the cache is over the small queue's 10% share; the fresh insert must not be the
  // one evicted.
  ValueCache cache(80000);
  for (uint64_t fp = 0; fp < 60; ++fp) {
    cache.Put(fp, fp, Value(fp, 1000));
    cache.Get(fp, fp);
  }
  cache.Put(100, 100, std::string(10000, 'z'));
  EXPECT_LE(cache.bytes(), cache.capacity());
  ASSERT_NE(cache.Get(100, 100), nullptr);
}

TEST(ValueCacheTest, Counters) {
  ValueCache cache(CapacityFor(10, 10));
  EXPECT_EQ(cache.Get(1, 1), nullptr);
  cache.Put(1, 1, Value(1, 10));
  EXPECT_NE(cache.Get(1, 1), nullptr);
  EXPECT_NE(cache.Get(1, 1), nullptr);
  EXPECT_EQ(cache.Get(1, 2), nullptr);  // stale version: a miss, not an eviction
  EXPECT_EQ(cache.hits(), 2u);
  EXPECT_EQ(cache.misses(), 2u);
  EXPECT_EQ(cache.evictions(), 0u);

  for (uint64_t fp = 10; fp < 25; ++fp) cache.Put(fp, fp, Value(fp, 10));
  EXPECT_EQ(cache.entries(), 10u);
  EXPECT_EQ(cache.evictions(), 5u);
  cache.Erase(24);
  cache.Clear();
  EXPECT_EQ(cache.evictions(), 5u);  // Erase/Clear are not evictions
}

TEST(ValueCacheTest, AccessedInSmallIsPromotedToMain) {
  ValueCache cache(CapacityFor(100, 10));
  cache.Put(1, 1, Value(1, 10));
  ASSERT_NE(cache.Get(1, 1), nullptr);  // freq 1 while in small
  EXPECT_EQ(cache.main_bytes(), 0u);
  for (uint64_t fp = 1000; fp < 1000 + 10000; ++fp) cache.Put(fp, fp, Value(fp, 10));
  // Reaching small's tail with a hit moved it to main, where a one-pass scan never reaches.
  EXPECT_EQ(cache.main_bytes(), Charge(10));
  EXPECT_NE(cache.Get(1, 1), nullptr);
}

TEST(ValueCacheTest, GhostHitInsertsIntoMain) {
  ValueCache cache(CapacityFor(100, 10));
  cache.Put(1, 1, Value(1, 10));  // never read while in small
  for (uint64_t fp = 1000; fp < 1100; ++fp) cache.Put(fp, fp, Value(fp, 10));
  EXPECT_EQ(cache.Get(1, 1), nullptr);  // evicted from small...
  EXPECT_GT(cache.ghost_entries(), 0u);
  cache.Put(1, 1, Value(1, 10));  // ...but remembered: it comes back straight into main
  EXPECT_EQ(cache.main_bytes(), Charge(10));
  for (uint64_t fp = 2000; fp < 12000; ++fp) cache.Put(fp, fp, Value(fp, 10));
  EXPECT_NE(cache.Get(1, 1), nullptr);
  EXPECT_LE(cache.ghost_entries(), cache.entries());

  // Erase forgets the ghost too: a re-created key starts in small.
  cache.Put(2, 2, Value(2, 10));
  for (uint64_t fp = 20000; fp < 20200; ++fp) cache.Put(fp, fp, Value(fp, 10));
  cache.Erase(2);
  size_t main_before = cache.main_bytes();
  cache.Put(2, 2, Value(2, 10));
  EXPECT_EQ(cache.main_bytes(), main_before);
}

// The ghost is a ring that grows and wraps: through many evictions it keeps FIFO order, so the
// newest evicted fingerprints are remembered and the oldest are forgotten.
TEST(ValueCacheTest, GhostKeepsFifoOrderAcrossRingGrowthAndWrap) {
  ValueCache cache(CapacityFor(1000, 10));
  for (uint64_t fp = 1; fp <= 20000; ++fp) cache.Put(fp, fp, Value(fp, 10));
  EXPECT_GT(cache.ghost_entries(), 100u);
  EXPECT_LE(cache.ghost_entries(), cache.entries());
  // fp 1 left small long ago (forgotten): it comes back into small.
  size_t main_before = cache.main_bytes();
  cache.Put(1, 1, Value(1, 10));
  EXPECT_EQ(cache.main_bytes(), main_before);
  // The last fingerprint evicted from small is remembered: it comes back into main.
  uint64_t evicted = 0;
  for (uint64_t fp = 20000; fp >= 1 && evicted == 0; --fp) {
    if (cache.Peek(fp, fp) == nullptr && fp != 1) evicted = fp;
  }
  ASSERT_NE(evicted, 0u);
  cache.Put(evicted, evicted, Value(evicted, 10));
  EXPECT_GT(cache.main_bytes(), main_before);
  EXPECT_EQ(*cache.Get(evicted, evicted), Value(evicted, 10));
}

TEST(ValueCacheTest, MainGivesSecondChanceToReadEntries) {
  // Fill main with 90 promoted entries, read half of them, then force evictions from main by
  // promoting more: the read half survives the first pass over the tail.
  const size_t n = 100;
  ValueCache cache(CapacityFor(n, 10));
  for (uint64_t fp = 0; fp < 2 * n; ++fp) {
    cache.Put(fp, fp, Value(fp, 10));
    cache.Get(fp, fp);  // every entry earns promotion, so everything flows through main
  }
  EXPECT_EQ(cache.entries(), n);
  for (uint64_t fp = n; fp < 2 * n; fp += 2) cache.Get(fp, fp);
  for (uint64_t fp = 1000; fp < 1000 + n / 2; ++fp) {
    cache.Put(fp, fp, Value(fp, 10));
    cache.Get(fp, fp);
  }
  int read_kept = 0, unread_kept = 0;
  for (uint64_t fp = n; fp < 2 * n; ++fp) {
    if (cache.Get(fp, fp) != nullptr) ++(fp % 2 == 0 ? read_kept : unread_kept);
  }
  EXPECT_GT(read_kept, unread_kept);
  EXPECT_GE(read_kept, static_cast<int>(n / 2) - 5);
}

TEST(ValueCacheTest, CapacityNeverExceededRandomized) {
  std::mt19937_64 rng(12345);
  const size_t capacity = 64 << 10;
  ValueCache cache(capacity);
  // The authoritative (loc, value) of each key, to check every hit serves the current version.
  std::unordered_map<uint64_t, std::pair<uint64_t, std::string>> truth;
  uint64_t next_loc = 1;
  for (int step = 0; step < 200000; ++step) {
    uint64_t fp = rng() % 2000;
    int op = static_cast<int>(rng() % 100);
    if (op < 50) {
      auto it = truth.find(fp);
      if (it == truth.end()) continue;
      const std::string* v = cache.Get(fp, it->second.first);
      if (v != nullptr) {
        ASSERT_EQ(*v, it->second.second) << "step " << step;
      } else {
        cache.Put(fp, it->second.first, it->second.second);
      }
    } else if (op < 80) {
      size_t size = rng() % 4 == 0 ? rng() % (capacity / 6) : rng() % 300;
      truth[fp] = {next_loc++, std::string(size, static_cast<char>('a' + rng() % 26))};
      if (rng() % 2 == 0) cache.Put(fp, truth[fp].first, truth[fp].second);  // write-through
    } else if (op < 88) {
      auto it = truth.find(fp);
      if (it == truth.end()) continue;
      uint64_t new_loc = next_loc++;
      cache.Move(fp, it->second.first, new_loc);
      it->second.first = new_loc;
    } else if (op < 95) {
      cache.Erase(fp);
      truth.erase(fp);
    } else if (op < 99) {
      // A stale read: an older location must never hit.
      EXPECT_EQ(cache.Get(fp, 0), nullptr);
    } else if (step % 50 == 0) {
      cache.SetCapacity(capacity / 2 + rng() % capacity);
    }
    ASSERT_LE(cache.bytes(), cache.capacity()) << "step " << step;
    ASSERT_LE(cache.ghost_entries(), cache.entries()) << "step " << step;
    ASSERT_EQ(cache.bytes(), cache.small_bytes() + cache.main_bytes());
  }
  EXPECT_GT(cache.hits(), 0u);
  EXPECT_GT(cache.evictions(), 0u);
}

// Byte-bounded LRU with the same charges: the baseline S3-FIFO is meant to beat on scans.
class LruModel {
 public:
  explicit LruModel(size_t capacity) : capacity_(capacity) {}
  bool ReadThrough(uint64_t fp, size_t value_size) {
    auto it = index_.find(fp);
    if (it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return true;
    }
    order_.push_front(fp);
    index_[fp] = order_.begin();
    bytes_ += Charge(value_size);
    while (bytes_ > capacity_) {
      index_.erase(order_.back());
      order_.pop_back();
      bytes_ -= Charge(value_size);
    }
    return false;
  }

 private:
  size_t capacity_;
  size_t bytes_ = 0;
  std::list<uint64_t> order_;
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> index_;
};

struct ScanResult {
  double hot_hit_ratio;
  double overall_hit_ratio;
};

// 100 hot keys read round-robin, one hot read after every `cold_per_hot` cold reads, while
// 100k cold keys are each read once, through a cache sized for 1000 values. Between two reads of
// the same hot key, 100 * cold_per_hot cold keys pass by. With warm_up, the hot set is read
// three times before the scan starts. (Without it, a hot key is first seen mid-scan and needs
// its second read to land while it is still in the ghost: at 20 cold reads per hot read, 2000
// cold keys pass between reads, twice the cache, and no policy of this size can tell it is hot.)
template <typename Cache>
ScanResult RunScan(Cache& read_through, int cold_per_hot, bool warm_up) {
  const uint64_t kHot = 100, kCold = 100000, kColdBase = 1'000'000;
  if (warm_up) {
    for (int round = 0; round < 3; ++round) {
      for (uint64_t h = 0; h < kHot; ++h) read_through(h);
    }
  }
  uint64_t hot_reads = 0, hot_hits = 0, cold_hits = 0;
  for (uint64_t i = 0; i < kCold; ++i) {
    cold_hits += read_through(kColdBase + i);
    if ((i + 1) % cold_per_hot == 0) {
      hot_hits += read_through(hot_reads % kHot);
      ++hot_reads;
    }
  }
  return {static_cast<double>(hot_hits) / hot_reads,
          static_cast<double>(hot_hits + cold_hits) / (hot_reads + kCold)};
}

TEST(ValueCacheTest, ScanResistance) {
  const size_t kValue = 100;
  const size_t capacity = CapacityFor(1000, kValue);
  struct Case {
    int cold_per_hot;
    bool warm_up;
  };
  for (Case c :
       {Case{10, true}, Case{10, false}, Case{15, false}, Case{20, true}, Case{1, false}}) {
    ValueCache cache(capacity);
    auto s3 = [&](uint64_t fp) { return ReadThrough(cache, fp, kValue); };
    ScanResult r = RunScan(s3, c.cold_per_hot, c.warm_up);
    EXPECT_LE(cache.bytes(), capacity);

    LruModel lru(capacity);
    auto lru_read = [&](uint64_t fp) { return lru.ReadThrough(fp, kValue); };
    ScanResult base = RunScan(lru_read, c.cold_per_hot, c.warm_up);

    std::printf(
        "[scan] 1 hot read per %2d cold, warm-up %-3s: S3-FIFO hot %.4f overall %.4f | LRU hot "
        "%.4f overall %.4f\n",
        c.cold_per_hot, c.warm_up ? "yes" : "no", r.hot_hit_ratio, r.overall_hit_ratio,
        base.hot_hit_ratio, base.overall_hit_ratio);
    EXPECT_GT(r.hot_hit_ratio, 0.90) << "cold_per_hot " << c.cold_per_hot;
  }
}

}  // namespace
}  // namespace lavik
