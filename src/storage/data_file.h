// DataFile: the data file (a regular file or a block device) shared by every shard — its
// superblock, geometry and the segment allocator. Format: doc/storage-format.md.
//
// Opening: a missing path (or an empty file) is created, formatted and grown by whole segments as
// needed, up to `max_size` (0 = until the file system is full). An existing all-zero file or
// device (e.g. `fallocate -l 512M`) is formatted in place and used as it is: never grown,
// truncated or shrunk. A file of another format or with a corrupt superblock fails Open with a
// message, and is not modified.
//
// Thread safety: Open/WriteSuperblock/ReadAt/WriteAt are start-up and shutdown calls (blocking
// syscalls, never on a worker's request path). The allocator and the per-segment counters may
// be used from any worker (a mutex guards the allocator; counters are atomics).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "storage/format.h"

namespace lavik {

class DataFile {
 public:
  struct Options {
    std::string path;
    uint64_t max_size = 0;  // a file Lavik grows: cap in bytes (0 = none)
    uint64_t segment_size = kDefaultSegmentSize;
    uint32_t shards = 1;  // for the allocator's reserve
    // How long Open waits for another holder of the file's lock to let go before it fails. A
    // process killed with SIGKILL keeps the file referenced until the kernel has torn down its
    // io_uring rings, which waits for the I/O still in flight (an fsync can take a while): a
    // supervisor restarting Lavik at once must not find the file "in use".
    int lock_wait_ms = 10000;
  };
  static constexpr uint32_t kNoSegment = 0xFFFFFFFF;

  // Opens, validates or formats. nullptr + *error on failure.
  static std::unique_ptr<DataFile> Open(const Options& options, std::string* error);
  ~DataFile();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  bool direct_io() const { return direct_; }
  // The smallest unit a read may start at and be a multiple of: the file's direct-I/O offset
  // alignment (the device's logical block, 512 B on most disks; statx STATX_DIOALIGN or
  // BLKSSZGET), between 512 and kIoAlign. A record is read as the run of such sectors that holds
  // it (Store::ReadRecord), so a 1 KiB record costs at most 2 KiB, never two 4 KiB blocks.
  size_t read_align() const { return read_align_; }
  bool fresh() const { return fresh_; }  // formatted by this Open
  Superblock& superblock() { return sb_; }
  uint64_t segment_size() const { return sb_.segment_size; }
  uint64_t data_offset() const { return sb_.data_offset; }
  uint64_t SegmentOffset(uint32_t seg) const { return sb_.data_offset + seg * sb_.segment_size; }
  uint32_t SegmentOf(uint64_t offset) const {
    return static_cast<uint32_t>((offset - sb_.data_offset) / sb_.segment_size);
  }
  uint32_t segment_count() const { return segment_count_.load(std::memory_order_acquire); }
  uint64_t file_size() const;
  bool growable() const { return sb_.grown_by_lavik != 0; }

  // Blocking I/O for start-up, recovery and shutdown (aligned buffers).
  bool ReadAt(char* buf, size_t len, uint64_t offset, std::string* error) const;
  bool WriteAt(const char* buf, size_t len, uint64_t offset, std::string* error) const;
  bool SyncNow(std::string* error) const;
  // Writes the superblock (generation + 1) to the older copy and syncs.
  bool WriteSuperblock(std::string* error);
  // FLUSHALL: records that segments older than `seq` hold no live data (any thread).
  bool SetFlushSeq(uint64_t seq, std::string* error);
  // FLUSHDB of physical database `db`: its records in segments older than `seq` are dead.
  bool SetDbFlushSeq(int db, uint64_t seq, std::string* error);
  // SWAPDB: persists the logical → physical database map.
  bool SetDbMap(const std::array<uint8_t, kMaxDatabases>& map, std::string* error);
  // (These three void the replication cut in the same write: what a FLUSHALL, FLUSHDB or
  // SWAPDB changed is not in the records a rollback keeps.)

  // A replica's consistency point (doc/storage-format.md "Replication cut"; any thread, blocking).
  // The cut's positions were taken at cut_epoch() == `epoch`; if a void came since (a FLUSHALL,
  // FLUSHDB, SWAPDB, ClearReplCut), the cut no longer describes the data: nothing is written and
  // *stale is set.
  uint64_t cut_epoch() const { return cut_epoch_.load(std::memory_order_acquire); }
  bool SetReplCut(const ReplCut& cut, uint64_t epoch, bool* stale, std::string* error);
  // No cut any more (a promotion, a full sync): written before the data change.
  bool ClearReplCut(std::string* error);
  // The stream offset of the cut the superblock on the device holds, -1 for none (INFO).
  int64_t cut_offset() const { return cut_offset_.load(std::memory_order_relaxed); }

  // --- Segment allocator (any thread) ---
  enum class SegState : uint8_t { kFree, kLog, kLarge, kLargeTail, kCheckpoint, kReleasing };
  // A free segment for a log (`reserve`: may use the last few segments kept back for
  // tombstones and defrag). Grows the file if needed and allowed. kNoSegment = device full.
  uint32_t AllocateSegment(SegState state, uint32_t owner, bool reserve);
  // `count` contiguous free segments for a large record; kNoSegment if there is no such run.
  uint32_t AllocateRun(uint32_t count, uint32_t owner);
  // Back to the free pool (the caller already wrote a free header where needed).
  void ReleaseSegment(uint32_t seg);
  // Start-up: marks segments found in use by recovery.
  void MarkUsed(uint32_t seg, SegState state, uint32_t owner);
  SegState state(uint32_t seg) const;
  uint32_t owner(uint32_t seg) const;
  size_t free_segments() const;
  // Free segments plus what the file may still grow by.
  size_t available_segments() const;
  uint64_t NextSegmentSeq() { return next_seq_.fetch_add(1); }
  uint64_t peek_next_segment_seq() const { return next_seq_.load(); }
  void set_next_segment_seq(uint64_t v) { next_seq_.store(v); }

  // Per-segment counters (index = segment number).
  std::atomic<uint64_t>& seq(uint32_t seg) { return meta_[seg].seq; }
  std::atomic<int64_t>& live_bytes(uint32_t seg) { return meta_[seg].live; }
  std::atomic<int32_t>& readers(uint32_t seg) { return meta_[seg].readers; }
  // Smallest seq among segments holding log or large records (tombstone sweeper); UINT64_MAX
  // if none.
  uint64_t MinLiveSeq() const;
  uint64_t bytes_reclaimed() const { return bytes_reclaimed_.load(); }
  void AddReclaimed(uint64_t n) { bytes_reclaimed_.fetch_add(n); }

 private:
  struct SegMeta {
    std::atomic<uint64_t> seq{0};
    std::atomic<int64_t> live{0};
    std::atomic<int32_t> readers{0};
  };
  DataFile() = default;
  bool GrowLocked(uint32_t min_new_segments);
  bool Format(uint64_t size, bool grow, std::string* error);

  std::string path_;
  int fd_ = -1;
  bool direct_ = true;
  bool fresh_ = false;
  bool block_device_ = false;
  size_t read_align_ = 4096;
  Superblock sb_;
  uint64_t max_size_ = 0;
  uint64_t new_segment_size_ = kDefaultSegmentSize;  // for formatting a new file
  uint32_t reserve_ = 2;
  uint32_t max_segments_ = 0;  // capacity of the per-segment arrays
  std::unique_ptr<SegMeta[]> meta_;
  std::atomic<uint32_t> segment_count_{0};
  std::atomic<uint64_t> next_seq_{1};
  std::atomic<uint64_t> bytes_reclaimed_{0};
  std::atomic<uint64_t> cut_epoch_{0};   // +1 by every void of the cut (sb_mu_ held)
  std::atomic<int64_t> cut_offset_{-1};  // as of the last superblock write
  void VoidCutLocked();
  bool growth_failed_ = false;  // the file system refused to grow the file (full)

  std::mutex sb_mu_;       // serializes superblock writes
  mutable std::mutex mu_;  // guards the fields below
  std::vector<SegState> states_;
  std::vector<uint32_t> owners_;
  std::vector<uint32_t> free_;  // stack of free segments
};

}  // namespace lavik
