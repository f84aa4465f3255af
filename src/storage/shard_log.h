// ShardLog: one shard's append-only log — the open segment, its write buffers, flushing and
// durability (appendfsync always / everysec / no). Records are appended into aligned DRAM
// buffers that map a range of the open segment; full buffers (and, on a timer or when a client
// waits for durability, the partial tail) are written with large sequential O_DIRECT writes,
// one write in flight at a time so a partially filled block rewritten by a later flush can never
// be overtaken by an older copy. Syncs (fdatasync) run beside those writes, one at a time, each
// covering what was written before it started. A record still in a buffer is served from memory.
//
// Thread safety: one worker owns a ShardLog.
#pragma once

#include <algorithm>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "runtime/task.h"
#include "storage/data_file.h"
#include "storage/device.h"

namespace lavik {

enum class SyncPolicy { kAlways, kEverysec, kNo };

class ShardLog {
 public:
  ShardLog(DataFile* file, Device* dev, uint32_t shard, SyncPolicy policy, size_t buffer_bytes,
           size_t max_buffers);
  ~ShardLog();

  enum class ReserveStatus { kOk, kNoSpace, kBusy, kFailed };
  struct Slot {
    uint64_t offset = 0;  // file offset of the record
    char* dst = nullptr;  // where to encode it (len bytes)
    uint64_t segment_seq = 0;
  };
  // Room for a record of `len` bytes (len <= max_record()) at the tail of the log. kNoSpace: no
  // free segment (device full; `reserve` lets deletes and defrag use the last segments kept
  // back). kBusy: every write buffer is waiting for the device; co_await SpaceAvailable().
  ReserveStatus Reserve(size_t len, bool reserve, Slot* out);
  // The record just encoded at the last Reserve has this sequence number.
  void Commit(uint64_t seq);
  // The next Reserve opens a new segment (a large record was given a newer segment: later
  // appends must come after it in log order).
  void ForceNewSegment() { force_new_segment_ = true; }
  // CONFIG SET appendfsync: from the next write on (kAlways: a writer waits for the sync).
  void set_policy(SyncPolicy policy) { policy_ = policy; }
  // The open segment is closed (joins the sealed ones); the next Reserve opens a new one.
  void CloseSegment();
  // A record written outside the buffers (a large record) under everysec/no: the next periodic
  // sync must cover it.
  // (Its seq is not the log's: records still in the buffers may have smaller ones.)
  void NoteExternalWrite() {
    external_unsynced_ = true;
    sync_needed_ = true;
  }
  // Drops a sealed segment from the defrag candidates (it was freed).
  void ForgetSealed(uint32_t seg);
  // Start-up: a segment recovered from the file joins this shard's defrag candidates.
  void AdoptSealed(uint32_t seg) { sealed_.push_back(seg); }
  size_t max_record() const { return buffer_bytes_ - kBlockSize; }

  // The bytes at [offset, offset + len) if they are still in a write buffer, else nullptr. Valid
  // until the next call that may flush (any co_await).
  const char* InMemory(uint64_t offset, size_t len) const;

  // Awaitables.
  struct Waiter {
    uint64_t seq;
    std::coroutine_handle<> handle;
  };
  class DurableAwaiter {
   public:
    DurableAwaiter(ShardLog* log, uint64_t seq) : log_(log), seq_(seq) {}
    bool await_ready() const { return log_->durable_seq_ >= seq_ || log_->failed_; }
    void await_suspend(std::coroutine_handle<> h);
    bool await_resume() const { return !log_->failed_; }

   private:
    ShardLog* log_;
    uint64_t seq_;
  };
  // Resumes once every record with seq <= `seq` is on stable storage (written and synced).
  DurableAwaiter WaitDurable(uint64_t seq) { return DurableAwaiter(this, seq); }
  class SpaceAwaiter {
   public:
    explicit SpaceAwaiter(ShardLog* log) : log_(log) {}
    bool await_ready() const { return log_->free_buffers_.size() > 0 || log_->failed_; }
    void await_suspend(std::coroutine_handle<> h) { log_->space_waiters_.push_back(h); }
    void await_resume() const {}

   private:
    ShardLog* log_;
  };
  SpaceAwaiter SpaceAvailable() { return SpaceAwaiter(this); }
  class SyncIdleAwaiter {
   public:
    explicit SyncIdleAwaiter(ShardLog* log) : log_(log) {}
    bool await_ready() const { return !log_->syncing_; }
    void await_suspend(std::coroutine_handle<> h) { log_->idle_waiters_.push_back(h); }
    void await_resume() const {}

   private:
    ShardLog* log_;
  };
  // Resumes once no sync is in flight.
  SyncIdleAwaiter SyncIdle() { return SyncIdleAwaiter(this); }

  // Writes everything buffered and syncs it; resumes when done (shutdown, defrag).
  Task FlushAndSync(bool* ok);

  // Starts a write if one is due: `partial` also writes the open buffer's unfilled tail.
  // Called at the end of every loop turn (partial when a client waits) and by timers.
  void Kick(bool partial);
  // Timer tick (every ~100 ms): writes the tail; syncs once a second under everysec (and the
  // writer syncs after every sync_bytes_ written).
  void Tick(int64_t now_ms);

  // Where the next record would go: the open segment's seq (0: none open, or the next Reserve
  // opens a new one) and the file offset in it (a replication cut, format.h CutPosition).
  CutPosition Position() const {
    if (current_ == nullptr || force_new_segment_)
      return CutPosition{0, 0, file_->peek_next_segment_seq()};
    return CutPosition{segment_seq_, current_->end, file_->peek_next_segment_seq()};
  }
  uint64_t last_seq() const { return last_seq_; }
  uint64_t durable_seq() const { return durable_seq_; }
  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }
  bool has_waiters() const { return !waiters_.empty(); }
  // Segments this shard filled and closed (defrag candidates), oldest first.
  std::vector<uint32_t>& sealed() { return sealed_; }
  uint32_t open_segment() const { return segment_; }
  size_t buffer_memory() const { return buffers_.size() * buffer_bytes_; }
  // The write buffers that are not slots of the registered pool (those are counted with it).
  size_t heap_buffer_memory() const {
    size_t n = 0;
    for (const auto& b : buffers_) n += b->mem.pooled() ? 0 : b->mem.size();
    return n;
  }
  uint64_t writes() const { return writes_; }

 private:
  struct Buffer {
    AlignedBuffer mem;
    uint64_t base = 0;     // file offset of mem[0] (block aligned)
    uint64_t end = 0;      // append position (file offset)
    uint64_t flushed = 0;  // written up to here (file offset)
    uint64_t last_seq = 0;
  };
  bool OpenSegment(bool reserve);
  Buffer* TakeBuffer();
  void Retire(Buffer* b);
  void StartFlusher();
  Task Flusher();
  Task Syncer();
  void StartSyncer();
  // A sync should start now; writes_left: the writer has more queued (only a periodic one).
  bool SyncDue(bool writes_left) const;
  void Fail(const std::string& error);
  void WakeDurable();

  DataFile* file_;
  Device* dev_;
  const uint32_t shard_;
  SyncPolicy policy_;
  const size_t buffer_bytes_;
  const size_t max_buffers_;
  const size_t sync_bytes_;  // under everysec, also sync once this much was written (a quarter
                             // of the buffers)

  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::vector<Buffer*> free_buffers_;
  std::deque<Buffer*> queue_;  // buffers with data not yet written, oldest first
  Buffer* current_ = nullptr;
  uint32_t segment_ = DataFile::kNoSegment;
  uint64_t segment_seq_ = 0;
  uint64_t segment_end_ = 0;
  std::vector<uint32_t> sealed_;
  bool force_new_segment_ = false;

  bool flushing_ = false;
  bool syncing_ = false;  // a sync is in flight (Syncer); writes go on beside it
  bool want_partial_ = false;
  bool sync_needed_ = false;
  bool external_unsynced_ = false;  // a large record was written and not synced yet
  uint64_t last_seq_ = 0;
  uint64_t written_seq_ = 0;
  uint64_t durable_seq_ = 0;
  int64_t last_sync_ms_ = 0;
  uint64_t unsynced_bytes_ = 0;  // written since the last sync started
  bool failed_ = false;
  std::string error_;
  std::vector<Waiter> waiters_;
  std::vector<std::coroutine_handle<>> space_waiters_;
  std::vector<std::coroutine_handle<>> idle_waiters_;  // SyncIdle
  uint64_t writes_ = 0;
};

}  // namespace lavik
