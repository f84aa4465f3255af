// The keys of one cluster hash slot in a shard's store (CLUSTER COUNTKEYSINSLOT / GETKEYSINSLOT,
// SETSLOT NODE's "still holds keys" check). Only database 0 exists in cluster mode.
//
// This version walks the shard's index and reads every key (keys live with their records on the
// device): O(keys in the shard). A per-slot index replaces it, adding a synchronous count.
//
// Thread safety: call on the store's own worker.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/task.h"

namespace lavik {

class Store;

// Appends up to `max` keys of database 0 in `slot` to *out (keys live with their records, so
// this may read the device).
Task KeysInSlot(Store& st, uint16_t slot, size_t max, int64_t now_ms,
                std::vector<std::string>* out);

}  // namespace lavik
