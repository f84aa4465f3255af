// Store: the write path of one shard — placing records in the log (Append, and TryWriteNow
// without a coroutine), large records written on their own, and the writes and deletes built on
// Append (doc/storage-format.md "Records", doc/threading.md "Handlers are coroutines").

#include <cerrno>
#include <cstring>

#include "base/clock.h"
#include "base/slot.h"
#include "notify/keyspace_events.h"
#include "runtime/shard_hop.h"
#include "storage/format.h"
#include "storage/store.h"

namespace lavik {

namespace {

// Waits in Store::large_in_flight_ for a key's large record to be in place (EndLargeFlight
// resumes it on a later loop turn).
class KeyFlightWait : private MailboxItem {
 public:
  explicit KeyFlightWait(std::vector<MailboxItem*>* waiters) : waiters_(waiters) {}
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    run = [](MailboxItem* item) { static_cast<KeyFlightWait*>(item)->handle_.resume(); };
    waiters_->push_back(this);
  }
  void await_resume() {}

 private:
  std::vector<MailboxItem*>* waiters_;
  std::coroutine_handle<> handle_;
};

constexpr uint64_t kAnyLoc = ~uint64_t{0};
// How long a write waits for defrag to free space before it reports the device full.
constexpr int64_t kNoSpaceWaitUs = 2'000'000;

std::string NoSpaceError() {
  return "ERR no space left on the data file (device full): delete keys or let defrag free "
         "segments";
}

}  // namespace

// Append's placing of a record in the slot reserved for it, and all that follows (index, cache,
// WATCH, keyspace events, the write hook); no suspension. Returns the record's sequence number.
uint64_t Store::Place(std::string_view key, uint64_t fp, ValueType type, std::string_view value,
                      int64_t expire_ms, uint8_t flags, uint64_t expect, const ShardLog::Slot& slot,
                      size_t len, uint64_t* loc_out, Effect effect) {
  const bool tombstone = effect == Effect::kTombstone;
  const uint64_t seq = ++seq_;
  RecordHeader h;
  h.type = static_cast<uint8_t>(type);
  h.flags = flags;
  h.slot = KeyHashSlot(key);
  h.seq = seq;
  h.expire_ms = expire_ms;
  EncodeRecord(h, key, value, slot.segment_seq, slot.dst);
  log_.Commit(seq);
  const uint64_t l = loc::Make(slot.offset, len, type, expire_ms != 0);
  *loc_out = l;
  Account(l, len);
  if (effect == Effect::kMarkerCopy) {
    // The caller re-registers the marker at its new place.
  } else if (tombstone) {
    uint64_t old;
    SnapNote(fp);
    if (index_.Erase(fp, &old)) {
      CountEntry(fp, old, 0);
      Unaccount(old);
    }
    chunks_.KeyDying(fp);
    DropTtl(fp);
    cache_.Erase(fp);
    uint64_t origin = 0;
    DecodeTombstoneOrigin(value, &origin);
    tombstones_[l] = origin;
  } else {
    if (!(flags & kRecordRelocated) && KeyspaceEventsOn(kNotifyNew | kNotifyExpired)) [[unlikely]] {
      ReportCreate(fp, key, type);
    }
    Install(fp, l, expire_ms);
    if (flags & kRecordRelocated) {
      cache_.Move(fp, expect, l);  // defrag: same value, new place; don't pull cold values in
    } else {
      cache_.Put(fp, l, value);
      chunks_.NoteWrite(fp, value, IsChunkableType(type));
    }
  }
  ++stats_.dirty;
  if (effect != Effect::kMarkerCopy && !(flags & kRecordRelocated)) NoteKeyChanged(key);
  if ((effect == Effect::kInstall || tombstone) && !(flags & kRecordRelocated) &&
      write_hook_ != nullptr) {
    write_hook_(write_hook_arg_, key, type, tombstone);
  }
  return seq;
}

bool Store::TryWriteNow(std::string_view key, ValueType type, std::string_view value,
                        int64_t expire_ms) {
  if (roots_unknown_ || sync_ == SyncPolicy::kAlways || !large_in_flight_.empty()) return false;
  const size_t len = RecordLength(key.size(), value.size());
  if (len > log_.max_record()) return false;
  ShardLog::Slot slot;
  // Append's reservation for a plain write; any refusal (buffers busy, no space, failed) is left
  // to Append, which waits or fails as it does.
  if (log_.Reserve(len, false, &slot) != ShardLog::ReserveStatus::kOk) return false;
  uint64_t l;
  Place(key, Index::Fingerprint(key), type, value, expire_ms, 0, kAnyLoc, slot, len, &l,
        Effect::kInstall);
  return true;
}

// The one append path (values, tombstones, relocations). `expect` is checked right before the
// record is placed, with no suspension in between: the key must still be at that location
// (kAnyLoc: anything; 0: must not exist).
TaskOf<WriteResult> Store::Append(std::string_view key, uint64_t fp, ValueType type,
                                  std::string_view value, int64_t expire_ms, uint8_t flags,
                                  uint64_t expect, uint64_t* loc_out, bool* applied,
                                  Effect effect) {
  uint64_t unused_loc;
  bool unused_applied;
  if (loc_out == nullptr) loc_out = &unused_loc;
  if (applied == nullptr) applied = &unused_applied;
  // A large record of this key still on its way to the device comes first (it was issued
  // first): wait for it, so `expect` below sees where it landed.
  while (!large_in_flight_.empty()) [[unlikely]] {
      auto it = large_in_flight_.find(fp);
      if (it == large_in_flight_.end()) break;
      co_await KeyFlightWait(&it->second);
    }
  *applied = false;
  const size_t len = RecordLength(key.size(), value.size());
  const bool tombstone = effect == Effect::kTombstone;
  if (len > log_.max_record()) {
    uint64_t cur = 0;
    index_.Get(fp, &cur);
    if (expect != kAnyLoc && cur != expect) co_return WriteResult{};
    *applied = true;
    // WATCH is told before the record is in place and again once it is (the write suspends in
    // between), so a watcher registered meanwhile cannot miss it.
    const bool watched = !(flags & kRecordRelocated);
    if (watched) NoteKeyChanged(key);
    WriteResult r = co_await AppendLarge(key, fp, type, value, expire_ms, loc_out);
    if (watched) NoteKeyChanged(key);
    if (watched && !tombstone && r.ok() && write_hook_ != nullptr) {
      write_hook_(write_hook_arg_, key, type, false);
    }
    co_return r;
  }
  ShardLog::Slot slot;
  int64_t no_space_deadline = 0;
  while (true) {
    if (expect != kAnyLoc) {
      uint64_t cur = 0;
      index_.Get(fp, &cur);
      if (cur != expect) co_return WriteResult{};
    }
    ShardLog::ReserveStatus st =
        log_.Reserve(len, effect != Effect::kInstall || (flags & kRecordRelocated), &slot);
    if (st == ShardLog::ReserveStatus::kOk) break;
    if (st == ShardLog::ReserveStatus::kBusy) {
      co_await log_.SpaceAvailable();
      continue;
    }
    if (st == ShardLog::ReserveStatus::kNoSpace) {
      // Defrag may be about to free a segment (a shard's timer starts it when space runs low):
      // give it a moment — yielding, so the worker keeps serving — before failing the write.
      if (Worker::Current() != nullptr) {
        if (no_space_deadline == 0) no_space_deadline = MonotonicUs() + kNoSpaceWaitUs;
        if (MonotonicUs() < no_space_deadline) {
          if (!defrag_running_ && !defrag_paused_) Defrag(true).Start(nullptr, nullptr);
          co_await YieldToLoop();
          continue;
        }
      }
      co_return WriteResult{WriteResult::Status::kNoSpace, NoSpaceError()};
    }
    co_return Failure(log_.error());
  }
  const uint64_t seq =
      Place(key, fp, type, value, expire_ms, flags, expect, slot, len, loc_out, effect);
  *applied = true;
  if (sync_ == SyncPolicy::kAlways) {
    bool durable = co_await log_.WaitDurable(seq);
    if (!durable) co_return Failure(log_.error());
  }
  co_return WriteResult{};
}

TaskOf<WriteResult> Store::AppendLarge(std::string_view key, uint64_t fp, ValueType type,
                                       std::string_view value, int64_t expire_ms,
                                       uint64_t* loc_out) {
  const uint64_t len = RecordLength(key.size(), value.size());
  const uint64_t seg_size = file_->segment_size();
  const uint32_t count = static_cast<uint32_t>((kBlockSize + len + seg_size - 1) / seg_size);
  const uint32_t first = file_->AllocateRun(count, shard_);
  if (first == DataFile::kNoSegment) {
    co_return WriteResult{WriteResult::Status::kNoSpace, NoSpaceError()};
  }
  const uint64_t seg_seq = file_->NextSegmentSeq();
  file_->seq(first).store(seg_seq);
  // Appends after this one must land in a newer segment than the run (log order).
  log_.ForceNewSegment();
  AlignedBuffer buf(AlignUp(kBlockSize + len));
  SegmentHeader sh;
  sh.seq = seg_seq;
  sh.kind = SegmentKind::kLarge;
  sh.shard = shard_;
  sh.run_length = count;
  EncodeSegmentHeader(sh, buf.data());
  const uint64_t seq = ++seq_;
  RecordHeader h;
  h.type = static_cast<uint8_t>(type);
  h.slot = KeyHashSlot(key);
  h.seq = seq;
  h.expire_ms = expire_ms;
  EncodeRecord(h, key, value, seg_seq, buf.data() + kBlockSize);
  const uint64_t start = file_->SegmentOffset(first);
  large_in_flight_.try_emplace(fp);  // Append made every other write of the key wait for it
  int res = co_await device_->Write(buf.data(), buf.size(), start);
  if (res >= 0 && sync_ == SyncPolicy::kAlways) res = co_await device_->Sync();
  if (res < 0) {
    EndLargeFlight(fp);
    file_->ReleaseSegment(first);
    for (uint32_t i = 1; i < count; ++i) file_->ReleaseSegment(first + i);
    co_return Failure(std::string("write of the data file failed: ") + std::strerror(-res));
  }
  if (sync_ != SyncPolicy::kAlways) log_.NoteExternalWrite();
  const uint64_t l = loc::Make(start + kBlockSize, len, type, expire_ms != 0);
  large_lens_[l] = len;
  *loc_out = l;
  Account(l, len);
  // No other write of the key landed meanwhile (they wait in Append) and FLUSHALL / FLUSHDB
  // waited for this one (LargeWritesLanded); the key may have expired meanwhile, which this
  // write, issued after the expiry's check, replaces like any other write.
  if (KeyspaceEventsOn(kNotifyNew | kNotifyExpired)) [[unlikely]]
    ReportCreate(fp, key, type);
  Install(fp, l, expire_ms);
  chunks_.NoteWrite(fp, value, IsChunkableType(type));
  ++stats_.dirty;
  EndLargeFlight(fp);
  co_return WriteResult{};
}

void Store::EndLargeFlight(uint64_t fp) {
  auto node = large_in_flight_.extract(fp);
  if (node.empty()) return;
  for (MailboxItem* waiter : node.mapped()) {
    if (Worker* w = Worker::Current()) {
      w->Defer(waiter);  // after this write's command has finished its turn
    } else {
      waiter->run(waiter);
    }
  }
}

Task Store::LargeWritesLanded() {
  while (!large_in_flight_.empty() && Worker::Current() != nullptr) co_await YieldToLoop();
}

uint32_t Store::RunLength(uint64_t record_len) const {
  const uint64_t seg_size = file_->segment_size();
  return static_cast<uint32_t>((kBlockSize + record_len + seg_size - 1) / seg_size);
}

Task Store::ReleaseLarge(uint32_t first, uint32_t count) {
  // Wait for reads of the run to finish, mark every segment free on the device, then release.
  while (file_->readers(first).load() > 0) co_await YieldToLoop();
  const uint64_t seg_size = file_->segment_size();
  AlignedBuffer block(kBlockSize);
  SegmentHeader h;
  h.kind = SegmentKind::kFree;
  EncodeSegmentHeader(h, block.data());
  const uint64_t len = AlignUp(kBlockSize);
  // Every segment of the run gets a free header: the value's bytes at a segment boundary must
  // never be taken for a segment header by a later scan.
  for (uint32_t i = 0; i < count; ++i) {
    co_await device_->Write(block.data(), len, file_->SegmentOffset(first + i));
  }
  co_await device_->Sync();
  for (uint32_t i = 0; i < count; ++i) file_->ReleaseSegment(first + i);
  file_->AddReclaimed(count * seg_size);
}

// Not a coroutine itself: the caller awaits Append's task, one coroutine frame fewer per write.
TaskOf<WriteResult> Store::Write(std::string_view key, ValueType type, std::string_view value,
                                 int64_t expire_ms) {
  if (roots_unknown_) [[unlikely]] {
    return WriteLearningRoot(key, type, value, expire_ms);
  }
  return Append(key, Index::Fingerprint(key), type, value, expire_ms, 0, kAnyLoc, nullptr, nullptr);
}

TaskOf<WriteResult> Store::WriteLearningRoot(std::string_view key, ValueType type,
                                             std::string_view value, int64_t expire_ms) {
  co_await LearnRoot(key, Index::Fingerprint(key));
  co_return co_await Append(key, Index::Fingerprint(key), type, value, expire_ms, 0, kAnyLoc,
                            nullptr, nullptr);
}

TaskOf<WriteResult> Store::WriteIf(std::string_view key, uint64_t expected, ValueType type,
                                   std::string_view value, int64_t expire_ms, bool* applied) {
  return Append(key, Index::Fingerprint(key), type, value, expire_ms, 0, expected, nullptr,
                applied);
}

TaskOf<WriteResult> Store::Delete(std::string_view key, int64_t now_ms, bool* existed) {
  KeyInfo info = Lookup(key, now_ms);
  *existed = info.exists;
  if (!info.exists) co_return WriteResult{};
  if (roots_unknown_) co_await LearnRoot(key, Index::Fingerprint(key));
  auto marker = EncodeTombstone(file_->peek_next_segment_seq());
  uint64_t l;
  bool applied;
  co_return co_await Append(key, Index::Fingerprint(key), ValueType::kString,
                            std::string_view(marker.data(), marker.size()), 0, kRecordTombstone,
                            kAnyLoc, &l, &applied, Effect::kTombstone);
}

TaskOf<WriteResult> Store::DeleteIf(std::string_view key, uint64_t expected, bool* applied) {
  if (roots_unknown_) co_await LearnRoot(key, Index::Fingerprint(key));
  auto marker = EncodeTombstone(file_->peek_next_segment_seq());
  uint64_t l;
  co_return co_await Append(key, Index::Fingerprint(key), ValueType::kString,
                            std::string_view(marker.data(), marker.size()), 0, kRecordTombstone,
                            expected, &l, applied, Effect::kTombstone);
}

}  // namespace lavik
