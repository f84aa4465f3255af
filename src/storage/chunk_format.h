// Chunked values (doc/collections.md, "Large collections"): a value too big to rewrite on every
// change is stored as a small ROOT record under its key plus CHUNK records under internal keys.
// This header is the format and the bookkeeping the Store itself needs: the internal chunk keys,
// the root format and the registry of live roots and dead chunks. The operations over a Store
// (the copy-on-write commit, the background free, reading a chunk) are storage/chunked.h. What a
// chunk holds (hash, set and zset entries by member hash, list elements by position, stream
// entries by id) is the caller's business.
//
// Chunk key: "\xff\xfe" "C{" tag "}" id(8) number(8). `tag` is two bytes whose CRC16 falls in the
// parent's hash slot, so the ordinary KeyHashSlot routes the chunk to the parent's shard — at
// run time and at recovery under any --threads — while neither the parent's name nor the slot
// function changes (CLUSTER KEYSLOT of client keys is untouched). Chunk records have the
// internal value type kChunk, which KEYS/SCAN/RANDOMKEY/DBSIZE skip.
//
// Root value (little-endian):
//   u8 version (2) | u8 flags (the encoding's; bit 0: entries carry values) | u16 slot of the
//   chunks | u32 chunk count | u64 total entry count | u64 collection id | u64 next chunk number
//   then per chunk, in key order: u64 first order key (0 for the first chunk) | u64 chunk number
//   | u32 entry count | u32 zero
//   then, only if flags bit 7 is set, an opaque tail (the encoding's own metadata: a stream's
//   header and consumer groups) running to the end of the value.
// Chunk i covers order keys [first_i, first_{i+1}). Chunk numbers are never reused within a
// collection: a changed chunk is written under a new number (copy-on-write), so a reader holding
// an old root finds either the chunk it expects or nothing (then it re-reads the root).
//
// Thread safety: a ChunkRegistry belongs to one Store's worker.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "storage/value_type.h"

namespace lavik {

inline constexpr std::string_view kChunkKeyPrefix =
    "\xff\xfe"
    "C{";
inline constexpr uint8_t kRootVersion = 2;
// Root flags bit 7: ChunkRoot::tail follows the chunk list.
inline constexpr uint8_t kRootFlagTail = 0x80;

// The internal key of chunk `number` of collection `id` whose parent lives in hash slot `slot`.
std::string ChunkKey(uint16_t slot, uint64_t id, uint64_t number);
bool IsChunkKey(std::string_view key);
// The parts of a chunk key; false if `key` is not one.
bool ParseChunkKey(std::string_view key, uint16_t* slot, uint64_t* id, uint64_t* number);

struct ChunkRef {
  uint64_t first = 0;   // first order key the chunk covers
  uint64_t number = 0;  // its chunk number (part of its key)
  uint32_t count = 0;   // entries in it
};

struct ChunkRoot {
  uint8_t flags = 0;
  uint16_t slot = 0;
  uint64_t total = 0;
  uint64_t id = 0;
  uint64_t next_number = 1;
  std::vector<ChunkRef> chunks;
  std::string tail;  // written (and read) only with kRootFlagTail in flags

  // A number for a new chunk, never handed out before on this thread nor named by this root.
  // Not just next_number++: two commands on one worker can read the same root while they wait
  // for chunk reads; with equal numbers the loser's chunk write would overwrite the winner's
  // chunk and its clean-up delete it. Every write of a key runs on its worker's thread, so a
  // per-thread floor makes the numbers handed out there distinct; the root persists the next.
  uint64_t TakeNumber();
  // Index of the chunk covering order key `k` (chunks non-empty).
  size_t ChunkOf(uint64_t k) const;
  // First order key past chunk i (0 = the end of the key space).
  uint64_t EndOf(size_t i) const { return i + 1 < chunks.size() ? chunks[i + 1].first : 0; }
};

// True if `value` is a root (its version byte says 2); version-1 encodings start with 1.
inline bool IsChunkRoot(std::string_view value) {
  return !value.empty() && static_cast<uint8_t>(value[0]) == kRootVersion;
}
bool ParseChunkRoot(std::string_view value, ChunkRoot* out);
std::string EncodeChunkRoot(const ChunkRoot& root);
// A fresh collection id (random; unique with overwhelming probability).
uint64_t NewChunkedId();

// Which live roots reference which chunks, per Store, and the queue of chunks of dead roots
// that the background sweep deletes. Store calls NoteRoot on every write of a root value
// (including recovery and reads that meet a root) and KeyDying when a key's record is replaced,
// deleted or expired; the registry sees every path a root can die by (DEL, UNLINK, overwrite,
// RENAME onto it, expiry) without any command knowing about chunks. A collection id is swept
// only once no key refers to it (RENAME writes the destination before deleting the source).
class ChunkRegistry {
 public:
  // `fp` now holds `value` (a root or not).
  void NoteWrite(uint64_t fp, std::string_view value, bool is_collection);
  // Records what a read found (a root not seen since start-up).
  void NoteRead(uint64_t fp, const ChunkRoot& root);
  // `fp`'s record is gone (deleted, expired or replaced by a non-root).
  void KeyDying(uint64_t fp);
  // FLUSHALL: the chunks go with every other record.
  void Clear();

  // A root that died unseen (its record read afterwards): its chunks go to the sweep unless
  // another key refers to its collection.
  void QueueUnreferenced(const ChunkRoot& root);
  bool known(uint64_t fp) const { return roots_.count(fp) != 0; }

  size_t pending() const { return queue_.size(); }
  bool referenced(uint64_t id) const { return refs_.count(id) != 0; }
  size_t roots() const { return roots_.size(); }
  struct Dead {
    uint16_t slot;
    uint64_t id;
    uint64_t number;
  };
  // Takes up to `max` queued chunks; Requeue puts one back (its deletion failed).
  std::vector<Dead> Take(size_t max);
  void Requeue(const Dead& d) { queue_.push_back(d); }

 private:
  struct Known {
    uint64_t id;
    uint16_t slot;
    std::vector<uint64_t> numbers;
  };
  void Forget(uint64_t fp, bool sweep);

  std::unordered_map<uint64_t, Known> roots_;    // key fingerprint → its root's chunks
  std::unordered_map<uint64_t, uint32_t> refs_;  // collection id → keys referring to it
  std::deque<Dead> queue_;
};

}  // namespace lavik
