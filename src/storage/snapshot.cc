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
  const uint64_t next = ScanIndex(cursor, count, db, [&](uint64_t fp, uint64_t l) {
    auto it = s->saved.find(fp);
    if (it == s->saved.end()) {
      fn(fp, l);
    } else if (it->second.loc != 0) {
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
    if (!index_.Get(it->first, &now)) fn(it->first, l);
  }
  return next;
}

void Store::SnapshotDbDone(uint64_t id, int db) {
  Snapshot* s = FindSnapshot(id);
  if (s == nullptr) return;
  s->done_dbs |= 1u << db;
  s->walk_db = -1;
  s->walk_cursor = 0;
}

}  // namespace lavik
