// Streams as records (doc/collections.md, "Streams"): reading a stream key whole or by id window
// and writing it back, one record while small, a root plus id-range chunks (storage/
// stream_chunks.h, storage/chunked.h) when big. Implements ReadStream, ReadStreamWindow and
// StoreStream of commands/stream_access.h, plus the parts of XADD, XLEN and RENAME that must not
// decode a big stream.
//
// Thread safety: runs on the key's worker, like the handlers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "commands/stream_access.h"

namespace lavik {

inline constexpr std::string_view kErrStreamCorrupt =
    "ERR data corruption: the stream record of this key does not decode";

// The length and last id of a stream value (one record or root) without reading its entries;
// also how many entries were ever added, if `entries_added` is given.
bool StreamLengthAndLast(std::string_view value, uint64_t* length, StreamId* last,
                         uint64_t* entries_added = nullptr);

// XADD's fast path: writes `value` (the key's current value, at info.loc; empty if the key does
// not exist) with an entry `id` (above the last id) appended: a one-record stream is rewritten
// (and chunked once big), a chunked one rewrites only its last chunk (or starts a new one) and
// the root. *applied false: the key changed meanwhile (look again).
TaskOf<bool> AppendStreamValue(Store& st, std::string_view key, const KeyInfo& info,
                               std::string_view value, StreamId id, const std::string_view* fv,
                               size_t fv_count, bool* applied, std::string* error);

// If *value (the value of stream `key`, just read) is a chunk root, replaces it with the whole
// stream as one record: COPY must not name the source's chunks from a second root. O(n).
TaskOf<bool> StreamAsOneRecord(Store& st, std::string_view key, int64_t now_ms, std::string* value,
                               std::string* error);

// RENAME to another hash slot: a chunked stream's chunks must stay in their root's slot, so the
// destination gets the whole stream as one record in *value (chunked again by its next write).
TaskOf<bool> PrepareStreamMove(Store& st, std::string_view src, std::string_view dst,
                               ValueType type, int64_t now_ms, std::string* value,
                               std::string* error);

}  // namespace lavik
