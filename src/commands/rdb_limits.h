// Redis's encoding thresholds as configured now (the *-max-listpack-*, set-max-intset-entries,
// list-max-listpack-size and stream-node-* settings), for what writes RDB objects: DUMP and
// dump.rdb pick the encoding Redis would pick for the same value.
//
// Thread safety: any thread (reads config/live_settings.h atomics).
#pragma once

#include "rdb/object.h"

namespace lavik {

rdb::EncodeLimits LiveEncodeLimits();

}  // namespace lavik
