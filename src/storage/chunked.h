// Chunked values (doc/collections.md, "Large collections"), the operations over a Store: the
// copy-on-write commit (chunks, then the root only if unchanged, then the replaced chunks'
// deletion), reading one chunk, and the background free of the chunks of a root that died. The
// chunk keys, the root format and the registry are storage/chunk_format.h.
//
// Thread safety: the coroutines run on the Store's worker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/task.h"
#include "runtime/task_of.h"
#include "storage/chunk_format.h"
#include "storage/value_type.h"

namespace lavik {

class Store;
struct WriteResult;

enum class ChunkRead { kOk, kMissing, kError };

// Reads chunk `number` into *out (a copy). kMissing: it was deleted under the reader (a writer
// replaced it): re-read the root.
TaskOf<ChunkRead> ReadChunk(Store& st, uint16_t slot, uint64_t id, uint64_t number,
                            std::string* out, std::string* error);

// What a write of a chunked value plans (every chunked encoding builds one: collections, lists,
// streams), then hands to CommitChunks.
struct ChunkCommit {
  ChunkRoot root;  // the new root (ids and numbers filled in)
  std::vector<std::pair<uint64_t, std::string>> written;  // new chunk number → bytes
  std::vector<uint64_t> replaced;                         // chunk numbers no longer referenced

  // Starts the root of a value becoming chunked: a fresh collection id, its chunks in the hash
  // slot of `key` (so on the key's shard under any --threads), no chunks yet.
  void NewRoot(std::string_view key);
  // Plans a new chunk holding `bytes`: a number from the root (ChunkRoot::TakeNumber), the bytes
  // queued for writing. Returns its reference (`first` order key, `count` entries) for the caller
  // to place in the root's chunk list.
  ChunkRef AddChunk(uint64_t first, uint32_t count, std::string bytes);
};

// The copy-on-write commit: writes the new chunks, then the root at `key` only if it is still at
// location `expected` (0: must not exist), then deletes the replaced chunks. If the root moved
// meanwhile (*applied false), the new chunks are deleted and the caller starts over. The log
// order (chunks, root, deletions) makes a crash leave at worst orphan chunks, never a root that
// names a missing one. False with *error on a write failure.
TaskOf<bool> CommitChunks(Store& st, std::string_view key, ValueType type, uint64_t expected,
                          const ChunkCommit& commit, int64_t expire_ms, bool* applied,
                          std::string* error);

}  // namespace lavik
