// The dump.rdb SAVE and BGSAVE write (doc/rdb.md, "Saving"): every key of every shard, in Redis
// 7.0's RDB v10 format (rdb/file_format.h), to CONFIG `dir` + `dbfilename` through
// temp-<pid>.rdb, renamed over the target once complete and synced.
//
// The walk is not a point-in-time snapshot: each shard is read in slices of index entries from
// its own worker's loop, yielding between slices, so a key is saved as it was when its slice
// ran. Databases are written one after the other (the index selects each one's keys); output
// streams to the file (1 MiB at a time).
//
// Thread safety: a coroutine on any worker; one save at a time (SaveState::in_progress).
#pragma once

#include <string>
#include <string_view>

#include "runtime/task.h"

namespace lavik {

class ShardSet;

// Saves to `dir`/`dbfilename` (an empty dir: the working directory). *ok: the file was written
// and renamed into place (else the reason is logged, as Redis does, and the temp files are
// removed). `temp`: the temp file's name (default temp-<pid>.rdb; a replica's full sync uses
// its own, so it can run next to a BGSAVE).
Task SaveRdbFile(ShardSet& shards, std::string dir, std::string dbfilename, bool* ok,
                 std::string temp = "");

// `dir` + "/" + `dbfilename` (an empty dir: ".").
std::string RdbFilePath(std::string_view dir, std::string_view dbfilename);

}  // namespace lavik
