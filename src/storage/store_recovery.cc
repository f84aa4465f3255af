// Store: rebuilding the index at start-up (doc/storage-format.md "Recovery details") and
// dropping deletion markers no live record needs ("Deletion markers and the tomb raider").

#include <algorithm>

#include "base/slot.h"
#include "storage/format.h"
#include "storage/store.h"

namespace lavik {

void Store::RecoverRecord(uint64_t fp, uint64_t l, uint32_t len, bool tombstone, int64_t expire_ms,
                          uint64_t origin, int64_t now_ms, bool large, std::string_view value,
                          std::string_view key) {
  if (large) large_lens_[l] = len;
  Account(l, len);
  if (tombstone || (expire_ms != 0 && expire_ms < now_ms)) {
    uint64_t old;
    if (index_.Erase(fp, &old)) {
      CountEntry(fp, old, 0);
      Unaccount(old);
    }
    // A root that died before the crash may still have chunks: sweep them (again).
    chunks_.KeyDying(fp);
    if (!recovered_chunks_.empty()) recovered_chunks_.erase(fp);
    DropTtl(fp);
    if (!tombstone) origin = file_->seq(file_->SegmentOf(loc::Offset(l))).load() + (large ? 0 : 1);
    tombstones_[l] = origin;
    return;
  }
  Install(fp, l, expire_ms);
  chunks_.NoteWrite(fp, value, IsChunkableType(loc::Type(l)));
  ChunkRegistry::Dead d;
  if (loc::Type(l) == ValueType::kChunk && ParseChunkKey(key, &d.slot, &d.id, &d.number)) {
    recovered_chunks_[fp] = d;
  }
}

size_t Store::FinishRecovery() {
  size_t orphans = 0;
  if (!roots_unknown_) {  // every live root was seen (no checkpoint entries)
    for (const auto& [fp, d] : recovered_chunks_) {
      uint64_t l = 0;
      if (index_.Get(fp, &l) && loc::Type(l) == ValueType::kChunk && !chunks_.referenced(d.id)) {
        chunks_.Requeue(d);
        ++orphans;
      }
    }
  }
  std::unordered_map<uint64_t, ChunkRegistry::Dead>().swap(recovered_chunks_);
  return orphans;
}

void Store::LoadEntry(uint64_t fp, uint64_t l, uint64_t len, int64_t expire_ms, bool large) {
  if (large) large_lens_[l] = len;
  Account(l, len);
  CountEntry(fp, index_.Upsert(fp, l), l);
  if (IsChunkableType(loc::Type(l))) roots_unknown_ = true;
  if (expire_ms != 0) SetTtl(fp, expire_ms);
}

void Store::LoadTombstone(uint64_t l, uint64_t origin, uint32_t len, bool large) {
  if (large) large_lens_[l] = len;
  Account(l, len);
  tombstones_[l] = origin;
}

size_t Store::SweepTombstones() {
  const uint64_t min_live = file_->MinLiveSeq();
  size_t dropped = 0;
  for (auto it = tombstones_.begin(); it != tombstones_.end();) {
    if (it->second <= min_live) {
      Unaccount(it->first);
      it = tombstones_.erase(it);
      ++dropped;
    } else {
      ++it;
    }
  }
  stats_.tombstones_dropped += dropped;
  return dropped;
}

}  // namespace lavik
