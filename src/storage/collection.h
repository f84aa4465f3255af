// The compact encoding of a collection held in one record (doc/collections.md): a set's members
// or a hash's field/value pairs, sorted by (MemberHash, bytes), with an offset table so a member
// is found by binary search and a scan cursor is a hash position that stays valid across writes.
//
//   u8  version (1) | u8 flags (bit 0: entries carry values) | u16 zero | u32 count
//   u32 offset[count]   (of each entry, from the start of the entry area)
//   entries: varint field_len, field bytes [, varint value_len, value bytes]
//
// CollectionView reads an encoding in place (no copy: the view points into the caller's bytes,
// which must outlive it). ApplyChanges builds a new encoding from a view and a batch of upserts
// and erasures in one merge pass, O(n + k log k).
//
// Thread safety: pure functions and value types; a view is read-only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lavik {

// The order key of a member: 64-bit XXH3 with the low bit set, so it is never 0 (a scan cursor of
// 0 means "start" and "done"). Persisted order: never change this function.
uint64_t MemberHash(std::string_view member);

struct CollectionRange;

class CollectionView {
 public:
  CollectionView() = default;
  // Parses `encoded` (empty = an empty collection) in O(1). False if the header, the value-ness
  // or the bounds of the entry area are wrong; the view is then empty. Accessors never read
  // outside `encoded`, even if a middle offset is damaged.
  bool Parse(std::string_view encoded, bool with_values);

  uint32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::string_view field(uint32_t i) const;
  std::string_view value(uint32_t i) const;  // "" for a set
  // Index of `field`, or -1.
  int64_t Find(std::string_view field) const;
  // Index of the first entry whose MemberHash is >= h (size() if none).
  uint32_t LowerBound(uint64_t h) const;

 private:
  friend std::string ConcatRanges(std::span<const CollectionRange> parts, bool with_values);
  std::string_view Entry(uint32_t i, std::string_view* value) const;

  const char* offsets_ = nullptr;
  std::string_view data_;  // the entry area
  uint32_t count_ = 0;
  bool with_values_ = false;
};

struct CollectionChange {
  std::string_view field;
  std::string_view value;  // ignored for sets and erasures
  bool erase = false;
};

// The encoding of `base` with `changes` applied: an upsert replaces the field's value or adds it,
// an erasure removes it; when a batch names a field twice the later change wins. The views in
// `changes` must stay valid during the call; `base` may be empty (a new collection). Returns ""
// for an empty result (the caller deletes the key: Redis keeps no empty collections).
std::string ApplyChanges(const CollectionView& base, std::vector<CollectionChange> changes,
                         bool with_values);

// Encodes distinct members (a set) or fields with values; order does not matter.
inline std::string EncodeCollection(std::vector<CollectionChange> entries, bool with_values) {
  return ApplyChanges(CollectionView(), std::move(entries), with_values);
}

// Entries [begin, end) of a view.
struct CollectionRange {
  const CollectionView* view;
  uint32_t begin;
  uint32_t end;
};

// One encoding holding the ranges' entries in the given order, which must already be the
// collection order (the parts are consecutive hash ranges: slices of one collection, or chunks
// of a chunked one). Copies entry bytes as they are, O(bytes); "" if there are none.
std::string ConcatRanges(std::span<const CollectionRange> parts, bool with_values);

}  // namespace lavik
