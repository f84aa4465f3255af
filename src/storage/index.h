// Index: one shard's compact DRAM key index — a 64-bit key fingerprint mapped to a 64-bit
// location word, 16 bytes per entry, in cache-line buckets. doc/index.md has the bit layouts, why
// a fingerprint is a safe identity, and the measured memory and speed.
//
// Shape: extendible hashing. A directory of 2^global_depth entries, indexed by the top bits of
// the fingerprint, points to segments; a segment owns the fingerprints with one prefix of
// local_depth bits and keeps them in an array of 64-byte buckets of 4 entries. Inside a segment
// the home bucket is a monotone function of the fingerprint bits below the prefix, so bucket
// order is fingerprint order (what SCAN relies on). Collisions probe linearly over buckets.
//
// Growth is incremental: a segment that is full is rebuilt alone — grown by one 4 KiB page while
// it is under 16 pages, split in two by the next fingerprint bit at 16 pages (64 KiB) — and the
// directory doubles (pointers only) when a split needs one more bit. No operation ever rehashes
// more than one segment (tens of microseconds). Growing a segment page by page instead of only
// splitting it keeps the load between ~80% and ~92% at every size, where plain extendible hashing
// swings between 50% and full. Segments shrink again when erases empty them.
//
// Memory: each segment lives in its own 64 KiB range of reserved address space, so it grows in
// place and returns freed pages to the OS (madvise): no allocator fragmentation, and the process
// RSS tracks memory_bytes().
//
// Caller's invariants: fp != 0 (Fingerprint never returns 0); loc != 0 and bit 63 of loc is 0
// (the index keeps bookkeeping bits there). Violations are caught by assert in debug builds.
//
// Thread safety: none. An Index belongs to one worker; no method may run concurrently with a
// mutating one. Callbacks passed to Scan/ForEach must not modify the index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lavik {

class Index {
 public:
  // One entry, 16 bytes:
  //   word 0  bits 0..63  fp    key fingerprint (XXH3_64 of the key); 0 = free slot
  //   word 1  bits 0..62  loc   the caller's location word, opaque to the index
  //           bit  63     reserved: the bucket's bookkeeping (slot 0: overflow mark, slots 1..3:
  //                       the 3-bit reach of the bucket; see Bucket)
  struct Entry {
    uint64_t fp;
    uint64_t loc;
  };
  static_assert(sizeof(Entry) == 16);

  // Bit 63 of a location word belongs to the index.
  static constexpr uint64_t kReservedLocBit = uint64_t{1} << 63;

  Index();
  ~Index();
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;
  Index(Index&& other) noexcept;
  Index& operator=(Index&& other) noexcept;

  // XXH3_64 of the stored key, with the key's physical database (base/db_key.h) in its low bits:
  // bit 0 is 0 for database 0 (never 0: 0 marks a free slot); for database d > 0 bit 0 is 1 and
  // bits 1..4 hold d. So per-database counts, FLUSHDB, SCAN and RANDOMKEY filter by database from
  // the index alone. The fingerprint is the key's identity inside the index; callers compare the
  // key stored in the record on every read.
  //
  // Cluster layout (SetSlotFingerprints(true), for cluster mode): a database-0 key's fingerprint
  // carries its Redis Cluster hash slot (base/slot.h) in its top 14 bits, so a slot's keys are
  // one contiguous fingerprint range — found by Scan from SlotStart(slot) without reading the
  // device (CLUSTER GETKEYSINSLOT, commands/slot_keys.h). Bit 0 stays 0 and bits 1..49 come from
  // XXH3. Databases d > 0 keep the plain layout (a cluster has only database 0).
  static uint64_t Fingerprint(std::string_view key);
  // The physical database of a fingerprint.
  static int FpDb(uint64_t fp) { return (fp & 1) != 0 ? static_cast<int>((fp >> 1) & 0xF) : 0; }
  static constexpr uint64_t kDbMask = 0x1F;

  // Process-wide, set once at start-up before any index holds an entry (cluster mode on). A
  // checkpoint records the layout it was written with; another layout's checkpoint is not loaded.
  static void SetSlotFingerprints(bool on) { slot_fps_ = on; }
  static bool slot_fingerprints() { return slot_fps_; }
  static constexpr int kSlotShift = 50;
  // Cluster layout, database 0: the slot of a fingerprint, and the first fingerprint of a slot.
  static uint16_t FpSlot(uint64_t fp) { return static_cast<uint16_t>(fp >> kSlotShift); }
  static uint64_t SlotStart(uint16_t slot) { return uint64_t{slot} << kSlotShift; }

  // Stores the entry's location word in *loc and returns true, or returns false if fp is absent.
  bool Get(uint64_t fp, uint64_t* loc) const;
  // Replaces the location of an existing entry; returns false (and changes nothing) if absent.
  bool Set(uint64_t fp, uint64_t loc);
  // Inserts fp → loc or replaces the location of an existing fp. Returns the previous location,
  // or 0 if fp was inserted. An insert may rebuild one segment or double the directory.
  uint64_t Upsert(uint64_t fp, uint64_t loc);
  // Removes fp; stores its location in *old_loc unless old_loc is nullptr. False if absent. May
  // move other entries of the segment and shrink it.
  bool Erase(uint64_t fp, uint64_t* old_loc);
  // Hints the CPU to load fp's home bucket (batched lookups: prefetch every key, then Get each).
  void Prefetch(uint64_t fp) const;

  size_t size() const { return size_; }
  // Resident bytes the index holds: segment pages, the rebuild buffer and the directory.
  size_t memory_bytes() const {
    return segment_bytes_ + scratch_bytes_ + dir_.capacity() * sizeof(Dir);
  }
  size_t segment_count() const { return segment_count_; }
  int global_depth() const { return global_depth_; }

  using Visitor = std::function<void(uint64_t fp, uint64_t loc)>;

  // Visits entries in fingerprint order starting at fingerprint `cursor` (0 = the start) until at
  // least `count` entries were visited or the end, and returns the cursor to continue from (0 =
  // done). A cursor is a fingerprint value at a home-bucket boundary, so it stays meaningful
  // across growth, splits and shrinks: an entry present for the whole iteration is visited at
  // least once, as Redis's SCAN guarantees. One call visits an entry at most once; consecutive
  // calls visit disjoint fingerprint ranges.
  uint64_t Scan(uint64_t cursor, size_t count, const Visitor& fn) const;
  // Visits every entry once, in no particular order.
  void ForEach(const Visitor& fn) const;
  // Picks some entry using `rnd` (any random 64-bit value); false if the index is empty. Every
  // entry can be picked, though not with exactly equal probability (as Redis's dictGetRandomKey).
  bool Random(uint64_t rnd, uint64_t* fp, uint64_t* loc) const;
  // Frees everything; the index is back to one one-page segment.
  void Clear();

  // For tests: checks every invariant (directory, counts, marks, reaches, reachability) in
  // O(size); returns "" or a description of the first violation.
  std::string Validate() const;

 private:
  // One cache line. Bit 63 of the loc words holds bookkeeping:
  //   slot 0: the overflow mark — an insert passed this bucket while it was full, so some entry
  //           homed at or before this bucket lives after it. Kept exact (erase clears marks that
  //           no entry needs); erase, SCAN and the slow lookup path follow runs of marks.
  //   slots 1..3: the reach code, bits 0..2 — a bound on the displacement (in buckets) of the
  //           entries homed here (codes 0..6: 0, 1, 2, 3, 5, 8, 16 buckets; 7: none, follow the
  //           overflow marks). A lookup probes home..home+bound only: two thirds of misses read
  //           one bucket, and a crowded neighbourhood costs misses far less than its run of marks.
  struct alignas(64) Bucket {
    Entry slot[4];
  };
  static_assert(sizeof(Bucket) == 64);

  // Directory entry: the segment owning this fp prefix. All entries pointing to one segment are
  // identical. Geometry and count live here rather than in a segment header so a lookup reads
  // the directory (small, hot) and one bucket line, and an insert or erase touches no other line.
  struct Dir {
    Bucket* buckets;
    uint32_t count;            // entries in the segment
    uint32_t pages : 24;       // segment size in 4 KiB pages of 64 buckets
    uint32_t local_depth : 8;  // the segment owns the fps whose top local_depth bits match
  };
  static_assert(sizeof(Dir) == 16);

  size_t DirIndex(uint64_t fp) const {
    return static_cast<size_t>((fp >> 1) >> (63 - global_depth_));
  }
  // The smallest fingerprint that directory entry idx covers.
  uint64_t IndexStart(size_t idx) const {
    return global_depth_ == 0 ? 0 : uint64_t{idx} << (64 - global_depth_);
  }
  // The home bucket of fp in a segment of local_depth: the bits below the segment's prefix,
  // scaled to nbuckets, so it is monotone in fp within the segment.
  static uint32_t Home(uint64_t fp, uint32_t local_depth, uint32_t nbuckets) {
    const unsigned __int128 below = fp << local_depth;
    return static_cast<uint32_t>((below * nbuckets) >> 64);
  }
  static uint32_t NBuckets(const Dir& d) { return d.pages * 64; }

  Entry* Lookup(uint64_t fp) const;
  void Insert(uint64_t fp, uint64_t loc);
  // Puts an absent fp into the first free slot within max_probe buckets of its home, keeping the
  // marks and reach; false (nothing changed) if there is none.
  static bool Place(const Dir& d, uint64_t fp, uint64_t loc, uint32_t max_probe);
  static void NoteDisplacement(const Dir& d, uint32_t home, uint32_t pos);
  static void RepairBookkeeping(const Dir& d, uint32_t lo, uint32_t hole);
  void AddCount(size_t dir_index, int delta);

  // Grows or splits the segment owning fp; false if neither is allowed (adversarial input).
  bool MakeRoom(uint64_t fp);
  void Resize(size_t dir_index, uint32_t pages);  // rebuilds the segment with `pages` pages
  void Split(size_t dir_index);
  static void Refill(const Bucket* src, uint32_t src_buckets, const Dir* to, int halves);
  void DoubleDirectory();
  void InstallSegment(const Dir& d, uint64_t prefix);
  // Copies a segment's buckets into scratch_ (or *spill, for an oversized one).
  const Bucket* CopyOut(const Dir& d, std::vector<Bucket>* spill);
  Bucket* Reshape(const Dir& old, uint32_t pages);
  Bucket* AllocSegment(uint32_t pages);  // zeroed memory for a segment of `pages` pages
  void FreeSegment(Bucket* buckets, uint32_t pages);
  char* NewExtent();
  void ReleaseAll();

  static inline bool slot_fps_ = false;

  std::vector<Dir> dir_;
  int global_depth_ = 0;
  size_t size_ = 0;
  size_t segment_count_ = 0;
  size_t segment_bytes_ = 0;  // pages of live segments
  size_t scratch_bytes_ = 0;  // pages of scratch_ touched so far
  // Reserved address space: regions of 64 KiB extents, one extent per segment.
  struct Region {
    char* base;
    size_t extents;
  };
  std::vector<Region> regions_;
  size_t next_extent_ = 0;           // in regions_.back()
  std::vector<char*> free_extents_;  // extents given up by segments that went oversized
  Bucket* scratch_ = nullptr;        // an extent: a copy of the segment being rebuilt
};

}  // namespace lavik
