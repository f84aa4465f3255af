// Defrag: frees the sparsest sealed segments of a shard by re-appending their live records.
#include <algorithm>

#include "base/clock.h"
#include "base/slot.h"
#include "runtime/shard_hop.h"
#include "storage/format.h"
#include "storage/store.h"

namespace lavik {
namespace {

// A slice relocates at most this many records, or runs this long, before yielding to the loop,
// so foreground latency holds.
constexpr int kRecordsPerSlice = 64;
constexpr int64_t kSliceBudgetUs = 300;
// A segment more than this full is not worth moving.
constexpr double kMaxVictimLiveRatio = 0.9;

}  // namespace

Task Store::Defrag(bool force) {
  // An open snapshot may read any record the index named when it began: no segment is freed.
  if (defrag_running_ || defrag_paused_ || !snaps_.empty()) co_return;
  // Free segments are "low" below an eighth of the file (and never fewer than 8).
  const size_t total = file_->segment_count();
  const size_t low = std::max<size_t>(8, total / 8);
  if (!force && file_->available_segments() >= low) co_return;
  const double payload = static_cast<double>(file_->segment_size() - kBlockSize);
  uint32_t victim = DataFile::kNoSegment;
  double best = kMaxVictimLiveRatio;
  for (uint32_t seg : log_.sealed()) {
    if (file_->state(seg) != DataFile::SegState::kLog) continue;
    double ratio = static_cast<double>(file_->live_bytes(seg).load()) / payload;
    if (ratio < best) {
      best = ratio;
      victim = seg;
    }
  }
  if (victim == DataFile::kNoSegment) co_return;
  defrag_running_ = true;
  defrag_victim_ = victim;
  bool ok = false;
  co_await DefragSegment(victim, &ok);
  defrag_victim_ = DataFile::kNoSegment;
  defrag_running_ = false;
}

Task Store::DefragSegment(uint32_t seg, bool* ok) {
  *ok = false;
  // The victim's last records may still sit in write buffers: put them on the device first.
  bool flushed = false;
  co_await log_.FlushAndSync(&flushed);
  if (!flushed) co_return;
  const uint64_t seg_seq = file_->seq(seg).load();
  const uint64_t start = file_->SegmentOffset(seg);
  const uint64_t size = file_->segment_size();
  AlignedBuffer buf(size);
  // Read the segment in 1 MiB pieces so other reads interleave.
  constexpr uint64_t kChunk = 1 << 20;
  for (uint64_t done = 0; done < size; done += kChunk) {
    uint64_t n = std::min(kChunk, size - done);
    int res = co_await device_->Read(buf.data() + done, n, start + done);
    if (res < 0 || static_cast<uint64_t>(res) != n) co_return;
  }
  RecordScanner scanner(buf.data() + kBlockSize, size - kBlockSize, seg_seq);
  RecordView v;
  int in_slice = 0;
  const int64_t now = NowMs();
  uint64_t moved_bytes = 0;
  int64_t slice_start = MonotonicUs();
  while (scanner.Next(&v)) {
    if (SlotShard(v.header.slot, static_cast<int>(shard_count_)) != static_cast<int>(shard_)) {
      // Written under another thread count: this shard cannot judge the other shards' records.
      // Leave the segment alone (it is no longer a candidate).
      log_.ForgetSealed(seg);
      co_return;
    }
    const uint64_t off = start + kBlockSize + scanner.end_offset() - v.length;
    const bool marker =
        v.header.tombstone() || (v.header.expire_ms != 0 && v.header.expire_ms < now);
    const uint64_t old_loc =
        loc::Make(off, v.length, static_cast<ValueType>(v.header.type), v.header.expire_ms != 0);
    const uint64_t fp = Index::Fingerprint(v.key);
    uint64_t new_loc = 0;
    bool applied = false;
    if (marker) {
      if (!v.header.tombstone()) {
        // Expired but nobody looked it up yet: expire it now, so it is kept as the key's marker.
        uint64_t indexed;
        if (index_.Get(fp, &indexed) && indexed == old_loc) ExpireEntry(fp, old_loc);
      }
      auto it = tombstones_.find(old_loc);
      if (it == tombstones_.end()) continue;  // dropped by the sweeper
      const uint64_t origin = it->second;
      uint64_t cur;
      if (index_.Get(fp, &cur)) {
        // The key was written again: that newer record shadows every older one by itself.
        tombstones_.erase(it);
        Unaccount(old_loc);
        continue;
      }
      WriteResult w = co_await Append(v.key, fp, static_cast<ValueType>(v.header.type), v.value,
                                      v.header.expire_ms, v.header.flags | kRecordRelocated, 0,
                                      &new_loc, &applied, Effect::kMarkerCopy);
      if (!w.ok()) co_return;  // out of space even in the reserve: try again later
      if (!applied) {          // written again meanwhile: the marker is not needed any more
        tombstones_.erase(old_loc);
        Unaccount(old_loc);
        continue;
      }
      tombstones_.erase(old_loc);
      tombstones_[new_loc] = origin;
      Unaccount(old_loc);
    } else {
      uint64_t cur;
      if (!index_.Get(fp, &cur) || cur != old_loc) continue;  // overwritten or deleted
      WriteResult w =
          co_await Append(v.key, fp, static_cast<ValueType>(v.header.type), v.value,
                          v.header.expire_ms, kRecordRelocated, old_loc, &new_loc, &applied);
      if (!w.ok()) co_return;
    }
    moved_bytes += v.length;
    ++stats_.defrag_records;
    if (++in_slice >= kRecordsPerSlice || MonotonicUs() - slice_start > kSliceBudgetUs) {
      in_slice = 0;
      co_await YieldToLoop();
      slice_start = MonotonicUs();
    }
  }
  // The copies must be durable before the old ones can disappear.
  bool synced = false;
  co_await log_.FlushAndSync(&synced);
  if (!synced) co_return;
  // A replica's cut taken before the last copy landed may be rolled back to after a crash, and
  // then needs the old copies: wait for a newer cut (or none; Store::CaptureCut).
  for (const uint64_t k = cut_taken_; !CutFreeAllowed(k);) co_await CutAwaiter{this};
  while (file_->readers(seg).load() > 0) co_await YieldToLoop();
  // A snapshot that began while records were being moved may read their old copies here: the
  // segment stays (its live bytes are 0 now; a later pass frees it).
  if (!snaps_.empty()) co_return;
  AlignedBuffer block(kBlockSize);
  SegmentHeader h;
  h.kind = SegmentKind::kFree;
  EncodeSegmentHeader(h, block.data());
  int res = co_await device_->Write(block.data(), kBlockSize, start);
  if (res >= 0) res = co_await device_->Sync();
  if (res < 0) co_return;
  log_.ForgetSealed(seg);
  int64_t left = file_->live_bytes(seg).load();
  (void)left;
  file_->ReleaseSegment(seg);
  file_->AddReclaimed(size - std::min<uint64_t>(size, moved_bytes));
  ++stats_.defrag_segments;
  *ok = true;
}

}  // namespace lavik
