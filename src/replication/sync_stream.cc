#include "replication/sync_stream.h"

#include <utility>

#include "runtime/worker.h"

namespace lavik {

bool SyncStream::Append(std::string bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (abandoned_) return false;
    if (bytes.empty()) return true;
    const uint64_t n = bytes.size();
    pieces_.push_back(Piece{end_, std::make_shared<const std::string>(std::move(bytes))});
    end_ += n;
  }
  wake_();
  return true;
}

void SyncStream::Finish(bool ok) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = ok ? 1 : 0;
  }
  wake_();
}

bool SyncStream::abandoned() {
  std::lock_guard<std::mutex> lock(mu_);
  return abandoned_;
}

bool SyncStream::SpaceAwaiter::await_suspend(std::coroutine_handle<> h) {
  handle = h;
  run = [](MailboxItem* item) { static_cast<SpaceAwaiter*>(item)->handle.resume(); };
  std::lock_guard<std::mutex> lock(stream->mu_);
  if (!stream->FullLocked()) return false;
  stream->waiter_ = this;
  stream->waiter_home_ = Worker::Current();
  return true;
}

void SyncStream::ResumeWriterLocked() {
  if (waiter_ == nullptr || FullLocked()) return;
  SpaceAwaiter* w = waiter_;
  waiter_ = nullptr;
  waiter_home_->Post(w);
}

std::shared_ptr<const std::string> SyncStream::PieceAt(uint64_t at, uint64_t* piece_start) {
  std::lock_guard<std::mutex> lock(mu_);
  // Pieces are few (kMaxBuffered / ~1 MiB) and the readers are at the front: a short scan.
  for (const Piece& p : pieces_) {
    if (at >= p.start && at < p.start + p.bytes->size()) {
      *piece_start = p.start;
      return p.bytes;
    }
  }
  return nullptr;
}

int SyncStream::state(uint64_t* end) {
  std::lock_guard<std::mutex> lock(mu_);
  *end = end_;
  return state_;
}

void SyncStream::Release(uint64_t upto) {
  std::lock_guard<std::mutex> lock(mu_);
  if (upto > released_) released_ = upto;
  while (!pieces_.empty() && pieces_.front().start + pieces_.front().bytes->size() <= released_) {
    pieces_.pop_front();
  }
  ResumeWriterLocked();
}

void SyncStream::Abandon() {
  std::lock_guard<std::mutex> lock(mu_);
  abandoned_ = true;
  pieces_.clear();
  ResumeWriterLocked();
}

}  // namespace lavik
