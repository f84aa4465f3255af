#include "commands/lcs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lavik {
namespace {

constexpr uint64_t kNoLimit = UINT64_MAX;

TEST(LcsTest, LengthAndSequence) {
  LcsResult r;
  ASSERT_EQ(ComputeLcs("ohmytext", "mynewtext", true, kNoLimit, &r), LcsStatus::kOk);
  EXPECT_EQ(r.length, 6u);
  EXPECT_EQ(r.sequence, "mytext");
}

TEST(LcsTest, RangesInRedisOrder) {
  // Redis 7.0.15: LCS ohmytext mynewtext IDX -> [[4,7],[5,8]], [[2,3],[0,1]].
  LcsResult r;
  ASSERT_EQ(ComputeLcs("ohmytext", "mynewtext", true, kNoLimit, &r), LcsStatus::kOk);
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_EQ(r.ranges[0], (LcsRange{4, 7, 5, 8}));
  EXPECT_EQ(r.ranges[1], (LcsRange{2, 3, 0, 1}));
  EXPECT_EQ(r.ranges[0].length(), 4u);
  EXPECT_EQ(r.ranges[1].length(), 2u);
}

TEST(LcsTest, TiesStepBackInSecondString) {
  // Redis 7.0.15: LCS abcabcabc cbacbacba -> "cbabc", IDX ranges (a, b):
  // [8,8][6,6] [7,7][4,4] [6,6][2,2] [4,4][1,1] [2,2][0,0].
  LcsResult r;
  ASSERT_EQ(ComputeLcs("abcabcabc", "cbacbacba", true, kNoLimit, &r), LcsStatus::kOk);
  EXPECT_EQ(r.length, 5u);
  EXPECT_EQ(r.sequence, "cbabc");
  const std::vector<LcsRange> want = {
      {8, 8, 6, 6}, {7, 7, 4, 4}, {6, 6, 2, 2}, {4, 4, 1, 1}, {2, 2, 0, 0}};
  EXPECT_EQ(r.ranges, want);
}

TEST(LcsTest, EmptyAndDisjoint) {
  LcsResult r;
  ASSERT_EQ(ComputeLcs("", "abc", true, kNoLimit, &r), LcsStatus::kOk);
  EXPECT_EQ(r.length, 0u);
  EXPECT_EQ(r.sequence, "");
  EXPECT_TRUE(r.ranges.empty());
  ASSERT_EQ(ComputeLcs("abc", "xyz", true, kNoLimit, &r), LcsStatus::kOk);
  EXPECT_EQ(r.length, 0u);
  EXPECT_TRUE(r.ranges.empty());
}

TEST(LcsTest, IdenticalIsOneRange) {
  LcsResult r;
  ASSERT_EQ(ComputeLcs("hello", "hello", true, kNoLimit, &r), LcsStatus::kOk);
  EXPECT_EQ(r.sequence, "hello");
  ASSERT_EQ(r.ranges.size(), 1u);
  EXPECT_EQ(r.ranges[0], (LcsRange{0, 4, 0, 4}));
}

TEST(LcsTest, LengthOnlySkipsTraceback) {
  LcsResult r;
  ASSERT_EQ(ComputeLcs("ohmytext", "mynewtext", false, kNoLimit, &r), LcsStatus::kOk);
  EXPECT_EQ(r.length, 6u);
  EXPECT_TRUE(r.sequence.empty());
  EXPECT_TRUE(r.ranges.empty());
}

TEST(LcsTest, TableLimit) {
  LcsResult r;
  // (3+1) * (3+1) cells of 4 bytes = 64 bytes.
  EXPECT_EQ(ComputeLcs("abc", "abc", false, 64, &r), LcsStatus::kOk);
  EXPECT_EQ(ComputeLcs("abc", "abc", false, 63, &r), LcsStatus::kTableTooBig);
}

TEST(LcsTest, BinaryBytes) {
  const std::string a("a\0b\xff", 4);
  const std::string b("\0\xff", 2);
  LcsResult r;
  ASSERT_EQ(ComputeLcs(a, b, true, kNoLimit, &r), LcsStatus::kOk);
  EXPECT_EQ(r.sequence, std::string("\0\xff", 2));
}

}  // namespace
}  // namespace lavik
