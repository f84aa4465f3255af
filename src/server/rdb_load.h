// Importing a dump.rdb at start-up (doc/rdb.md, "Loading"): `lavik --load-rdb FILE`, or CONFIG
// `dir` + `dbfilename` when that file exists and the data file was just created.
//
// Two passes over the file, each streamed through a 1 MiB buffer (rdb/file_source.h). The
// first checks everything — framing, every object, the database numbers, the function
// libraries' code and the CRC-64 trailer — and stores nothing, so a corrupt or truncated file
// is refused (with the byte offset) before a single key changes. The second decodes again and
// hands the keys to their shards' workers in batches, with a bound on the bytes in flight, so
// the file is never held in memory. Keys whose expiry has passed are skipped, as Redis does;
// a key already stored under the same name is replaced.
//
// Thread safety: called from the main thread once the workers run and before any client is
// accepted.
#pragma once

#include <cstdint>
#include <string>

namespace lavik {

class ShardSet;

struct RdbLoadReport {
  uint64_t keys = 0;       // stored
  uint64_t expired = 0;    // skipped: their expiry had passed
  uint64_t functions = 0;  // libraries loaded
  int64_t elapsed_ms = 0;
};

// False with *error ("... at offset N") if the file cannot be read or is not a valid RDB, or a
// write failed.
bool LoadRdbFile(ShardSet& shards, const std::string& path, RdbLoadReport* report,
                 std::string* error);

}  // namespace lavik
