#include "base/clock.h"

#include <gtest/gtest.h>

#include <thread>

namespace lavik {
namespace {

// WallMsAt reads the wall clock's offset once a millisecond per thread; what it gives must agree
// with a reading of the wall clock itself, before and after the offset is taken again.
TEST(ClockTest, WallMsAtAMonotonicReadingIsTheWallClockThen) {
  for (int i = 0; i < 200; ++i) {
    const int64_t before = NowMs();
    const int64_t at = WallMsAt(MonotonicNs());
    const int64_t after = NowMs();
    // ±1: the offset is the wall clock at the midpoint of two monotonic readings, so the
    // millisecond can round either way at its edge.
    EXPECT_GE(at, before - 1);
    EXPECT_LE(at, after + 1);
    if (i % 20 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
}

TEST(ClockTest, WallMsAtAnEarlierReadingIsThatEarlierTime) {
  const int64_t mono = MonotonicNs();
  const int64_t wall = NowMs();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  (void)WallMsAt(MonotonicNs());  // takes the offset again, later
  const int64_t then = WallMsAt(mono);
  EXPECT_GE(then, wall - 1);
  EXPECT_LE(then, wall + 1);
  EXPECT_GE(WallMsAt(MonotonicNs()), wall + 4);
}

}  // namespace
}  // namespace lavik
