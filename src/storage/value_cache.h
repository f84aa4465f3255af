// ValueCache: one shard's bounded DRAM cache of hot values whose home is the SSD. Entries are
// keyed by the key's 64-bit fingerprint and tagged with the device location of the record the
// value was read from; a lookup must name the location the index holds now, so a value cached
// for an older version of the key is never served (it is dropped on sight).
//
// Policy: S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction", SOSP'23).
//   - New entries enter a small FIFO (target 10% of capacity); the main FIFO holds the rest.
//   - Each entry has a 2-bit access counter, incremented on a hit (saturating at 3).
//   - Evicting the small queue's tail: accessed since insertion -> moved to main (counter reset);
//     otherwise dropped and its fingerprint remembered in the ghost FIFO (no value).
//   - An insert whose fingerprint is in the ghost goes straight to main: it was evicted from
//     small too early, i.e. its reuse distance is longer than small but within the cache.
//   - Evicting the main queue's tail: counter > 0 -> decrement and reinsert at the head;
//     otherwise dropped.
// The small queue is evicted while it is over its target, main otherwise. A one-pass scan of
// cold keys therefore only churns the small queue (and the ghost); entries in main that are
// still being read survive it.
//
// Memory accounting: bytes() = sum over entries of (value size + kEntryOverhead), and bytes() <=
// capacity() whenever Put/SetCapacity return. kEntryOverhead is an estimate of what one entry
// costs beyond its value bytes on LP64 glibc (see the constant); the ghost is bounded by the
// estimated number of entries main can hold, and its share is folded into the same constant.
//
// Thread safety: none; a ValueCache belongs to one worker (shard), like the rest of the shard.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/flat_map.h"
#include "base/prefetch.h"

namespace lavik {

class ValueCache {
 public:
  // Per-entry cost charged on top of the value bytes, with glibc malloc's 8-byte header and
  // 16-byte rounding: the Node (72 B -> 80), its index slot (16 B at a load of 0.35-0.7: ~32),
  // the value's heap block when longer than the SSO buffer (~16 header + rounding), and the
  // ghost slot an entry may leave behind (ring slot 8-16 + index slot ~32 = 48; the ghost never
  // holds more fingerprints than there are entries).
  static constexpr size_t kEntryOverhead = 80 + 32 + 8 + 16 + 48;
  // Nodes kept for reuse after eviction, with their value buffers (at most kSpareValueBytes
  // each), so the steady state of a cache under misses (one Put, one eviction) allocates
  // nothing. Not charged to bytes(): at most kSpareNodes * (80 + kSpareValueBytes) per shard.
  static constexpr size_t kSpareNodes = 8;
  static constexpr size_t kSpareValueBytes = 16 * 1024;

  // capacity_bytes == 0 disables the cache: Get always misses and Put is a no-op.
  explicit ValueCache(size_t capacity_bytes);
  ~ValueCache();
  ValueCache(const ValueCache&) = delete;
  ValueCache& operator=(const ValueCache&) = delete;

  // The cached value of fingerprint `fp` at record location `loc`, or nullptr (a miss). An entry
  // for fp cached at another location is an older version: it is dropped and this is a miss.
  // The pointer stays valid until the next non-const call. Never allocates.
  const std::string* Get(uint64_t fp, uint64_t loc);
  // As Get, without touching anything (no counters, no frequency, no drop): a reader of an older
  // version (a snapshot's walk, storage/store.h) must not evict the current one.
  const std::string* Peek(uint64_t fp, uint64_t loc) const;
  // Hints for lookups of a batch of fingerprints coming up (Store::PrefetchFlush), one step at a
  // time over the batch so the misses overlap: PrefetchSlot for each (the index slot); then
  // PrefetchBatch, which loads each entry the slots point at, then each entry's value bytes.
  static constexpr size_t kPrefetchValueBytes = 4096;
  static constexpr size_t kPrefetchBatchMax = 32;
  void PrefetchSlot(uint64_t fp) const {
    if (capacity_ != 0) index_.Prefetch(fp);
  }
  void PrefetchBatch(const uint64_t* fps, size_t n) const {
    if (capacity_ == 0) return;
    std::array<const Node*, kPrefetchBatchMax> nodes;
    n = std::min(n, nodes.size());
    for (size_t i = 0; i < n; ++i) {
      Node* const* slot = index_.Find(fps[i]);
      nodes[i] = slot != nullptr ? *slot : nullptr;
      if (nodes[i] != nullptr) {
        Prefetch(nodes[i]);
        Prefetch(reinterpret_cast<const char*>(nodes[i]) + 64);
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (nodes[i] == nullptr) continue;
      const std::string& v = nodes[i]->value;
      const size_t len = std::min<size_t>(v.size(), kPrefetchValueBytes);
      for (size_t off = 0; off < len; off += 64) PrefetchOuter(v.data() + off);
    }
  }

  // Caches a copy of `value` for (fp, loc), replacing any entry for fp (which keeps its queue
  // position and access counter). Values longer than capacity()/8, or whose charge would not fit
  // at all, are not cached (any entry for fp is still dropped). Evicts until bytes() <= capacity.
  void Put(uint64_t fp, uint64_t loc, std::string_view value);

  // The record of fp moved from old_loc to new_loc with the same value (e.g. defrag relocated
  // it): re-tags the entry, no copy. An entry for fp at a location other than old_loc/new_loc is
  // stale and is dropped.
  void Move(uint64_t fp, uint64_t old_loc, uint64_t new_loc);

  // Drops the entry for fp (and forgets it in the ghost): the key was deleted or overwritten.
  void Erase(uint64_t fp);
  // Drops every entry and the ghost (FLUSHALL). Counters are cumulative and are kept.
  void Clear();
  // Evicts down to the new capacity (0 disables the cache and clears it).
  void SetCapacity(size_t capacity_bytes);

  size_t capacity() const { return capacity_; }
  size_t bytes() const { return small_.bytes + main_.bytes; }
  size_t entries() const { return small_.entries + main_.entries; }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  // Entries dropped to make room (not Erase/Clear/stale-version drops).
  uint64_t evictions() const { return evictions_; }

  // What the entry for (fp, loc) is charged (0 if not cached), without counting an access
  // (MEMORY USAGE).
  size_t ChargeOf(uint64_t fp, uint64_t loc) const;

  // Introspection for metrics and tests.
  size_t small_bytes() const { return small_.bytes; }
  size_t main_bytes() const { return main_.bytes; }
  size_t ghost_entries() const { return ghost_index_.size(); }

 private:
  struct Node {
    Node* prev;  // towards the head (newer)
    Node* next;  // towards the tail (older)
    uint64_t fp;
    uint64_t loc;
    std::string value;
    uint8_t freq;  // 0..3, hits since insertion (small) or since last pass over the tail (main)
    bool in_main;
  };

  // Intrusive doubly linked FIFO: push at the head, evict at the tail; entries can also leave
  // from the middle (Erase, stale version).
  struct Queue {
    Node* head = nullptr;
    Node* tail = nullptr;
    size_t bytes = 0;
    size_t entries = 0;
  };

  static size_t Charge(size_t value_size) { return value_size + kEntryOverhead; }
  Queue& QueueOf(const Node* n) { return n->in_main ? main_ : small_; }
  static void PushHead(Queue& q, Node* n);
  static void Unlink(Queue& q, Node* n);

  void Remove(Node* n);  // unlinks, unindexes and frees (or keeps as a spare) n
  Node* NewNode(uint64_t fp, uint64_t loc, std::string_view value, bool in_main);
  void FreeNode(Node* n);
  void EvictToCapacity();
  void EvictSmallTail();
  void EvictMainTail();

  void PushGhost(uint64_t fp);
  bool TakeGhost(uint64_t fp);  // true if fp was in the ghost (and removes it)
  void PopGhost();

  size_t capacity_ = 0;
  size_t small_target_ = 0;  // capacity_ / 10
  Queue small_;
  Queue main_;
  FlatMap<Node*> index_;  // fp -> entry (fingerprints are never 0)

  Node* spare_ = nullptr;  // singly linked through next
  size_t spare_count_ = 0;

  // Ghost FIFO of fingerprints evicted from small: a ring (power-of-two size) whose i-th slot
  // from the front has sequence number ghost_front_seq_ + i; ghost_index_ maps a remembered fp
  // to the sequence number of its live slot, so a slot whose fp was since taken, erased or
  // re-pushed is recognised as stale. Both are flat arrays: no allocation per push or pop.
  std::vector<uint64_t> ghost_ring_;
  size_t ghost_head_ = 0;  // ring index of the front
  size_t ghost_size_ = 0;  // slots in the FIFO, live or stale
  FlatMap<uint64_t> ghost_index_;
  uint64_t ghost_front_seq_ = 0;

  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
  uint64_t evictions_ = 0;
};

}  // namespace lavik
