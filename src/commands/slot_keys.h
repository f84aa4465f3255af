// The keys of one Redis Cluster hash slot in a shard's store, for CLUSTER COUNTKEYSINSLOT and
// CLUSTER GETKEYSINSLOT (and so `redis-cli --cluster reshard`, which alternates GETKEYSINSLOT
// and MIGRATE ... KEYS).
//
// Neither costs RAM per key nor reads the device to find a slot's keys: in the cluster layout
// (Index::SetSlotFingerprints, set at start-up when cluster mode is on) a database-0 key's
// fingerprint starts with its slot, so a slot is one contiguous fingerprint range of the index,
// and the store keeps a count per slot (64 KiB per shard). Only the names of the keys returned
// are read from their records. doc/index.md ("Keys by cluster slot") has the layout and figures.
//
// With the plain layout (cluster mode off) the slot is not in the fingerprint: CountKeysInSlot
// returns 0 and KeysInSlot returns nothing. Cluster mode must set the layout before the stores
// are built.
//
// Thread safety: both run on the worker that owns `st`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/task.h"

namespace lavik {

class Store;

// Database-0 keys of this shard's store in `slot` (O(1)); expired keys not yet reclaimed are
// counted, as Redis counts them.
size_t CountKeysInSlot(const Store& st, uint16_t slot);
// The index entries (fingerprint, location word) of up to `max` database-0 keys of `slot`, in
// fingerprint order, skipping keys whose TTL passed at now_ms: the index alone, no device read.
void SlotEntries(const Store& st, uint16_t slot, size_t max, int64_t now_ms,
                 std::vector<std::pair<uint64_t, uint64_t>>* out);
// Up to `max` database-0 keys of `slot` (their stored bytes are the client's keys), in
// fingerprint order, skipping keys whose TTL passed at now_ms. Reads the records of the keys it
// returns, several at a time (the worker serves other requests meanwhile).
Task KeysInSlot(Store& st, uint16_t slot, size_t max, int64_t now_ms,
                std::vector<std::string>* out);

}  // namespace lavik
