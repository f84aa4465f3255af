// Chunked lists (doc/collections.md, "Lists"): a list longer than kListChunkEntries elements (or
// kListChunkBytes bytes) is stored as a chunk root (storage/chunked.h) plus chunks in list
// order, each a one-record list encoding (storage/list_record.h). The root's ChunkRef.count
// gives the positions; ChunkRef.first holds the list index of the chunk's first element (the
// running sum of the counts, checked on read), so the chunk of an index is a binary search.
//
// A rewrite reads only the chunks covering its window (list_access.h ListScope) and writes back
// only what changed: old chunks whose elements are unchanged at the window's edges keep their
// records, the rest of the window is cut into new chunks (copy-on-write: new numbers), and a
// small new piece is merged into a neighbouring kept chunk with room, so a push lands in the
// edge chunk until it is full and only then starts a new one. An emptied chunk is dropped.
//
// Thread safety: runs on the key's worker, like the handlers; the planning helpers are pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commands/list_access.h"
#include "runtime/task_of.h"
#include "storage/chunked.h"

namespace lavik {

// Chunk size limits (measured, doc/collections.md): a chunk holds at most this many elements
// and about this many encoded bytes (at least one element). A one-record list that outgrows
// them becomes chunked; a chunked list rewritten whole at half of them or less goes back to one
// record.
inline constexpr uint32_t kListChunkEntries = 4096;
inline constexpr size_t kListChunkBytes = 64 * 1024;

inline constexpr std::string_view kErrListCorrupt =
    "ERR data corruption: the list record of this key does not decode";

enum class ListChunkRead { kOk, kRetry, kError };

// Fills *out (a chunked list whose root is in out->record) with the chunks `scope` covers and
// the window view over them. kRetry: a chunk was gone (a writer replaced it after the root was
// read): read the root again.
TaskOf<ListChunkRead> ReadListChunks(Store& st, const ListScope& scope, ListRead* out,
                                     std::string* error);

// ParseChunkRoot plus the list invariants: every chunk non-empty, `first` the running count.
bool ParseListRoot(std::string_view value, ChunkRoot* root);

// Bytes an element takes in a list encoding (offset slot, length varint, bytes).
size_t ListElementBytes(std::string_view e);
// True if a one-record list of these elements is too big and must be chunked.
bool ListNeedsChunks(std::span<const std::string_view> e);

// Cuts `e` into consecutive chunk-sized pieces, greedily from the front; returns each piece's
// end index (the last is e.size()). None for an empty span.
std::vector<size_t> SplitListElements(std::span<const std::string_view> e);

// One piece of a rewritten window: an old chunk kept as is, or new elements [begin, end).
struct WindowPiece {
  bool keep = false;
  uint64_t number = 0;  // keep: the old chunk's number
  size_t begin = 0;
  size_t end = 0;
};

// Lays out the new window `e` that replaces the old chunks `old_refs` (holding `old`): keeps
// the old chunks unchanged at either edge, merges a small changed middle into an adjacent kept
// chunk with room, and splits the middle into new pieces.
std::vector<WindowPiece> PlanListWindow(std::span<const ChunkRef> old_refs,
                                        std::span<const std::vector<std::string_view>> old,
                                        std::span<const std::string_view> e,
                                        bool head_first = false);

// Sets every chunk's `first` to the running count and `total` to the sum.
void RenumberListRoot(ChunkRoot* root);

// LPOS: the indices of the matches of `element` in the list at `key` (list_ops.h FindPositions
// rules for rank, count and maxlen), reading a chunked list one chunk at a time in the search
// direction and stopping as soon as the answer is known, so a search need not hold the list.
// A missing key gives no match.
TaskOf<bool> FindListPositions(Store& st, std::string_view key, int64_t now_ms,
                               std::string_view element, int64_t rank, int64_t count,
                               int64_t maxlen, std::vector<int64_t>* out, std::string* error);

// If *value (the value of list `key`, just read) is a chunk root, replaces it with the whole
// list as one record: what a copy of the value under another key must hold, since the chunks
// belong to this key's collection id (a second root naming them would lose them to this key's
// next copy-on-write). COPY needs this for lists. O(n).
TaskOf<bool> ListAsOneRecord(Store& st, std::string_view key, int64_t now_ms, std::string* value,
                             std::string* error);

// RENAME of a list to a key in another hash slot: the chunks are routed by the source's slot,
// so a chunked value (in *value) becomes one record (ListAsOneRecord), which the next write at
// the destination chunks again. Within one slot the root moves as it is.
TaskOf<bool> PrepareListMove(Store& st, std::string_view src, std::string_view dst, int64_t now_ms,
                             std::string* value, std::string* error);

}  // namespace lavik
