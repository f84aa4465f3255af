// Cheap clock readings in integer units.
//
// NowMs/NowUs read CLOCK_REALTIME: wall-clock time since the Unix epoch, the
// base of key expiry times (EXPIREAT, PXAT, TTL) because those travel between
// processes and to disk. Wall time can jump (NTP, admin), so never use it to
// measure an interval; MonotonicUs reads CLOCK_MONOTONIC for that (timeouts,
// latency, time slices). All are vDSO calls on Linux: no syscall, but ~20 ns each on the VMs
// Lavik is measured on, which is a few percent of a pipelined request: WallMsAt gives the wall
// clock at a monotonic reading the caller already has.
//
// Thread safety: callable from any thread.
#pragma once

#include <time.h>

#include <cstdint>

namespace lavik {

namespace clock_internal {
inline int64_t ReadUs(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}
inline int64_t ReadNs(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace clock_internal

// Microseconds since the Unix epoch (wall clock).
inline int64_t NowUs() { return clock_internal::ReadUs(CLOCK_REALTIME); }

// Milliseconds since the Unix epoch (wall clock); the unit of Redis expiry.
inline int64_t NowMs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Microseconds from an arbitrary fixed point (boot); never goes backwards.
inline int64_t MonotonicUs() { return clock_internal::ReadUs(CLOCK_MONOTONIC); }

// Nanoseconds from the same point as MonotonicUs.
inline int64_t MonotonicNs() { return clock_internal::ReadNs(CLOCK_MONOTONIC); }

namespace clock_internal {
// The wall clock minus the monotonic one (ns), as read on this thread at monotonic `taken_ns`.
struct WallOffset {
  int64_t taken_ns = INT64_MIN / 2;
  int64_t offset_ns = 0;
};
inline thread_local WallOffset wall_offset;
void RefreshWallOffset(WallOffset* w);  // clock.cc: reads both clocks
}  // namespace clock_internal

// Milliseconds since the Unix epoch (as NowMs) at `mono_ns`, a recent MonotonicNs reading of the
// caller's. The offset between the two clocks is read again once `mono_ns` is 1 ms past its last
// reading on this thread, so a step of the wall clock (NTP, admin) shows within a millisecond,
// and a caller that has the monotonic time already pays no clock reading.
inline int64_t WallMsAt(int64_t mono_ns) {
  clock_internal::WallOffset& w = clock_internal::wall_offset;
  if (mono_ns - w.taken_ns >= 1000000 || mono_ns < w.taken_ns) [[unlikely]] {
    clock_internal::RefreshWallOffset(&w);
  }
  return (mono_ns + w.offset_ns) / 1000000;
}

}  // namespace lavik
