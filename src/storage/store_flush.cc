// Store: FLUSHALL / FLUSHDB of one shard (doc/storage-format.md "FLUSHALL", "Databases").

#include <algorithm>

#include "base/slot.h"
#include "storage/format.h"
#include "storage/store.h"

namespace lavik {

void Store::Clear() {
  index_.Clear();
  internal_records_ = 0;
  db_keys_.fill(0);
  if (slot_keys_ != nullptr) std::fill_n(slot_keys_.get(), kNumSlots, 0u);
  db_expires_.fill(0);
  chunks_.Clear();
  expired_records_.clear();
  recovered_chunks_.clear();
  roots_unknown_ = false;
  ttl_.clear();
  ttl_keys_.clear();
  cache_.Clear();
  tombstones_.clear();
  large_lens_.clear();
}

Task Store::PrepareFlush(bool* ok) {
  co_await log_.FlushAndSync(ok);
  co_await LargeWritesLanded();  // issued before the flush: flushed with the rest
  if (key_observer_ != nullptr) key_observer_->BeforeFlush(*this, -1);
  if (tracking_observer_ != nullptr) tracking_observer_->BeforeFlush(*this, -1);
  for (const auto& [l, len] : large_lens_)
    flushed_runs_.emplace_back(file_->SegmentOf(loc::Offset(l)), RunLength(len));
  Clear();
  log_.CloseSegment();
}

bool Store::CommitFlush(uint64_t flush_seq, std::string* error) {
  return file_->SetFlushSeq(flush_seq, error);
}

void Store::ReleaseFlushed(uint64_t flush_seq) {
  std::vector<uint32_t> sealed = log_.sealed();
  for (uint32_t seg : sealed) {
    if (file_->seq(seg).load() < flush_seq && file_->readers(seg).load() == 0 &&
        seg != defrag_victim_) {
      log_.ForgetSealed(seg);
      file_->ReleaseSegment(seg);
    }
  }
  // Dead by the superblock's flush seq whatever a rollback keeps (a FLUSHALL voids the cut).
  for (const auto& [first, count] : flushed_runs_) pending_release_.push_back({first, count, 0});
  flushed_runs_.clear();
}

Task Store::FlushDb(int db, bool* ok) {
  co_await log_.FlushAndSync(ok);
  co_await LargeWritesLanded();
  if (key_observer_ != nullptr) key_observer_->BeforeFlush(*this, db);
  if (tracking_observer_ != nullptr) tracking_observer_->BeforeFlush(*this, db);
  std::vector<std::pair<uint64_t, uint64_t>> doomed;
  doomed.reserve(db_keys_[static_cast<size_t>(db)]);
  index_.ForEach([&](uint64_t fp, uint64_t l) {
    if (loc::Type(l) != ValueType::kChunk && Index::FpDb(fp) == db) doomed.emplace_back(fp, l);
  });
  // Each key goes as a deletion would, without a tombstone: the superblock's flush seq for
  // the database (DataFile::SetDbFlushSeq) makes every older record of it dead for recovery.
  for (const auto& [fp, l] : doomed) {
    SnapNote(fp);  // FLUSHDB waits for open snapshots (storage/snapshot_gate.h); kept exact anyway
    index_.Erase(fp, nullptr);
    CountEntry(fp, l, 0);
    Unaccount(l);
    chunks_.KeyDying(fp);
    DropTtl(fp);
    cache_.Erase(fp);
  }
  log_.CloseSegment();
}

}  // namespace lavik
