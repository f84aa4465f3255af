// Importing a dump.rdb at start-up (doc/rdb.md, "Loading"): `lavik --load-rdb FILE`, or CONFIG
// `dir` + `dbfilename` when that file exists and the data file was just created.
//
// Two passes over the file, each streamed through a 1 MiB buffer (rdb/file_source.h). The
// first checks everything — framing, every object, the database numbers, the function
// libraries' code and the CRC-64 trailer — and stores nothing, so a corrupt or truncated file
// is refused (with the byte offset) before a single key changes. The second decodes again and
// stores the keys through StoreRdbStream (replication/rdb_stream.h, which a replica's full sync
// shares), so the file is never held in memory.
//
// Thread safety: called from the main thread once the workers run and before any client is
// accepted.
#pragma once

#include <cstdint>
#include <string>

#include "replication/rdb_stream.h"  // RdbLoadReport, and the second pass

namespace lavik {

class ShardSet;

// False with *error ("... at offset N") if the file cannot be read or is not a valid RDB, or a
// write failed.
bool LoadRdbFile(ShardSet& shards, const std::string& path, RdbLoadReport* report,
                 std::string* error);

}  // namespace lavik
