// Point-in-time snapshots of a Store's index (doc/storage-format.md "Snapshots"): the entries
// that change while a snapshot is open are saved (copy-on-write of index entries, not of
// values), and the snapshot's view reads them instead of the index's.
#include <algorithm>

#include "storage/store.h"

namespace lavik {

Store::SnapshotReads::SnapshotReads(Store& st, uint64_t id) : st_(st) {
  st_.snap_reading_ = st_.FindSnapshot(id);
}

Store::Snapshot* Store::FindSnapshot(uint64_t id) const {
  for (const auto& s : snaps_) {
    if (s->id == id) return s.get();
  }
  return nullptr;
}

void Store::BeginSnapshot(uint64_t id) {
  auto s = std::make_unique<Snapshot>();
  s->id = id;
  s->db_keys = db_keys_;
  s->db_expires = db_expires_;
  // Every record the view can name is in these (up to `end` in the open one), in a large run,
  // or in a segment another shard's log holds (written under another thread count).
  for (uint32_t seg : log_.sealed()) {
    if (file_->state(seg) == DataFile::SegState::kLog) {
      s->segments.push_back(Snapshot::Segment{seg, file_->seq(seg).load(), 0});
    }
  }
  const CutPosition at = log_.Position();
  if (at.open_seq != 0 && log_.open_segment() != DataFile::kNoSegment &&
      file_->seq(log_.open_segment()).load() == at.open_seq) {
    s->segments.push_back(Snapshot::Segment{log_.open_segment(), at.open_seq, at.open_end});
  }
  std::sort(s->segments.begin(), s->segments.end(),
            [](const Snapshot::Segment& a, const Snapshot::Segment& b) { return a.seg < b.seg; });
  snaps_.push_back(std::move(s));
}

void Store::EndSnapshot(uint64_t id) {
  std::erase_if(snaps_, [id](const auto& s) { return s->id == id; });
  if (snaps_.empty()) {
    // Large runs that died meanwhile are released by the next Tick.
    snap_large_lens_.clear();
  }
}

size_t Store::SnapshotDbSize(uint64_t id, int db) const {
  const Snapshot* s = FindSnapshot(id);
  return s == nullptr ? 0 : s->db_keys[static_cast<size_t>(db)];
}

size_t Store::SnapshotDbExpires(uint64_t id, int db) const {
  const Snapshot* s = FindSnapshot(id);
  return s == nullptr ? 0 : s->db_expires[static_cast<size_t>(db)];
}

size_t Store::snapshot_saved() const {
  size_t n = 0;
  for (const auto& s : snaps_) n += s->saved.size();
  return n;
}

void Store::SnapSave(uint64_t fp) {
  uint64_t cur = 0;
  const bool present = index_.Get(fp, &cur);
  const bool chunk = present && loc::Type(cur) == ValueType::kChunk;
  for (const auto& s : snaps_) {
    // A chunk is read through its root, whose slice may come later whatever the chunk's own
    // fingerprint: a chunk that existed at the start is always saved.
    if (!chunk && s->Walked(fp)) continue;
    s->saved.try_emplace(fp, Snapshot::Saved{present ? cur : 0, present ? ExpireOf(fp) : 0});
  }
}

KeyInfo Store::SnapLookup(uint64_t fp, int64_t now_ms) const {
  const Snapshot& s = *snap_reading_;
  uint64_t l = 0;
  int64_t expire = 0;
  auto it = s.saved.find(fp);
  if (it != s.saved.end()) {
    l = it->second.loc;
    expire = it->second.expire_ms;
  } else if (index_.Get(fp, &l)) {
    expire = loc::Ttl(l) ? ExpireOf(fp) : 0;
  }
  if (l == 0) return KeyInfo{};
  // Past its TTL: absent, as for any reader, but nothing is expired from here.
  if (expire != 0 && now_ms != 0 && expire < now_ms) return KeyInfo{};
  return KeyInfo{true, loc::Type(l), expire, l};
}

uint64_t Store::SnapshotScan(uint64_t id, uint64_t cursor, size_t count, int db,
                             const std::function<void(uint64_t fp, uint64_t loc)>& fn) {
  Snapshot* s = FindSnapshot(id);
  if (s == nullptr) return 0;
  // Every key of `db` below `cursor` was read by the earlier slices.
  s->walk_db = db;
  s->walk_cursor = cursor;
  // A record in a range the segment pass judged was framed there (or is not the view's).
  auto judged = [&](uint64_t l) {
    const uint64_t off = loc::Offset(l);
    return s->InScanned(file_->SegmentOf(off), off);
  };
  const uint64_t next = ScanIndex(cursor, count, db, [&](uint64_t fp, uint64_t l) {
    auto it = s->saved.find(fp);
    if (it == s->saved.end()) {
      if (!judged(l)) fn(fp, l);
    } else if (it->second.loc != 0 && !judged(it->second.loc)) {
      fn(fp, it->second.loc);
    }
  });
  // The keys of the same fingerprint range that were deleted since the start: the index no
  // longer has them, the snapshot does.
  for (auto it = s->saved.lower_bound(cursor);
       it != s->saved.end() && (next == 0 || it->first < next); ++it) {
    const uint64_t l = it->second.loc;
    if (l == 0 || Index::FpDb(it->first) != db || loc::Type(l) == ValueType::kChunk) continue;
    uint64_t now;
    if (!index_.Get(it->first, &now) && !judged(l)) fn(it->first, l);
  }
  return next;
}

size_t Store::SnapshotSegments(uint64_t id) const {
  const Snapshot* s = FindSnapshot(id);
  return s == nullptr ? 0 : s->segments.size();
}

Task Store::ReadSnapshotSegment(uint64_t id, size_t i, AlignedBuffer* buf, uint32_t* seg,
                                uint64_t* base, uint64_t* size, uint64_t* seq, bool* ok) {
  *ok = false;
  const Snapshot* s = FindSnapshot(id);
  if (s == nullptr || i >= s->segments.size()) co_return;
  const Snapshot::Segment g = s->segments[i];
  // The records of the last segments may still be in write buffers: once they are written (at
  // the first segment), every record of the listed ranges is on the device.
  if (i == 0) {
    bool flushed = false;
    co_await log_.FlushAndSync(&flushed);
    if (!flushed) co_return;
  }
  const uint64_t start = file_->SegmentOffset(g.seg);
  const uint64_t first = start + kBlockSize;
  uint64_t last = start + file_->segment_size();
  if (g.end != 0) last = std::min(last, std::max(first, g.end));
  const uint64_t align = file_->read_align();
  const uint64_t len = ((last - first) + align - 1) & ~(align - 1);
  if (len == 0) co_return;
  if (buf->size() < len) *buf = AlignedBuffer(len);
  // Not freed and reused since the start: its bytes are still the snapshot's.
  auto unchanged = [&] {
    return file_->state(g.seg) == DataFile::SegState::kLog && file_->seq(g.seg).load() == g.seq;
  };
  file_->readers(g.seg).fetch_add(1);
  bool good = unchanged();
  // 1 MiB pieces, one at a time: long sequential reads, which the device serves many times
  // faster per byte than one read per record, while the clients' reads wait behind at most one
  // of them (four at once read no faster here, and left the clients 0.40x of their GET rate
  // during a full sync instead of 0.50x; doc/replication.md "The master during a full sync").
  constexpr uint64_t kPiece = 1 << 20;
  for (uint64_t done = 0; good && done < len;) {
    const uint64_t n = std::min(kPiece, len - done);
    const int res = co_await device_->Read(buf->data() + done, n, first + done);
    good = res >= 0 && static_cast<uint64_t>(res) == n;
    done += n;
  }
  good = good && unchanged();  // (not freed while it was read either)
  file_->readers(g.seg).fetch_sub(1);
  if (!good) co_return;
  *seg = g.seg;
  *base = first;
  *size = last - first;
  *seq = g.seq;
  *ok = true;
}

void Store::SnapshotScanned(uint64_t id, uint32_t seg, uint64_t upto) {
  Snapshot* s = FindSnapshot(id);
  if (s != nullptr) s->scanned[seg] = upto;
}

void Store::SnapshotDbDone(uint64_t id, int db) {
  Snapshot* s = FindSnapshot(id);
  if (s == nullptr) return;
  s->done_dbs |= 1u << db;
  s->walk_db = -1;
  s->walk_cursor = 0;
}

}  // namespace lavik
