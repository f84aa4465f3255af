// Importing a dump.rdb (doc/rdb.md, "Loading"): at start-up, `lavik --load-rdb FILE`, or CONFIG
// `dir` + `dbfilename` when that file exists and the data file was just created; and a
// replica's full sync received on disk first (repl-diskless-load disabled, doc/replication.md).
//
// Two passes over the file, each streamed through a 1 MiB buffer (rdb/file_source.h). The
// first checks everything — framing, every object, the database numbers, the function
// libraries' code and the CRC-64 trailer — and stores nothing, so a corrupt or truncated file
// is refused (with the byte offset) before a single key changes. The second decodes again and
// stores the keys through StoreRdbStream (replication/rdb_stream.h, which a replica's full sync
// shares), so the file is never held in memory.
//
// Thread safety: called from one thread at a time, with the workers running: the main thread
// before any client is accepted, or the replication thread while clients get -LOADING.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "replication/rdb_stream.h"  // RdbLoadReport, and the second pass

namespace lavik {

class ShardSet;

// False with *error ("... at offset N") if the file cannot be read or is not a valid RDB, or a
// write failed. `before_store`, if set, runs once the file is known good and before its first
// key is stored (a replica's flush); its false ends the load (nothing stored).
// `progress`, if set, follows the second pass.
bool LoadRdbFile(ShardSet& shards, const std::string& path, RdbLoadReport* report,
                 std::string* error, const std::function<bool()>& before_store = {},
                 RdbLoadProgress* progress = nullptr);

// `dir` + "/" + `dbfilename` (an empty dir: ".").
std::string RdbFilePath(std::string_view dir, std::string_view dbfilename);

}  // namespace lavik
