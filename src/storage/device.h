// Device: asynchronous block I/O on the data file for one worker, behind an interface so the
// storage logic runs on an in-memory fake in tests (and SPDK can come later behind the same
// interface).
//
// Every request is aligned (buffer to kIoAlign; offset and length to kIoAlign, or for a record
// read to the data file's sector size, DataFile::read_align) and completes on the owning
// worker's thread: `int res = co_await dev.Read(buf, len, off);` (res = bytes or -errno).
// UringDevice submits through the worker's io_uring ring (O_DIRECT file); FileDevice does blocking
// syscalls on the file and completes inline (tests, fallback); MemDevice keeps the "disk" in
// memory and completes inline.
//
// Thread safety: a Device belongs to one worker; MemDevice's storage may be shared by several
// MemDevices (one per worker), each used by its own thread.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/event_loop.h"

namespace lavik {

inline constexpr size_t kIoAlign = 4096;

inline uint64_t AlignDown(uint64_t v) { return v & ~uint64_t{kIoAlign - 1}; }
inline uint64_t AlignUp(uint64_t v) { return (v + kIoAlign - 1) & ~uint64_t{kIoAlign - 1}; }

class IoBufferPool;

// An aligned buffer (O_DIRECT needs kIoAlign-aligned memory): from the heap, or a slot of the
// worker's registered pool (then it goes back to the pool when destroyed).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size) { Reset(size); }
  AlignedBuffer(IoBufferPool* pool, char* data, size_t size)
      : data_(data), size_(size), pool_(pool) {}
  AlignedBuffer(AlignedBuffer&& o) noexcept : data_(o.data_), size_(o.size_), pool_(o.pool_) {
    o.data_ = nullptr;
    o.size_ = 0;
    o.pool_ = nullptr;
  }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept;
  ~AlignedBuffer() {
    if (data_ != nullptr) Release();  // inline: most buffers on the request path are empty
  }
  void Reset(size_t size);  // a heap buffer, zero-filled
  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  bool pooled() const { return pool_ != nullptr; }  // a slot of the registered pool

 private:
  void Release();
  char* data_ = nullptr;
  size_t size_ = 0;
  IoBufferPool* pool_ = nullptr;
};

// IoBufferPool: the worker's `--registered-buffer-mb-per-worker` MiB, registered with its
// io_uring ring (fixed buffers: the kernel skips pinning pages on every request). Half is cut
// into 64 KiB read slots, half into 2 MiB write buffers; requests that do not fit, or come when
// the pool is exhausted, use heap buffers and plain reads/writes.
//
// Thread safety: owner worker only.
class IoBufferPool {
 public:
  static constexpr size_t kReadSlot = 64 << 10;
  static constexpr size_t kWriteBuffer = 2 << 20;
  ~IoBufferPool();
  // Maps and registers `bytes` with the ring; false + *error if the kernel refuses (then no pool).
  bool Init(io_uring* ring, size_t bytes, std::string* error);
  // A read slot (size <= kReadSlot) or write buffer (size == kWriteBuffer); empty if none left.
  AlignedBuffer Take(size_t size);
  void Return(char* p);
  bool Contains(const char* p, size_t len) const {
    return base_ != nullptr && p >= base_ && p + len <= base_ + bytes_;
  }
  size_t bytes() const { return bytes_; }
  size_t free_read_slots() const { return read_free_.size(); }

 private:
  char* base_ = nullptr;
  size_t bytes_ = 0;
  char* write_base_ = nullptr;
  std::vector<char*> read_free_;
  std::vector<char*> write_free_;
};

class Device;

// One request in flight; also the awaitable for it.
class IoRequest : public IoOp {
 public:
  enum class Kind { kRead, kWrite, kSync };
  IoRequest(Device* dev, Kind kind, char* buf, size_t len, uint64_t offset)
      : dev_(dev), kind_(kind), buf_(buf), len_(len), offset_(offset) {}

  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> h);
  int await_resume() const noexcept { return result_; }

  Kind kind() const { return kind_; }
  char* buf() const { return buf_; }
  size_t len() const { return len_; }
  uint64_t offset() const { return offset_; }

  // Called by the device when the request is done (res: bytes transferred or -errno).
  void Finish(int res);

 private:
  Device* dev_;
  Kind kind_;
  char* buf_;
  size_t len_;
  uint64_t offset_;
  int64_t start_us_ = 0;  // submitted at (MonotonicUs), for the device's latency figures
  int result_ = 0;
  bool submitting_ = false;
  bool done_ = false;
  std::coroutine_handle<> handle_;
};

// Completion latency of one kind of request (submit to Finish): a count, a sum and power-of-two
// buckets — bucket i counts requests that took less than 2^i microseconds (and at least
// 2^(i-1)); the last bucket also takes everything slower. Exposed by the metrics endpoint.
struct IoLatency {
  static constexpr int kBuckets = 22;  // < 1 us ... < 2^21 us (~2.1 s), then the rest
  uint64_t count = 0;
  uint64_t total_us = 0;
  uint64_t buckets[kBuckets] = {};

  void Record(int64_t us);
};

class Device {
 public:
  virtual ~Device() = default;
  IoRequest Read(char* buf, size_t len, uint64_t offset) {
    return IoRequest(this, IoRequest::Kind::kRead, buf, len, offset);
  }
  IoRequest Write(const char* buf, size_t len, uint64_t offset) {
    return IoRequest(this, IoRequest::Kind::kWrite, const_cast<char*>(buf), len, offset);
  }
  IoRequest Sync() { return IoRequest(this, IoRequest::Kind::kSync, nullptr, 0, 0); }

  // A buffer for I/O of `size` bytes: from the registered pool when one is attached and has
  // room, else from the heap. Contents undefined.
  virtual AlignedBuffer Buffer(size_t size) { return AlignedBuffer(size); }

  // Starts the request; the device calls req->Finish(res) when it is done (possibly inline).
  virtual void Submit(IoRequest* req) = 0;

  uint64_t reads() const { return reads_; }
  uint64_t writes() const { return writes_; }
  uint64_t syncs() const { return syncs_; }
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }
  const IoLatency& latency(IoRequest::Kind kind) const { return latency_[static_cast<int>(kind)]; }
  // Called by IoRequest::Finish.
  void RecordLatency(IoRequest::Kind kind, int64_t us) {
    latency_[static_cast<int>(kind)].Record(us);
  }

 protected:
  void Count(const IoRequest& r);

 private:
  uint64_t reads_ = 0, writes_ = 0, syncs_ = 0, bytes_read_ = 0, bytes_written_ = 0;
  IoLatency latency_[3];  // by IoRequest::Kind
};

// The data file through the worker's io_uring ring.
class UringDevice : public Device {
 public:
  UringDevice(EventLoop* loop, int fd) : loop_(loop), fd_(fd) {}
  void Submit(IoRequest* req) override;
  AlignedBuffer Buffer(size_t size) override;
  // The worker's registered buffers (set on the worker thread once its ring exists).
  void AttachPool(IoBufferPool* pool) { pool_ = pool; }
  uint64_t fixed_ios() const { return fixed_ios_; }
  bool fixed_file() const { return slot_ >= 0; }  // the data file is in the ring's file table

 private:
  static void OnComplete(IoOp* op, int res, uint32_t flags);
  EventLoop* loop_;
  int fd_;
  // The data file's slot in the ring's file table (IOSQE_FIXED_FILE: no fget/fput per request),
  // registered at the first request — on the worker's thread, which owns the ring; -1: plain fd.
  static constexpr int kNotYet = -2;
  int slot_ = kNotYet;
  IoBufferPool* pool_ = nullptr;
  uint64_t fixed_ios_ = 0;
};

// The data file through blocking pread/pwrite/fdatasync on `fd` (not owned), completing inline
// like MemDevice. The test device — a Store then sees the very bytes DataFile::ReadAt reads, which
// recovery and checkpoints use — and the fallback where io_uring cannot be used. Every request
// blocks the calling thread, so a serving worker should not use it when io_uring works. A read
// past the end of the file returns zeros (as DataFile::ReadAt does).
class FileDevice : public Device {
 public:
  explicit FileDevice(int fd) : fd_(fd) {}
  void Submit(IoRequest* req) override;

 private:
  int fd_;
};

// The whole "disk" in memory, for tests. Several MemDevices may share one MemDisk.
struct MemDisk {
  std::mutex mu;
  std::string bytes;
  size_t capacity = SIZE_MAX;  // writes past it fail with -ENOSPC
};

class MemDevice : public Device {
 public:
  explicit MemDevice(std::shared_ptr<MemDisk> disk) : disk_(std::move(disk)) {}
  void Submit(IoRequest* req) override;
  // Test hook: the next `n` requests fail with `err` (e.g. -EIO).
  void FailNext(int n, int err) {
    fail_count_ = n;
    fail_err_ = err;
  }

 private:
  std::shared_ptr<MemDisk> disk_;
  int fail_count_ = 0;
  int fail_err_ = 0;
};

}  // namespace lavik
