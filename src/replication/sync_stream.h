// SyncStream: a diskless full sync's RDB on its way from the walk to the replicas
// (doc/replication.md, "Diskless sync").
//
// With repl-diskless-sync yes (Redis's default) and replicas that said `REPLCONF capa eof`, the
// BGSAVE walk (server/rdb_save.cc) writes its output here instead of to a file: the workers
// append pieces (~1 MiB each), the Master's thread sends them, as `$EOF:<mark>` ... <mark>, to
// every replica of that sync, each at its own pace, and releases what all of them have sent.
// Bounded: once kMaxBuffered bytes wait for the slowest replica, the walk's coordinator suspends
// (WaitForSpace) until the Master's thread frees some, so a slow replica holds back the walk, not
// the master's memory, as Redis's child process blocks on its pipe.
//
// Thread safety: one mutex; the writer side from any worker, the reader side from the Master's
// thread. A piece, once appended, is immutable: the reader sends it outside the lock.
#pragma once

#include <coroutine>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/mailbox.h"

namespace lavik {

class Worker;

class SyncStream {
 public:
  static constexpr uint64_t kMaxBuffered = 32ull << 20;

  // `mark`: the 40 bytes that frame it (`$EOF:<mark>` before, <mark> after). `wake`: tells the
  // reader that bytes arrived or the stream ended (any thread).
  SyncStream(std::string mark, std::function<void()> wake)
      : mark_(std::move(mark)), wake_(std::move(wake)) {}
  const std::string& mark() const { return mark_; }

  // ---- The writer (the walk) ----
  // False once the stream is abandoned (no replica reads it any more): the walk may stop.
  bool Append(std::string bytes);
  void Finish(bool ok);  // the walk ended; ok: every byte of the RDB was appended
  bool abandoned();

  // `co_await stream.Space();` on a worker: resumes once fewer than kMaxBuffered bytes wait, or
  // the stream was abandoned.
  struct SpaceAwaiter : MailboxItem {
    explicit SpaceAwaiter(SyncStream* s) : stream(s) {}
    SyncStream* stream;
    std::coroutine_handle<> handle;
    bool await_ready() const { return false; }
    bool await_suspend(std::coroutine_handle<> h);
    void await_resume() const {}
  };
  SpaceAwaiter Space() { return SpaceAwaiter(this); }

  // ---- The reader (the Master's thread) ----
  // The piece holding stream offset `at` and the offset it starts at; null if `at` is not
  // appended yet (or was released).
  std::shared_ptr<const std::string> PieceAt(uint64_t at, uint64_t* piece_start);
  // -1 running, 0 failed, 1 complete; `*end`: the bytes appended so far.
  int state(uint64_t* end);
  // Every reader sent the bytes before `upto`: they are freed (and a waiting walk resumed).
  void Release(uint64_t upto);
  void Abandon();  // no reader is left

 private:
  bool FullLocked() const { return end_ - released_ >= kMaxBuffered && !abandoned_; }
  void ResumeWriterLocked();

  const std::string mark_;
  std::function<void()> wake_;
  std::mutex mu_;
  struct Piece {
    uint64_t start;
    std::shared_ptr<const std::string> bytes;
  };
  std::deque<Piece> pieces_;
  uint64_t end_ = 0;       // bytes appended
  uint64_t released_ = 0;  // bytes every reader has sent
  int state_ = -1;
  bool abandoned_ = false;
  SpaceAwaiter* waiter_ = nullptr;  // the walk, suspended for space
  Worker* waiter_home_ = nullptr;
};

}  // namespace lavik
