// What SAVE / BGSAVE leave for LASTSAVE and INFO's Persistence section (save_command.cc).
//
// Thread safety: every field is atomic; SAVE/BGSAVE (one at a time, by `in_progress`) write
// them, INFO and LASTSAVE read them from any worker.
#pragma once

#include <atomic>
#include <cstdint>

#include "runtime/task.h"

namespace lavik {

class Server;

struct SaveState {
  std::atomic<int64_t> last_save_s{0};  // unix time of the last successful save (start-up until)
  std::atomic<bool> in_progress{false};
  std::atomic<bool> last_ok{true};
  std::atomic<int64_t> last_bgsave_s{-1};    // how long the last background save took
  std::atomic<int64_t> current_start_ms{0};  // when the running save began
  std::atomic<uint64_t> saves{0};            // since start-up or CONFIG RESETSTAT
  std::atomic<uint64_t> dirty_at_save{0};    // the shards' write count the last save covered
  std::atomic<int64_t> last_try_s{0};        // unix time the last save began (save points)
};

// SAVE's work (data file synced, dump.rdb written) for SHUTDOWN [SAVE]: *ok false if another save
// runs or this one failed. Runs on any worker (save_command.cc).
Task SaveBeforeShutdown(Server* server, bool* ok);

// CONFIG `save` points, checked once a second on worker 0: BGSAVE when, for some "seconds
// changes" pair, `changes` writes happened and `seconds` passed since the last save; after a
// failed save, not again within 5 s (Redis's serverCron rule).
Task CheckSavePoints(Server* server);

}  // namespace lavik
