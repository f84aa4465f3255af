#include "base/clock.h"

namespace lavik::clock_internal {

void RefreshWallOffset(WallOffset* w) {
  // Monotonic readings on both sides of the wall one: the offset is taken at their midpoint.
  struct timespec before, wall, after;
  clock_gettime(CLOCK_MONOTONIC, &before);
  clock_gettime(CLOCK_REALTIME, &wall);
  clock_gettime(CLOCK_MONOTONIC, &after);
  auto ns = [](const timespec& ts) {
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  };
  const int64_t mono = ns(before) + (ns(after) - ns(before)) / 2;
  w->taken_ns = mono;
  w->offset_ns = ns(wall) - mono;
}

}  // namespace lavik::clock_internal
