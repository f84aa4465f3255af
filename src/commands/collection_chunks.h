// Chunked hashes, sets and sorted sets (doc/collections.md, "Large collections"): how the
// member-hash-sorted encoding of storage/collection.h is cut into chunks by member-hash range,
// read back (whole, by member, or from a scan cursor) and written back per changed chunk. The
// chunk records and the root themselves are storage/chunked.h's. Used by collection_access.cc.
//
// Thread safety: runs on the key's worker, like the handlers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "commands/collection_read.h"

namespace lavik {

// Sizes (measured, doc/collections.md): a chunk holds up to ~kChunkEntries entries or
// ~kChunkBytes bytes; a chunk or a one-record collection twice that big is split.
inline constexpr uint32_t kChunkEntries = 4096;
inline constexpr size_t kChunkBytes = 64 * 1024;

// Root flags bit 0 (storage/chunk_format.h leaves the low bits to the encoding): the entries carry
// values (hashes, sorted sets), not members only (sets).
inline constexpr uint8_t kRootFlagValues = 1;

inline constexpr std::string_view kErrCollectionCorrupt =
    "ERR data corruption: the collection record of this key does not decode";

enum class ChunkedRead { kOk, kRetry, kError };

// Fills *out from the root in out->record (already read): the chunks `scope` needs, their view.
// kRetry: a chunk was gone (replaced by a writer since the root was read): read the root again.
TaskOf<ChunkedRead> ReadChunked(Store& st, std::string_view key, bool with_values,
                                const ReadScope& scope, CollectionRead* out, std::string* error);

// True if a one-record encoding of this size should become chunked.
inline bool ShouldChunk(uint32_t count, size_t bytes) {
  return count > 2 * kChunkEntries || bytes > 2 * kChunkBytes;
}

}  // namespace lavik
