#include "storage/format.h"

#include <cassert>
#include <limits>

#include "base/crc32c.h"

namespace lavik {
namespace {

// Superblock field offsets (doc table).
constexpr size_t kSbMagic = 0;
constexpr size_t kSbVersion = 8;
constexpr size_t kSbBlockSize = 12;
constexpr size_t kSbSegmentSize = 16;
constexpr size_t kSbDataOffset = 24;
constexpr size_t kSbSegmentCount = 32;
constexpr size_t kSbMaxSegments = 40;
constexpr size_t kSbGeneration = 48;
constexpr size_t kSbCreatedMs = 56;
constexpr size_t kSbFlags = 64;
constexpr size_t kSbCheckpointSegment = 68;
constexpr size_t kSbCheckpointSeq = 72;
constexpr size_t kSbNextSegmentSeq = 80;
constexpr size_t kSbGrownByLavik = 88;
constexpr size_t kSbFlushSeq = 92;
constexpr size_t kSbCrc = 100;
static_assert(kSbCrc + 4 == kSuperblockSize);
// The databases extension (doc/storage-format.md): per-database flush seqs (FLUSHDB), the
// logical → physical database map (SWAPDB) and their own crc. All zero (a file written before
// databases existed) means no FLUSHDB and the identity map.
constexpr size_t kSbDbFlushSeq = 128;                           // u64[16]
constexpr size_t kSbDbMap = kSbDbFlushSeq + 8 * kMaxDatabases;  // u8[16]
constexpr size_t kSbDbCrc = kSbDbMap + kMaxDatabases;           // u32
static_assert(kSbDbCrc + 4 <= kBlockSize);
// The replication cut (doc/storage-format.md "Replication cut"): all zero = none.
constexpr size_t kSbCut = 512;
constexpr std::string_view kCutMagic = "LVKCUT01";
constexpr size_t kCutOffset = kSbCut + 8;   // i64
constexpr size_t kCutDb = kSbCut + 16;      // i32
constexpr size_t kCutCount = kSbCut + 20;   // u32
constexpr size_t kCutReplid = kSbCut + 24;  // 40 bytes
constexpr size_t kCutShards = kSbCut + 64;  // count x (u64 open_seq, u64 open_end, u64 next_seq)
constexpr size_t kCutCrc = kBlockSize - 4;  // crc32c of [kSbCut, kCutCrc)
static_assert(kSbDbCrc + 4 <= kSbCut);
static_assert(kCutShards + 24 * kMaxCutShards <= kCutCrc);

// Segment header field offsets.
constexpr size_t kShMagic = 0;
constexpr size_t kShSeq = 8;
constexpr size_t kShKind = 16;
constexpr size_t kShShard = 20;
constexpr size_t kShRunLength = 24;
constexpr size_t kShNext = 28;
constexpr size_t kShPayloadBytes = 32;
constexpr size_t kShCrc = 40;
static_assert(kShCrc + 4 == kSegmentHeaderSize);

// Record header field offsets.
constexpr size_t kRecCrc = 0;
constexpr size_t kRecValueLen = 4;
constexpr size_t kRecKeyLen = 8;
constexpr size_t kRecType = 12;
constexpr size_t kRecFlags = 13;
constexpr size_t kRecSlot = 14;
constexpr size_t kRecSeq = 16;
constexpr size_t kRecExpire = 24;
static_assert(kRecExpire + 8 == kRecordHeaderSize);

// Checkpoint header field offsets.
constexpr size_t kCkMagic = 0;
constexpr size_t kCkShardCount = 8;
constexpr size_t kCkPayloadCrc = 12;
constexpr size_t kCkEntryCount = 16;
constexpr size_t kCkTtlCount = 24;
constexpr size_t kCkCheckpointSeq = 32;
constexpr size_t kCkHeaderCrc = 60;
static_assert(kCkHeaderCrc + 4 == kCheckpointHeaderSize);

static_assert(kSuperblockMagic.size() == 8 && kSegmentMagic.size() == 8 &&
              kCheckpointMagic.size() == 8);

bool AllZero(const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

bool MagicIs(const char* p, std::string_view magic) {
  return std::memcmp(p, magic.data(), magic.size()) == 0;
}

// crc32c of the record's bytes [4, body_end), seeded with the segment seq so a
// record from a segment's earlier life does not verify in its new one.
uint32_t RecordCrc(const char* rec, size_t body_end, uint64_t segment_seq) {
  // The seed is the segment's sequence number, its 8 bytes as EncodeFixed64 writes them.
  return Crc32c(rec + kRecValueLen, body_end - kRecValueLen, Crc32cFixed64(segment_seq));
}

}  // namespace

// ---- Superblock -------------------------------------------------------------

void EncodeSuperblock(const Superblock& sb, char* block) {
  std::memset(block, 0, kBlockSize);
  std::memcpy(block + kSbMagic, kSuperblockMagic.data(), kSuperblockMagic.size());
  EncodeFixed32(block + kSbVersion, sb.format_version);
  EncodeFixed32(block + kSbBlockSize, sb.block_size);
  EncodeFixed64(block + kSbSegmentSize, sb.segment_size);
  EncodeFixed64(block + kSbDataOffset, sb.data_offset);
  EncodeFixed64(block + kSbSegmentCount, sb.segment_count);
  EncodeFixed64(block + kSbMaxSegments, sb.max_segments);
  EncodeFixed64(block + kSbGeneration, sb.generation);
  EncodeFixed64(block + kSbCreatedMs, static_cast<uint64_t>(sb.created_ms));
  EncodeFixed32(block + kSbFlags, sb.flags);
  EncodeFixed32(block + kSbCheckpointSegment, sb.checkpoint_segment);
  EncodeFixed64(block + kSbCheckpointSeq, sb.checkpoint_seq);
  EncodeFixed64(block + kSbNextSegmentSeq, sb.next_segment_seq);
  EncodeFixed32(block + kSbGrownByLavik, sb.grown_by_lavik);
  EncodeFixed64(block + kSbFlushSeq, sb.flush_seq);
  EncodeFixed32(block + kSbCrc, Crc32c(block, kSbCrc));
  if (sb.cut.valid()) {
    const ReplCut& c = sb.cut;
    std::memcpy(block + kSbCut, kCutMagic.data(), kCutMagic.size());
    EncodeFixed64(block + kCutOffset, static_cast<uint64_t>(c.offset));
    EncodeFixed32(block + kCutDb, static_cast<uint32_t>(c.db));
    EncodeFixed32(block + kCutCount, c.count);
    std::memcpy(block + kCutReplid, c.replid.data(), c.replid.size());
    for (uint32_t i = 0; i < c.count && i < kMaxCutShards; ++i) {
      char* e = block + kCutShards + 24 * i;
      EncodeFixed64(e, c.shards[i].open_seq);
      EncodeFixed64(e + 8, c.shards[i].open_end);
      EncodeFixed64(e + 16, c.shards[i].next_seq);
    }
    EncodeFixed32(block + kCutCrc, Crc32c(block + kSbCut, kCutCrc - kSbCut));
  }
  // No FLUSHDB and the identity map: the extension stays all zero (as a file from before it).
  bool plain = true;
  for (size_t d = 0; d < kMaxDatabases; ++d) {
    plain = plain && sb.db_flush_seq[d] == 0 && sb.db_map[d] == d;
  }
  if (plain) return;
  for (size_t d = 0; d < kMaxDatabases; ++d) {
    EncodeFixed64(block + kSbDbFlushSeq + 8 * d, sb.db_flush_seq[d]);
    block[kSbDbMap + d] = static_cast<char>(sb.db_map[d]);
  }
  EncodeFixed32(block + kSbDbCrc, Crc32c(block + kSbDbFlushSeq, kSbDbCrc - kSbDbFlushSeq));
}

const char* SuperblockStatusName(SuperblockStatus status) {
  switch (status) {
    case SuperblockStatus::kOk:
      return "ok";
    case SuperblockStatus::kZero:
      return "all zero (unformatted)";
    case SuperblockStatus::kBadMagic:
      return "bad magic (not a Lavik data file)";
    case SuperblockStatus::kBadVersion:
      return "unsupported format version";
    case SuperblockStatus::kBadCrc:
      return "bad checksum";
  }
  return "unknown";
}

SuperblockStatus DecodeSuperblock(const char* block, Superblock* out) {
  if (AllZero(block, kBlockSize)) return SuperblockStatus::kZero;
  if (!MagicIs(block + kSbMagic, kSuperblockMagic)) return SuperblockStatus::kBadMagic;
  // Version before crc: another version may place or compute the crc
  // differently, and "wrong version" is the message the operator needs.
  if (DecodeFixed32(block + kSbVersion) != kFormatVersion) return SuperblockStatus::kBadVersion;
  if (DecodeFixed32(block + kSbCrc) != Crc32c(block, kSbCrc)) return SuperblockStatus::kBadCrc;
  Superblock sb;
  sb.format_version = DecodeFixed32(block + kSbVersion);
  sb.block_size = DecodeFixed32(block + kSbBlockSize);
  sb.segment_size = DecodeFixed64(block + kSbSegmentSize);
  sb.data_offset = DecodeFixed64(block + kSbDataOffset);
  sb.segment_count = DecodeFixed64(block + kSbSegmentCount);
  sb.max_segments = DecodeFixed64(block + kSbMaxSegments);
  sb.generation = DecodeFixed64(block + kSbGeneration);
  sb.created_ms = static_cast<int64_t>(DecodeFixed64(block + kSbCreatedMs));
  sb.flags = DecodeFixed32(block + kSbFlags);
  sb.checkpoint_segment = DecodeFixed32(block + kSbCheckpointSegment);
  sb.checkpoint_seq = DecodeFixed64(block + kSbCheckpointSeq);
  sb.next_segment_seq = DecodeFixed64(block + kSbNextSegmentSeq);
  sb.grown_by_lavik = DecodeFixed32(block + kSbGrownByLavik);
  sb.flush_seq = DecodeFixed64(block + kSbFlushSeq);
  if (!AllZero(block + kSbDbFlushSeq, kSbDbCrc + 4 - kSbDbFlushSeq)) {
    if (DecodeFixed32(block + kSbDbCrc) !=
        Crc32c(block + kSbDbFlushSeq, kSbDbCrc - kSbDbFlushSeq)) {
      return SuperblockStatus::kBadCrc;
    }
    bool seen[kMaxDatabases] = {};
    for (size_t d = 0; d < kMaxDatabases; ++d) {
      sb.db_flush_seq[d] = DecodeFixed64(block + kSbDbFlushSeq + 8 * d);
      const uint8_t p = static_cast<uint8_t>(block[kSbDbMap + d]);
      if (p >= kMaxDatabases || seen[p]) return SuperblockStatus::kBadCrc;  // not a permutation
      seen[p] = true;
      sb.db_map[d] = p;
    }
  }
  if (!AllZero(block + kSbCut, kBlockSize - kSbCut)) {
    const uint32_t count = DecodeFixed32(block + kCutCount);
    if (!MagicIs(block + kSbCut, kCutMagic) || count == 0 || count > kMaxCutShards ||
        DecodeFixed32(block + kCutCrc) != Crc32c(block + kSbCut, kCutCrc - kSbCut)) {
      return SuperblockStatus::kBadCrc;
    }
    ReplCut& c = sb.cut;
    c.offset = static_cast<int64_t>(DecodeFixed64(block + kCutOffset));
    c.db = static_cast<int32_t>(DecodeFixed32(block + kCutDb));
    c.count = count;
    std::memcpy(c.replid.data(), block + kCutReplid, c.replid.size());
    for (uint32_t i = 0; i < count; ++i) {
      const char* e = block + kCutShards + 24 * i;
      c.shards[i] = CutPosition{DecodeFixed64(e), DecodeFixed64(e + 8), DecodeFixed64(e + 16)};
    }
  }
  *out = sb;
  return SuperblockStatus::kOk;
}

SuperblockStatus PickSuperblock(const char* copy_a, const char* copy_b, Superblock* out,
                                int* which) {
  Superblock a, b;
  SuperblockStatus sa = DecodeSuperblock(copy_a, &a);
  SuperblockStatus sb = DecodeSuperblock(copy_b, &b);
  bool a_ok = sa == SuperblockStatus::kOk;
  bool b_ok = sb == SuperblockStatus::kOk;
  if (a_ok || b_ok) {
    bool pick_b = b_ok && (!a_ok || b.generation > a.generation);
    *out = pick_b ? b : a;
    *which = pick_b ? 1 : 0;
    return SuperblockStatus::kOk;
  }
  *which = -1;
  auto either = [&](SuperblockStatus s) { return sa == s || sb == s; };
  if (sa == SuperblockStatus::kZero && sb == SuperblockStatus::kZero) {
    return SuperblockStatus::kZero;
  }
  if (either(SuperblockStatus::kBadMagic)) return SuperblockStatus::kBadMagic;
  if (either(SuperblockStatus::kBadVersion)) return SuperblockStatus::kBadVersion;
  return SuperblockStatus::kBadCrc;
}

const char* SuperblockGeometryError(const Superblock& sb) {
  if (sb.block_size != kBlockSize) return "block_size is not 4096";
  if (sb.segment_size == 0 || sb.segment_size % kBlockSize != 0 ||
      sb.segment_size < 2 * kBlockSize) {
    return "segment_size is not a multiple of 4096 of at least two blocks";
  }
  if (sb.data_offset % kBlockSize != 0) return "data_offset is not a multiple of 4096";
  if (sb.data_offset < kSuperblockOffsetB + kBlockSize) {
    return "data_offset overlaps the superblock copies";
  }
  // Segment numbers are 32-bit on disk and kNoNextSegment is reserved.
  if (sb.segment_count >= kNoNextSegment) return "segment_count exceeds 32-bit segment numbers";
  if (sb.segment_count >
      (std::numeric_limits<uint64_t>::max() - sb.data_offset) / sb.segment_size) {
    return "segment_count overflows the file size";
  }
  if (sb.clean() && sb.checkpoint_segment >= sb.segment_count) {
    return "checkpoint_segment is beyond segment_count";
  }
  if (sb.grown_by_lavik > 1) return "grown_by_lavik is neither 0 nor 1";
  return nullptr;
}

// ---- Segment header ---------------------------------------------------------

void EncodeSegmentHeader(const SegmentHeader& h, char* out) {
  std::memcpy(out + kShMagic, kSegmentMagic.data(), kSegmentMagic.size());
  EncodeFixed64(out + kShSeq, h.seq);
  EncodeFixed32(out + kShKind, static_cast<uint32_t>(h.kind));
  EncodeFixed32(out + kShShard, h.shard);
  EncodeFixed32(out + kShRunLength, h.run_length);
  EncodeFixed32(out + kShNext, h.next);
  EncodeFixed64(out + kShPayloadBytes, h.payload_bytes);
  EncodeFixed32(out + kShCrc, Crc32c(out, kShCrc));
}

bool DecodeSegmentHeader(const char* data, SegmentHeader* out) {
  if (!MagicIs(data + kShMagic, kSegmentMagic)) return false;
  if (DecodeFixed32(data + kShCrc) != Crc32c(data, kShCrc)) return false;
  uint32_t kind = DecodeFixed32(data + kShKind);
  if (kind < static_cast<uint32_t>(SegmentKind::kLog) ||
      kind > static_cast<uint32_t>(SegmentKind::kFree)) {
    return false;
  }
  SegmentHeader h;
  h.seq = DecodeFixed64(data + kShSeq);
  h.kind = static_cast<SegmentKind>(kind);
  h.shard = DecodeFixed32(data + kShShard);
  h.run_length = DecodeFixed32(data + kShRunLength);
  h.next = DecodeFixed32(data + kShNext);
  h.payload_bytes = DecodeFixed64(data + kShPayloadBytes);
  *out = h;
  return true;
}

// ---- Record -----------------------------------------------------------------

size_t EncodeRecord(const RecordHeader& h, std::string_view key, std::string_view value,
                    uint64_t segment_seq, char* out) {
  assert(key.size() + value.size() <= kMaxRecordBody);
  RecordHeader full = h;
  full.key_len = static_cast<uint32_t>(key.size());
  full.value_len = static_cast<uint32_t>(value.size());
  // Empty views may carry a null data(); memcpy(.., nullptr, 0) is still UB.
  if (!key.empty()) std::memcpy(out + kRecordHeaderSize, key.data(), key.size());
  if (!value.empty()) std::memcpy(out + kRecordHeaderSize + key.size(), value.data(), value.size());
  return SealRecord(full, segment_seq, out);
}

size_t SealRecord(const RecordHeader& h, uint64_t segment_seq, char* out) {
  size_t body_end = kRecordHeaderSize + size_t{h.key_len} + h.value_len;
  size_t length = RecordLength(h.key_len, h.value_len);
  std::memset(out + body_end, 0, length - body_end);
  EncodeFixed32(out + kRecValueLen, h.value_len);
  EncodeFixed32(out + kRecKeyLen, h.key_len);
  out[kRecType] = static_cast<char>(h.type);
  out[kRecFlags] = static_cast<char>(h.flags);
  EncodeFixed16(out + kRecSlot, h.slot);
  EncodeFixed64(out + kRecSeq, h.seq);
  EncodeFixed64(out + kRecExpire, static_cast<uint64_t>(h.expire_ms));
  EncodeFixed32(out + kRecCrc, RecordCrc(out, body_end, segment_seq));
  return length;
}

const char* RecordStatusName(RecordStatus status) {
  switch (status) {
    case RecordStatus::kOk:
      return "ok";
    case RecordStatus::kTruncated:
      return "truncated";
    case RecordStatus::kBadCrc:
      return "bad checksum";
    case RecordStatus::kBadHeader:
      return "bad header";
  }
  return "unknown";
}

RecordStatus DecodeRecord(const char* data, size_t avail, uint64_t segment_seq, RecordView* out) {
  if (avail < kRecordHeaderSize) return RecordStatus::kTruncated;
  // Zeroed space ends most segments; refuse it outright rather than rely on
  // its crc failing (it matches for about one segment seq in 2^32).
  if (AllZero(data, kRecordHeaderSize)) return RecordStatus::kBadHeader;
  RecordHeader h;
  h.value_len = DecodeFixed32(data + kRecValueLen);
  h.key_len = DecodeFixed32(data + kRecKeyLen);
  h.type = static_cast<uint8_t>(data[kRecType]);
  h.flags = static_cast<uint8_t>(data[kRecFlags]);
  h.slot = DecodeFixed16(data + kRecSlot);
  h.seq = DecodeFixed64(data + kRecSeq);
  h.expire_ms = static_cast<int64_t>(DecodeFixed64(data + kRecExpire));
  // Both lengths are 32-bit, so the sum cannot overflow size_t.
  size_t body = size_t{h.key_len} + h.value_len;
  if (body > kMaxRecordBody) return RecordStatus::kBadHeader;
  if (h.type > static_cast<uint8_t>(RecordType::kChunk)) return RecordStatus::kBadHeader;
  if ((h.flags & ~kRecordKnownFlags) != 0) return RecordStatus::kBadHeader;
  if (h.tombstone() && h.value_len != kTombstoneValueSize) return RecordStatus::kBadHeader;
  size_t length = RecordLength(h.key_len, h.value_len);
  if (length > avail) return RecordStatus::kTruncated;
  size_t body_end = kRecordHeaderSize + body;
  if (DecodeFixed32(data + kRecCrc) != RecordCrc(data, body_end, segment_seq)) {
    return RecordStatus::kBadCrc;
  }
  // The crc does not cover the padding; demanding zeros there means no byte
  // of a record can change without it failing to verify.
  if (!AllZero(data + body_end, length - body_end)) return RecordStatus::kBadCrc;
  out->header = h;
  out->key = std::string_view(data + kRecordHeaderSize, h.key_len);
  out->value = std::string_view(data + kRecordHeaderSize + h.key_len, h.value_len);
  out->length = length;
  return RecordStatus::kOk;
}

std::array<char, kTombstoneValueSize> EncodeTombstone(uint64_t origin_segment_seq) {
  std::array<char, kTombstoneValueSize> v;
  EncodeFixed64(v.data(), origin_segment_seq);
  return v;
}

bool DecodeTombstoneOrigin(std::string_view value, uint64_t* origin_segment_seq) {
  if (value.size() != kTombstoneValueSize) return false;
  *origin_segment_seq = DecodeFixed64(value.data());
  return true;
}

bool RecordScanner::Next(RecordView* out) {
  if (done_) return false;
  if (offset_ == len_) {
    done_ = true;
    stop_status_ = RecordStatus::kOk;
    return false;
  }
  RecordStatus s = DecodeRecord(data_ + offset_, len_ - offset_, segment_seq_, out);
  if (s != RecordStatus::kOk) {
    done_ = true;
    stop_status_ = s;
    return false;
  }
  offset_ += out->length;
  return true;
}

// ---- Checkpoint -------------------------------------------------------------

void EncodeCheckpointHeader(const CheckpointHeader& h, char* out) {
  std::memset(out, 0, kCheckpointHeaderSize);
  std::memcpy(out + kCkMagic, kCheckpointMagic.data(), kCheckpointMagic.size());
  EncodeFixed32(out + kCkShardCount, h.shard_count);
  EncodeFixed32(out + kCkPayloadCrc, h.payload_crc);
  EncodeFixed64(out + kCkEntryCount, h.entry_count);
  EncodeFixed64(out + kCkTtlCount, h.ttl_count);
  EncodeFixed64(out + kCkCheckpointSeq, h.checkpoint_seq);
  EncodeFixed32(out + kCkHeaderCrc, Crc32c(out, kCkHeaderCrc));
}

bool DecodeCheckpointHeader(const char* data, CheckpointHeader* out) {
  if (!MagicIs(data + kCkMagic, kCheckpointMagic)) return false;
  if (DecodeFixed32(data + kCkHeaderCrc) != Crc32c(data, kCkHeaderCrc)) return false;
  CheckpointHeader h;
  h.shard_count = DecodeFixed32(data + kCkShardCount);
  h.payload_crc = DecodeFixed32(data + kCkPayloadCrc);
  h.entry_count = DecodeFixed64(data + kCkEntryCount);
  h.ttl_count = DecodeFixed64(data + kCkTtlCount);
  h.checkpoint_seq = DecodeFixed64(data + kCkCheckpointSeq);
  if (h.shard_count == 0 || h.shard_count > kMaxCheckpointShards) return false;
  if (h.entry_count > kMaxCheckpointEntries || h.ttl_count > h.entry_count) return false;
  *out = h;
  return true;
}

void EncodeCheckpointEntry(const CheckpointEntry& e, char* out) {
  EncodeFixed64(out, e.fingerprint);
  EncodeFixed64(out + 8, e.location);
  EncodeFixed16(out + 16, e.slot);
  std::memset(out + 18, 0, kCheckpointEntrySize - 18);
}

CheckpointEntry DecodeCheckpointEntry(const char* data) {
  CheckpointEntry e;
  e.fingerprint = DecodeFixed64(data);
  e.location = DecodeFixed64(data + 8);
  e.slot = DecodeFixed16(data + 16);
  return e;
}

void EncodeCheckpointTtlEntry(const CheckpointTtlEntry& e, char* out) {
  EncodeFixed64(out, e.fingerprint);
  EncodeFixed64(out + 8, static_cast<uint64_t>(e.expire_ms));
}

CheckpointTtlEntry DecodeCheckpointTtlEntry(const char* data) {
  CheckpointTtlEntry e;
  e.fingerprint = DecodeFixed64(data);
  e.expire_ms = static_cast<int64_t>(DecodeFixed64(data + 8));
  return e;
}

}  // namespace lavik
