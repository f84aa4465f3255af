// Chunked streams (doc/collections.md, "Streams", "Chunked streams"): the encodings of a stream
// stored as a root plus chunks (storage/chunked.h). A chunk is an id-ordered run of entries; the
// root's order key for chunk i is the ms of its first entry, and entries with the same ms never
// straddle a cut, so chunk i holds exactly the ids whose ms is in [first_i, first_{i+1}). The
// root's tail is the stream's metadata: a one-record stream encoding (stream_record.h) with no
// entries — last id, entries_added, max deleted id, the master fields and the consumer groups.
// Every chunk's bodies are encoded against those master fields.
//
// Chunk value (little-endian): u32 entry count | u64 ms of the last entry | per entry: varint ms
// delta from the previous entry (the first: from 0), varint seq, varint body length, body.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/stream_record.h"

namespace lavik {

// A chunk holds up to about this many entries or bytes (a rewrite costs O(chunk) bytes: an XADD
// writes half a chunk on average, plus the root). A one-record stream twice that big is chunked;
// a chunked one read whole and under a quarter of it becomes one record again.
inline constexpr uint32_t kStreamChunkEntries = 1024;
inline constexpr size_t kStreamChunkBytes = 16 * 1024;

inline bool ShouldChunkStream(size_t entries, size_t bytes) {
  return entries > 2 * kStreamChunkEntries || bytes > 2 * kStreamChunkBytes;
}
inline bool ShouldUnchunkStream(size_t entries, size_t bytes) {
  return entries < kStreamChunkEntries / 4 && bytes < kStreamChunkBytes / 4;
}
inline bool StreamChunkFull(uint32_t entries, size_t bytes) {
  return entries >= kStreamChunkEntries || bytes >= kStreamChunkBytes;
}

// The chunk holding `entries` (id order, non-empty).
std::string EncodeStreamChunk(const StreamEntry* entries, size_t n);
// Appends the chunk's entries to *out (bodies are views into `chunk`). False if damaged.
bool DecodeStreamChunk(std::string_view chunk, std::vector<StreamEntry>* out);
// `chunk` with `id` (above its last entry) appended, in *out, without decoding it.
bool AppendStreamChunk(std::string_view chunk, StreamId id, std::string_view body,
                       std::string* out);
// The entry count and the last entry's ms of a chunk (false if it is too short).
bool StreamChunkHeader(std::string_view chunk, uint32_t* count, uint64_t* last_ms);

// Where to cut entries [begin, end) into chunks: piece starts (begin first), each piece within
// the chunk size where possible, cut only where the ms changes.
std::vector<size_t> StreamChunkCuts(const std::vector<StreamEntry>& e, size_t begin, size_t end);

// The root tail of `s`: its metadata and groups without its entries (see above).
std::string EncodeStreamMeta(const Stream& s);
// Fills everything but the entries of *out from a root tail.
bool DecodeStreamMeta(std::string_view tail, Stream* out);

}  // namespace lavik
