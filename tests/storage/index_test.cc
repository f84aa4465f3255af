#include "storage/index.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdint>
#include <random>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/db_key.h"

namespace lavik {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kScale = 10;  // sanitizers run the same tests on a tenth of the keys
#else
constexpr size_t kScale = 1;
#endif

// A random non-zero fingerprint; loc words are non-zero and keep bit 63 clear.
uint64_t RandomFp(std::mt19937_64& rng) { return rng() | 1; }
uint64_t LocFor(uint64_t fp) { return (fp >> 1 | 1) & ~Index::kReservedLocBit; }

TEST(IndexTest, FingerprintIsXxh3WithTheDatabaseAndNeverZero) {
  // Database 0: XXH3 with bit 0 clear.
  EXPECT_EQ(Index::Fingerprint("hello"), XXH3_64bits("hello", 5) & ~uint64_t{1});
  EXPECT_EQ(Index::Fingerprint(""), XXH3_64bits("", 0) & ~uint64_t{1});
  EXPECT_EQ(Index::FpDb(Index::Fingerprint("hello")), 0);
  // Database d > 0: bit 0 set, d in bits 1..4, the rest XXH3 of the stored key.
  const std::string stored = DbKey(9, "hello");
  const uint64_t fp = Index::Fingerprint(stored);
  EXPECT_EQ(fp & 1, 1u);
  EXPECT_EQ(Index::FpDb(fp), 9);
  EXPECT_EQ(fp & ~Index::kDbMask, XXH3_64bits(stored.data(), stored.size()) & ~Index::kDbMask);
  // A database-0 key that starts with the prefix is escaped, and stays in database 0.
  EXPECT_EQ(Index::FpDb(Index::Fingerprint(DbKey(0, "\xff\xfd\x03x"))), 0);
  EXPECT_NE(Index::Fingerprint("a"), Index::Fingerprint("b"));
  for (int i = 0; i < 1000; ++i) EXPECT_NE(Index::Fingerprint(std::to_string(i)), 0u);
}

TEST(IndexTest, EmptyIndex) {
  Index index;
  uint64_t loc = 0, fp = 0;
  EXPECT_EQ(index.size(), 0u);
  EXPECT_FALSE(index.Get(1, &loc));
  EXPECT_FALSE(index.Set(1, 5));
  EXPECT_FALSE(index.Erase(1, &loc));
  EXPECT_FALSE(index.Random(12345, &fp, &loc));
  int visited = 0;
  EXPECT_EQ(index.Scan(0, 10, [&](uint64_t, uint64_t) { ++visited; }), 0u);
  index.ForEach([&](uint64_t, uint64_t) { ++visited; });
  EXPECT_EQ(visited, 0);
  EXPECT_EQ(index.Validate(), "");
  EXPECT_LE(index.memory_bytes(), 16384u);
}

TEST(IndexTest, UpsertGetSetErase) {
  Index index;
  uint64_t loc = 0;
  EXPECT_EQ(index.Upsert(42, 7), 0u);
  EXPECT_EQ(index.size(), 1u);
  ASSERT_TRUE(index.Get(42, &loc));
  EXPECT_EQ(loc, 7u);
  EXPECT_EQ(index.Upsert(42, 9), 7u);  // replace returns the previous location
  EXPECT_EQ(index.size(), 1u);
  EXPECT_TRUE(index.Set(42, (uint64_t{1} << 63) - 1));  // every caller bit survives
  ASSERT_TRUE(index.Get(42, &loc));
  EXPECT_EQ(loc, (uint64_t{1} << 63) - 1);
  EXPECT_FALSE(index.Set(43, 1));
  EXPECT_FALSE(index.Get(43, &loc));
  EXPECT_TRUE(index.Erase(42, &loc));
  EXPECT_EQ(loc, (uint64_t{1} << 63) - 1);
  EXPECT_FALSE(index.Erase(42, nullptr));
  EXPECT_FALSE(index.Get(42, &loc));
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Validate(), "");
}

// Random inserts, replaces, sets, erases and lookups, checked against std::unordered_map.
TEST(IndexTest, MatchesUnorderedMap) {
  std::mt19937_64 rng(1);
  Index index;
  std::unordered_map<uint64_t, uint64_t> model;
  std::vector<uint64_t> keys;        // every fp ever inserted, to pick present and absent ones
  const size_t n = 500000 / kScale;  // then 2n mixed operations: 1.5M in all
  model.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t fp = RandomFp(rng);
    keys.push_back(fp);
    model[fp] = LocFor(fp);
    ASSERT_EQ(index.Upsert(fp, LocFor(fp)), 0u);
  }
  ASSERT_EQ(index.size(), model.size());
  for (const auto& [fp, want] : model) {
    uint64_t loc = 0;
    ASSERT_TRUE(index.Get(fp, &loc));
    ASSERT_EQ(loc, want);
  }
  ASSERT_EQ(index.Validate(), "");

  for (size_t i = 0; i < 2 * n; ++i) {
    const uint64_t r = rng();
    const uint64_t fp = (r & 7) < 5 ? keys[rng() % keys.size()] : RandomFp(rng);
    const uint64_t loc = (rng() >> 1) | 1;
    auto it = model.find(fp);
    switch (r >> 61) {
      case 0:
      case 1:
      case 2: {  // upsert
        const uint64_t old = index.Upsert(fp, loc);
        ASSERT_EQ(old, it == model.end() ? 0 : it->second);
        model[fp] = loc;
        keys.push_back(fp);
        break;
      }
      case 3:
      case 4: {  // erase
        uint64_t old = 0;
        ASSERT_EQ(index.Erase(fp, &old), it != model.end());
        if (it != model.end()) {
          ASSERT_EQ(old, it->second);
          model.erase(it);
        }
        break;
      }
      case 5: {  // set
        ASSERT_EQ(index.Set(fp, loc), it != model.end());
        if (it != model.end()) it->second = loc;
        break;
      }
      default: {  // get
        uint64_t got = 0;
        ASSERT_EQ(index.Get(fp, &got), it != model.end());
        if (it != model.end()) {
          ASSERT_EQ(got, it->second);
        }
      }
    }
  }
  ASSERT_EQ(index.size(), model.size());
  ASSERT_EQ(index.Validate(), "");
  size_t seen = 0;
  index.ForEach([&](uint64_t fp, uint64_t loc) {
    ++seen;
    auto it = model.find(fp);
    ASSERT_NE(it, model.end());
    EXPECT_EQ(it->second, loc);
  });
  EXPECT_EQ(seen, model.size());
}

// Fingerprints sharing their top 8 bits all land in 1/256 of the directory: segments there grow
// and split again and again, and the directory doubles well past depth 8.
TEST(IndexTest, SharedPrefixForcesSplitsAndDirectoryDoubling) {
  std::mt19937_64 rng(2);
  Index index;
  const uint64_t prefix = uint64_t{0xBE} << 56;
  std::vector<uint64_t> fps;
  const size_t n = 300000 / kScale;
  for (size_t i = 0; i < n; ++i) {
    fps.push_back(prefix | (rng() >> 8) | 1);
    index.Upsert(fps.back(), LocFor(fps.back()));
  }
  EXPECT_GT(index.global_depth(), kScale == 1 ? 14 : 11);
  EXPECT_GT(index.segment_count(), 8 + n / 4096);
  ASSERT_EQ(index.Validate(), "");
  for (uint64_t fp : fps) {
    uint64_t loc = 0;
    ASSERT_TRUE(index.Get(fp, &loc));
    ASSERT_EQ(loc, LocFor(fp));
  }
  // The directory is mostly pointers to a few near-empty segments: memory stays bounded.
  EXPECT_LE(index.memory_bytes() / index.size(), 32u);
}

// Fingerprints equal in their top 40 bits share a home bucket in every segment the index can
// build: inserts probe, mark overflow and pass reach 7; past the probe limit the segment splits
// until the directory limit holds it, and then it grows past its usual size while inserts probe
// without limit. Everything stays findable and erasable.
TEST(IndexTest, SharedHomeBucketForcesProbingAndOverflowMarks) {
  std::mt19937_64 rng(3);
  Index index;
  for (int i = 0; i < 2000; ++i) index.Upsert(RandomFp(rng), 5);  // neighbours to probe past
  const uint64_t prefix = 0x123456789Aull << 24;
  std::vector<uint64_t> same;
  for (uint64_t i = 1; i <= 4000; ++i) {
    same.push_back(prefix | i);
    ASSERT_EQ(index.Upsert(same.back(), LocFor(same.back())), 0u);
    if (i == 20 || i == 500 || i == 4000) {
      ASSERT_EQ(index.Validate(), "") << i;
    }
  }
  EXPECT_LE(index.global_depth(), 13);  // the directory limit held
  EXPECT_LE(index.memory_bytes(), size_t{4} << 20);
  for (uint64_t fp : same) {
    uint64_t loc = 0;
    ASSERT_TRUE(index.Get(fp, &loc));
    ASSERT_EQ(loc, LocFor(fp));
  }
  uint64_t loc = 0;
  EXPECT_FALSE(index.Get(prefix | 5000, &loc));  // a miss in the crowd
  // Erase every other one (backward shifts through the crowd), then put them back.
  for (size_t i = 0; i < same.size(); i += 2) ASSERT_TRUE(index.Erase(same[i], nullptr));
  ASSERT_EQ(index.Validate(), "");
  for (size_t i = 0; i < same.size(); ++i) ASSERT_EQ(index.Get(same[i], &loc), i % 2 == 1);
  for (size_t i = 0; i < same.size(); i += 2) ASSERT_EQ(index.Upsert(same[i], 3), 0u);
  ASSERT_EQ(index.Validate(), "");
  EXPECT_EQ(index.size(), 2000u + same.size());
}

// A small crowd in one bucket of a one-segment index: probing without any growth, exact marks.
TEST(IndexTest, SmallCrowdProbesWithoutGrowth) {
  Index index;
  const size_t bytes = index.memory_bytes();
  const uint64_t prefix = 0xABCDEF0123ull << 24;
  for (uint64_t i = 1; i <= 40; ++i) index.Upsert(prefix | i, i);
  EXPECT_EQ(index.memory_bytes(), bytes);
  EXPECT_EQ(index.segment_count(), 1u);
  ASSERT_EQ(index.Validate(), "");
  for (uint64_t i = 1; i <= 40; i += 3) ASSERT_TRUE(index.Erase(prefix | i, nullptr));
  ASSERT_EQ(index.Validate(), "");
  for (uint64_t i = 1; i <= 40; ++i) {
    uint64_t loc = 0;
    ASSERT_EQ(index.Get(prefix | i, &loc), (i - 1) % 3 != 0) << i;
  }
}

TEST(IndexTest, EraseThenReinsertAndShrink) {
  std::mt19937_64 rng(4);
  Index index;
  std::vector<uint64_t> fps(400000 / kScale);
  for (uint64_t& fp : fps) {
    fp = RandomFp(rng);
    index.Upsert(fp, LocFor(fp));
  }
  const size_t full = index.memory_bytes();
  for (size_t i = 0; i < fps.size(); ++i) {
    if (i % 10 != 0) {
      ASSERT_TRUE(index.Erase(fps[i], nullptr));
    }
  }
  ASSERT_EQ(index.Validate(), "");
  EXPECT_LT(index.memory_bytes(), full / 3);  // segments shrank
  for (size_t i = 0; i < fps.size(); ++i) {
    uint64_t loc = 0;
    ASSERT_EQ(index.Get(fps[i], &loc), i % 10 == 0);
  }
  for (size_t i = 0; i < fps.size(); ++i) {
    if (i % 10 != 0) {
      ASSERT_EQ(index.Upsert(fps[i], LocFor(fps[i])), 0u);
    }
  }
  ASSERT_EQ(index.Validate(), "");
  EXPECT_EQ(index.size(), fps.size());
  for (uint64_t fp : fps) {
    uint64_t loc = 0;
    ASSERT_TRUE(index.Get(fp, &loc));
    ASSERT_EQ(loc, LocFor(fp));
  }
}

// Replacing every key many times over (erase one, insert another) must not creep memory upward.
TEST(IndexTest, ChurnKeepsMemoryFlat) {
  std::mt19937_64 rng(5);
  Index index;
  std::vector<uint64_t> live(200000 / kScale);
  for (uint64_t& fp : live) {
    fp = RandomFp(rng);
    index.Upsert(fp, LocFor(fp));
  }
  const double before = double(index.memory_bytes()) / index.size();
  for (size_t round = 0; round < 3 * live.size(); ++round) {
    uint64_t& victim = live[rng() % live.size()];
    ASSERT_TRUE(index.Erase(victim, nullptr));
    victim = RandomFp(rng);
    index.Upsert(victim, LocFor(victim));
  }
  ASSERT_EQ(index.Validate(), "");
  EXPECT_LE(double(index.memory_bytes()) / index.size(), before * 1.1);
}

TEST(IndexTest, ScanVisitsEachEntryOnceWithoutChanges) {
  std::mt19937_64 rng(6);
  Index index;
  std::unordered_set<uint64_t> all;
  for (size_t i = 0; i < 100000 / kScale; ++i) {
    const uint64_t fp = RandomFp(rng);
    all.insert(fp);
    index.Upsert(fp, LocFor(fp));
  }
  std::unordered_set<uint64_t> seen;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    const uint64_t from = cursor;
    cursor = index.Scan(cursor, 100, [&](uint64_t fp, uint64_t loc) {
      EXPECT_TRUE(seen.insert(fp).second) << "visited twice";
      EXPECT_EQ(loc, LocFor(fp));
      EXPECT_GE(fp, from);
    });
    if (cursor != 0) {
      EXPECT_GT(cursor, from);
    }
    ++calls;
  } while (cursor != 0);
  EXPECT_EQ(seen, all);
  EXPECT_GT(calls, int(all.size() / 200));  // the count was honoured roughly
}

// Redis's SCAN guarantee: with inserts (splits, growth) and erases (shrinks) between calls, an
// entry present for the whole iteration is visited at least once. Here it is even exactly once:
// each call visits the range [cursor in, cursor out) of fingerprints.
TEST(IndexTest, ScanGuaranteeWithChangesBetweenCalls) {
  std::mt19937_64 rng(7);
  Index index;
  std::vector<uint64_t> stable, churn;
  for (size_t i = 0; i < 50000 / kScale; ++i) {
    stable.push_back(RandomFp(rng));
    index.Upsert(stable.back(), LocFor(stable.back()));
    churn.push_back(RandomFp(rng));
    index.Upsert(churn.back(), LocFor(churn.back()));
  }
  std::unordered_set<uint64_t> seen;
  uint64_t cursor = 0;
  size_t calls = 0;
  do {
    std::unordered_set<uint64_t> this_call;
    const uint64_t from = cursor;
    cursor = index.Scan(cursor, 50, [&](uint64_t fp, uint64_t) {
      EXPECT_TRUE(this_call.insert(fp).second) << "visited twice in one call";
      EXPECT_GE(fp, from);
      // Calls cover disjoint fingerprint ranges, so even across calls nothing repeats.
      EXPECT_TRUE(seen.insert(fp).second) << "visited twice";
    });
    if (cursor != 0) {
      for (uint64_t fp : this_call) EXPECT_LT(fp, cursor);
    }
    // Between calls: the index grows (splits) in the first half of the scan and shrinks (mostly
    // erases) in the second.
    const bool grow = calls++ < 300;
    for (int k = 0; k < 200; ++k) {
      if (grow || rng() % 4 == 0) {
        churn.push_back(RandomFp(rng));
        index.Upsert(churn.back(), 1);
      } else if (!churn.empty()) {
        const size_t at = rng() % churn.size();
        index.Erase(churn[at], nullptr);
        churn[at] = churn.back();
        churn.pop_back();
      }
    }
  } while (cursor != 0);
  for (uint64_t fp : stable) ASSERT_TRUE(seen.count(fp)) << "a stable entry was never visited";
  ASSERT_EQ(index.Validate(), "");
}

TEST(IndexTest, RandomPicksExistingEntriesBroadly) {
  std::mt19937_64 rng(8);
  Index index;
  std::unordered_set<uint64_t> all;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t fp = RandomFp(rng);
    all.insert(fp);
    index.Upsert(fp, LocFor(fp));
  }
  std::unordered_set<uint64_t> picked;
  for (int i = 0; i < 20000; ++i) {
    uint64_t fp = 0, loc = 0;
    ASSERT_TRUE(index.Random(rng(), &fp, &loc));
    ASSERT_TRUE(all.count(fp));
    ASSERT_EQ(loc, LocFor(fp));
    picked.insert(fp);
  }
  EXPECT_GE(picked.size(), 900u);
  // With a single entry left in a large index, Random walks empty segments to find it.
  for (uint64_t fp : all) index.Erase(fp, nullptr);
  index.Upsert(77, 1);
  uint64_t fp = 0, loc = 0;
  ASSERT_TRUE(index.Random(rng(), &fp, &loc));
  EXPECT_EQ(fp, 77u);
}

TEST(IndexTest, ClearAndMove) {
  std::mt19937_64 rng(9);
  Index index;
  for (int i = 0; i < 100000; ++i) index.Upsert(RandomFp(rng), 3);
  const size_t small = Index().memory_bytes();
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.memory_bytes(), small);
  uint64_t loc = 0;
  index.Upsert(5, 6);
  ASSERT_EQ(index.Validate(), "");
  Index moved(std::move(index));
  ASSERT_TRUE(moved.Get(5, &loc));
  EXPECT_EQ(loc, 6u);
  EXPECT_EQ(index.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty, usable
  index.Upsert(8, 9);
  EXPECT_TRUE(index.Get(8, &loc));
  moved = std::move(index);
  EXPECT_TRUE(moved.Get(8, &loc));
  EXPECT_FALSE(moved.Get(5, &loc));
}

// The memory budget: at 2M keys, at most 22 bytes per key (entries are 16) including all slack.
TEST(IndexTest, MemoryPerKeyAtTwoMillionKeys) {
  std::mt19937_64 rng(10);
  Index index;
  const size_t n = 2000000 / kScale;
  for (size_t i = 0; i < n; ++i) index.Upsert(RandomFp(rng), 1);
  ASSERT_EQ(index.size(), n);
  const double per_key = double(index.memory_bytes()) / index.size();
  EXPECT_LE(per_key, 22.0);
  RecordProperty("bytes_per_key_x100", static_cast<int>(per_key * 100));
}

}  // namespace
}  // namespace lavik
