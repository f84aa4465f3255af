#include "commands/zset_range.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "commands/zset_common.h"

namespace lavik {
namespace {

std::vector<std::string> Members(const std::vector<ZEntry>& entries) {
  std::vector<std::string> out;
  for (const ZEntry& e : entries) out.emplace_back(e.member);
  return out;
}

TEST(ZSetRangeTest, ScoreEncodingRoundTrips) {
  for (double d : {0.0, -0.0, 1.5, -3.25, 1e300, HUGE_VAL, -HUGE_VAL}) {
    CollectionView v;
    std::string enc = EncodeCollection({{"m", EncodeScore(d), false}}, true);
    ASSERT_TRUE(v.Parse(enc, true));
    EXPECT_EQ(ScoreAt(v, 0), d);
    EXPECT_EQ(std::signbit(ScoreAt(v, 0)), std::signbit(d));
  }
}

TEST(ZSetRangeTest, ScoreRangeBounds) {
  ScoreRange r;
  ASSERT_TRUE(ParseScoreRange("(1", "+inf", &r));
  EXPECT_FALSE(r.Contains(1));
  EXPECT_TRUE(r.Contains(1.5));
  EXPECT_TRUE(r.Contains(HUGE_VAL));
  ASSERT_TRUE(ParseScoreRange("-inf", "2", &r));
  EXPECT_TRUE(r.Contains(2));
  EXPECT_FALSE(r.Contains(2.5));
  EXPECT_FALSE(ParseScoreRange("nan", "1", &r));
  EXPECT_FALSE(ParseScoreRange("1", "(x", &r));
  EXPECT_FALSE(ParseScoreRange("1 ", "1", &r));
  // As Redis's strtod: "" and "(" are 0, a leading space and overflow pass.
  ASSERT_TRUE(ParseScoreRange("(", " 1e400", &r));
  EXPECT_FALSE(r.Contains(0));
  EXPECT_TRUE(r.Contains(HUGE_VAL));
  ASSERT_TRUE(ParseScoreRange("", "0x10", &r));
  EXPECT_TRUE(r.Contains(0));
  EXPECT_TRUE(r.Contains(16));
}

TEST(ZSetRangeTest, LexRangeBounds) {
  LexRange r;
  ASSERT_TRUE(ParseLexRange("[b", "(d", &r));
  EXPECT_FALSE(r.Contains("a"));
  EXPECT_TRUE(r.Contains("b"));
  EXPECT_TRUE(r.Contains("c"));
  EXPECT_FALSE(r.Contains("d"));
  ASSERT_TRUE(ParseLexRange("-", "+", &r));
  EXPECT_TRUE(r.Contains(""));
  EXPECT_TRUE(r.Contains("\xff"));
  ASSERT_TRUE(ParseLexRange("+", "-", &r));
  EXPECT_FALSE(r.Contains("a"));
  // Bytes compare unsigned, as Redis's memcmp.
  ASSERT_TRUE(ParseLexRange("(a", "+", &r));
  EXPECT_TRUE(r.Contains("\x80"));
  EXPECT_FALSE(ParseLexRange("a", "+", &r));
  EXPECT_FALSE(ParseLexRange("", "+", &r));
}

TEST(ZSetRangeTest, SelectsRanksScoresAndLimits) {
  const std::vector<ZEntry> sorted = {{1, "a"}, {2, "b"}, {2, "c"}, {3, "d"}, {4, "e"}};
  ZRangeSpec spec;
  spec.start = 1;
  spec.end = -2;
  EXPECT_EQ(Members(SelectRange(sorted, spec)), (std::vector<std::string>{"b", "c", "d"}));
  spec.rev = true;
  EXPECT_EQ(Members(SelectRange(sorted, spec)), (std::vector<std::string>{"d", "c", "b"}));
  spec.start = 7;
  EXPECT_TRUE(SelectRange(sorted, spec).empty());

  ZRangeSpec by_score;
  by_score.by = ZRangeSpec::kScore;
  ASSERT_TRUE(ParseScoreRange("(1", "3", &by_score.score));
  EXPECT_EQ(Members(SelectRange(sorted, by_score)), (std::vector<std::string>{"b", "c", "d"}));
  by_score.offset = 1;
  by_score.limit = 1;
  EXPECT_EQ(Members(SelectRange(sorted, by_score)), (std::vector<std::string>{"c"}));
  by_score.rev = true;
  EXPECT_EQ(Members(SelectRange(sorted, by_score)), (std::vector<std::string>{"c"}));
  by_score.offset = -1;  // Redis: a negative offset selects nothing
  EXPECT_TRUE(SelectRange(sorted, by_score).empty());
}

TEST(ZSetRangeTest, RankWindowMatchesAFullSort) {
  std::vector<std::string> names, scores;
  std::vector<CollectionChange> entries;
  for (int i = 0; i < 300; ++i) {
    names.push_back("m" + std::to_string((i * 7919) % 300));
    scores.push_back(EncodeScore(static_cast<double>((i * 31) % 17)));  // many ties
  }
  for (int i = 0; i < 300; ++i) entries.push_back({names[i], scores[i], false});
  const std::string enc = EncodeCollection(std::move(entries), true);
  CollectionView v;
  ASSERT_TRUE(v.Parse(enc, true));
  const std::vector<ZEntry> sorted = SortedEntries(v);
  for (auto [first, last] :
       {std::pair<uint32_t, uint32_t>{0, 0}, {0, 9}, {5, 5}, {100, 250}, {290, 299}, {0, 299}}) {
    std::vector<ZEntry> want(sorted.begin() + first, sorted.begin() + last + 1);
    EXPECT_EQ(Members(RankWindow(v, first, last, false)), Members(want)) << first << " " << last;
    std::reverse(want.begin(), want.end());
    EXPECT_EQ(Members(RankWindow(v, first, last, true)), Members(want)) << first << " " << last;
  }
}

}  // namespace
}  // namespace lavik
