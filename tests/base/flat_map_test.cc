#include "base/flat_map.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace lavik {
namespace {

TEST(FlatMapTest, PutFindErase) {
  FlatMap<int> m;
  EXPECT_EQ(m.Find(7), nullptr);
  m.Put(7, 1);
  m.Put(7, 2);
  ASSERT_NE(m.Find(7), nullptr);
  EXPECT_EQ(*m.Find(7), 2);
  EXPECT_EQ(m.size(), 1u);
  EXPECT_TRUE(m.Erase(7));
  EXPECT_FALSE(m.Erase(7));
  EXPECT_EQ(m.Find(7), nullptr);
  EXPECT_EQ(m.size(), 0u);
}

TEST(FlatMapTest, KeyZeroWorks) {
  FlatMap<int> m;
  m.Put(0, 5);
  m.Put(16, 6);  // shares slot 0's home
  ASSERT_NE(m.Find(0), nullptr);
  EXPECT_EQ(*m.Find(0), 5);
  EXPECT_EQ(*m.Find(16), 6);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_TRUE(m.Erase(0));
  EXPECT_EQ(m.Find(0), nullptr);
  EXPECT_EQ(*m.Find(16), 6);
}

TEST(FlatMapTest, CollidingKeysSurviveErasesInTheirRun) {
  // Keys with equal low bits share a home slot: erasing from the middle of the run must keep
  // every other key findable (backward shift).
  FlatMap<uint64_t> m;
  for (uint64_t i = 1; i <= 12; ++i) m.Put(i << 20, i);
  for (uint64_t i = 1; i <= 12; i += 3) EXPECT_TRUE(m.Erase(i << 20));
  for (uint64_t i = 1; i <= 12; ++i) {
    const uint64_t* v = m.Find(i << 20);
    if ((i - 1) % 3 == 0) {
      EXPECT_EQ(v, nullptr) << i;
    } else {
      ASSERT_NE(v, nullptr) << i;
      EXPECT_EQ(*v, i);
    }
  }
}

TEST(FlatMapTest, MatchesUnorderedMapUnderRandomChurn) {
  FlatMap<uint64_t> m;
  std::unordered_map<uint64_t, uint64_t> ref;
  std::mt19937_64 rng(42);
  for (int op = 0; op < 300000; ++op) {
    // A small key space (and masked low bits) makes collisions and long runs common.
    uint64_t key = (rng() % 5000 + 1) << (op % 2 ? 0 : 12);
    switch (rng() % 3) {
      case 0:
      case 1: {
        uint64_t v = rng();
        m.Put(key, v);
        ref[key] = v;
        break;
      }
      case 2:
        EXPECT_EQ(m.Erase(key), ref.erase(key) == 1);
        break;
    }
  }
  EXPECT_EQ(m.size(), ref.size());
  for (const auto& [k, v] : ref) {
    const uint64_t* got = m.Find(k);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(*got, v);
  }
  m.Clear();
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.Find(ref.begin()->first), nullptr);
}

}  // namespace
}  // namespace lavik
