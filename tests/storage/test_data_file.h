// Test helpers for the storage engine: a data file in a temporary directory, stores over it, and
// ways to drive Store coroutines without a server.
//
// The stores' device is a FileDevice on the DataFile's own fd, so what a Store writes is what
// DataFile::ReadAt (recovery, checkpoints, the tests' own byte patches) reads back. FileDevice
// completes inline, so most Store operations finish inside Task::Start; the storage_test::
// helpers (Put, Get, Del, ...) run one and fail the test if it suspended. Code that yields to the
// loop (defrag, a large record's release while it is read) needs a worker: TestWorker runs a Task
// on a started lavik::Worker and waits for it (RunServing also drives the store's end-of-turn
// hook and timer tick meanwhile, as the server's worker does).
//
// Thread safety: a TestDataFile and the stores belong to the test's thread, which may lend them to
// a TestWorker for the duration of one Run/Call (the mailbox and the promise order the accesses).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "runtime/shard_hop.h"
#include "runtime/task.h"
#include "runtime/worker.h"
#include "storage/data_file.h"
#include "storage/device.h"
#include "storage/store.h"

namespace lavik {

class TestDataFile {
 public:
  // A new file Lavik grows, capped at `max_size` bytes (0 = no cap); `shards` sizes the
  // allocator's reserve (shards + 1 segments).
  explicit TestDataFile(uint64_t max_size = 0, uint32_t shards = 1,
                        uint64_t segment_size = kDefaultSegmentSize) {
    dir_ = std::filesystem::temp_directory_path() /
           ("lavik-test-" + std::to_string(getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    options_.path = (dir_ / "data").string();
    options_.max_size = max_size;
    options_.shards = shards;
    options_.segment_size = segment_size;
    file_ = DataFile::Open(options_, &error_);
  }
  ~TestDataFile() {
    file_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TestDataFile(const TestDataFile&) = delete;
  TestDataFile& operator=(const TestDataFile&) = delete;

  bool ok() const { return file_ != nullptr; }
  const std::string& error() const { return error_; }
  DataFile* file() { return file_.get(); }
  std::string path() const { return options_.path; }
  const std::filesystem::path& dir() const { return dir_; }

  // Closes the file and opens it again, as a restart does. Stores made before must not be used
  // any more (destroy them first).
  bool Reopen() {
    file_.reset();
    error_.clear();
    file_ = DataFile::Open(options_, &error_);
    return file_ != nullptr;
  }

  // One store per shard, each with a FileDevice on the data file (options.shard_count = n).
  std::vector<std::unique_ptr<Store>> MakeStores(int n, StoreOptions options = {}) {
    options.shard_count = static_cast<uint32_t>(n);
    std::vector<std::unique_ptr<Store>> stores;
    for (int i = 0; i < n; ++i) {
      stores.push_back(std::make_unique<Store>(static_cast<uint32_t>(i), file_.get(),
                                               std::make_unique<FileDevice>(file_->fd()), options));
    }
    return stores;
  }
  static std::vector<Store*> Ptrs(const std::vector<std::unique_ptr<Store>>& stores) {
    std::vector<Store*> out;
    for (const auto& s : stores) out.push_back(s.get());
    return out;
  }

  // The file's bytes [offset, offset + len), read through DataFile::ReadAt.
  std::string ReadBytes(uint64_t offset, size_t len) {
    const uint64_t from = AlignDown(offset);
    AlignedBuffer buf(AlignUp(offset + len) - from);
    std::string error;
    EXPECT_TRUE(file_->ReadAt(buf.data(), buf.size(), from, &error)) << error;
    return std::string(buf.data() + (offset - from), len);
  }
  // Overwrites bytes of the file in place (aligned read-modify-write), e.g. to damage a record.
  void WriteBytes(uint64_t offset, std::string_view bytes) {
    const uint64_t from = AlignDown(offset);
    AlignedBuffer buf(AlignUp(offset + bytes.size()) - from);
    std::string error;
    ASSERT_TRUE(file_->ReadAt(buf.data(), buf.size(), from, &error)) << error;
    std::memcpy(buf.data() + (offset - from), bytes.data(), bytes.size());
    ASSERT_TRUE(file_->WriteAt(buf.data(), buf.size(), from, &error)) << error;
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  DataFile::Options options_;
  std::string error_;
  std::unique_ptr<DataFile> file_;
};

namespace storage_test {

// The data file through FileDevice, except that while `hold` is set requests wait in a queue
// until the test completes them one by one (Step): lets a test look at the log while a write or
// a sync is in flight. fail_with != 0 completes every request with that error instead.
class HeldDevice : public Device {
 public:
  explicit HeldDevice(int fd) : file_(fd) {}
  void Submit(IoRequest* req) override {
    Count(*req);
    if (hold) {
      pending_.push_back(req);
      return;
    }
    Execute(req);
  }
  // Completes the oldest waiting request (resuming its coroutine). False if none waits.
  bool Step() {
    if (pending_.empty()) return false;
    IoRequest* req = pending_.front();
    pending_.pop_front();
    Execute(req);
    return true;
  }
  // Completes the i-th oldest waiting request (0: the oldest). False if there is none.
  bool StepAt(size_t i) {
    if (i >= pending_.size()) return false;
    IoRequest* req = pending_[i];
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    Execute(req);
    return true;
  }
  size_t pending() const { return pending_.size(); }
  IoRequest::Kind front_kind() const { return pending_.front()->kind(); }
  IoRequest::Kind kind_at(size_t i) const { return pending_[i]->kind(); }

  bool hold = false;
  int fail_with = 0;

 private:
  void Execute(IoRequest* req) {
    if (fail_with != 0) {
      req->Finish(fail_with);
      return;
    }
    file_.Submit(req);
  }
  FileDevice file_;
  std::deque<IoRequest*> pending_;
};

// Starts a task that must finish without suspending (an inline device); fails the test if not.
inline bool RunInline(Task t) {
  bool done = t.Start(nullptr, nullptr);
  EXPECT_TRUE(done) << "the store operation suspended (it needs a worker or a device completion)";
  return done;
}

// A read's outcome, copied out of the ReadResult (whose views die with the next store call).
struct ReadOutcome {
  ReadResult::Status status = ReadResult::Status::kNotFound;
  KeyInfo info;
  std::string key;
  std::string value;
  std::string error;
  bool ok() const { return status == ReadResult::Status::kOk; }
  bool not_found() const { return status == ReadResult::Status::kNotFound; }
};

inline Task WriteTask(Store* s, std::string key, ValueType type, std::string value,
                      int64_t expire_ms, WriteResult* out) {
  *out = co_await s->Write(key, type, value, expire_ms);
}
inline Task WriteIfTask(Store* s, std::string key, uint64_t expected, ValueType type,
                        std::string value, int64_t expire_ms, bool* applied, WriteResult* out) {
  *out = co_await s->WriteIf(key, expected, type, value, expire_ms, applied);
}
inline Task DeleteTask(Store* s, std::string key, int64_t now_ms, bool* existed, WriteResult* out) {
  *out = co_await s->Delete(key, now_ms, existed);
}
inline Task DeleteIfTask(Store* s, std::string key, uint64_t expected, bool* applied,
                         WriteResult* out) {
  *out = co_await s->DeleteIf(key, expected, applied);
}
inline Task ReadTask(Store* s, std::string key, int64_t now_ms, bool count_stats,
                     ReadOutcome* out) {
  ReadResult r = co_await s->Read(key, now_ms, count_stats);
  out->status = r.status;
  out->info = r.info;
  out->key = std::string(r.key);
  out->value = std::string(r.value);
  out->error = r.error;
}
inline Task ReadAtTask(Store* s, uint64_t fp, uint64_t loc, ReadOutcome* out) {
  ReadResult r = co_await s->ReadAt(fp, loc);
  out->status = r.status;
  out->info = r.info;
  out->key = std::string(r.key);
  out->value = std::string(r.value);
  out->error = r.error;
}

inline WriteResult Unfinished() {
  return WriteResult{WriteResult::Status::kError, "the operation did not finish"};
}

inline WriteResult Put(Store& s, std::string_view key, std::string_view value,
                       int64_t expire_ms = 0, ValueType type = ValueType::kString) {
  WriteResult r = Unfinished();
  RunInline(WriteTask(&s, std::string(key), type, std::string(value), expire_ms, &r));
  return r;
}
inline WriteResult PutIf(Store& s, std::string_view key, uint64_t expected, std::string_view value,
                         bool* applied, int64_t expire_ms = 0) {
  WriteResult r = Unfinished();
  RunInline(WriteIfTask(&s, std::string(key), expected, ValueType::kString, std::string(value),
                        expire_ms, applied, &r));
  return r;
}
inline WriteResult Del(Store& s, std::string_view key, bool* existed = nullptr,
                       int64_t now_ms = NowMs()) {
  bool ignored = false;
  WriteResult r = Unfinished();
  RunInline(DeleteTask(&s, std::string(key), now_ms, existed ? existed : &ignored, &r));
  return r;
}
inline WriteResult DelIf(Store& s, std::string_view key, uint64_t expected, bool* applied) {
  WriteResult r = Unfinished();
  RunInline(DeleteIfTask(&s, std::string(key), expected, applied, &r));
  return r;
}
inline ReadOutcome Get(Store& s, std::string_view key, int64_t now_ms = NowMs(),
                       bool count_stats = false) {
  ReadOutcome r;
  r.status = ReadResult::Status::kError;
  r.error = "the read did not finish";
  RunInline(ReadTask(&s, std::string(key), now_ms, count_stats, &r));
  return r;
}
inline ReadOutcome GetAt(Store& s, uint64_t fp, uint64_t loc) {
  ReadOutcome r;
  r.status = ReadResult::Status::kError;
  RunInline(ReadAtTask(&s, fp, loc, &r));
  return r;
}
// Writes everything buffered and syncs it (the log must not need a worker).
inline bool Flush(Store& s) {
  bool ok = false;
  return RunInline(s.FlushAndSync(&ok)) && ok;
}

// One started lavik::Worker (not pinned), stopped and joined by the destructor.
class TestWorker {
 public:
  TestWorker() : worker_(0, -1) {
    worker_.Start([](std::string*) { return true; }, []() { return true; });
    std::string error;
    started_ = worker_.WaitStarted(&error);
    EXPECT_TRUE(started_) << error;
  }
  ~TestWorker() {
    worker_.RequestStop();
    worker_.Join();
  }
  TestWorker(const TestWorker&) = delete;
  TestWorker& operator=(const TestWorker&) = delete;

  Worker& worker() { return worker_; }

  // Runs the task make() returns on the worker (it may suspend and yield to the loop) and waits
  // until it has finished. False on timeout (the task is then left running: the test failed).
  bool Run(std::function<Task()> make,
           std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
    auto* item = new Item;
    item->make = std::move(make);
    item->run = &Item::Start;
    std::future<void> done = item->done.get_future();
    worker_.Post(item);
    if (done.wait_for(timeout) != std::future_status::ready) {
      ADD_FAILURE() << "the task did not finish on the worker";
      return false;  // `item` is leaked on purpose: the worker may still touch it
    }
    delete item;
    return true;
  }
  // Runs fn() on the worker's thread and waits for it.
  bool Call(std::function<void()> fn) {
    return Run([fn = std::move(fn)]() -> Task { return CallTask(fn); });
  }
  // As Run, while the worker also does for `store` what a serving worker's loop does: the
  // end-of-turn hook and the timer tick (here on every turn), so the log's buffers get written
  // while the task waits for them.
  bool RunServing(Store* store, std::function<Task()> make,
                  std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
    return Run([store, make = std::move(make)]() -> Task { return ServeTask(store, make); },
               timeout);
  }

 private:
  struct Item : MailboxItem {
    std::function<Task()> make;
    std::promise<void> done;
    static void Start(MailboxItem* self) {
      auto* item = static_cast<Item*>(self);
      Task t = item->make();
      if (t.Start(&Item::Done, item)) Done(item);
    }
    static void Done(void* arg) { static_cast<Item*>(arg)->done.set_value(); }
  };
  static Task CallTask(std::function<void()> fn) {
    fn();
    co_return;
  }
  static void SetTrue(void* flag) { *static_cast<bool*>(flag) = true; }
  static Task ServeTask(Store* store, std::function<Task()> make) {
    bool done = false;
    Task t = make();
    if (t.Start(&SetTrue, &done)) co_return;
    while (!done) {
      store->EndOfTurn();
      store->Tick(NowMs());
      co_await YieldToLoop();
    }
  }

  Worker worker_;
  bool started_ = false;
};

}  // namespace storage_test
}  // namespace lavik
