#include "storage/device.h"

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "base/clock.h"

namespace lavik {

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    Release();
    data_ = o.data_;
    size_ = o.size_;
    pool_ = o.pool_;
    o.data_ = nullptr;
    o.size_ = 0;
    o.pool_ = nullptr;
  }
  return *this;
}

void AlignedBuffer::Release() {
  if (data_ == nullptr) return;
  if (pool_ != nullptr) {
    pool_->Return(data_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  size_ = 0;
  pool_ = nullptr;
}

void AlignedBuffer::Reset(size_t size) {
  if (size == size_ && data_ != nullptr && pool_ == nullptr) return;
  Release();
  if (size == 0) return;
  size_t rounded = AlignUp(size);
  void* p = nullptr;
  if (posix_memalign(&p, kIoAlign, rounded) != 0) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  data_ = static_cast<char*>(p);
  size_ = size;
}

IoBufferPool::~IoBufferPool() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

bool IoBufferPool::Init(io_uring* ring, size_t bytes, std::string* error) {
  bytes = bytes / kWriteBuffer * kWriteBuffer;
  if (bytes < 2 * kWriteBuffer) return true;  // too small to be worth it: heap buffers only
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    *error = std::string("mmap of the registered buffers: ") + std::strerror(errno);
    return false;
  }
  iovec iov{p, bytes};
  int rc = io_uring_register_buffers(ring, &iov, 1);
  if (rc < 0) {
    munmap(p, bytes);
    *error = std::string("io_uring_register_buffers: ") + std::strerror(-rc);
    return false;
  }
  base_ = static_cast<char*>(p);
  bytes_ = bytes;
  write_base_ = base_ + bytes / 2;
  for (char* s = write_base_; s > base_;) {
    s -= kReadSlot;
    read_free_.push_back(s);
  }
  for (char* w = base_ + bytes; w - kWriteBuffer >= write_base_;) {
    w -= kWriteBuffer;
    write_free_.push_back(w);
  }
  return true;
}

AlignedBuffer IoBufferPool::Take(size_t size) {
  std::vector<char*>* list = nullptr;
  if (size == kWriteBuffer) {
    list = &write_free_;
  } else if (size <= kReadSlot) {
    list = &read_free_;
  }
  if (list == nullptr || list->empty()) return AlignedBuffer();
  char* p = list->back();
  list->pop_back();
  return AlignedBuffer(this, p, size);
}

void IoBufferPool::Return(char* p) { (p >= write_base_ ? write_free_ : read_free_).push_back(p); }

bool IoRequest::await_suspend(std::coroutine_handle<> h) {
  handle_ = h;
  submitting_ = true;
  start_us_ = MonotonicUs();
  dev_->Submit(this);
  submitting_ = false;
  // Completed inline (the fake device): do not suspend at all.
  return !done_;
}

void IoRequest::Finish(int res) {
  result_ = res;
  done_ = true;
  dev_->RecordLatency(kind_, MonotonicUs() - start_us_);
  if (!submitting_ && handle_) handle_.resume();
}

void IoLatency::Record(int64_t us) {
  if (us < 0) us = 0;
  ++count;
  total_us += static_cast<uint64_t>(us);
  // Bucket i holds [2^(i-1), 2^i) us; bucket 0 holds < 1 us.
  const int i = us == 0 ? 0 : std::bit_width(static_cast<uint64_t>(us));
  ++buckets[std::min(i, kBuckets - 1)];
}

void Device::Count(const IoRequest& r) {
  switch (r.kind()) {
    case IoRequest::Kind::kRead:
      ++reads_;
      bytes_read_ += r.len();
      break;
    case IoRequest::Kind::kWrite:
      ++writes_;
      bytes_written_ += r.len();
      break;
    case IoRequest::Kind::kSync:
      ++syncs_;
      break;
  }
}

AlignedBuffer UringDevice::Buffer(size_t size) {
  if (pool_ != nullptr) {
    AlignedBuffer b = pool_->Take(size);
    if (b.data() != nullptr) return b;
  }
  AlignedBuffer b;
  b.Reset(size);
  return b;
}

void UringDevice::Submit(IoRequest* req) {
  Count(*req);
  req->complete = &UringDevice::OnComplete;
  if (slot_ == kNotYet) slot_ = loop_->RegisterFile(fd_);
  const int fd = slot_ >= 0 ? slot_ : fd_;
  io_uring_sqe* sqe = loop_->Prepare(req);
  const bool fixed = pool_ != nullptr && pool_->Contains(req->buf(), req->len());
  if (fixed) ++fixed_ios_;
  const auto len = static_cast<unsigned>(req->len());
  switch (req->kind()) {
    case IoRequest::Kind::kRead:
      if (fixed) {
        io_uring_prep_read_fixed(sqe, fd, req->buf(), len, req->offset(), 0);
      } else {
        io_uring_prep_read(sqe, fd, req->buf(), len, req->offset());
      }
      break;
    case IoRequest::Kind::kWrite:
      if (fixed) {
        io_uring_prep_write_fixed(sqe, fd, req->buf(), len, req->offset(), 0);
      } else {
        io_uring_prep_write(sqe, fd, req->buf(), len, req->offset());
      }
      break;
    case IoRequest::Kind::kSync:
      io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
      break;
  }
  if (slot_ >= 0) sqe->flags |= IOSQE_FIXED_FILE;
}

void UringDevice::OnComplete(IoOp* op, int res, uint32_t) {
  static_cast<IoRequest*>(op)->Finish(res);
}

void FileDevice::Submit(IoRequest* req) {
  Count(*req);
  const off_t base = static_cast<off_t>(req->offset());
  size_t done = 0;
  switch (req->kind()) {
    case IoRequest::Kind::kRead:
      while (done < req->len()) {
        ssize_t n = pread(fd_, req->buf() + done, req->len() - done, base + done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          req->Finish(-errno);
          return;
        }
        if (n == 0) {  // past the end of the file: zeros
          std::memset(req->buf() + done, 0, req->len() - done);
          break;
        }
        done += static_cast<size_t>(n);
      }
      req->Finish(static_cast<int>(req->len()));
      return;
    case IoRequest::Kind::kWrite:
      while (done < req->len()) {
        ssize_t n = pwrite(fd_, req->buf() + done, req->len() - done, base + done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          req->Finish(n < 0 ? -errno : -EIO);
          return;
        }
        done += static_cast<size_t>(n);
      }
      req->Finish(static_cast<int>(req->len()));
      return;
    case IoRequest::Kind::kSync:
      req->Finish(fdatasync(fd_) == 0 ? 0 : -errno);
      return;
  }
}

void MemDevice::Submit(IoRequest* req) {
  Count(*req);
  if (fail_count_ > 0) {
    --fail_count_;
    req->Finish(fail_err_);
    return;
  }
  std::lock_guard<std::mutex> lock(disk_->mu);
  std::string& d = disk_->bytes;
  switch (req->kind()) {
    case IoRequest::Kind::kRead: {
      size_t n = 0;
      if (req->offset() < d.size()) n = std::min(req->len(), d.size() - req->offset());
      if (n > 0) std::memcpy(req->buf(), d.data() + req->offset(), n);
      if (n < req->len()) std::memset(req->buf() + n, 0, req->len() - n);
      req->Finish(static_cast<int>(req->len()));
      return;
    }
    case IoRequest::Kind::kWrite: {
      size_t end = req->offset() + req->len();
      if (end > disk_->capacity) {
        req->Finish(-ENOSPC);
        return;
      }
      if (d.size() < end) d.resize(end, '\0');
      std::memcpy(d.data() + req->offset(), req->buf(), req->len());
      req->Finish(static_cast<int>(req->len()));
      return;
    }
    case IoRequest::Kind::kSync:
      req->Finish(0);
      return;
  }
}

}  // namespace lavik
