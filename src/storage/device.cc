#include "storage/device.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

namespace lavik {

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    std::free(data_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

void AlignedBuffer::Reset(size_t size) {
  if (size == size_ && data_ != nullptr) return;
  std::free(data_);
  data_ = nullptr;
  size_ = 0;
  if (size == 0) return;
  size_t rounded = AlignUp(size);
  void* p = nullptr;
  if (posix_memalign(&p, kIoAlign, rounded) != 0) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  data_ = static_cast<char*>(p);
  size_ = size;
}

bool IoRequest::await_suspend(std::coroutine_handle<> h) {
  handle_ = h;
  submitting_ = true;
  dev_->Submit(this);
  submitting_ = false;
  // Completed inline (the fake device): do not suspend at all.
  return !done_;
}

void IoRequest::Finish(int res) {
  result_ = res;
  done_ = true;
  if (!submitting_ && handle_) handle_.resume();
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

void UringDevice::Submit(IoRequest* req) {
  Count(*req);
  req->complete = &UringDevice::OnComplete;
  io_uring_sqe* sqe = loop_->Prepare(req);
  switch (req->kind()) {
    case IoRequest::Kind::kRead:
      io_uring_prep_read(sqe, fd_, req->buf(), static_cast<unsigned>(req->len()), req->offset());
      break;
    case IoRequest::Kind::kWrite:
      io_uring_prep_write(sqe, fd_, req->buf(), static_cast<unsigned>(req->len()), req->offset());
      break;
    case IoRequest::Kind::kSync:
      io_uring_prep_fsync(sqe, fd_, IORING_FSYNC_DATASYNC);
      break;
  }
}

void UringDevice::OnComplete(IoOp* op, int res, uint32_t) {
  static_cast<IoRequest*>(op)->Finish(res);
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
