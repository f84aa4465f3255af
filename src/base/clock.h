// Cheap clock readings in integer units.
//
// NowMs/NowUs read CLOCK_REALTIME: wall-clock time since the Unix epoch, the
// base of key expiry times (EXPIREAT, PXAT, TTL) because those travel between
// processes and to disk. Wall time can jump (NTP, admin), so never use it to
// measure an interval; MonotonicUs reads CLOCK_MONOTONIC for that (timeouts,
// latency, time slices). All are vDSO calls on Linux: no syscall.
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

}  // namespace lavik
