#include "storage/recovery.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/clock.h"
#include "base/crc32c.h"
#include "base/slot.h"
#include "storage/format.h"

namespace lavik {
namespace {

// v3: fingerprints carry the key's database (Index::Fingerprint); an older checkpoint's do not,
// so it is not loaded (the log scan rebuilds the index).
constexpr std::string_view kCkptMagic = "LVKCKPT3";
constexpr size_t kCkptHeader = 64;
constexpr size_t kCkptEntry = 32;
enum : uint8_t { kEntryKey = 1, kEntryTombstone = 2 };

struct UsedSegment {
  uint32_t seg;
  uint64_t seq;
  SegmentKind kind;
  uint32_t run;
  uint32_t shard;
  uint64_t cut_end = UINT64_MAX;  // a rollback keeps only the records before this file offset
};

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Reads every segment header: which segments hold data, in what order.
bool ReadHeaders(DataFile* file, std::vector<UsedSegment>* used, std::vector<uint32_t>* ckpt,
                 std::string* error) {
  const uint32_t n = file->segment_count();
  const uint64_t flush_seq = file->superblock().flush_seq;
  AlignedBuffer block(kBlockSize);
  for (uint32_t seg = 0; seg < n; ++seg) {
    if (!file->ReadAt(block.data(), kBlockSize, file->SegmentOffset(seg), error)) return false;
    SegmentHeader h;
    if (!DecodeSegmentHeader(block.data(), &h)) continue;
    if (h.kind == SegmentKind::kCheckpoint) {
      ckpt->push_back(seg);
      continue;
    }
    if (h.kind != SegmentKind::kLog && h.kind != SegmentKind::kLarge) continue;
    if (h.seq < flush_seq) continue;  // emptied by FLUSHALL
    uint32_t run = h.kind == SegmentKind::kLarge ? std::max<uint32_t>(1, h.run_length) : 1;
    if (seg + run > n) continue;  // a run cut short: not a complete record
    used->push_back(UsedSegment{seg, h.seq, h.kind, run, h.shard});
    seg += run - 1;  // a large record's continuation segments have no header of their own
  }
  return true;
}

void PutEntry(char* p, uint64_t a, uint64_t b, uint64_t c, uint32_t len, uint16_t shard, int kind) {
  EncodeFixed64(p, a);
  EncodeFixed64(p + 8, b);
  EncodeFixed64(p + 16, c);
  EncodeFixed32(p + 24, len);
  EncodeFixed16(p + 28, shard);
  p[30] = static_cast<char>(kind & 0x7F);
  p[31] = static_cast<char>(kind >> 7);  // 1: a large record (owns a segment run)
}

bool LoadCheckpoint(DataFile* file, const std::vector<Store*>& stores, RecoveryReport* report,
                    std::string* error) {
  const Superblock& sb = file->superblock();
  const uint64_t seg_size = file->segment_size();
  std::string payload;
  uint32_t seg = sb.checkpoint_segment;
  AlignedBuffer buf(seg_size);
  for (uint32_t hops = 0; seg != kNoNextSegment && hops < file->segment_count(); ++hops) {
    if (seg >= file->segment_count()) return false;
    if (!file->ReadAt(buf.data(), seg_size, file->SegmentOffset(seg), error)) return false;
    SegmentHeader h;
    if (!DecodeSegmentHeader(buf.data(), &h) || h.kind != SegmentKind::kCheckpoint ||
        h.payload_bytes > seg_size - kBlockSize) {
      return false;
    }
    payload.append(buf.data() + kBlockSize, h.payload_bytes);
    seg = h.next;
  }
  if (payload.size() < kCkptHeader || std::string_view(payload.data(), 8) != kCkptMagic) {
    return false;
  }
  const char* p = payload.data();
  const uint32_t shards = DecodeFixed32(p + 8);
  const uint32_t crc = DecodeFixed32(p + 12);
  const uint64_t entries = DecodeFixed64(p + 16);
  const uint64_t max_seq = DecodeFixed64(p + 24);
  if (shards != stores.size()) return false;  // another thread count: rebuild by scanning
  // Byte 32: the fingerprint layout it was written with (0 plain, 1 cluster slots; doc/index.md).
  // Another layout's fingerprints would not match this run's: rebuild by scanning.
  if (static_cast<uint8_t>(p[32]) != (Index::slot_fingerprints() ? 1 : 0)) return false;
  if (payload.size() != kCkptHeader + entries * kCkptEntry) return false;
  if (Crc32c(p + kCkptHeader, payload.size() - kCkptHeader) != crc) return false;
  for (uint64_t i = 0; i < entries; ++i) {
    const char* e = p + kCkptHeader + i * kCkptEntry;
    uint16_t shard = DecodeFixed16(e + 28);
    if (shard >= stores.size()) return false;
    const bool large = e[31] != 0;
    if (e[30] == kEntryKey) {
      stores[shard]->LoadEntry(DecodeFixed64(e), DecodeFixed64(e + 8), DecodeFixed32(e + 24),
                               static_cast<int64_t>(DecodeFixed64(e + 16)), large);
      ++report->keys;
    } else {
      stores[shard]->LoadTombstone(DecodeFixed64(e), DecodeFixed64(e + 8), DecodeFixed32(e + 24),
                                   large);
    }
  }
  for (Store* s : stores) s->set_seq(max_seq);
  report->from_checkpoint = true;
  return true;
}

// A rollback to the replication cut (doc/storage-format.md "Replication cut"): segments written
// after it get a free header (every segment of a large run), and the segment each shard had
// open at the cut is zeroed from its position on. Leaves `used` with what stays.
bool DropAfterCut(DataFile* file, const ReplCut& cut, std::vector<UsedSegment>* used,
                  RecoveryReport* report, std::string* error) {
  AlignedBuffer free_block(kBlockSize);
  SegmentHeader fh;
  fh.kind = SegmentKind::kFree;
  EncodeSegmentHeader(fh, free_block.data());
  const uint64_t seg_size = file->segment_size();
  AlignedBuffer tail;
  std::vector<UsedSegment> kept;
  for (UsedSegment& u : *used) {
    if (u.shard >= cut.count) {  // written under more workers, in an earlier run: before it
      kept.push_back(u);
      continue;
    }
    const CutPosition& p = cut.shards[u.shard];
    if (u.seq >= p.next_seq) {
      for (uint32_t i = 0; i < u.run; ++i) {
        if (!file->WriteAt(free_block.data(), kBlockSize, file->SegmentOffset(u.seg + i), error)) {
          return false;
        }
      }
      report->dropped_segments += u.run;
      continue;
    }
    if (u.seq == p.open_seq) {
      const uint64_t start = file->SegmentOffset(u.seg);
      if (p.open_end < start + kBlockSize || p.open_end > start + seg_size) {
        *error = "the replication cut names a position outside its segment";
        return false;
      }
      u.cut_end = p.open_end;
      // Zero from the cut's position to the segment's end (the block holding the position
      // keeps its bytes before it), counting the records dropped.
      const uint64_t from = AlignDown(p.open_end);
      const uint64_t len = start + seg_size - from;
      if (tail.size() < len) tail.Reset(len);
      if (!file->ReadAt(tail.data(), len, from, error)) return false;
      const size_t skip = p.open_end - from;
      RecordScanner scanner(tail.data() + skip, len - skip, u.seq);
      RecordView v;
      while (scanner.Next(&v)) ++report->dropped_records;
      std::memset(tail.data() + skip, 0, len - skip);
      if (!file->WriteAt(tail.data(), len, from, error)) return false;
    }
    kept.push_back(u);
  }
  used->swap(kept);
  return file->SyncNow(error);
}

}  // namespace

bool MarkDirty(DataFile* file, std::string* error) {
  Superblock& sb = file->superblock();
  sb.flags &= ~kSuperblockClean;
  sb.checkpoint_segment = 0;
  return file->WriteSuperblock(error);
}

bool Recover(DataFile* file, const std::vector<Store*>& stores, const ShardOfSlot& shard_of_slot,
             const ProgressLog& log, RecoveryReport* report, std::string* error, bool rollback) {
  const int64_t started = Now();
  std::vector<UsedSegment> used;
  std::vector<uint32_t> ckpt;
  if (!ReadHeaders(file, &used, &ckpt, error)) return false;
  std::sort(used.begin(), used.end(),
            [](const UsedSegment& a, const UsedSegment& b) { return a.seq < b.seq; });
  uint64_t max_seg_seq = 0;
  // Seqs of dropped segments are never handed out again either (a reused seq would make their
  // old records verify).
  for (const UsedSegment& u : used) max_seg_seq = std::max(max_seg_seq, u.seq);
  Superblock& sbm = file->superblock();
  if (rollback && sbm.cut.valid()) {
    if (!DropAfterCut(file, sbm.cut, &used, report, error)) return false;
    report->rolled_back = true;
  } else {
    sbm.cut = ReplCut{};  // cleared by MarkDirty's write below
  }
  for (const UsedSegment& u : used) {
    file->seq(u.seg).store(u.seq);
    file->MarkUsed(
        u.seg, u.kind == SegmentKind::kLog ? DataFile::SegState::kLog : DataFile::SegState::kLarge,
        u.shard);
    for (uint32_t i = 1; i < u.run; ++i) {
      file->MarkUsed(u.seg + i, DataFile::SegState::kLargeTail, u.shard);
    }
    if (u.kind == SegmentKind::kLog) stores[u.shard % stores.size()]->log().AdoptSealed(u.seg);
    max_seg_seq = std::max(max_seg_seq, u.seq);
  }
  file->set_next_segment_seq(
      std::max({file->peek_next_segment_seq(), max_seg_seq + 1, file->superblock().flush_seq}));

  const Superblock& sb = file->superblock();
  bool loaded = false;
  if (sb.clean() && !report->rolled_back) {
    std::string ignored;
    loaded = LoadCheckpoint(file, stores, report, &ignored);
    if (!loaded) {
      for (Store* s : stores) s->Clear();
      log("checkpoint not usable (another thread count, or damaged): rebuilding the index by "
          "scanning the log");
    }
  }
  if (!loaded) {
    const int64_t now_ms = NowMs();
    const uint64_t seg_size = file->segment_size();
    AlignedBuffer buf(seg_size);
    uint64_t max_record_seq = 0;
    int64_t last_log = Now();
    for (size_t i = 0; i < used.size(); ++i) {
      const UsedSegment& u = used[i];
      const uint64_t bytes = uint64_t{u.run} * seg_size;
      if (buf.size() < bytes) buf.Reset(bytes);
      if (!file->ReadAt(buf.data(), bytes, file->SegmentOffset(u.seg), error)) return false;
      const uint64_t base = file->SegmentOffset(u.seg) + kBlockSize;
      const char* payload = buf.data() + kBlockSize;
      const size_t payload_len = bytes - kBlockSize;
      size_t start = 0;
      while (start < payload_len) {
        RecordScanner scanner(payload + start, payload_len - start, u.seq);
        RecordView v;
        while (scanner.Next(&v)) {
          const uint64_t off = base + start + scanner.end_offset() - v.length;
          if (off >= u.cut_end) break;  // after the replication cut (zeroed by now)
          const auto type = static_cast<ValueType>(v.header.type);
          const uint64_t l = loc::Make(off, v.length, type, v.header.expire_ms != 0);
          uint64_t origin = 0;
          if (v.header.tombstone()) DecodeTombstoneOrigin(v.value, &origin);
          int shard = shard_of_slot(v.header.slot);
          const uint64_t fp = Index::Fingerprint(v.key);
          if (u.seq < sb.db_flush_seq[static_cast<size_t>(Index::FpDb(fp))]) {
            ++report->records;  // emptied by FLUSHDB of its database: dead, as garbage
            continue;
          }
          stores[shard]->RecoverRecord(fp, l, static_cast<uint32_t>(v.length), v.header.tombstone(),
                                       v.header.expire_ms, origin, now_ms,
                                       u.kind == SegmentKind::kLarge, v.value, v.key);
          max_record_seq = std::max(max_record_seq, v.header.seq);
          ++report->records;
          report->bytes += v.length;
        }
        // A record that fails its checksum ends the segment's log (a torn tail) unless a valid
        // record follows it: then it is damage in the middle. Its key is kept pointing at it,
        // so reads report the corruption instead of serving an older version or nothing.
        size_t bad = start + scanner.end_offset();
        if (scanner.stop_status() != RecordStatus::kBadCrc) break;
        if (bad + kRecordHeaderSize > payload_len) break;
        const uint32_t value_len = DecodeFixed32(payload + bad + 4);
        const uint32_t key_len = DecodeFixed32(payload + bad + 8);
        const size_t len = RecordLength(key_len, value_len);
        if (value_len > payload_len || key_len > payload_len || bad + len >= payload_len) break;
        RecordView next;
        if (DecodeRecord(payload + bad + len, payload_len - bad - len, u.seq, &next) !=
            RecordStatus::kOk) {
          break;
        }
        std::string_view key(payload + bad + kRecordHeaderSize, key_len);
        const uint16_t slot = DecodeFixed16(payload + bad + 14);
        const auto type = static_cast<ValueType>(static_cast<uint8_t>(payload[bad + 12]) & 7);
        const int shard = shard_of_slot(slot % kNumSlots);
        stores[shard]->RecoverRecord(
            Index::Fingerprint(key), loc::Make(base + bad, len, type, false),
            static_cast<uint32_t>(len), false, 0, 0, now_ms, u.kind == SegmentKind::kLarge);
        ++report->corrupt;
        log("recovery: a damaged record at offset " + std::to_string(base + bad) +
            " of the data file: its key reports the corruption when read");
        start = bad + len;
      }
      ++report->segments;
      if (Now() - last_log > 2000) {
        last_log = Now();
        log("recovery: " + std::to_string(i + 1) + "/" + std::to_string(used.size()) +
            " segments scanned, " + std::to_string(report->records) + " records");
      }
    }
    for (Store* s : stores) {
      s->set_seq(max_record_seq);
      if (report->rolled_back) s->StartAtCut();
    }
    size_t orphans = 0;
    for (Store* s : stores) orphans += s->FinishRecovery();
    if (orphans > 0) {
      log("recovery: " + std::to_string(orphans) +
          " orphan chunk records (no live collection names them) will be freed in the background");
    }
    for (Store* s : stores) report->keys += s->size();
  }
  // The checkpoint's segments are free again; mark them so before anything reuses them.
  AlignedBuffer block(kBlockSize);
  SegmentHeader fh;
  fh.kind = SegmentKind::kFree;
  EncodeSegmentHeader(fh, block.data());
  for (uint32_t seg : ckpt) {
    if (!file->WriteAt(block.data(), kBlockSize, file->SegmentOffset(seg), error)) return false;
  }
  if (!MarkDirty(file, error)) return false;
  report->elapsed_ms = Now() - started;
  return true;
}

bool WriteCheckpoint(DataFile* file, const std::vector<Store*>& stores, std::string* error) {
  uint64_t entries = 0;
  uint64_t max_seq = 0;
  for (Store* s : stores) {
    entries += s->records() + s->tombstones().size();
    max_seq = std::max(max_seq, s->seq());
  }
  std::string payload(kCkptHeader + entries * kCkptEntry, '\0');
  char* p = payload.data() + kCkptHeader;
  for (size_t shard = 0; shard < stores.size(); ++shard) {
    Store* s = stores[shard];
    s->ForEachEntry([&](uint64_t fp, uint64_t l) {
      PutEntry(p, fp, l, static_cast<uint64_t>(s->ExpireOf(fp)),
               static_cast<uint32_t>(s->LargeLen(l)), static_cast<uint16_t>(shard),
               kEntryKey | (s->IsLarge(l) ? 0x80 : 0));
      p += kCkptEntry;
    });
    for (const auto& [l, origin] : s->tombstones()) {
      PutEntry(p, l, origin, 0, static_cast<uint32_t>(s->LargeLen(l)), static_cast<uint16_t>(shard),
               kEntryTombstone);
      p += kCkptEntry;
    }
  }
  std::memcpy(payload.data(), kCkptMagic.data(), 8);
  EncodeFixed32(payload.data() + 8, static_cast<uint32_t>(stores.size()));
  EncodeFixed32(payload.data() + 12,
                Crc32c(payload.data() + kCkptHeader, payload.size() - kCkptHeader));
  EncodeFixed64(payload.data() + 16, entries);
  EncodeFixed64(payload.data() + 24, max_seq);
  payload[32] = static_cast<char>(Index::slot_fingerprints() ? 1 : 0);

  const uint64_t seg_size = file->segment_size();
  const uint64_t per_seg = seg_size - kBlockSize;
  const size_t need = (payload.size() + per_seg - 1) / per_seg;
  std::vector<uint32_t> chain;
  for (size_t i = 0; i < need; ++i) {
    uint32_t seg = file->AllocateSegment(DataFile::SegState::kCheckpoint, 0, true);
    if (seg == DataFile::kNoSegment) {
      for (uint32_t s : chain) file->ReleaseSegment(s);
      *error = "no free space for the checkpoint (the next start scans the log instead)";
      return false;
    }
    chain.push_back(seg);
  }
  AlignedBuffer buf(seg_size);
  const uint64_t ckpt_seq = file->NextSegmentSeq();
  for (size_t i = 0; i < chain.size(); ++i) {
    size_t from = i * per_seg;
    size_t n = std::min<size_t>(per_seg, payload.size() - from);
    std::memset(buf.data(), 0, kBlockSize);
    SegmentHeader h;
    h.seq = ckpt_seq;
    h.kind = SegmentKind::kCheckpoint;
    h.next = i + 1 < chain.size() ? chain[i + 1] : kNoNextSegment;
    h.payload_bytes = n;
    EncodeSegmentHeader(h, buf.data());
    std::memcpy(buf.data() + kBlockSize, payload.data() + from, n);
    size_t len = AlignUp(kBlockSize + n);
    if (!file->WriteAt(buf.data(), len, file->SegmentOffset(chain[i]), error)) return false;
  }
  if (!file->SyncNow(error)) return false;
  Superblock& sb = file->superblock();
  sb.flags |= kSuperblockClean;
  sb.checkpoint_segment = chain.empty() ? kNoNextSegment : chain[0];
  sb.checkpoint_seq = ckpt_seq;
  if (chain.empty()) sb.checkpoint_segment = kNoNextSegment;
  return file->WriteSuperblock(error);
}

}  // namespace lavik
