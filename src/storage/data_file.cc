#include "storage/data_file.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "storage/device.h"

namespace lavik {
namespace {

// Offsets are stored as offset/8 in 38 bits of the index: 2 TiB of data file.
constexpr uint64_t kMaxFileBytes = uint64_t{1} << 41;
// A file Lavik grows gets this many segments at a time (fallocate is rare and cheap).
constexpr uint32_t kGrowSegments = 8;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The offset/length alignment O_DIRECT reads of fd need, clamped to [512, kIoAlign]; kIoAlign
// when the kernel does not say.
size_t ReadAlignment(int fd, bool direct, bool block_device) {
  constexpr size_t kSector = 512;
  // LAVIK_LEGACY_IO: whole 4 KiB blocks, as before issue #17 (for comparisons).
  if (std::getenv("LAVIK_LEGACY_IO") != nullptr) return kIoAlign;
  if (!direct) return kSector;  // page cache: any offset works; keep whole sectors
  size_t align = 0;
  if (block_device) {
    int sector = 0;
    if (ioctl(fd, BLKSSZGET, &sector) == 0 && sector > 0) align = static_cast<size_t>(sector);
  } else {
#ifdef STATX_DIOALIGN
    struct statx sx {};
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN)) {
      align = sx.stx_dio_offset_align;
    }
#endif
  }
  if (align == 0 || (align & (align - 1)) != 0 || align > kIoAlign) return kIoAlign;
  return std::max(align, kSector);
}

}  // namespace

DataFile::~DataFile() {
  if (fd_ >= 0) close(fd_);
}

std::unique_ptr<DataFile> DataFile::Open(const Options& options, std::string* error) {
  std::unique_ptr<DataFile> f(new DataFile());
  f->path_ = options.path;
  f->max_size_ = options.max_size;
  f->reserve_ = options.shards + 1;
  f->new_segment_size_ = options.segment_size;
  std::filesystem::path p(options.path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  if (ec) {
    *error = "cannot create directory '" + p.parent_path().string() + "': " + ec.message();
    return nullptr;
  }
  int fd = open(options.path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_DIRECT, 0644);
  if (fd < 0 && errno == EINVAL) {
    // The file system has no O_DIRECT (tmpfs): run through the page cache instead.
    fd = open(options.path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    f->direct_ = false;
  }
  if (fd < 0) {
    *error = Errno("cannot open data file '" + options.path + "'");
    return nullptr;
  }
  f->fd_ = fd;
  const auto lock_deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options.lock_wait_ms);
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() >= lock_deadline) {
      *error = "data file '" + options.path + "' is in use by another process";
      return nullptr;
    }
    usleep(50'000);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *error = Errno("fstat '" + options.path + "'");
    return nullptr;
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (S_ISBLK(st.st_mode)) {
    f->block_device_ = true;
    if (ioctl(fd, BLKGETSIZE64, &size) != 0) {
      *error = Errno("BLKGETSIZE64 '" + options.path + "'");
      return nullptr;
    }
  } else if (!S_ISREG(st.st_mode)) {
    *error = "data file '" + options.path + "' is neither a regular file nor a block device";
    return nullptr;
  }
  f->read_align_ = ReadAlignment(fd, f->direct_, f->block_device_);

  if (size == 0) {
    if (!f->Format(0, true, error)) return nullptr;
  } else {
    AlignedBuffer head(2 * kBlockSize);
    if (size < 2 * kBlockSize) {
      *error = "data file '" + options.path + "' is too small (" + std::to_string(size) +
               " bytes) and not empty: not a Lavik data file";
      return nullptr;
    }
    if (!f->ReadAt(head.data(), 2 * kBlockSize, 0, error)) return nullptr;
    int which = 0;
    SuperblockStatus s = PickSuperblock(head.data(), head.data() + kBlockSize, &f->sb_, &which);
    if (s == SuperblockStatus::kZero) {
      if (!f->Format(size, false, error)) return nullptr;
    } else if (s != SuperblockStatus::kOk) {
      *error = "data file '" + options.path + "' cannot be used: " + SuperblockStatusName(s) +
               " (not modified)";
      return nullptr;
    } else if (const char* geo = SuperblockGeometryError(f->sb_)) {
      *error =
          "data file '" + options.path + "' has an invalid superblock: " + geo + " (not modified)";
      return nullptr;
    }
  }
  // Segments present: what the file holds now (a grown file may have grown past the superblock).
  uint64_t segs = size > f->sb_.data_offset ? (size - f->sb_.data_offset) / f->sb_.segment_size : 0;
  if (f->fresh_) segs = f->sb_.segment_count;
  f->segment_count_.store(static_cast<uint32_t>(segs));
  uint64_t cap = f->growable()
                     ? (f->max_size_ ? std::min(f->max_size_, kMaxFileBytes) : kMaxFileBytes)
                     : f->sb_.data_offset + segs * f->sb_.segment_size;
  f->max_segments_ = static_cast<uint32_t>(
      std::max<uint64_t>(segs, (cap - std::min(cap, f->sb_.data_offset)) / f->sb_.segment_size));
  f->meta_.reset(new SegMeta[f->max_segments_]);
  f->states_.assign(f->max_segments_, SegState::kFree);
  f->owners_.assign(f->max_segments_, 0);
  for (uint32_t i = static_cast<uint32_t>(segs); i-- > 0;) f->free_.push_back(i);
  f->next_seq_.store(std::max<uint64_t>(1, f->sb_.next_segment_seq));
  return f;
}

bool DataFile::Format(uint64_t size, bool grow, std::string* error) {
  sb_ = Superblock{};
  sb_.segment_size = new_segment_size_;
  sb_.created_ms = NowMillis();
  sb_.grown_by_lavik = grow ? 1 : 0;
  sb_.next_segment_seq = 1;
  if (grow) {
    sb_.max_segments =
        max_size_ ? (max_size_ - std::min(max_size_, sb_.data_offset)) / sb_.segment_size : 0;
    sb_.segment_count = 0;
  } else {
    if (size < sb_.data_offset + 4 * sb_.segment_size) {
      *error = "data file '" + path_ + "' is too small: " + std::to_string(size) +
               " bytes; at least " + std::to_string(sb_.data_offset + 4 * sb_.segment_size) +
               " are needed";
      return false;
    }
    sb_.segment_count = (size - sb_.data_offset) / sb_.segment_size;
  }
  if (grow) {
    // Room for the superblocks and the reserved area up to the first segment.
    if (fallocate(fd_, 0, 0, static_cast<off_t>(sb_.data_offset)) != 0) {
      *error = Errno("cannot allocate '" + path_ + "'");
      return false;
    }
  }
  // Both copies, so an old copy of a different file cannot win by generation.
  AlignedBuffer block(2 * kBlockSize);
  sb_.generation = 1;
  EncodeSuperblock(sb_, block.data());
  EncodeSuperblock(sb_, block.data() + kBlockSize);
  if (!WriteAt(block.data(), 2 * kBlockSize, 0, error) || !SyncNow(error)) return false;
  fresh_ = true;
  return true;
}

uint64_t DataFile::file_size() const {
  return sb_.data_offset + uint64_t{segment_count()} * sb_.segment_size;
}

bool DataFile::ReadAt(char* buf, size_t len, uint64_t offset, std::string* error) const {
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd_, buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = Errno("read of '" + path_ + "' at " + std::to_string(offset + done));
      return false;
    }
    if (n == 0) {
      std::memset(buf + done, 0, len - done);  // past the end reads as zeros
      return true;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool DataFile::WriteAt(const char* buf, size_t len, uint64_t offset, std::string* error) const {
  size_t done = 0;
  while (done < len) {
    ssize_t n = pwrite(fd_, buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = Errno("write of '" + path_ + "' at " + std::to_string(offset + done));
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool DataFile::SyncNow(std::string* error) const {
  if (fdatasync(fd_) != 0) {
    *error = Errno("fdatasync '" + path_ + "'");
    return false;
  }
  return true;
}

bool DataFile::WriteSuperblock(std::string* error) {
  AlignedBuffer a(2 * kBlockSize);
  if (!ReadAt(a.data(), 2 * kBlockSize, 0, error)) return false;
  Superblock cur;
  int which = 0;
  SuperblockStatus s = PickSuperblock(a.data(), a.data() + kBlockSize, &cur, &which);
  sb_.generation =
      (s == SuperblockStatus::kOk ? std::max(cur.generation, sb_.generation) : sb_.generation) + 1;
  sb_.segment_count = segment_count();
  sb_.next_segment_seq = next_seq_.load();
  AlignedBuffer block(kBlockSize);
  EncodeSuperblock(sb_, block.data());
  // Overwrite the copy that does not hold the newest generation.
  uint64_t off =
      (s == SuperblockStatus::kOk && which == 0) ? kSuperblockOffsetB : kSuperblockOffsetA;
  if (!WriteAt(block.data(), kBlockSize, off, error) || !SyncNow(error)) return false;
  cut_offset_.store(sb_.cut.valid() ? sb_.cut.offset : -1, std::memory_order_relaxed);
  return true;
}

void DataFile::VoidCutLocked() {
  sb_.cut = ReplCut{};
  cut_epoch_.fetch_add(1, std::memory_order_acq_rel);
}

bool DataFile::SetFlushSeq(uint64_t seq, std::string* error) {
  std::lock_guard<std::mutex> lock(sb_mu_);
  sb_.flush_seq = std::max(sb_.flush_seq, seq);
  VoidCutLocked();
  return WriteSuperblock(error);
}

bool DataFile::SetDbFlushSeq(int db, uint64_t seq, std::string* error) {
  std::lock_guard<std::mutex> lock(sb_mu_);
  uint64_t& s = sb_.db_flush_seq[static_cast<size_t>(db)];
  s = std::max(s, seq);
  VoidCutLocked();
  return WriteSuperblock(error);
}

bool DataFile::SetDbMap(const std::array<uint8_t, kMaxDatabases>& map, std::string* error) {
  std::lock_guard<std::mutex> lock(sb_mu_);
  sb_.db_map = map;
  VoidCutLocked();
  return WriteSuperblock(error);
}

bool DataFile::SetReplCut(const ReplCut& cut, uint64_t epoch, bool* stale, std::string* error) {
  std::lock_guard<std::mutex> lock(sb_mu_);
  *stale = cut_epoch_.load(std::memory_order_acquire) != epoch;
  if (*stale) return true;
  sb_.cut = cut;
  return WriteSuperblock(error);
}

bool DataFile::ClearReplCut(std::string* error) {
  std::lock_guard<std::mutex> lock(sb_mu_);
  const bool had = sb_.cut.valid();
  VoidCutLocked();
  return !had || WriteSuperblock(error);
}

bool DataFile::GrowLocked(uint32_t min_new_segments) {
  if (!growable()) return false;
  uint32_t have = segment_count();
  uint32_t add = std::max(min_new_segments, kGrowSegments);
  if (have + add > max_segments_) add = max_segments_ - have;
  if (add < min_new_segments || add == 0) return false;
  uint64_t from = SegmentOffset(have);
  uint64_t len = uint64_t{add} * sb_.segment_size;
  if (fallocate(fd_, 0, static_cast<off_t>(from), static_cast<off_t>(len)) != 0) {
    // ENOSPC (file system full) or a file system without fallocate: try one segment at a time.
    if (add == min_new_segments) {
      growth_failed_ = true;
      return false;
    }
    len = uint64_t{min_new_segments} * sb_.segment_size;
    if (fallocate(fd_, 0, static_cast<off_t>(from), static_cast<off_t>(len)) != 0) {
      growth_failed_ = true;
      return false;
    }
    add = min_new_segments;
  }
  for (uint32_t i = have + add; i-- > have;) free_.push_back(i);
  // New segments are taken in ascending order after the existing free ones.
  std::sort(free_.begin(), free_.end(), std::greater<uint32_t>());
  segment_count_.store(have + add, std::memory_order_release);
  return true;
}

uint32_t DataFile::AllocateSegment(SegState state, uint32_t owner, bool reserve) {
  std::lock_guard<std::mutex> lock(mu_);
  // Foreground writes leave a reserve so deletes (tombstones) and defrag can still append.
  auto enough = [&]() { return reserve ? !free_.empty() : free_.size() > reserve_; };
  if (!enough()) GrowLocked(1);
  if (!enough()) return kNoSegment;
  uint32_t seg = free_.back();
  free_.pop_back();
  states_[seg] = state;
  owners_[seg] = owner;
  meta_[seg].live.store(0);
  return seg;
}

uint32_t DataFile::AllocateRun(uint32_t count, uint32_t owner) {
  std::lock_guard<std::mutex> lock(mu_);
  auto find_run = [&]() -> uint32_t {
    uint32_t n = segment_count(), run = 0;
    for (uint32_t i = 0; i < n; ++i) {
      run = states_[i] == SegState::kFree ? run + 1 : 0;
      if (run == count) return i + 1 - count;
    }
    return kNoSegment;
  };
  // The run must leave the reserve free: a growable file grows first when too few are free
  // (else a large record found a run but failed the reserve check without trying to grow).
  if (free_.size() < count + reserve_) {
    GrowLocked(static_cast<uint32_t>(count + reserve_ - free_.size()));
  }
  uint32_t first = find_run();
  if (first == kNoSegment && free_.size() >= count + reserve_ - 1) {
    // No contiguous run among the free segments: grow by a whole run at the end.
    if (GrowLocked(count)) first = find_run();
  } else if (first == kNoSegment && GrowLocked(count)) {
    first = find_run();
  }
  if (first == kNoSegment || free_.size() < count + reserve_) return kNoSegment;
  for (uint32_t i = first; i < first + count; ++i) {
    states_[i] = i == first ? SegState::kLarge : SegState::kLargeTail;
    owners_[i] = owner;
    meta_[i].live.store(0);
  }
  free_.erase(std::remove_if(free_.begin(), free_.end(),
                             [&](uint32_t s) { return s >= first && s < first + count; }),
              free_.end());
  return first;
}

void DataFile::ReleaseSegment(uint32_t seg) {
  std::lock_guard<std::mutex> lock(mu_);
  states_[seg] = SegState::kFree;
  meta_[seg].seq.store(0);
  meta_[seg].live.store(0);
  free_.push_back(seg);
  growth_failed_ = false;  // space came back: growing may work again later
}

void DataFile::MarkUsed(uint32_t seg, SegState state, uint32_t owner) {
  std::lock_guard<std::mutex> lock(mu_);
  states_[seg] = state;
  owners_[seg] = owner;
  free_.erase(std::remove(free_.begin(), free_.end(), seg), free_.end());
}

DataFile::SegState DataFile::state(uint32_t seg) const {
  std::lock_guard<std::mutex> lock(mu_);
  return states_[seg];
}

uint32_t DataFile::owner(uint32_t seg) const {
  std::lock_guard<std::mutex> lock(mu_);
  return owners_[seg];
}

size_t DataFile::free_segments() const {
  std::lock_guard<std::mutex> lock(mu_);
  return free_.size();
}

size_t DataFile::available_segments() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t growth = growable() && !growth_failed_ ? max_segments_ - segment_count() : 0;
  return free_.size() + growth;
}

uint64_t DataFile::MinLiveSeq() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t min = UINT64_MAX;
  uint32_t n = segment_count();
  for (uint32_t i = 0; i < n; ++i) {
    if (states_[i] == SegState::kLog || states_[i] == SegState::kLarge) {
      min = std::min(min, meta_[i].seq.load(std::memory_order_relaxed));
    }
  }
  return min;
}

}  // namespace lavik
