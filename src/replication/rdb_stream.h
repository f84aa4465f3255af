// Storing the keys of an RDB stream into the shards, from any byte source: a dump.rdb file
// (replication/rdb_file.cc, its second pass) or a master's full-sync payload read from the socket
// (replica.cc). One pass: keys are decoded one at a time and handed to their shards' workers in
// batches, with a bound on the bytes in flight, so the RDB is never held in memory and a dataset
// larger than the value cache loads (the workers write records as for any SET). Keys whose expiry
// has passed are skipped, as Redis does; a key already stored under the same name is replaced.
//
// A stream that turns out corrupt or truncated stops the load where the bad item starts: the keys
// before it stay stored (a caller that needs all-or-nothing validates first, as the file load
// does; the replica flushes and syncs again, as Redis does).
//
// Thread safety: called from a thread that is not a worker (it waits for them), one load at a
// time per ShardSet.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "rdb/file_format.h"

namespace lavik {

class ShardSet;

struct RdbLoadReport {
  uint64_t keys = 0;       // stored
  uint64_t expired = 0;    // skipped: their expiry had passed
  uint64_t functions = 0;  // libraries loaded
  int64_t elapsed_ms = 0;
  // The replication fields (aux repl-id, repl-offset, repl-stream-db), when all three are there
  // and valid (Redis's rsi.repl_id_is_set, repl_offset != -1, repl_stream_db != -1).
  bool has_repl = false;
  std::string repl_id;
  int64_t repl_offset = -1;
  int repl_stream_db = -1;  // set when the field is there and names a database
};

// What INFO shows of a load while it runs (Redis's loading_* fields): written by the loading
// thread, read by any.
struct RdbLoadProgress {
  std::atomic<uint64_t> loaded_bytes{0};  // of the RDB, decoded so far
  std::atomic<uint64_t> rdb_used_mem{0};  // the RDB's aux used-mem (0 until read)
};

// Fills report's replication fields from the AUX fields `reader` has read (at its EOF).
void ReadReplFields(const rdb::FileReader& reader, RdbLoadReport* report);

// Reads `reader` (its header already read) to its EOF trailer, storing what it holds; function
// libraries are loaded into the FunctionRegistry (replacing one of the same name if
// `replace_functions`). False with *error (the reader's "... at offset N", or the failed write).
// `progress`, if set, follows the load.
bool StoreRdbStream(ShardSet& shards, rdb::FileReader& reader, bool replace_functions,
                    RdbLoadReport* report, std::string* error, RdbLoadProgress* progress = nullptr);

}  // namespace lavik
