#include "base/clock.h"

namespace lavik::clock_internal {

void RefreshWallOffset(WallOffset* w) {
  // Monotonic readings on both sides of the wall one: the offset is taken at their midpoint.
  const int64_t before = ReadNs(CLOCK_MONOTONIC);
  const int64_t wall = ReadNs(CLOCK_REALTIME);
  const int64_t after = ReadNs(CLOCK_MONOTONIC);
  const int64_t mono = before + (after - before) / 2;
  w->taken_ns = mono;
  w->offset_ns = wall - mono;
}

}  // namespace lavik::clock_internal
