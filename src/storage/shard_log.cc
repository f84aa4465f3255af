#include "storage/shard_log.h"

#include <algorithm>
#include <cstring>

#include "base/clock.h"
#include "base/prefetch.h"

namespace lavik {

ShardLog::ShardLog(DataFile* file, Device* dev, uint32_t shard, SyncPolicy policy,
                   size_t buffer_bytes, size_t max_buffers)
    : file_(file),
      dev_(dev),
      shard_(shard),
      policy_(policy),
      buffer_bytes_(buffer_bytes),
      max_buffers_(std::max<size_t>(2, max_buffers)),
      sync_bytes_(max_buffers_ * buffer_bytes_ / 4) {
  for (int i = 0; i < 2; ++i) {
    buffers_.push_back(std::make_unique<Buffer>());
    buffers_.back()->mem.Reset(buffer_bytes_);
    free_buffers_.push_back(buffers_.back().get());
  }
}

ShardLog::~ShardLog() = default;

ShardLog::Buffer* ShardLog::TakeBuffer() {
  if (free_buffers_.empty()) {
    if (buffers_.size() >= max_buffers_) return nullptr;
    buffers_.push_back(std::make_unique<Buffer>());
    buffers_.back()->mem = dev_->Buffer(buffer_bytes_);
    return buffers_.back().get();
  }
  Buffer* b = free_buffers_.back();
  free_buffers_.pop_back();
  return b;
}

void ShardLog::Retire(Buffer* b) {
  // The open buffer is queued for writing; appends go to a fresh one from now on.
  if (b->end > b->flushed && std::find(queue_.begin(), queue_.end(), b) == queue_.end()) {
    queue_.push_back(b);
  } else if (b->end <= b->flushed) {
    free_buffers_.push_back(b);
  }
}

bool ShardLog::OpenSegment(bool reserve) {
  uint32_t seg = file_->AllocateSegment(DataFile::SegState::kLog, shard_, reserve);
  if (seg == DataFile::kNoSegment) return false;
  Buffer* b = TakeBuffer();
  if (b == nullptr) {
    file_->ReleaseSegment(seg);
    return false;
  }
  CloseSegment();
  segment_ = seg;
  segment_seq_ = file_->NextSegmentSeq();
  file_->seq(seg).store(segment_seq_);
  uint64_t start = file_->SegmentOffset(seg);
  segment_end_ = start + file_->segment_size();
  SegmentHeader h;
  h.seq = segment_seq_;
  h.kind = SegmentKind::kLog;
  h.shard = shard_;
  std::memset(b->mem.data(), 0, kBlockSize);
  EncodeSegmentHeader(h, b->mem.data());
  b->base = start;
  b->flushed = start;
  b->end = start + kBlockSize;
  b->last_seq = last_seq_;
  current_ = b;
  return true;
}

ShardLog::ReserveStatus ShardLog::Reserve(size_t len, bool reserve, Slot* out) {
  if (failed_) return ReserveStatus::kFailed;
  if (current_ == nullptr || current_->end + len > segment_end_ || force_new_segment_) {
    if (free_buffers_.empty() && buffers_.size() >= max_buffers_) return ReserveStatus::kBusy;
    if (!OpenSegment(reserve)) return ReserveStatus::kNoSpace;
    force_new_segment_ = false;
  } else if (current_->end + len > current_->base + buffer_bytes_) {
    Buffer* next = TakeBuffer();
    if (next == nullptr) return ReserveStatus::kBusy;
    // The new buffer starts at the block holding the tail, with that block's bytes copied, so
    // its first write rewrites the block whole. (One write in flight at a time keeps the older
    // copy from landing after the newer one.)
    uint64_t block = AlignDown(current_->end);
    std::memcpy(next->mem.data(), current_->mem.data() + (block - current_->base),
                current_->end - block);
    next->base = block;
    next->flushed = block;
    next->end = current_->end;
    next->last_seq = current_->last_seq;
    Retire(current_);
    current_ = next;
  }
  out->offset = current_->end;
  out->dst = current_->mem.data() + (current_->end - current_->base);
  out->segment_seq = segment_seq_;
  current_->end += len;
  // The next record most likely has this one's size and, in a pipeline, comes a microsecond or
  // so later: its lines of the buffer are claimed now. Unclaimed, they were cold (the buffers
  // cycle through megabytes), and the record's checksum, its first load after the copy, waited
  // for the copy's ownership requests: 9% of a pipelined SET's samples, 2.6% with this.
  // (At most 8 KiB: a large record's successor need not have its size, nor its copy this help.)
  const size_t at = current_->end - current_->base;
  const size_t stop = std::min(at + std::min<size_t>(len, 8192), buffer_bytes_);
  for (size_t i = at & ~size_t{63}; i < stop; i += 64) PrefetchForWrite(current_->mem.data() + i);
  return ReserveStatus::kOk;
}

void ShardLog::CloseSegment() {
  if (segment_ == DataFile::kNoSegment) return;
  sealed_.push_back(segment_);
  segment_ = DataFile::kNoSegment;
  if (current_ != nullptr) Retire(current_);
  current_ = nullptr;
}

void ShardLog::ForgetSealed(uint32_t seg) {
  sealed_.erase(std::remove(sealed_.begin(), sealed_.end(), seg), sealed_.end());
}

void ShardLog::Commit(uint64_t seq) {
  last_seq_ = seq;
  current_->last_seq = seq;
}

const char* ShardLog::InMemory(uint64_t offset, size_t len) const {
  auto covers = [&](const Buffer* b) {
    return b != nullptr && offset >= b->base && offset + len <= b->end;
  };
  if (covers(current_)) return current_->mem.data() + (offset - current_->base);
  for (const Buffer* b : queue_) {
    if (covers(b)) return b->mem.data() + (offset - b->base);
  }
  return nullptr;
}

void ShardLog::DurableAwaiter::await_suspend(std::coroutine_handle<> h) {
  log_->waiters_.push_back(Waiter{seq_, h});
  log_->Kick(true);
}

void ShardLog::Kick(bool partial) {
  if (partial) want_partial_ = true;
  if (flushing_ || failed_) return;
  bool work = !queue_.empty() ||
              (want_partial_ && current_ != nullptr && current_->end > current_->flushed) ||
              (!syncing_ && ((sync_needed_ && policy_ != SyncPolicy::kNo) ||
                             (!waiters_.empty() && written_seq_ > durable_seq_)));
  if (work) StartFlusher();
}

void ShardLog::Tick(int64_t now_ms) {
  Kick(true);
  if (policy_ == SyncPolicy::kEverysec && now_ms - last_sync_ms_ >= 1000 &&
      (written_seq_ > durable_seq_ || external_unsynced_)) {
    sync_needed_ = true;
    Kick(false);
  }
}

void ShardLog::StartFlusher() {
  flushing_ = true;
  Task t = Flusher();
  t.Start(nullptr, nullptr);
}

// The one writer: drains the queue (and the open buffer's tail when asked), then starts a sync
// when the policy or a waiting client needs one. The sync runs beside the writes: a device's
// cache flush can take hundreds of milliseconds (a virtio disk under a steady stream of writes),
// and a writer that waited for it ran out of buffers and stalled every SET meanwhile.
Task ShardLog::Flusher() {
  while (!failed_) {
    Buffer* b = nullptr;
    if (!queue_.empty()) {
      b = queue_.front();
    } else if (want_partial_ && current_ != nullptr && current_->end > current_->flushed) {
      b = current_;
    }
    if (b != nullptr) {
      if (b == current_) want_partial_ = false;
      uint64_t from = AlignDown(b->flushed);
      uint64_t to = b->end;
      uint64_t seq = b->last_seq;
      size_t len = AlignUp(to) - from;
      // Zero the slack past the tail so the block on disk has no stale bytes.
      size_t used = to - b->base;
      size_t slack = AlignUp(to) - to;
      if (slack > 0) std::memset(b->mem.data() + used, 0, slack);
      ++writes_;
      int res = co_await dev_->Write(b->mem.data() + (from - b->base), len, from);
      if (res < 0 || static_cast<size_t>(res) != len) {
        Fail("write of the data file failed: " + std::string(std::strerror(res < 0 ? -res : EIO)));
        break;
      }
      b->flushed = std::max(b->flushed, to);
      written_seq_ = std::max(written_seq_, seq);
      sync_needed_ = true;
      unsynced_bytes_ += len;
      // A periodic sync due starts now, beside the writes still queued.
      if (SyncDue(/*writes_left=*/true)) StartSyncer();
      if (b != current_ && b->flushed >= b->end) {
        queue_.erase(std::find(queue_.begin(), queue_.end(), b));
        free_buffers_.push_back(b);
        if (!space_waiters_.empty()) {
          std::vector<std::coroutine_handle<>> ready;
          ready.swap(space_waiters_);
          for (auto h : ready) h.resume();
        }
      }
      continue;
    }
    if (SyncDue(/*writes_left=*/false)) StartSyncer();
    break;
  }
  flushing_ = false;
  if (failed_) WakeDurable();
}

// Under everysec, a sync is due once a second, and also once sync_bytes_ were written since the
// last one: a device with a volatile cache (a virtio disk backed by the host's page cache) holds
// every write issued during a flush until the flush is done, and a flush takes as long as writing
// back what it covers — ~300 ms for a second of writes at 430 MB/s here, ~9 ms for 8 MB. Small
// syncs are stalls the write buffers ride out; a large one emptied them and stalled every SET.
// (Redis syncs its AOF rewrite every 4 MB for the same reason.) A sync for the waiting clients
// (or appendfsync always) waits until nothing is left to write, so one sync covers all of it.
bool ShardLog::SyncDue(bool writes_left) const {
  if (syncing_ || (written_seq_ <= durable_seq_ && !external_unsynced_)) return false;
  if (policy_ == SyncPolicy::kEverysec && sync_needed_ &&
      (unsynced_bytes_ >= sync_bytes_ || last_sync_ms_ + 1000 <= NowMs())) {
    return true;
  }
  return !writes_left && (policy_ == SyncPolicy::kAlways || !waiters_.empty());
}

void ShardLog::StartSyncer() {
  syncing_ = true;
  Task t = Syncer();
  t.Start(nullptr, nullptr);
}

// One sync at a time. It covers what was written (and the large records noted) before it was
// issued; what lands meanwhile is left for the next one, which the writer starts once this one is
// done (Kick).
Task ShardLog::Syncer() {
  const uint64_t target = written_seq_;
  external_unsynced_ = false;
  sync_needed_ = false;
  unsynced_bytes_ = 0;
  last_sync_ms_ = NowMs();
  int res = co_await dev_->Sync();
  syncing_ = false;
  if (res < 0) {
    Fail("sync of the data file failed: " + std::string(std::strerror(-res)));
  } else {
    durable_seq_ = std::max(durable_seq_, target);
  }
  std::vector<std::coroutine_handle<>> idle;
  idle.swap(idle_waiters_);
  WakeDurable();
  for (auto h : idle) h.resume();
  Kick(false);
}

void ShardLog::WakeDurable() {
  if (waiters_.empty()) return;
  std::vector<Waiter> ready;
  std::vector<Waiter> rest;
  for (const Waiter& w : waiters_) {
    (w.seq <= durable_seq_ || failed_ ? ready : rest).push_back(w);
  }
  waiters_.swap(rest);
  for (const Waiter& w : ready) w.handle.resume();
}

void ShardLog::Fail(const std::string& error) {
  failed_ = true;
  error_ = error;
}

Task ShardLog::FlushAndSync(bool* ok) {
  want_partial_ = true;
  uint64_t target = last_seq_;
  if (current_ != nullptr && current_->end > current_->flushed) {
    co_await WaitDurable(target);
  } else if (written_seq_ > durable_seq_ || !queue_.empty()) {
    co_await WaitDurable(std::max(target, written_seq_));
  }
  // A sync still in flight (one the policy started) finishes before this returns: the caller may
  // be shutting down.
  if (syncing_) co_await SyncIdle();
  if (failed_ || (durable_seq_ >= last_seq_ && queue_.empty() && !external_unsynced_)) {
    *ok = !failed_;  // every record is written and synced already
    co_return;
  }
  // Records written outside the buffers, or a sync still owed: one more sync covers them.
  const bool covers_external = external_unsynced_;
  int res = co_await dev_->Sync();
  if (res >= 0 && covers_external) external_unsynced_ = false;
  *ok = !failed_ && res >= 0;
}

}  // namespace lavik
