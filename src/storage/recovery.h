// Start-up and clean shutdown of the data: rebuilding every shard's index from the data file
// (from the checkpoint after a clean shutdown, else by scanning the log), and writing the
// checkpoint. Format: doc/storage-format.md.
//
// Thread safety: runs on the main thread while no worker touches the stores (before they
// serve, after they stopped); blocking I/O is fine here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "storage/data_file.h"
#include "storage/store.h"

namespace lavik {

struct RecoveryReport {
  bool from_checkpoint = false;
  uint64_t segments = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t keys = 0;
  uint64_t corrupt = 0;  // damaged records found in the middle of a segment
  // A rollback to the superblock's replication cut: records and segments dropped after it.
  bool rolled_back = false;
  uint64_t dropped_records = 0;
  uint64_t dropped_segments = 0;
  int64_t elapsed_ms = 0;
};

using ShardOfSlot = std::function<int(uint16_t slot)>;
using ProgressLog = std::function<void(const std::string&)>;

// Fills `stores` (one per shard) from the file. False + *error if the file cannot be read.
// `rollback` (a replica restarted after a crash, doc/storage-format.md "Replication cut"): the
// data become exactly the superblock's cut — every record written after it is dropped, and
// erased from the file so no later scan finds it — and the cut is kept. Otherwise the cut is
// cleared: this run's writes are not in it.
bool Recover(DataFile* file, const std::vector<Store*>& stores, const ShardOfSlot& shard_of_slot,
             const ProgressLog& log, RecoveryReport* report, std::string* error,
             bool rollback = false);

// Writes every store's index into free segments and marks the superblock clean. The stores'
// logs must be flushed and synced. False + *error if it could not (the next start then scans).
bool WriteCheckpoint(DataFile* file, const std::vector<Store*>& stores, std::string* error);

// Marks the superblock not clean (done at start-up, before any write).
bool MarkDirty(DataFile* file, std::string* error);

}  // namespace lavik
