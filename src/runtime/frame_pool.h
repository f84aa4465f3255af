// FramePool: per-thread free lists for coroutine frames, so starting a command handler does not
// call malloc on the hot path.
//
// Thread safety: each thread has its own pool (thread_local); a block may be freed on another
// thread than the one that allocated it (it then joins that thread's pool).
#pragma once

#include <cstddef>

namespace lavik {

class FramePool {
 public:
  static void* Allocate(std::size_t size);
  static void Free(void* p, std::size_t size);
};

}  // namespace lavik
