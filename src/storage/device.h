// Device: asynchronous block I/O on the data file for one worker, behind an interface so the
// storage logic runs on an in-memory fake in tests (and SPDK can come later behind the same
// interface).
//
// Every request is aligned (offset, length and buffer to kIoAlign) and completes on the owning
// worker's thread: `int res = co_await dev.Read(buf, len, off);` (res = bytes or -errno).
// UringDevice submits through the worker's io_uring ring (O_DIRECT file); MemDevice keeps the
// "disk" in memory and completes inline.
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

// An aligned heap buffer (O_DIRECT needs kIoAlign-aligned memory).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size) { Reset(size); }
  AlignedBuffer(AlignedBuffer&& o) noexcept : data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept;
  ~AlignedBuffer();
  void Reset(size_t size);  // contents undefined (zeroed on first allocation)
  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
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
  int result_ = 0;
  bool submitting_ = false;
  bool done_ = false;
  std::coroutine_handle<> handle_;
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

  // Starts the request; the device calls req->Finish(res) when it is done (possibly inline).
  virtual void Submit(IoRequest* req) = 0;

  uint64_t reads() const { return reads_; }
  uint64_t writes() const { return writes_; }
  uint64_t syncs() const { return syncs_; }
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }

 protected:
  void Count(const IoRequest& r);

 private:
  uint64_t reads_ = 0, writes_ = 0, syncs_ = 0, bytes_read_ = 0, bytes_written_ = 0;
};

// The data file through the worker's io_uring ring.
class UringDevice : public Device {
 public:
  UringDevice(EventLoop* loop, int fd) : loop_(loop), fd_(fd) {}
  void Submit(IoRequest* req) override;

 private:
  static void OnComplete(IoOp* op, int res, uint32_t flags);
  EventLoop* loop_;
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
