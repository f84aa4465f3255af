// The dump.rdb SAVE and BGSAVE write (doc/rdb.md, "Saving"): every key of every shard, in Redis
// 7.0's RDB v10 format (rdb/file_format.h), to CONFIG `dir` + `dbfilename` through
// temp-<pid>.rdb, renamed over the target once complete and synced.
//
// The walk is a point-in-time snapshot (doc/rdb.md "Consistency"): BeginRdbSnapshot opens a
// snapshot of every shard's index at one instant (Store::BeginSnapshot; every worker is held for
// that instant only), and the walk then reads each shard in slices of index entries from its own
// worker's loop, yielding between slices, through that snapshot: every key as it was at the
// start, whatever the workers write meanwhile. Databases are written one after the other (the
// index selects each one's keys); output streams to the file (1 MiB at a time).
//
// Thread safety: coroutines on any worker.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/db_key.h"
#include "runtime/task.h"

namespace lavik {

class ShardSet;
class SyncStream;

// The replication fields of an RDB (Redis 7.0's rdbSaveInfo: aux repl-stream-db, repl-id,
// repl-offset), for the history the snapshot's data follow; written only when `valid`.
struct RdbReplInfo {
  bool valid = false;
  int db = 0;
  std::string replid;
  int64_t offset = 0;
};

// How a snapshot learns its RdbReplInfo (set once by the server; none: no fields written).
struct RdbReplHooks {
  // Before the snapshot opens / once it is resolved: the master records the stream offset after
  // each merged entry meanwhile (offset_of_seq's table).
  std::function<void(bool on)> watch;
  // At the snapshot's instant (every other worker parked): fills *info; *by_seq: the offset is
  // the stream's right after the snapshot's sequence number (a master), to be asked of
  // offset_of_seq. False: cannot be told at this instant (a command of our master's stream is
  // in flight): the snapshot is opened again.
  std::function<bool(RdbReplInfo* info, bool* by_seq)> at_instant;
  // The stream offset (and its database, -1 for none selected) right after the entry numbered
  // `seq`; false while the merge has not passed it yet.
  std::function<bool(uint64_t seq, int64_t* offset, int* db)> offset_of_seq;
};
void SetRdbReplHooks(RdbReplHooks hooks);

// A snapshot of every shard for one walk.
struct RdbSnapshot {
  uint64_t id = 0;
  // The replication sequence number at the instant it began (commands/propagate.h): every
  // write numbered up to `seq` is in it, none numbered after (see doc/replication.md).
  uint64_t seq = 0;
  std::array<int, kMaxDatabases> physical{};  // DbMap::Physical at that instant (SWAPDB after it)
  bool open = false;
  RdbReplInfo repl;  // the replication history at that instant (written as aux fields)
};

// Opens *snap on every shard at one instant: takes every shard's lock (so no multi-shard
// command — MSET across shards, EXEC, a script — is half-applied), waits while a FLUSHALL or
// FLUSHDB runs (storage/snapshot_gate.h), holds every other worker in a spin for the instant
// its own store's snapshot and the sequence number are taken, then releases all.
Task BeginRdbSnapshot(ShardSet& shards, RdbSnapshot* snap);
// Closes *snap on every shard (a no-op if it is not open).
Task EndRdbSnapshot(ShardSet& shards, RdbSnapshot* snap);

// Saves to `dir`/`dbfilename` (an empty dir: the working directory). *ok: the file was written
// and renamed into place (else the reason is logged, as Redis does, and the temp files are
// removed). `temp`: the temp file's name (default temp-<pid>.rdb; a replica's full sync uses
// its own, so it can run next to a BGSAVE). `snap`: an open snapshot to walk (closed at the end);
// none: one is opened when the walk starts.
Task SaveRdbFile(ShardSet& shards, std::string dir, std::string dbfilename, bool* ok,
                 std::string temp = "", RdbSnapshot* snap = nullptr);

// A diskless full sync: the RDB of `snap` (open) into `stream` for the replicas (the walk waits
// while they have a full buffer); the stream is finished and the snapshot closed at the end.
Task StreamRdb(ShardSet& shards, SyncStream* stream, bool* ok, RdbSnapshot* snap);

}  // namespace lavik
