// Encoding and decoding of the data file, format version 1: superblock,
// segment header, record and checkpoint layouts of doc/storage-format.md. Pure
// byte shuffling and checksums; no I/O, no allocation. Every integer is
// little-endian on disk (the build asserts a little-endian host, so encoding is
// a memcpy of the native value).
//
// Decoders take bytes straight off the device and never trust them: they read
// only within the sizes they are given and report corruption as a status, never
// by crashing.
//
// Decisions the doc leaves open, settled here:
//  - A record's crc covers the segment seq (8 bytes) then bytes
//    [4, 32 + key_len + value_len): the unpadded record. The zero padding up to
//    RecordLength() must still read as zeros, or the record does not verify.
//  - The checkpoint header layout (see CheckpointHeader) adds a ttl count, the
//    checkpoint seq and a crc of the header itself to what the doc lists.
//
// Thread safety: all functions are pure; RecordScanner is a plain value that
// one thread uses at a time.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "base/db_key.h"

namespace lavik {

static_assert(std::endian::native == std::endian::little,
              "format encoding memcpys native integers; a big-endian port must byte-swap");

// ---- Geometry --------------------------------------------------------------

inline constexpr uint32_t kFormatVersion = 1;
// The I/O unit: every device read and write is block-aligned (O_DIRECT).
inline constexpr size_t kBlockSize = 4096;
inline constexpr uint64_t kDefaultSegmentSize = uint64_t{8} << 20;
inline constexpr uint64_t kDefaultDataOffset = uint64_t{1} << 20;
// File offsets of the two superblock copies.
inline constexpr uint64_t kSuperblockOffsetA = 0;
inline constexpr uint64_t kSuperblockOffsetB = kBlockSize;
// Records (and checkpoint payload) start here within a segment; the first block
// holds the segment header.
inline constexpr size_t kSegmentPayloadOffset = kBlockSize;

// ---- Little-endian fixed-width fields ---------------------------------------

inline void EncodeFixed16(char* p, uint16_t v) { std::memcpy(p, &v, sizeof(v)); }
inline void EncodeFixed32(char* p, uint32_t v) { std::memcpy(p, &v, sizeof(v)); }
inline void EncodeFixed64(char* p, uint64_t v) { std::memcpy(p, &v, sizeof(v)); }
inline uint16_t DecodeFixed16(const char* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// ---- Superblock -------------------------------------------------------------

inline constexpr std::string_view kSuperblockMagic = "LAVIKDAT";
// Bytes of the block the superblock uses, crc included; the rest is zero.
inline constexpr size_t kSuperblockSize = 104;
// Superblock::flags bit 0: the last shutdown wrote a checkpoint and nothing
// was written after it.
inline constexpr uint32_t kSuperblockClean = 1;

// Where one shard's log stood at a replication cut: its open segment's seq (0: none) and the
// file offset its next record would have taken there, and the next segment seq the file would
// have handed out. A record of that shard lies after the cut if its segment's seq is >= next_seq,
// or it is in the open segment at or past open_end.
struct CutPosition {
  uint64_t open_seq = 0;
  uint64_t open_end = 0;
  uint64_t next_seq = 0;
  bool operator==(const CutPosition&) const = default;
};

// The most shards a cut can describe (what fits in the superblock's block).
inline constexpr size_t kMaxCutShards = 146;

// A replica's consistency point: the data file holds exactly the effects of its master's stream
// up to `offset` of history `replid` (its stream then in database `db`), once every record after
// the shards' positions is dropped. Fixed-size, so a Superblock stays a plain value.
struct ReplCut {
  std::array<char, 40> replid{};
  int64_t offset = 0;
  int32_t db = 0;
  uint32_t count = 0;  // shards described; 0 = no cut
  std::array<CutPosition, kMaxCutShards> shards{};
  bool valid() const { return count != 0; }
  bool operator==(const ReplCut&) const = default;
};

// The decoded superblock; field meanings are in the doc's table. The magic and
// crc are not fields: Encode writes them and Decode checks them.
struct Superblock {
  uint32_t format_version = kFormatVersion;
  uint32_t block_size = kBlockSize;
  uint64_t segment_size = kDefaultSegmentSize;
  uint64_t data_offset = kDefaultDataOffset;
  uint64_t segment_count = 0;
  uint64_t max_segments = 0;  // 0 = grow until the file system is full
  uint64_t generation = 0;
  int64_t created_ms = 0;
  uint32_t flags = 0;
  uint32_t checkpoint_segment = 0;
  uint64_t checkpoint_seq = 0;
  uint64_t next_segment_seq = 0;
  uint32_t grown_by_lavik = 0;
  uint64_t flush_seq = 0;  // FLUSHALL: segments with a smaller seq hold no live data
  // FLUSHDB: records of physical database d in segments with a smaller seq are dead.
  std::array<uint64_t, kMaxDatabases> db_flush_seq{};
  // SWAPDB: logical database i is physical database db_map[i] (a permutation).
  std::array<uint8_t, kMaxDatabases> db_map = [] {
    std::array<uint8_t, kMaxDatabases> m{};
    for (size_t i = 0; i < kMaxDatabases; ++i) m[i] = static_cast<uint8_t>(i);
    return m;
  }();

  // A replica's last consistency point (doc/storage-format.md "Replication cut"); count 0 = none.
  ReplCut cut;

  bool clean() const { return (flags & kSuperblockClean) != 0; }
  bool operator==(const Superblock&) const = default;
};

// Writes `sb` into the kBlockSize bytes at `block`, zero-filling past
// kSuperblockSize. format_version and block_size are written as given (not
// forced to the constants), which lets tests produce foreign superblocks.
void EncodeSuperblock(const Superblock& sb, char* block);

enum class SuperblockStatus {
  kOk,
  kZero,        // the whole block is zero: a fresh, preallocated file
  kBadMagic,    // not a Lavik data file (or not this part of one)
  kBadVersion,  // a Lavik file of another format version
  kBadCrc,      // Lavik magic and version but the checksum fails (torn write)
};

// A short phrase for start-up error messages, e.g. "bad checksum".
const char* SuperblockStatusName(SuperblockStatus status);

// Parses the kBlockSize bytes at `block`. Checks in order: all zero, magic,
// format_version, crc. `*out` is written only on kOk. Geometry is not judged
// here; see SuperblockGeometryError.
SuperblockStatus DecodeSuperblock(const char* block, Superblock* out);

// Chooses between the two copies (kBlockSize bytes each) by the doc's rule:
// the valid copy with the higher generation wins (a tie picks A), and `*which`
// is set to 0 for A or 1 for B. With no valid copy `*which` = -1 and the
// result is kZero if both are all zero, else the most telling error: kBadMagic
// if either copy has a foreign magic, else kBadVersion if either is another
// version, else kBadCrc. (So one torn copy beside a zero one is kBadCrc, not a
// fresh file.) `*out` is written only on kOk.
SuperblockStatus PickSuperblock(const char* copy_a, const char* copy_b, Superblock* out,
                                int* which);

// nullptr if the geometry of a decoded superblock is usable, else a message
// naming the first problem (block size not 4096, segment size or data offset
// not a positive multiple of it, the superblock area overlapping segment 0,
// segment_count beyond 32-bit segment numbers or the 64-bit file offset,
// checkpoint_segment out of range while clean, grown_by_lavik not 0 or 1).
const char* SuperblockGeometryError(const Superblock& sb);

// ---- Segment header ---------------------------------------------------------

inline constexpr std::string_view kSegmentMagic = "LVKSEG01";
// Bytes of the segment's first block the header uses, crc included.
inline constexpr size_t kSegmentHeaderSize = 44;
// SegmentHeader::next for the last segment of a checkpoint chain.
inline constexpr uint32_t kNoNextSegment = 0xFFFFFFFF;

enum class SegmentKind : uint32_t {
  kLog = 1,
  kLarge = 2,  // first segment of a large record's run
  kCheckpoint = 3,
  kFree = 4,
};

struct SegmentHeader {
  uint64_t seq = 0;
  SegmentKind kind = SegmentKind::kFree;
  uint32_t shard = 0;
  uint32_t run_length = 0;         // kLarge: segments in the run, this one included
  uint32_t next = kNoNextSegment;  // kCheckpoint: next segment of the chain
  uint64_t payload_bytes = 0;      // kCheckpoint: checkpoint bytes in this segment

  bool operator==(const SegmentHeader&) const = default;
};

// Writes exactly kSegmentHeaderSize bytes at `out`. The caller writes whole
// blocks and should zero the rest of the first block.
void EncodeSegmentHeader(const SegmentHeader& h, char* out);

// Parses kSegmentHeaderSize bytes at `data`. False (and `*out` untouched) if
// the magic or crc does not verify or the kind is not one of SegmentKind: the
// doc treats all of these as a free segment.
bool DecodeSegmentHeader(const char* data, SegmentHeader* out);

// ---- Record -----------------------------------------------------------------

inline constexpr size_t kRecordHeaderSize = 32;
// Records start on 8-byte boundaries; RecordLength() pads to this.
inline constexpr size_t kRecordAlign = 8;
// Bound on key_len + value_len. Keeps garbage lengths from making a decoder
// look gigabytes ahead; above Redis's own 512 MB string limit.
inline constexpr size_t kMaxRecordBody = size_t{1} << 30;

// kChunk: a chunk of a chunked collection, under an internal key (storage/chunked.h).
enum class RecordType : uint8_t { kString = 0, kList, kSet, kZSet, kHash, kStream, kChunk };

// RecordHeader::flags bits.
inline constexpr uint8_t kRecordTombstone = 1;  // DEL or expiry; value is a tombstone
inline constexpr uint8_t kRecordRelocated = 2;  // re-appended by defrag
inline constexpr uint8_t kRecordKnownFlags = kRecordTombstone | kRecordRelocated;

// The value of a tombstone record: the origin segment seq, 8 bytes.
inline constexpr size_t kTombstoneValueSize = 8;

// Bytes a record with these lengths occupies, padding included.
constexpr size_t RecordLength(size_t key_len, size_t value_len) {
  return (kRecordHeaderSize + key_len + value_len + kRecordAlign - 1) & ~(kRecordAlign - 1);
}

// The record header minus its crc.
struct RecordHeader {
  uint32_t value_len = 0;
  uint32_t key_len = 0;
  uint8_t type = 0;  // a RecordType
  uint8_t flags = 0;
  uint16_t slot = 0;
  uint64_t seq = 0;
  int64_t expire_ms = 0;  // absolute unix ms, 0 = none

  bool tombstone() const { return (flags & kRecordTombstone) != 0; }
  bool operator==(const RecordHeader&) const = default;
};

// A decoded record. key and value point into the decoded buffer.
struct RecordView {
  RecordHeader header;
  std::string_view key;
  std::string_view value;
  size_t length = 0;  // RecordLength(key, value): the offset of the next record
};

// Writes the record for (`h`, `key`, `value`) in segment `segment_seq` to
// `out`, which must hold RecordLength(key.size(), value.size()) bytes: header,
// key, value, zero padding, and the crc seeded with `segment_seq`. The lengths
// come from `key` and `value` (h.key_len and h.value_len are ignored).
// key.size() + value.size() must not exceed kMaxRecordBody. Returns the bytes
// written.
size_t EncodeRecord(const RecordHeader& h, std::string_view key, std::string_view value,
                    uint64_t segment_seq, char* out);

// For writers that serialize the key and value in place: with h.key_len key
// bytes and then h.value_len value bytes already at out + kRecordHeaderSize,
// writes the header, the padding and the crc. Returns RecordLength().
size_t SealRecord(const RecordHeader& h, uint64_t segment_seq, char* out);

enum class RecordStatus {
  kOk,
  kTruncated,  // fewer than RecordLength() bytes available (or < a header)
  kBadCrc,     // the crc (seeded with the segment seq) or the zero padding fails
  kBadHeader,  // impossible header: lengths over kMaxRecordBody, unknown type or
               // flag bits, a tombstone whose value is not 8 bytes, or all zero
};

const char* RecordStatusName(RecordStatus status);

// Decodes the record at `data`, reading at most `avail` bytes, as written in
// segment `segment_seq`. Safe on arbitrary bytes. An all-zero header is
// rejected (kBadHeader) even if its crc happened to match, so a zeroed segment
// tail can never parse as records: writers must start record seqs at 1 for this
// to never reject a real record. `*out` is written only on kOk.
RecordStatus DecodeRecord(const char* data, size_t avail, uint64_t segment_seq, RecordView* out);

// The value bytes of a tombstone whose origin segment seq is `origin`.
std::array<char, kTombstoneValueSize> EncodeTombstone(uint64_t origin_segment_seq);

// Reads the origin segment seq from a tombstone's value; false if the value is
// not kTombstoneValueSize bytes.
bool DecodeTombstoneOrigin(std::string_view value, uint64_t* origin_segment_seq);

// Walks the records of one segment's payload (the bytes from
// kSegmentPayloadOffset on) in log order. Stops at the first record that does
// not decode: the torn tail, a record left from the segment's previous life,
// zeros, or the end of the buffer.
//
//   RecordScanner scan(payload, len, header.seq);
//   RecordView rec;
//   while (scan.Next(&rec)) Apply(rec);
//   // the valid log is [0, scan.end_offset())
class RecordScanner {
 public:
  // `data` must stay valid while the scanner and the views it returns are used.
  RecordScanner(const char* data, size_t len, uint64_t segment_seq)
      : data_(data), len_(len), segment_seq_(segment_seq) {}

  // Decodes the next record into `*out`; false once the log ends (and on every
  // later call).
  bool Next(RecordView* out);

  // Offset just past the last record returned: where the valid log ends once
  // Next() has returned false, and where the next append would go.
  size_t end_offset() const { return offset_; }

  // After Next() returned false: kOk if the log ended exactly at the end of the
  // buffer, else why the bytes at end_offset() did not decode (kTruncated for a
  // tail shorter than a header).
  RecordStatus stop_status() const { return stop_status_; }

 private:
  const char* data_;
  size_t len_;
  uint64_t segment_seq_;
  size_t offset_ = 0;
  bool done_ = false;
  RecordStatus stop_status_ = RecordStatus::kOk;
};

// ---- Checkpoint -------------------------------------------------------------
//
// The payload a kCheckpoint chain carries, concatenated across the chain:
//   header (kCheckpointHeaderSize)
//   entry_count index entries (kCheckpointEntrySize each)
//   ttl_count TTL entries (kCheckpointTtlEntrySize each)
//   shard_count record seq counters (8 bytes each, shard 0 first)
//
// Header layout:
//   off size field
//    0   8   magic "LVKCKPT1"
//    8   4   shard_count
//   12   4   payload_crc: crc32c of every payload byte after the header
//   16   8   entry_count
//   24   8   ttl_count
//   32   8   checkpoint_seq (the superblock's checkpoint_seq; lets the loader
//            reject a chain from another checkpoint)
//   40  20   reserved, zero
//   60   4   header_crc: crc32c of bytes [0, 60)

inline constexpr std::string_view kCheckpointMagic = "LVKCKPT1";
inline constexpr size_t kCheckpointHeaderSize = 64;
inline constexpr size_t kCheckpointEntrySize = 24;
inline constexpr size_t kCheckpointTtlEntrySize = 16;
inline constexpr size_t kCheckpointSeqCounterSize = 8;
// Sanity bounds DecodeCheckpointHeader applies, so garbage counts cannot
// overflow CheckpointPayloadBytes().
inline constexpr uint32_t kMaxCheckpointShards = 1 << 16;
inline constexpr uint64_t kMaxCheckpointEntries = uint64_t{1} << 48;

struct CheckpointHeader {
  uint32_t shard_count = 0;
  uint32_t payload_crc = 0;
  uint64_t entry_count = 0;
  uint64_t ttl_count = 0;
  uint64_t checkpoint_seq = 0;

  bool operator==(const CheckpointHeader&) const = default;
};

// Payload bytes after the header implied by the header's counts.
constexpr uint64_t CheckpointBodyBytes(const CheckpointHeader& h) {
  return h.entry_count * kCheckpointEntrySize + h.ttl_count * kCheckpointTtlEntrySize +
         uint64_t{h.shard_count} * kCheckpointSeqCounterSize;
}

// Writes kCheckpointHeaderSize bytes at `out`.
void EncodeCheckpointHeader(const CheckpointHeader& h, char* out);

// Parses kCheckpointHeaderSize bytes. False (and `*out` untouched) if the magic
// or header crc fails, shard_count is 0 or above kMaxCheckpointShards, or
// entry_count is above kMaxCheckpointEntries or below ttl_count. The caller
// checks payload_crc over the CheckpointBodyBytes() that follow.
bool DecodeCheckpointHeader(const char* data, CheckpointHeader* out);

// One key of a shard's index.
struct CheckpointEntry {
  uint64_t fingerprint = 0;
  uint64_t location = 0;  // the index's location word
  uint16_t slot = 0;

  bool operator==(const CheckpointEntry&) const = default;
};

// Writes kCheckpointEntrySize bytes (the 6 reserved bytes as zero).
void EncodeCheckpointEntry(const CheckpointEntry& e, char* out);
// Reads kCheckpointEntrySize bytes; the reserved bytes are ignored.
CheckpointEntry DecodeCheckpointEntry(const char* data);

// The expiry of one key with a TTL.
struct CheckpointTtlEntry {
  uint64_t fingerprint = 0;
  int64_t expire_ms = 0;

  bool operator==(const CheckpointTtlEntry&) const = default;
};

// Writes kCheckpointTtlEntrySize bytes.
void EncodeCheckpointTtlEntry(const CheckpointTtlEntry& e, char* out);
CheckpointTtlEntry DecodeCheckpointTtlEntry(const char* data);

}  // namespace lavik
