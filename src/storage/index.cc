#include "storage/index.h"

#include <sys/mman.h>
#include <xxhash.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "base/db_key.h"
#include "base/prefetch.h"
#include "base/slot.h"

namespace lavik {
namespace {

constexpr uint64_t kMark = Index::kReservedLocBit;
constexpr int kSlots = 4;
// Segments grow by fill level (kGrow below), not by probe length: with linear probing the longest
// run in a segment varies a lot at a given fill, and growing on a long probe would ratchet memory
// up under insert/erase churn. kMaxProbe is a safety valve: an insert that finds no free slot
// within it grows the segment anyway; uniform fingerprints never get near it.
constexpr uint32_t kMaxProbe = 256;
// A bucket's 3-bit reach code bounds the displacement of the entries homed there; the bounds
// grow so that a few far-displaced entries do not send every miss down a long run of marks.
// Code 7: no bound, follow the marks.
constexpr uint32_t kReachFollowMarks = 7;
constexpr uint32_t kReachBound[kReachFollowMarks] = {0, 1, 2, 3, 5, 8, 16};
// Segment geometry: whole 4 KiB pages of 64 buckets, from 1 to kMaxPages.
constexpr size_t kPageBytes = 4096;
constexpr uint32_t kBucketsPerPage = kPageBytes / 64;
constexpr uint32_t kMaxPages = 16;
constexpr size_t kExtentBytes = kMaxPages * kPageBytes;
constexpr uint32_t kMaxOversizePages = (1u << 24) - 1;  // Dir::pages; adversarial input only
// Fill levels, as fractions of the segment's slots (num / den):
// grow (or split) before an insert that would pass kGrow;
constexpr size_t kGrowNum = 23, kGrowDen = 25;  // 92%
// a rebuilt segment (split halves, shrinks) is sized to be at most kTarget full;
constexpr size_t kTargetNum = 17, kTargetDen = 20;  // 85%
// shrink when an erase leaves it under kShrink (and a smaller size fits).
constexpr size_t kShrinkNum = 1, kShrinkDen = 2;  // 50%
// The directory doubles freely up to kDirFreeEntries entries; beyond that only while it is
// smaller than a quarter of the segments' bytes (so after doubling at most half). Uniform
// fingerprints need ~1 entry per segment (~1/2500 of its bytes); fingerprints crafted to share a
// long prefix would otherwise blow the directory up (doc/index.md, "Skewed fingerprints").
constexpr size_t kDirFreeEntries = size_t{1} << 12;
constexpr int kMaxGlobalDepth = 40;
// Reserved address space comes in regions of extents, doubling up to kMaxRegionExtents.
constexpr size_t kFirstRegionExtents = 16;
constexpr size_t kMaxRegionExtents = 4096;

size_t SlotsOf(uint32_t pages) { return size_t{pages} * kBucketsPerPage * kSlots; }
size_t GrowAt(uint32_t pages) { return SlotsOf(pages) * kGrowNum / kGrowDen; }
size_t ShrinkAt(uint32_t pages) { return SlotsOf(pages) * kShrinkNum / kShrinkDen; }

// Pages for a segment rebuilt with `count` entries: kTarget full; past kMaxPages (oversized
// segments, adversarial input only) just enough to take a few more entries.
uint32_t SizeFor(size_t count) {
  const size_t slots = (count * kTargetDen + kTargetNum - 1) / kTargetNum;
  size_t pages = std::max<size_t>(1, (slots + SlotsOf(1) - 1) / SlotsOf(1));
  if (pages > kMaxPages) pages = std::max<size_t>(kMaxPages, (count + 4 + SlotsOf(1)) / SlotsOf(1));
  return static_cast<uint32_t>(std::min<size_t>(pages, kMaxOversizePages));
}

uint32_t Next(uint32_t i, uint32_t n) { return i + 1 == n ? 0 : i + 1; }
uint32_t Prev(uint32_t i, uint32_t n) { return i == 0 ? n - 1 : i - 1; }
// Buckets from `from` forward to `to` in a segment of n buckets (both < n).
uint32_t Dist(uint32_t from, uint32_t to, uint32_t n) {
  return to >= from ? to - from : to + n - from;
}

// The top `bits` bits of fp (bits in 0..64).
uint64_t TopBits(uint64_t fp, uint32_t bits) {
  return bits == 0 ? 0 : fp & ~(~uint64_t{0} >> bits);
}

// Bit s set iff slot s holds fp (fp = 0: iff slot s is free). A mask instead of four early
// exits: which slot matches is unpredictable.
template <typename B>
unsigned MatchMask(const B& b, uint64_t fp) {
  return unsigned{b.slot[0].fp == fp} | unsigned{b.slot[1].fp == fp} << 1 |
         unsigned{b.slot[2].fp == fp} << 2 | unsigned{b.slot[3].fp == fp} << 3;
}

uint32_t ReachCode(uint32_t displacement) {
  uint32_t code = 0;
  while (code < kReachFollowMarks && kReachBound[code] < displacement) ++code;
  return code;
}

template <typename B>
uint32_t Reach(const B& b) {
  return static_cast<uint32_t>((b.slot[1].loc >> 63) | (b.slot[2].loc >> 63) << 1 |
                               (b.slot[3].loc >> 63) << 2);
}

template <typename B>
void SetReach(B& b, uint32_t reach) {
  for (int s = 1; s < kSlots; ++s) {
    b.slot[s].loc = (b.slot[s].loc & ~kMark) | (uint64_t{(reach >> (s - 1)) & 1} << 63);
  }
}

// Smallest fingerprint of the segment (base, local_depth, nbuckets) whose home bucket is >= i;
// for i == nbuckets, the first fingerprint after the segment (0 after the last one).
uint64_t BucketStart(uint64_t base, uint32_t local_depth, uint32_t nbuckets, uint32_t i) {
  const unsigned __int128 span = static_cast<unsigned __int128>(1) << (64 - local_depth);
  const unsigned __int128 off = (span * i + nbuckets - 1) / nbuckets;
  return static_cast<uint64_t>(base + off);
}

void* MapOrThrow(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}

}  // namespace

Index::Index() { Clear(); }

Index::~Index() { ReleaseAll(); }

Index::Index(Index&& other) noexcept : Index() { *this = std::move(other); }

Index& Index::operator=(Index&& other) noexcept {
  std::swap(dir_, other.dir_);
  std::swap(global_depth_, other.global_depth_);
  std::swap(size_, other.size_);
  std::swap(segment_count_, other.segment_count_);
  std::swap(segment_bytes_, other.segment_bytes_);
  std::swap(scratch_bytes_, other.scratch_bytes_);
  std::swap(regions_, other.regions_);
  std::swap(next_extent_, other.next_extent_);
  std::swap(free_extents_, other.free_extents_);
  std::swap(scratch_, other.scratch_);
  return *this;
}

uint64_t Index::Fingerprint(std::string_view key) {
  const uint64_t h = XXH3_64bits(key.data(), key.size());
  const SplitKey k = SplitDbKey(key);
  if (k.db != 0) return (h & ~kDbMask) | (static_cast<uint64_t>(k.db) << 1) | 1;
  if (slot_fps_) {
    const uint64_t fp = SlotStart(KeyHashSlot(k.key)) | (h & ((uint64_t{1} << kSlotShift) - 2));
    return fp == 0 ? 2 : fp;
  }
  const uint64_t fp = h & ~uint64_t{1};
  return fp == 0 ? 2 : fp;
}

// ---------------------------------------------------------------------------------------------
// Lookups

Index::Entry* Index::Lookup(uint64_t fp) const {
  const Dir& d = dir_[DirIndex(fp)];
  const uint32_t n = NBuckets(d);
  uint32_t i = Home(fp, d.local_depth, n);
  Bucket* b = &d.buckets[i];
  unsigned match = MatchMask(*b, fp);
  if (match != 0) return &b->slot[__builtin_ctz(match)];
  const uint32_t reach = Reach(*b);
  if (reach < kReachFollowMarks) {
    for (uint32_t k = 0; k < kReachBound[reach]; ++k) {
      i = Next(i, n);
      b = &d.buckets[i];
      match = MatchMask(*b, fp);
      if (match != 0) return &b->slot[__builtin_ctz(match)];
    }
    return nullptr;
  }
  // A long displacement (crowded or adversarial segment): follow the run of marks.
  for (uint32_t probes = 1; probes < n && (b->slot[0].loc & kMark) != 0; ++probes) {
    i = Next(i, n);
    b = &d.buckets[i];
    match = MatchMask(*b, fp);
    if (match != 0) return &b->slot[__builtin_ctz(match)];
  }
  return nullptr;
}

bool Index::Get(uint64_t fp, uint64_t* loc) const {
  assert(fp != 0);
  const Entry* e = Lookup(fp);
  if (e == nullptr) return false;
  *loc = e->loc & ~kMark;
  return true;
}

bool Index::Set(uint64_t fp, uint64_t loc) {
  assert(fp != 0 && loc != 0 && (loc & kMark) == 0);
  Entry* e = Lookup(fp);
  if (e == nullptr) return false;
  e->loc = (e->loc & kMark) | loc;
  return true;
}

void Index::Prefetch(uint64_t fp) const {
  const Dir& d = dir_[DirIndex(fp)];
  lavik::Prefetch(&d.buckets[Home(fp, d.local_depth, NBuckets(d))]);
}

// ---------------------------------------------------------------------------------------------
// Insert

uint64_t Index::Upsert(uint64_t fp, uint64_t loc) {
  assert(fp != 0 && loc != 0 && (loc & kMark) == 0);
  if (Entry* e = Lookup(fp)) {
    const uint64_t old = e->loc & ~kMark;
    e->loc = (e->loc & kMark) | loc;
    return old;
  }
  Insert(fp, loc);
  ++size_;
  return 0;
}

void Index::Insert(uint64_t fp, uint64_t loc) {
  for (;;) {
    const size_t idx = DirIndex(fp);
    const Dir& d = dir_[idx];
    const uint32_t n = NBuckets(d);
    if (d.count < GrowAt(d.pages) && Place(d, fp, loc, std::min(kMaxProbe, n))) break;
    if (MakeRoom(fp)) continue;
    // The segment may neither grow nor split (the directory limit, reached only with crafted
    // fingerprints; MakeRoom changed nothing). Grow it past the usual size by fill, and place
    // with unbounded probing: memory stays proportional to the entries; the crafted entries
    // and their neighbours pay with long probes.
    if (d.count >= GrowAt(d.pages) && d.pages < kMaxOversizePages) {
      Resize(idx, std::min(kMaxOversizePages, d.pages + std::max<uint32_t>(1, d.pages / 8)));
      continue;
    }
    if (!Place(d, fp, loc, n)) std::abort();  // 16M crafted fingerprints in one segment
    break;
  }
  AddCount(DirIndex(fp), 1);
}

bool Index::Place(const Dir& d, uint64_t fp, uint64_t loc, uint32_t max_probe) {
  const uint32_t n = NBuckets(d);
  const uint32_t home = Home(fp, d.local_depth, n);
  uint32_t i = home;
  for (uint32_t probes = 0; probes < max_probe; ++probes) {
    Bucket& b = d.buckets[i];
    const unsigned free_slots = MatchMask(b, 0);
    if (free_slots != 0) {
      Entry& e = b.slot[__builtin_ctz(free_slots)];
      e.fp = fp;
      e.loc |= loc;  // a free slot's loc holds at most a bookkeeping bit
      if (i != home) NoteDisplacement(d, home, i);
      return true;
    }
    i = Next(i, n);
  }
  return false;
}

// An entry homed at `home` went to `pos`: the buckets in between were full, so they get the
// overflow mark, and the home's reach covers the distance.
void Index::NoteDisplacement(const Dir& d, uint32_t home, uint32_t pos) {
  const uint32_t n = NBuckets(d);
  for (uint32_t j = home; j != pos; j = Next(j, n)) d.buckets[j].slot[0].loc |= kMark;
  const uint32_t code = ReachCode(Dist(home, pos, n));
  Bucket& h = d.buckets[home];
  if (Reach(h) < code) SetReach(h, code);
}

// All directory entries of a segment are identical, its entry count included.
void Index::AddCount(size_t dir_index, int delta) {
  const int free_bits = global_depth_ - static_cast<int>(dir_[dir_index].local_depth);
  const size_t first = dir_index >> free_bits << free_bits;
  for (size_t j = first; j < first + (size_t{1} << free_bits); ++j) dir_[j].count += delta;
}

// ---------------------------------------------------------------------------------------------
// Erase

bool Index::Erase(uint64_t fp, uint64_t* old_loc) {
  assert(fp != 0);
  Entry* e = Lookup(fp);
  if (e == nullptr) return false;
  if (old_loc != nullptr) *old_loc = e->loc & ~kMark;
  const size_t idx = DirIndex(fp);
  const Dir& d = dir_[idx];
  const uint32_t n = NBuckets(d);
  Bucket* b = reinterpret_cast<Bucket*>(reinterpret_cast<uintptr_t>(e) & ~uintptr_t{63});
  const uint32_t erased_at = static_cast<uint32_t>(b - d.buckets);
  uint32_t hole = erased_at;
  int hole_slot = static_cast<int>(e - b->slot);
  // The earliest home whose entries move, as a (non-positive) offset from erased_at.
  int64_t first_home = -static_cast<int64_t>(Dist(Home(fp, d.local_depth, n), erased_at, n));
  // Backward shift (Knuth's algorithm R, per bucket): move a later entry homed at or before the
  // hole into it, then fill the hole that leaves, so displacements never outlive the entries
  // that caused them; without it insert/erase churn lengthens runs and probes for good. A
  // candidate beyond bucket q exists only if q carries the mark.
  uint32_t q = hole;
  for (uint32_t steps = 1; steps < n && (d.buckets[q].slot[0].loc & kMark) != 0; ++steps) {
    q = Next(q, n);
    const uint32_t gap = Dist(hole, q, n);
    Bucket& from = d.buckets[q];
    for (int s = 0; s < kSlots; ++s) {
      const uint64_t f = from.slot[s].fp;
      if (f == 0) continue;
      const uint32_t disp = Dist(Home(f, d.local_depth, n), q, n);
      if (disp < gap) continue;
      Entry& to = d.buckets[hole].slot[hole_slot];
      to.fp = f;
      to.loc = (to.loc & kMark) | (from.slot[s].loc & ~kMark);
      hole = q;
      hole_slot = s;
      first_home = std::min(first_home, static_cast<int64_t>(Dist(erased_at, q, n)) - disp);
      break;
    }
  }
  Entry& last = d.buckets[hole].slot[hole_slot];
  last.fp = 0;
  last.loc &= kMark;
  const uint32_t back = static_cast<uint32_t>(-first_home);  // < n
  RepairBookkeeping(d, erased_at >= back ? erased_at - back : erased_at + n - back, hole);

  --size_;
  AddCount(idx, -1);
  if (d.pages > 1 && d.count < ShrinkAt(d.pages) && SizeFor(d.count) < d.pages) {
    Resize(idx, SizeFor(d.count));
  }
  return true;
}

// After an erase: entries homed in [lo, hole] lost or shortened their displacement. Recomputes
// exactly, in one backward sweep, the marks of buckets [lo, hole) and the reaches of homes
// [lo, hole]. The entries that matter lie in [lo, hole] and in the run of marked buckets after it
// (an entry homed at or before j and living after j needs marks from j up to its bucket).
void Index::RepairBookkeeping(const Dir& d, uint32_t lo, uint32_t hole) {
  constexpr uint32_t kWindow = 2 * kMaxProbe;
  const uint32_t n = NBuckets(d);
  const uint32_t hole_x = Dist(lo, hole, n);  // positions are offsets from lo
  if (hole_x >= kWindow) return;  // only after adversarial inserts; stale bookkeeping is harmless
  uint32_t end_x = hole_x + 1;
  uint32_t q = hole;  // the bucket at end_x - 1
  while (end_x < n && (d.buckets[q].slot[0].loc & kMark) != 0) {
    ++end_x;
    q = Next(q, n);
  }
  uint8_t reach[kWindow];
  std::memset(reach, 0, hole_x + 1);
  int64_t min_start = INT64_MAX;  // smallest (position - displacement) of the entries after x
  for (uint32_t x = end_x; x-- > 0; q = Prev(q, n)) {
    Bucket& b = d.buckets[q];
    if (x < hole_x) {
      b.slot[0].loc = min_start <= x ? b.slot[0].loc | kMark : b.slot[0].loc & ~kMark;
    }
    for (const Entry& e : b.slot) {
      if (e.fp == 0) continue;
      const uint32_t disp = Dist(Home(e.fp, d.local_depth, n), q, n);
      const int64_t start = static_cast<int64_t>(x) - disp;
      min_start = std::min(min_start, start);
      if (start >= 0 && start <= hole_x) {
        reach[start] = static_cast<uint8_t>(std::max<uint32_t>(reach[start], ReachCode(disp)));
      }
    }
  }
  q = lo;
  for (uint32_t x = 0; x <= hole_x; ++x, q = Next(q, n)) SetReach(d.buckets[q], reach[x]);
}

// ---------------------------------------------------------------------------------------------
// Growth

bool Index::MakeRoom(uint64_t fp) {
  size_t idx = DirIndex(fp);
  const Dir& d = dir_[idx];
  if (d.pages < kMaxPages) {
    Resize(idx, d.pages + 1);
    return true;
  }
  if (static_cast<int>(d.local_depth) == global_depth_) {
    const bool may_double =
        global_depth_ < kMaxGlobalDepth &&
        (dir_.size() < kDirFreeEntries || dir_.size() * sizeof(Dir) < segment_bytes_ / 4);
    if (!may_double) return false;
    DoubleDirectory();
    idx = DirIndex(fp);
  }
  Split(idx);
  return true;
}

void Index::Resize(size_t dir_index, uint32_t pages) {
  const Dir old = dir_[dir_index];
  std::vector<Bucket> spill;
  const Bucket* src = CopyOut(old, &spill);
  Dir fresh = old;
  fresh.buckets = Reshape(old, pages);
  fresh.pages = pages;
  Refill(src, NBuckets(old), &fresh, 1);
  InstallSegment(fresh, dir_index >> (global_depth_ - static_cast<int>(old.local_depth)));
}

void Index::Split(size_t dir_index) {
  const Dir old = dir_[dir_index];
  const uint32_t depth = old.local_depth;
  assert(static_cast<int>(depth) < global_depth_);
  // The bit right below the segment's prefix picks the half.
  uint32_t count[2] = {0, 0};
  for (uint32_t i = 0; i < NBuckets(old); ++i) {
    for (const Entry& e : old.buckets[i].slot) {
      if (e.fp != 0) ++count[(e.fp << depth) >> 63];
    }
  }
  std::vector<Bucket> spill;
  const Bucket* src = CopyOut(old, &spill);
  Dir half[2];
  for (int h = 0; h < 2; ++h) {
    half[h].pages = SizeFor(count[h]);
    half[h].buckets = h == 0 ? Reshape(old, half[h].pages) : AllocSegment(half[h].pages);
    half[h].count = count[h];
    half[h].local_depth = depth + 1;
  }
  Refill(src, NBuckets(old), half, 2);
  const uint64_t prefix = dir_index >> (global_depth_ - static_cast<int>(depth));
  InstallSegment(half[0], prefix * 2);
  InstallSegment(half[1], prefix * 2 + 1);
  ++segment_count_;
}

// Places the entries of src (a copy of a segment's buckets) into the fresh, empty segments `to`:
// one, or the two halves of a split, chosen by the bit below the parent's prefix. Like Place,
// but the first bucket with a free slot at or after a home comes from a next-free-bucket table
// with path compression (union-find), so filling a segment to 92% costs O(1) per entry instead
// of walking ever longer runs of full buckets.
void Index::Refill(const Bucket* src, uint32_t src_buckets, const Dir* to, int halves) {
  std::vector<uint8_t> used[2];
  std::vector<uint32_t> next_free[2];
  for (int h = 0; h < halves; ++h) {
    used[h].assign(NBuckets(to[h]), 0);
    next_free[h].resize(NBuckets(to[h]));
    for (uint32_t i = 0; i < NBuckets(to[h]); ++i) next_free[h][i] = i;
  }
  const uint32_t parent_depth = to[0].local_depth - (halves == 2 ? 1 : 0);
  for (uint32_t i = 0; i < src_buckets; ++i) {
    for (const Entry& e : src[i].slot) {
      if (e.fp == 0) continue;
      const int h = halves == 2 ? static_cast<int>((e.fp << parent_depth) >> 63) : 0;
      const Dir& d = to[h];
      const uint32_t n = NBuckets(d);
      uint32_t* nf = next_free[h].data();
      const uint32_t home = Home(e.fp, d.local_depth, n);
      uint32_t pos = home;
      if (nf[pos] != pos) {  // home is full: find the next bucket with room, compress the path
        do {
          pos = nf[pos];
        } while (nf[pos] != pos);
        for (uint32_t x = home; nf[x] != pos;) {
          const uint32_t up = nf[x];
          nf[x] = pos;
          x = up;
        }
      }
      Entry& slot = d.buckets[pos].slot[used[h][pos]];
      slot.fp = e.fp;
      slot.loc |= e.loc & ~kMark;
      if (++used[h][pos] == kSlots) nf[pos] = Next(pos, n);
      if (pos != home) NoteDisplacement(d, home, pos);
    }
  }
}

void Index::DoubleDirectory() {
  const size_t old = dir_.size();
  dir_.resize(old * 2);
  for (size_t i = old; i-- > 0;) {
    dir_[2 * i + 1] = dir_[i];
    dir_[2 * i] = dir_[i];
  }
  ++global_depth_;
}

void Index::InstallSegment(const Dir& d, uint64_t prefix) {
  const int free_bits = global_depth_ - static_cast<int>(d.local_depth);
  const size_t first = static_cast<size_t>(prefix) << free_bits;
  std::fill_n(dir_.begin() + first, size_t{1} << free_bits, d);
}

// ---------------------------------------------------------------------------------------------
// Segment memory

const Index::Bucket* Index::CopyOut(const Dir& d, std::vector<Bucket>* spill) {
  const size_t bytes = size_t{d.pages} * kPageBytes;
  if (d.pages > kMaxPages) {
    spill->assign(d.buckets, d.buckets + NBuckets(d));
    return spill->data();
  }
  std::memcpy(static_cast<void*>(scratch_), d.buckets, bytes);
  scratch_bytes_ = std::max(scratch_bytes_, bytes);
  return scratch_;
}

// Memory for the segment `old`, already copied out, rebuilt with `pages` pages, zeroed: its own
// extent when both sizes fit one (pages given up go back to the OS), else a new allocation.
Index::Bucket* Index::Reshape(const Dir& old, uint32_t pages) {
  if (old.pages > kMaxPages || pages > kMaxPages) {
    Bucket* mem = AllocSegment(pages);
    FreeSegment(old.buckets, old.pages);
    return mem;
  }
  char* base = reinterpret_cast<char*>(old.buckets);
  if (pages < old.pages) {
    madvise(base + pages * kPageBytes, (old.pages - pages) * kPageBytes, MADV_DONTNEED);
  }
  std::memset(base, 0, pages * kPageBytes);
  segment_bytes_ = segment_bytes_ - old.pages * kPageBytes + pages * kPageBytes;
  return old.buckets;
}

Index::Bucket* Index::AllocSegment(uint32_t pages) {
  const size_t bytes = size_t{pages} * kPageBytes;
  char* base;
  if (pages <= kMaxPages) {
    base = NewExtent();  // zero: fresh, or returned to the OS by FreeSegment
  } else {
    base = static_cast<char*>(MapOrThrow(bytes));
  }
  segment_bytes_ += bytes;
  return reinterpret_cast<Bucket*>(base);
}

void Index::FreeSegment(Bucket* buckets, uint32_t pages) {
  char* base = reinterpret_cast<char*>(buckets);
  const size_t bytes = size_t{pages} * kPageBytes;
  if (pages <= kMaxPages) {
    madvise(base, bytes, MADV_DONTNEED);
    free_extents_.push_back(base);
  } else {
    munmap(base, bytes);
  }
  segment_bytes_ -= bytes;
}

char* Index::NewExtent() {
  if (!free_extents_.empty()) {
    char* e = free_extents_.back();
    free_extents_.pop_back();
    return e;
  }
  if (regions_.empty() || next_extent_ == regions_.back().extents) {
    const size_t extents = regions_.empty()
                               ? kFirstRegionExtents
                               : std::min(kMaxRegionExtents, 2 * regions_.back().extents);
    regions_.push_back(Region{static_cast<char*>(MapOrThrow(extents * kExtentBytes)), extents});
    next_extent_ = 0;
  }
  return regions_.back().base + kExtentBytes * next_extent_++;
}

void Index::ReleaseAll() {
  for (size_t i = 0; i < dir_.size(); ++i) {
    const Dir& d = dir_[i];
    if ((i & ((size_t{1} << (global_depth_ - d.local_depth)) - 1)) != 0) continue;
    if (d.pages > kMaxPages) FreeSegment(d.buckets, d.pages);
  }
  for (const Region& r : regions_) munmap(r.base, r.extents * kExtentBytes);
  regions_.clear();
  free_extents_.clear();
  next_extent_ = 0;
  dir_.clear();
  scratch_ = nullptr;
  segment_bytes_ = 0;
  scratch_bytes_ = 0;
}

void Index::Clear() {
  ReleaseAll();
  global_depth_ = 0;
  size_ = 0;
  segment_count_ = 1;
  scratch_ = reinterpret_cast<Bucket*>(NewExtent());
  Dir first;
  first.buckets = AllocSegment(1);
  first.count = 0;
  first.pages = 1;
  first.local_depth = 0;
  std::vector<Dir> dir(1, first);
  dir_.swap(dir);
}

// ---------------------------------------------------------------------------------------------
// Iteration

uint64_t Index::Scan(uint64_t cursor, size_t count, const Visitor& fn) const {
  size_t visited = 0;
  uint64_t c = cursor;
  do {
    const Dir& d = dir_[DirIndex(c)];
    const uint32_t n = NBuckets(d);
    const uint64_t base = TopBits(c, d.local_depth);
    const uint32_t b = Home(c, d.local_depth, n);
    // About enough home buckets for the entries still wanted (a bucket holds ~3.5).
    const size_t want = count > visited ? count - visited : 1;
    const uint32_t e = b + static_cast<uint32_t>(std::min<size_t>(n - b, (want + 2) / 3));
    // Entries homed in [b, e) live in [b, e) or in the run of marked buckets after it.
    uint32_t q = b;
    for (uint32_t steps = 1; steps <= n; ++steps, q = Next(q, n)) {
      const Bucket& bk = d.buckets[q];
      for (const Entry& s : bk.slot) {
        if (s.fp == 0 || s.fp < c) continue;
        const uint32_t h = Home(s.fp, d.local_depth, n);
        if (h >= b && h < e) {
          fn(s.fp, s.loc & ~kMark);
          ++visited;
        }
      }
      if (steps >= e - b && (bk.slot[0].loc & kMark) == 0) break;
    }
    c = BucketStart(base, d.local_depth, n, e);
  } while (c != 0 && visited < count);
  return c;
}

void Index::ForEach(const Visitor& fn) const {
  for (size_t i = 0; i < dir_.size(); ++i) {
    const Dir& d = dir_[i];
    // Visit a segment from the first directory entry that points to it.
    if ((i & ((size_t{1} << (global_depth_ - d.local_depth)) - 1)) != 0) continue;
    for (uint32_t b = 0; b < NBuckets(d); ++b) {
      for (const Entry& s : d.buckets[b].slot) {
        if (s.fp != 0) fn(s.fp, s.loc & ~kMark);
      }
    }
  }
}

bool Index::Random(uint64_t rnd, uint64_t* fp, uint64_t* loc) const {
  if (size_ == 0) return false;
  size_t idx = DirIndex(rnd);
  const uint64_t mixed = rnd * 0x9E3779B97F4A7C15ull;  // the low bits of rnd pick the bucket
  for (;;) {
    const Dir& d = dir_[idx];
    const uint32_t n = NBuckets(d);
    uint32_t q = Home(mixed, 0, n);
    for (uint32_t steps = 0; d.count != 0 && steps < n; ++steps, q = Next(q, n)) {
      const Bucket& b = d.buckets[q];
      const unsigned used = ~MatchMask(b, 0) & 0xF;
      if (used == 0) continue;
      // The k-th used slot, k from the high bits of `mixed`.
      unsigned pick = used;
      for (int k = static_cast<int>((mixed >> 32) % __builtin_popcount(used)); k > 0; --k) {
        pick &= pick - 1;
      }
      const Entry& e = b.slot[__builtin_ctz(pick)];
      *fp = e.fp;
      *loc = e.loc & ~kMark;
      return true;
    }
    // An empty segment: go on with the next one.
    const int free_bits = global_depth_ - static_cast<int>(d.local_depth);
    idx = (((idx >> free_bits) + 1) << free_bits) & (dir_.size() - 1);
  }
}

// ---------------------------------------------------------------------------------------------
// Validation (tests)

std::string Index::Validate() const {
  auto fail = [](const std::string& what, size_t at) { return what + " at " + std::to_string(at); };
  if (dir_.size() != size_t{1} << global_depth_) return fail("directory size", dir_.size());
  size_t total = 0;
  size_t segments = 0;
  size_t bytes = 0;
  for (size_t i = 0; i < dir_.size(); ++i) {
    const Dir& d = dir_[i];
    if (static_cast<int>(d.local_depth) > global_depth_) return fail("local depth", i);
    const int free_bits = global_depth_ - static_cast<int>(d.local_depth);
    if ((i & ((size_t{1} << free_bits) - 1)) != 0) continue;
    ++segments;
    bytes += size_t{d.pages} * kPageBytes;
    for (size_t j = i; j < i + (size_t{1} << free_bits); ++j) {
      if (dir_[j].buckets != d.buckets || dir_[j].count != d.count || dir_[j].pages != d.pages ||
          dir_[j].local_depth != d.local_depth) {
        return fail("directory range", j);
      }
    }
    const uint32_t n = NBuckets(d);
    if (d.pages == 0) return fail("segment size", i);
    std::vector<uint32_t> max_disp(n, 0);
    std::vector<bool> covered(n, false);
    bool long_probe = false;
    uint32_t count = 0;
    for (uint32_t q = 0; q < n; ++q) {
      for (int s = 0; s < kSlots; ++s) {
        const Entry& e = d.buckets[q].slot[s];
        if (e.fp == 0) {
          if ((e.loc & ~kMark) != 0) return fail("free slot with a location", i);
          continue;
        }
        ++count;
        if ((e.loc & ~kMark) == 0) return fail("entry without a location", i);
        if (TopBits(e.fp ^ IndexStart(i), d.local_depth) != 0) return fail("entry outside", i);
        const uint32_t home = Home(e.fp, d.local_depth, n);
        const uint32_t disp = (q + n - home) % n;
        if (disp > kMaxProbe) long_probe = true;
        max_disp[home] = std::max(max_disp[home], disp);
        for (uint32_t j = home; j != q; j = Next(j, n)) covered[j] = true;
        if (Lookup(e.fp) != &e) return fail("entry not found by lookup", i);
      }
    }
    if (count != d.count) return fail("segment count", i);
    total += count;
    for (uint32_t q = 0; q < n; ++q) {
      const bool mark = (d.buckets[q].slot[0].loc & kMark) != 0;
      const uint32_t reach = Reach(d.buckets[q]);
      const uint32_t want = ReachCode(max_disp[q]);
      if (covered[q] && !mark) return fail("missing overflow mark", i);
      if (reach < want) return fail("reach too small", i);
      // After adversarial inserts the index may leave marks and reaches conservative.
      if (!long_probe && (mark != covered[q] || reach != want)) return fail("stale bookkeeping", i);
    }
  }
  if (total != size_) return fail("size", total);
  if (segments != segment_count_) return fail("segment count", segments);
  if (bytes != segment_bytes_) return fail("segment bytes", bytes);
  return "";
}

}  // namespace lavik
