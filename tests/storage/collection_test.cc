#include "storage/collection.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace lavik {
namespace {

std::map<std::string, std::string> Contents(const CollectionView& v) {
  std::map<std::string, std::string> out;
  for (uint32_t i = 0; i < v.size(); ++i) out[std::string(v.field(i))] = std::string(v.value(i));
  return out;
}

TEST(CollectionTest, EmptyEncodingIsAnEmptyCollection) {
  CollectionView v;
  ASSERT_TRUE(v.Parse("", true));
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(v.Find("a"), -1);
  EXPECT_EQ(v.LowerBound(5), 0u);
  EXPECT_EQ(EncodeCollection({}, false), "");
}

TEST(CollectionTest, SetRoundTripWithEmptyAndBinaryMembers) {
  const std::string binary("\0\r\n\xff", 4);
  std::string enc = EncodeCollection({{"b", {}}, {"", {}}, {binary, {}}, {"a", {}}}, false);
  CollectionView v;
  ASSERT_TRUE(v.Parse(enc, false));
  ASSERT_EQ(v.size(), 4u);
  EXPECT_GE(v.Find(""), 0);
  EXPECT_GE(v.Find(binary), 0);
  EXPECT_GE(v.Find("a"), 0);
  EXPECT_EQ(v.Find("c"), -1);
  EXPECT_EQ(v.Find(std::string("\0", 1)), -1);
  // Sorted by hash: a scan cursor is a hash position.
  for (uint32_t i = 1; i < v.size(); ++i) {
    EXPECT_LE(MemberHash(v.field(i - 1)), MemberHash(v.field(i)));
  }
  // A set encoding is not a hash encoding.
  CollectionView h;
  EXPECT_FALSE(h.Parse(enc, true));
}

TEST(CollectionTest, HashUpsertEraseAndLastChangeWins) {
  std::string enc = EncodeCollection({{"f1", "v1"}, {"f2", ""}, {"f1", "v1b"}}, true);
  CollectionView v;
  ASSERT_TRUE(v.Parse(enc, true));
  EXPECT_EQ(Contents(v), (std::map<std::string, std::string>{{"f1", "v1b"}, {"f2", ""}}));
  std::string enc2 = ApplyChanges(v, {{"f2", {}, true}, {"f3", "x"}, {"f1", "new"}}, true);
  CollectionView v2;
  ASSERT_TRUE(v2.Parse(enc2, true));
  EXPECT_EQ(Contents(v2), (std::map<std::string, std::string>{{"f1", "new"}, {"f3", "x"}}));
  // Erasing what is absent changes nothing; erasing everything leaves nothing.
  std::string enc3 = ApplyChanges(v2, {{"zz", {}, true}}, true);
  EXPECT_EQ(enc3, enc2);
  EXPECT_EQ(ApplyChanges(v2, {{"f1", {}, true}, {"f3", {}, true}}, true), "");
}

TEST(CollectionTest, RejectsDamagedEncodings) {
  std::string enc = EncodeCollection({{"alpha", "1"}, {"beta", "2"}}, true);
  CollectionView v;
  ASSERT_TRUE(v.Parse(enc, true));
  EXPECT_FALSE(v.Parse(enc.substr(0, enc.size() - 1), true));
  EXPECT_FALSE(v.Parse(enc + "x", true));
  std::string bad_version = enc;
  bad_version[0] = 9;
  EXPECT_FALSE(v.Parse(bad_version, true));
  std::string bad_count = enc;
  bad_count[4] = 100;
  EXPECT_FALSE(v.Parse(bad_count, true));
  std::string bad_offset = enc;
  bad_offset[12] = 1;  // the second entry's offset
  EXPECT_FALSE(v.Parse(bad_offset, true));
  EXPECT_EQ(v.size(), 0u);  // a failed parse leaves an empty view
}

TEST(CollectionTest, RandomEditsMatchAReferenceMap) {
  std::mt19937_64 rng(42);
  std::map<std::string, std::string> ref;
  std::string enc;
  for (int round = 0; round < 200; ++round) {
    CollectionView v;
    ASSERT_TRUE(v.Parse(enc, true));
    std::vector<std::string> keep;  // owns the batch's bytes
    keep.reserve(64);
    std::vector<CollectionChange> changes;
    for (int k = 0; k < 20; ++k) {
      keep.push_back("k" + std::to_string(rng() % 100));
      keep.push_back(std::string(rng() % 5, static_cast<char>('a' + rng() % 26)));
      bool erase = rng() % 3 == 0;
      changes.push_back({keep[keep.size() - 2], keep.back(), erase});
      if (erase) {
        ref.erase(keep[keep.size() - 2]);
      } else {
        ref[keep[keep.size() - 2]] = keep.back();
      }
    }
    enc = ApplyChanges(v, std::move(changes), true);
    CollectionView after;
    ASSERT_TRUE(after.Parse(enc, true));
    ASSERT_EQ(Contents(after), ref) << "round " << round;
    for (const auto& [f, val] : ref) ASSERT_GE(after.Find(f), 0);
  }
}

TEST(CollectionTest, LowerBoundWalksEveryMemberOnce) {
  std::vector<std::string> members;
  for (int i = 0; i < 1000; ++i) members.push_back("m" + std::to_string(i));
  std::vector<CollectionChange> entries;
  for (const std::string& m : members) entries.push_back({m, {}});
  std::string enc = EncodeCollection(std::move(entries), false);
  CollectionView v;
  ASSERT_TRUE(v.Parse(enc, false));
  // Walk in steps of 7 by cursor = hash of the next entry, as SSCAN does.
  std::set<std::string> seen;
  uint64_t cursor = 0;
  do {
    uint32_t i = cursor == 0 ? 0 : v.LowerBound(cursor);
    for (uint32_t k = 0; k < 7 && i < v.size(); ++k, ++i) {
      EXPECT_TRUE(seen.insert(std::string(v.field(i))).second);
    }
    cursor = i < v.size() ? MemberHash(v.field(i)) : 0;
  } while (cursor != 0);
  EXPECT_EQ(seen.size(), members.size());
}

TEST(CollectionTest, OneMillionMembers) {
  std::vector<std::string> members;
  members.reserve(1000000);
  for (int i = 0; i < 1000000; ++i) members.push_back("member:" + std::to_string(i));
  std::vector<CollectionChange> entries;
  entries.reserve(members.size());
  for (const std::string& m : members) entries.push_back({m, {}});
  std::string enc = EncodeCollection(std::move(entries), false);
  CollectionView v;
  ASSERT_TRUE(v.Parse(enc, false));
  EXPECT_EQ(v.size(), 1000000u);
  EXPECT_GE(v.Find("member:0"), 0);
  EXPECT_GE(v.Find("member:999999"), 0);
  EXPECT_EQ(v.Find("member:1000000"), -1);
  std::string enc2 = ApplyChanges(v, {{"member:5", {}, true}, {"extra", {}}}, false);
  CollectionView v2;
  ASSERT_TRUE(v2.Parse(enc2, false));
  EXPECT_EQ(v2.size(), 1000000u);
  EXPECT_EQ(v2.Find("member:5"), -1);
  EXPECT_GE(v2.Find("extra"), 0);
}

}  // namespace
}  // namespace lavik
