#include "storage/keyspace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace lavik {
namespace {

std::string Key(int i) { return "key:" + std::to_string(i); }

// The table is a power of two, at least as large as the key count (it grows before it is full)
// and not much emptier than 1/8 (it shrinks lazily on erase).
void ExpectHealthyTable(const Keyspace& ks) {
  EXPECT_TRUE(std::has_single_bit(ks.buckets())) << ks.buckets();
  EXPECT_GE(ks.buckets(), 4u);
  EXPECT_LE(ks.size(), ks.buckets());
  if (ks.buckets() > 8) EXPECT_GE(ks.size() * 16, ks.buckets()) << ks.size();
}

// Every key the table holds, by walking a full scan on an unchanging table.
std::vector<std::string> AllKeys(const Keyspace& ks) {
  std::vector<std::string> keys;
  uint64_t cursor = 0;
  do {
    cursor = ks.ScanBucket(cursor, [&](Entry* e) { keys.emplace_back(e->key()); });
  } while (cursor != 0);
  return keys;
}

TEST(KeyspaceTest, TypeNames) {
  EXPECT_EQ(TypeName(ValueType::kString), "string");
  EXPECT_EQ(TypeName(ValueType::kList), "list");
  EXPECT_EQ(TypeName(ValueType::kSet), "set");
  EXPECT_EQ(TypeName(ValueType::kZSet), "zset");
  EXPECT_EQ(TypeName(ValueType::kHash), "hash");
  EXPECT_EQ(TypeName(ValueType::kStream), "stream");
}

TEST(KeyspaceTest, EmptyTable) {
  Keyspace ks;
  EXPECT_EQ(ks.size(), 0u);
  EXPECT_EQ(ks.expires(), 0u);
  EXPECT_EQ(ks.buckets(), 4u);
  EXPECT_EQ(ks.Find("nope"), nullptr);
  EXPECT_EQ(ks.Random(1), nullptr);
  EXPECT_EQ(ks.RandomExpiring(1), nullptr);
  EXPECT_TRUE(AllKeys(ks).empty());
}

TEST(KeyspaceTest, InsertCreatesEmptyStringEntry) {
  Keyspace ks;
  Entry* e = ks.Insert("hello");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->key(), "hello");
  EXPECT_EQ(e->type, ValueType::kString);
  EXPECT_EQ(e->value, "");
  EXPECT_EQ(e->expire_ms, 0);
  EXPECT_EQ(e->hash, Keyspace::Hash("hello"));
  EXPECT_EQ(ks.Find("hello"), e);
  EXPECT_EQ(ks.size(), 1u);
}

TEST(KeyspaceTest, BinaryAndEmptyKeys) {
  Keyspace ks;
  const std::string with_nul("a\0b", 3);
  const std::string other_nul("a\0c", 3);
  Entry* empty = ks.Insert("");
  Entry* nul = ks.Insert(with_nul);
  Entry* nul2 = ks.Insert(other_nul);
  EXPECT_EQ(ks.Find(""), empty);
  EXPECT_EQ(ks.Find(with_nul), nul);
  EXPECT_EQ(ks.Find(other_nul), nul2);
  EXPECT_EQ(ks.Find("a"), nullptr);
  EXPECT_EQ(nul->key(), with_nul);
  EXPECT_EQ(empty->key().size(), 0u);
  const std::string big(100000, 'k');
  Entry* b = ks.Insert(big);
  EXPECT_EQ(ks.Find(big), b);
  EXPECT_EQ(b->key(), big);
}

TEST(KeyspaceTest, MillionKeysInsertFindOverwriteErase) {
  constexpr int kKeys = 1000000;
  Keyspace ks;
  for (int i = 0; i < kKeys; ++i) {
    const std::string k = Key(i);
    ASSERT_EQ(ks.Find(k), nullptr);
    ks.Insert(k)->value = "v" + std::to_string(i);
  }
  EXPECT_EQ(ks.size(), static_cast<size_t>(kKeys));
  ExpectHealthyTable(ks);

  // Overwrite every third value in place.
  for (int i = 0; i < kKeys; i += 3) {
    Entry* e = ks.Find(Key(i));
    ASSERT_NE(e, nullptr) << i;
    e->value = "w" + std::to_string(i);
  }
  // Erase the odd keys.
  for (int i = 1; i < kKeys; i += 2) {
    Entry* e = ks.Find(Key(i));
    ASSERT_NE(e, nullptr) << i;
    ks.Erase(e);
  }
  EXPECT_EQ(ks.size(), static_cast<size_t>(kKeys / 2));
  ExpectHealthyTable(ks);

  for (int i = 0; i < kKeys; ++i) {
    Entry* e = ks.Find(Key(i));
    if (i % 2 == 1) {
      ASSERT_EQ(e, nullptr) << i;
      continue;
    }
    ASSERT_NE(e, nullptr) << i;
    ASSERT_EQ(e->key(), Key(i));
    ASSERT_EQ(e->value, (i % 3 == 0 ? "w" : "v") + std::to_string(i)) << i;
  }
  // Re-insert some erased keys: they come back empty.
  for (int i = 1; i < 1000; i += 2) EXPECT_EQ(ks.Insert(Key(i))->value, "");
  EXPECT_EQ(ks.size(), static_cast<size_t>(kKeys / 2 + 500));
}

TEST(KeyspaceTest, ResizesUpAndDown) {
  Keyspace ks;
  size_t last_buckets = ks.buckets();
  int grows = 0;
  for (int i = 0; i < 10000; ++i) {
    ks.Insert(Key(i));
    if (ks.buckets() != last_buckets) {
      EXPECT_EQ(ks.buckets(), last_buckets * 2);  // doubles, one step at a time
      last_buckets = ks.buckets();
      ++grows;
    }
    EXPECT_LE(ks.size(), ks.buckets());
  }
  EXPECT_GE(grows, 11);  // 4 -> 16384
  EXPECT_GE(ks.buckets(), 10000u);
  ExpectHealthyTable(ks);

  int shrinks = 0;
  for (int i = 0; i < 10000; ++i) {
    ks.Erase(ks.Find(Key(i)));
    if (ks.buckets() != last_buckets) {
      EXPECT_EQ(ks.buckets() * 2, last_buckets);
      last_buckets = ks.buckets();
      ++shrinks;
    }
    ExpectHealthyTable(ks);
    if (HasFailure()) return;
  }
  EXPECT_GE(shrinks, 10);
  EXPECT_EQ(ks.size(), 0u);
  EXPECT_LE(ks.buckets(), 8u);

  // Still usable after shrinking all the way.
  for (int i = 0; i < 100; ++i) ks.Insert(Key(i));
  for (int i = 0; i < 100; ++i) EXPECT_NE(ks.Find(Key(i)), nullptr);
}

TEST(KeyspaceTest, ClearEmptiesEverything) {
  Keyspace ks;
  for (int i = 0; i < 1000; ++i) {
    Entry* e = ks.Insert(Key(i));
    if (i % 2 == 0) ks.SetExpire(e, 1000 + i);
  }
  ks.Clear();
  EXPECT_EQ(ks.size(), 0u);
  EXPECT_EQ(ks.expires(), 0u);
  EXPECT_EQ(ks.buckets(), 4u);
  EXPECT_EQ(ks.Find(Key(0)), nullptr);
  EXPECT_EQ(ks.RandomExpiring(0), nullptr);
  ks.SetExpire(ks.Insert("again"), 5);
  EXPECT_EQ(ks.expires(), 1u);
}

// The set of entries reachable through RandomExpiring: rnd % expires() indexes the list directly,
// so rnd = 0..expires()-1 enumerates it.
std::set<Entry*> ExpiringSet(const Keyspace& ks) {
  std::set<Entry*> out;
  for (uint64_t r = 0; r < ks.expires(); ++r) out.insert(ks.RandomExpiring(r));
  return out;
}

TEST(KeyspaceTest, SetExpireBookkeeping) {
  Keyspace ks;
  std::vector<Entry*> entries;
  for (int i = 0; i < 1000; ++i) entries.push_back(ks.Insert(Key(i)));
  for (int i = 0; i < 1000; ++i) ks.SetExpire(entries[i], 5000 + i);
  EXPECT_EQ(ks.expires(), 1000u);

  // Changing an existing expiry does not add a second record.
  ks.SetExpire(entries[0], 99);
  EXPECT_EQ(entries[0]->expire_ms, 99);
  EXPECT_EQ(ks.expires(), 1000u);

  // Removing: every other key, in an order that moves records around inside the list.
  for (int i = 999; i >= 0; i -= 2) ks.SetExpire(entries[i], 0);
  EXPECT_EQ(ks.expires(), 500u);
  ks.SetExpire(entries[1], 0);  // already without expiry: no-op
  EXPECT_EQ(ks.expires(), 500u);

  std::set<Entry*> expected;
  for (int i = 0; i < 1000; i += 2) expected.insert(entries[i]);
  EXPECT_EQ(ExpiringSet(ks), expected);
  for (Entry* e : ExpiringSet(ks)) EXPECT_NE(e->expire_ms, 0);

  // Erasing a key with an expiry drops its record too.
  ks.Erase(entries[0]);
  ks.Erase(entries[1]);  // no expiry
  EXPECT_EQ(ks.expires(), 499u);
  expected.erase(entries[0]);
  EXPECT_EQ(ExpiringSet(ks), expected);
}

TEST(KeyspaceTest, ExpireBookkeepingUnderRandomChurn) {
  Keyspace ks;
  std::mt19937_64 rng(7);
  std::unordered_map<std::string, int64_t> model;  // key -> expire_ms
  for (int step = 0; step < 50000; ++step) {
    const std::string k = Key(static_cast<int>(rng() % 2000));
    Entry* e = ks.Find(k);
    switch (rng() % 4) {
      case 0:
        if (e == nullptr) {
          ks.Insert(k);
          model[k] = 0;
        }
        break;
      case 1:
        if (e != nullptr) {
          ks.Erase(e);
          model.erase(k);
        }
        break;
      case 2:
        if (e != nullptr) {
          const int64_t when = 1 + static_cast<int64_t>(rng() % 100000);
          ks.SetExpire(e, when);
          model[k] = when;
        }
        break;
      default:
        if (e != nullptr) {
          ks.SetExpire(e, 0);
          model[k] = 0;
        }
        break;
    }
  }
  size_t with_ttl = 0;
  for (const auto& [k, when] : model) {
    Entry* e = ks.Find(k);
    ASSERT_NE(e, nullptr) << k;
    EXPECT_EQ(e->expire_ms, when) << k;
    if (when != 0) ++with_ttl;
  }
  EXPECT_EQ(ks.size(), model.size());
  EXPECT_EQ(ks.expires(), with_ttl);
  std::set<Entry*> expected;
  for (const auto& [k, when] : model) {
    if (when != 0) expected.insert(ks.Find(k));
  }
  EXPECT_EQ(ExpiringSet(ks), expected);
}

TEST(KeyspaceTest, RekeyKeepsValueTypeAndExpiry) {
  Keyspace ks;
  Entry* e = ks.Insert("old");
  e->type = ValueType::kHash;
  e->value = std::string(1000, 'x');
  ks.SetExpire(e, 123456);
  ks.Insert("other");
  const size_t expires_before = ks.expires();

  Entry* n = ks.Rekey(e, "new");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(ks.Find("old"), nullptr);
  EXPECT_EQ(ks.Find("new"), n);
  EXPECT_EQ(n->key(), "new");
  EXPECT_EQ(n->type, ValueType::kHash);
  EXPECT_EQ(n->value, std::string(1000, 'x'));
  EXPECT_EQ(n->expire_ms, 123456);
  EXPECT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks.expires(), expires_before);
  EXPECT_EQ(ExpiringSet(ks), std::set<Entry*>{n});

  // Without expiry, it stays without.
  Entry* o = ks.Rekey(ks.Find("other"), "other2");
  EXPECT_EQ(o->expire_ms, 0);
  EXPECT_EQ(ks.expires(), 1u);
}

TEST(KeyspaceTest, RekeyManyKeysAcrossResizes) {
  Keyspace ks;
  for (int i = 0; i < 5000; ++i) {
    Entry* e = ks.Insert(Key(i));
    e->value = std::to_string(i);
    if (i % 3 == 0) ks.SetExpire(e, 1000 + i);
  }
  for (int i = 0; i < 5000; ++i) ks.Rekey(ks.Find(Key(i)), "renamed:" + std::to_string(i));
  EXPECT_EQ(ks.size(), 5000u);
  EXPECT_EQ(ks.expires(), 1667u);
  for (int i = 0; i < 5000; ++i) {
    EXPECT_EQ(ks.Find(Key(i)), nullptr);
    Entry* e = ks.Find("renamed:" + std::to_string(i));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->value, std::to_string(i));
    EXPECT_EQ(e->expire_ms, i % 3 == 0 ? 1000 + i : 0);
  }
}

TEST(KeyspaceTest, ScanVisitsEveryKeyOnAStableTable) {
  Keyspace ks;
  for (int i = 0; i < 3000; ++i) ks.Insert(Key(i));
  std::vector<std::string> keys = AllKeys(ks);
  EXPECT_EQ(keys.size(), 3000u);  // no duplicates when nothing changes
  std::unordered_set<std::string> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), 3000u);
}

// Scans `ks` with mutations between ScanBucket calls; `mutate(step)` runs before each call.
// Returns how many times each key was seen.
template <typename Mutate>
std::unordered_map<std::string, int> ScanWhileMutating(Keyspace& ks, Mutate mutate,
                                                       size_t* min_buckets, size_t* max_buckets) {
  std::unordered_map<std::string, int> seen;
  uint64_t cursor = 0;
  *min_buckets = *max_buckets = ks.buckets();
  for (int step = 0;; ++step) {
    mutate(step);
    *min_buckets = std::min(*min_buckets, ks.buckets());
    *max_buckets = std::max(*max_buckets, ks.buckets());
    cursor = ks.ScanBucket(cursor, [&](Entry* e) { ++seen[std::string(e->key())]; });
    if (cursor == 0) break;
    EXPECT_LT(step, 10000000) << "scan does not terminate";
    if (step >= 10000000) break;
  }
  return seen;
}

TEST(KeyspaceTest, ScanGuaranteeWhileTableGrowsThenShrinks) {
  Keyspace ks;
  constexpr int kStable = 500;
  for (int i = 0; i < kStable; ++i) ks.Insert("stable:" + std::to_string(i));
  const size_t start_buckets = ks.buckets();  // 512
  int churn = 0;
  std::vector<std::string> churn_keys;
  size_t min_b = 0;
  size_t max_b = 0;
  auto seen = ScanWhileMutating(
      ks,
      [&](int step) {
        if (step < 40) {
          // Grow: 16x the stable set over the first 40 steps.
          for (int j = 0; j < 200; ++j) {
            churn_keys.push_back("churn:" + std::to_string(churn++));
            ks.Insert(churn_keys.back());
          }
        } else if (!churn_keys.empty()) {
          // Shrink: drop the churn keys again, halving the table several times.
          for (int j = 0; j < 400 && !churn_keys.empty(); ++j) {
            ks.Erase(ks.Find(churn_keys.back()));
            churn_keys.pop_back();
          }
        }
      },
      &min_b, &max_b);
  EXPECT_GE(max_b, start_buckets * 8) << "the table did not grow during the scan";
  EXPECT_LE(ks.buckets() * 4, max_b) << "the table did not shrink during the scan";
  for (int i = 0; i < kStable; ++i) {
    EXPECT_GE(seen["stable:" + std::to_string(i)], 1) << i;
  }
}

TEST(KeyspaceTest, ScanGuaranteeWhileTableShrinksThenGrows) {
  Keyspace ks;
  constexpr int kStable = 64;
  for (int i = 0; i < kStable; ++i) ks.Insert("stable:" + std::to_string(i));
  std::vector<std::string> filler;
  for (int i = 0; i < 20000; ++i) {
    filler.push_back("filler:" + std::to_string(i));
    ks.Insert(filler.back());
  }
  const size_t start_buckets = ks.buckets();
  size_t min_b = 0;
  size_t max_b = 0;
  int regrown = 0;
  auto seen = ScanWhileMutating(
      ks,
      [&](int step) {
        if (!filler.empty()) {
          // Shrink from 32768 buckets toward 64 within the first few dozen steps.
          for (int j = 0; j < 1000 && !filler.empty(); ++j) {
            ks.Erase(ks.Find(filler.back()));
            filler.pop_back();
          }
        } else if (step % 4 == 0 && regrown < 20000) {
          for (int j = 0; j < 500; ++j) ks.Insert("regrow:" + std::to_string(regrown++));
        }
      },
      &min_b, &max_b);
  EXPECT_LE(min_b * 64, start_buckets) << "the table did not shrink during the scan";
  for (int i = 0; i < kStable; ++i) {
    EXPECT_GE(seen["stable:" + std::to_string(i)], 1) << i;
  }
}

TEST(KeyspaceTest, ScanGuaranteeUnderRandomChurn) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(seed);
    Keyspace ks;
    constexpr int kStable = 200;
    for (int i = 0; i < kStable; ++i) ks.Insert("stable:" + std::to_string(i));
    std::vector<std::string> volatile_keys;
    int next = 0;
    size_t min_b = 0;
    size_t max_b = 0;
    auto seen = ScanWhileMutating(
        ks,
        [&](int step) {
          // Bursty phases: big inserts or big deletes, so the table jumps several sizes. The
          // churn stops after 200 steps to keep the test fast; the scan then finishes.
          if (step >= 200) return;
          const int n = static_cast<int>(rng() % 400);
          if (rng() % 2 == 0) {
            for (int j = 0; j < n; ++j) {
              volatile_keys.push_back("v:" + std::to_string(next++));
              ks.Insert(volatile_keys.back());
            }
          } else {
            for (int j = 0; j < n && !volatile_keys.empty(); ++j) {
              const size_t pick = rng() % volatile_keys.size();
              std::swap(volatile_keys[pick], volatile_keys.back());
              ks.Erase(ks.Find(volatile_keys.back()));
              volatile_keys.pop_back();
            }
          }
        },
        &min_b, &max_b);
    for (int i = 0; i < kStable; ++i) {
      ASSERT_GE(seen["stable:" + std::to_string(i)], 1) << "seed " << seed << " key " << i;
    }
  }
}

TEST(KeyspaceTest, RandomReturnsLiveEntries) {
  Keyspace ks;
  EXPECT_EQ(ks.Random(0), nullptr);
  Entry* only = ks.Insert("only");
  for (uint64_t r = 0; r < 100; ++r) EXPECT_EQ(ks.Random(r), only);

  for (int i = 0; i < 100; ++i) ks.Insert(Key(i));
  std::unordered_set<Entry*> hit;
  for (uint64_t r = 0; r < 20000; ++r) {
    Entry* e = ks.Random(r * 0x9E3779B97F4A7C15ULL);
    ASSERT_NE(e, nullptr);
    ASSERT_EQ(ks.Find(e->key()), e);
    hit.insert(e);
  }
  EXPECT_EQ(hit.size(), 101u);  // uniform enough to reach every key

  // After erasing down to a handful of keys in a table that has not shrunk all the way.
  for (int i = 0; i < 98; ++i) ks.Erase(ks.Find(Key(i)));
  for (uint64_t r = 0; r < 1000; ++r) {
    Entry* e = ks.Random(r);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(ks.Find(e->key()), e);
  }
}

TEST(KeyspaceTest, RandomExpiringReturnsOnlyKeysWithTtl) {
  Keyspace ks;
  for (int i = 0; i < 100; ++i) ks.Insert(Key(i));
  EXPECT_EQ(ks.RandomExpiring(5), nullptr);
  Entry* e = ks.Find(Key(42));
  ks.SetExpire(e, 77);
  for (uint64_t r = 0; r < 50; ++r) EXPECT_EQ(ks.RandomExpiring(r), e);
  ks.SetExpire(ks.Find(Key(7)), 88);
  for (uint64_t r = 0; r < 50; ++r) {
    Entry* x = ks.RandomExpiring(r * 0x2545F4914F6CDD1DULL);
    ASSERT_NE(x, nullptr);
    EXPECT_NE(x->expire_ms, 0);
  }
  ks.SetExpire(ks.Find(Key(42)), 0);
  ks.SetExpire(ks.Find(Key(7)), 0);
  EXPECT_EQ(ks.RandomExpiring(3), nullptr);
}

}  // namespace
}  // namespace lavik
