// Per-worker counters the server keeps (INFO stats, metrics): each written by its own worker
// only, read by any thread (base/stat_counter.h).
#pragma once

#include "base/stat_counter.h"

namespace lavik {

struct WorkerStats {
  StatCounter commands;
  StatCounter connections_received;
  StatCounter rejected_connections;
  StatCounter expired_keys_active;
};

}  // namespace lavik
