#include "replication/sync_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

namespace lavik {
namespace {

TEST(SyncStreamTest, PiecesAreFoundByOffsetUntilReleased) {
  std::atomic<int> wakes{0};
  SyncStream s(std::string(40, 'm'), [&] { ++wakes; });
  ASSERT_TRUE(s.Append("hello "));
  ASSERT_TRUE(s.Append(""));  // nothing to add: no piece
  ASSERT_TRUE(s.Append("world"));
  EXPECT_EQ(wakes.load(), 2);
  uint64_t end = 0;
  EXPECT_EQ(s.state(&end), -1);
  EXPECT_EQ(end, 11u);
  uint64_t start = 99;
  auto p = s.PieceAt(3, &start);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, "hello ");
  EXPECT_EQ(start, 0u);
  p = s.PieceAt(6, &start);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, "world");
  EXPECT_EQ(start, 6u);
  EXPECT_EQ(s.PieceAt(11, &start), nullptr);  // not appended yet
  s.Release(6);                               // the first piece was sent by every reader
  EXPECT_EQ(s.PieceAt(0, &start), nullptr);
  EXPECT_NE(s.PieceAt(6, &start), nullptr);
  s.Finish(true);
  EXPECT_EQ(s.state(&end), 1);
  EXPECT_EQ(wakes.load(), 3);
}

TEST(SyncStreamTest, AbandonedStreamRefusesMoreAndDropsWhatItHeld) {
  SyncStream s(std::string(40, 'm'), [] {});
  ASSERT_TRUE(s.Append(std::string(1000, 'x')));
  EXPECT_FALSE(s.abandoned());
  s.Abandon();
  EXPECT_TRUE(s.abandoned());
  EXPECT_FALSE(s.Append("more"));
  uint64_t start = 0;
  EXPECT_EQ(s.PieceAt(0, &start), nullptr);
}

TEST(SyncStreamTest, FailedWalkIsReported) {
  SyncStream s(std::string(40, 'm'), [] {});
  ASSERT_TRUE(s.Append("REDIS0010"));
  s.Finish(false);
  uint64_t end = 0;
  EXPECT_EQ(s.state(&end), 0);
  EXPECT_EQ(end, 9u);
}

}  // namespace
}  // namespace lavik
