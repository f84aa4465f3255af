// The encoding of a Redis stream held in one record (doc/collections.md, "Streams"): the
// stream's metadata, its entries in id order and its consumer groups.
//
//   u8 version (1) | u8 kind ('X') | u16 zero | u32 entry count
//   last id (u64 ms, u64 seq) | u64 entries_added | max deleted id (u64 ms, u64 seq)
//   u64 ms of the last entry (0: none) | u32 byte length of the entry area
//   entry area:   varint master field count, master fields (varint length, bytes),
//                 then per entry: varint ms delta from the previous entry (the first: from 0),
//                 varint seq, varint body length, body
//     body:       varint (n << 1 | same), then n values if `same` (the fields are the master
//                 fields), else n field/value pairs; every string is varint length + bytes
//   u32 group count, per group (in creation order):
//     name | last delivered id | i64 entries_read (-1: unknown)
//     u32 consumer count, per consumer: name | i64 seen_ms | i64 active_ms
//     u32 pending count, per pending entry (id order): id | u32 consumer index
//       | i64 delivery_ms | u64 delivery count
//
// The master fields are Redis's listpack trick: the field names of the first entry are written
// once, and every later entry with the same names stores only its values. The entry area is a
// contiguous id-ordered run that does not depend on anything outside it except the previous
// entry's ms, so a chunked layout can split it by id range (each chunk with its own master
// fields). Bodies are kept encoded: XADD, XDEL and trims move them as opaque byte ranges.
//
// Thread safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lavik {

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;

  auto operator<=>(const StreamId&) const = default;
  bool IsZero() const { return ms == 0 && seq == 0; }
  // The next id (false at the maximum).
  bool Incr(StreamId* out) const;
  bool Decr(StreamId* out) const;
  std::string ToString() const;
};

inline constexpr StreamId kMinStreamId{0, 0};
inline constexpr StreamId kMaxStreamId{UINT64_MAX, UINT64_MAX};
inline constexpr int64_t kEntriesReadUnknown = -1;

struct StreamEntry {
  StreamId id;
  std::string_view body;  // encoded field/value pairs (see above); decode with EntryFields
};

struct StreamConsumer {
  std::string name;
  int64_t seen_ms = 0;
  int64_t active_ms = 0;
};

struct StreamPending {
  StreamId id;
  uint32_t consumer = 0;  // index into the group's consumers
  int64_t delivery_ms = 0;
  uint64_t delivery_count = 0;
};

struct StreamGroup {
  std::string name;
  StreamId last_id;
  int64_t entries_read = kEntriesReadUnknown;
  std::vector<StreamConsumer> consumers;
  std::vector<StreamPending> pending;  // id order

  // Index of the consumer named `name`, or -1.
  int FindConsumer(std::string_view name) const;
  // Index of the pending entry `id`, or -1 (binary search).
  int FindPending(StreamId id) const;
  // First pending entry with id >= `id`.
  size_t PendingLowerBound(StreamId id) const;
  uint64_t PendingOf(uint32_t consumer) const;
  // Removes consumer `c` and its pending entries; returns how many were pending.
  uint64_t RemoveConsumer(uint32_t c);
};

// A decoded stream. Entry bodies and master fields are views into the bytes it was decoded
// from (or into strings the caller keeps alive); groups are copies.
struct Stream {
  StreamId last_id;
  uint64_t entries_added = 0;
  StreamId max_deleted_id;
  std::vector<std::string_view> master_fields;
  std::vector<StreamEntry> entries;  // id order
  std::vector<StreamGroup> groups;

  // First entry with id >= `id`.
  size_t LowerBound(StreamId id) const;
  // First entry with id > `id`.
  size_t UpperBound(StreamId id) const;
  // Index of the entry `id`, or -1.
  int Find(StreamId id) const;
  StreamGroup* FindGroup(std::string_view name);
  // Redis's estimate of how many entries came before `id` since the stream was created
  // (streamEstimateDistanceFromFirstEverEntry), or kEntriesReadUnknown.
  int64_t EstimateEntriesRead(StreamId id) const;
  // Whether a deleted entry lies in [start, end] (Redis's streamRangeHasTombstones).
  bool RangeHasTombstones(StreamId start, StreamId end) const;
};

// Encodes the body of an entry with these field/value pairs (fv.size() even) against
// `master` (the stream's master fields: empty means none yet).
std::string EncodeEntryBody(const std::vector<std::string_view>& master, const std::string_view* fv,
                            size_t fv_count);
// The field/value pairs of an encoded body, appended to *out. False if the body is damaged.
bool EntryFields(const std::vector<std::string_view>& master, std::string_view body,
                 std::vector<std::string_view>* out);

// Parses `encoded` into *out. False if it is damaged (every read is bounded).
bool DecodeStream(std::string_view encoded, Stream* out);
// Only the header: entry count, last id and the like, without walking the entries.
bool DecodeStreamHeader(std::string_view encoded, uint32_t* length, StreamId* last_id,
                        uint64_t* entries_added = nullptr);
std::string EncodeStream(const Stream& s);
// XADD's fast path: `encoded` (a valid stream, or EncodeStream of an empty one) with an entry
// appended and the last id, entries_added and the tail moved to it — without decoding the
// entries: the header is rewritten and the entry area and groups are copied as bytes. `id` must
// be greater than every entry's id. False if `encoded` is damaged.
bool AppendStreamEntry(std::string_view encoded, StreamId id, const std::string_view* fv,
                       size_t fv_count, std::string* out);

}  // namespace lavik
