#include "runtime/task.h"

#include <gtest/gtest.h>

#include <coroutine>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "runtime/frame_pool.h"

namespace lavik {
namespace {

using Log = std::vector<std::string>;

// Counts on_done calls.
void CountDone(void* arg) { ++*static_cast<int*>(arg); }

// An awaitable that always suspends and hands its coroutine to the test, which resumes it later
// (as an io_uring completion or a mailbox item would).
struct Parked {
  std::coroutine_handle<>* slot;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) noexcept { *slot = h; }
  void await_resume() const noexcept {}
};

// An awaitable that never suspends and reports the address of the awaiting frame.
struct FrameAddress {
  void* address = nullptr;
  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> h) noexcept {
    address = h.address();
    return false;  // resume immediately
  }
  void* await_resume() const noexcept { return address; }
};

Task Sync(int* value) {
  *value = 42;
  co_return;
}

TEST(TaskTest, IsLazyUntilStarted) {
  int value = 0;
  {
    Task t = Sync(&value);
    EXPECT_EQ(value, 0);
  }  // destroyed without running: the frame is freed (ASan would report a leak otherwise)
  EXPECT_EQ(value, 0);
}

TEST(TaskTest, SynchronousCompletionReturnsTrueWithoutOnDone) {
  int value = 0;
  int done = 0;
  Task t = Sync(&value);
  EXPECT_TRUE(t.Start(&CountDone, &done));
  EXPECT_EQ(value, 42);
  EXPECT_EQ(done, 0);
}

TEST(TaskTest, MovedTaskRunsOnce) {
  int value = 0;
  int done = 0;
  Task a = Sync(&value);
  Task b = std::move(a);
  Task c;
  c = std::move(b);
  EXPECT_TRUE(c.Start(&CountDone, &done));
  EXPECT_EQ(value, 42);
  EXPECT_EQ(done, 0);
}

TEST(TaskTest, MoveAssignDestroysThePreviousFrame) {
  int first = 0;
  int second = 0;
  Task t = Sync(&first);
  t = Sync(&second);  // the unstarted first frame is destroyed, never run
  EXPECT_TRUE(t.Start(nullptr, nullptr));
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 42);
}

Task Leaf(Log* log, std::string name) {
  log->push_back(name);
  co_return;
}

Task Middle(Log* log) {
  log->push_back("middle:begin");
  co_await Leaf(log, "leaf1");
  log->push_back("middle:between");
  co_await Leaf(log, "leaf2");
  log->push_back("middle:end");
}

Task Outer(Log* log) {
  log->push_back("outer:begin");
  co_await Middle(log);
  log->push_back("outer:after-middle");
  co_await Leaf(log, "leaf3");
  log->push_back("outer:end");
}

TEST(TaskTest, NestedAwaitRunsInOrder) {
  Log log;
  int done = 0;
  EXPECT_TRUE(Outer(&log).Start(&CountDone, &done));
  EXPECT_EQ(done, 0);
  EXPECT_EQ(log, (Log{"outer:begin", "middle:begin", "leaf1", "middle:between", "leaf2",
                      "middle:end", "outer:after-middle", "leaf3", "outer:end"}));
}

// A handler that needs no coroutine returns an empty Task: already finished.
Task MaybeCoroutine(Log* log, bool need_frame) {
  log->push_back("called");
  if (!need_frame) return Task();
  return Leaf(log, "frame");
}

Task AwaitsEmptyAndFull(Log* log) {
  co_await MaybeCoroutine(log, false);
  log->push_back("after-empty");
  co_await MaybeCoroutine(log, true);
  log->push_back("after-full");
}

TEST(TaskTest, EmptyTaskIsFinished) {
  int done = 0;
  EXPECT_TRUE(Task().Start(&CountDone, &done));
  EXPECT_EQ(done, 0);
  Log log;
  EXPECT_TRUE(AwaitsEmptyAndFull(&log).Start(&CountDone, &done));
  EXPECT_EQ(done, 0);
  EXPECT_EQ(log, (Log{"called", "after-empty", "called", "frame", "after-full"}));
}

Task Recurse(int depth, int* finished) {
  if (depth > 0) co_await Recurse(depth - 1, finished);
  ++*finished;
}

TEST(TaskTest, DeepNesting) {
  int finished = 0;
  EXPECT_TRUE(Recurse(2000, &finished).Start(nullptr, nullptr));
  EXPECT_EQ(finished, 2001);
}

Task ParkOnce(Log* log, std::coroutine_handle<>* slot) {
  log->push_back("before");
  co_await Parked{slot};
  log->push_back("after");
}

TEST(TaskTest, SuspendedTaskCallsOnDoneOnceAfterResumption) {
  Log log;
  std::coroutine_handle<> parked;
  int done = 0;
  EXPECT_FALSE(ParkOnce(&log, &parked).Start(&CountDone, &done));
  EXPECT_EQ(log, (Log{"before"}));
  EXPECT_EQ(done, 0);
  ASSERT_TRUE(parked);

  parked.resume();  // the frame is freed before on_done runs; ASan checks nothing touches it
  EXPECT_EQ(log, (Log{"before", "after"}));
  EXPECT_EQ(done, 1);
}

TEST(TaskTest, SuspendedTaskWithoutOnDone) {
  Log log;
  std::coroutine_handle<> parked;
  EXPECT_FALSE(ParkOnce(&log, &parked).Start(nullptr, nullptr));
  parked.resume();
  EXPECT_EQ(log, (Log{"before", "after"}));
}

Task ParkTwiceNested(Log* log, std::coroutine_handle<>* slot) {
  log->push_back("outer:begin");
  co_await ParkOnce(log, slot);
  log->push_back("outer:middle");
  co_await ParkOnce(log, slot);
  log->push_back("outer:end");
}

TEST(TaskTest, SuspensionInsideNestedTaskResumesTheWholeChain) {
  Log log;
  std::coroutine_handle<> parked;
  int done = 0;
  EXPECT_FALSE(ParkTwiceNested(&log, &parked).Start(&CountDone, &done));
  EXPECT_EQ(log, (Log{"outer:begin", "before"}));

  std::coroutine_handle<> first = std::exchange(parked, {});
  first.resume();
  EXPECT_EQ(log, (Log{"outer:begin", "before", "after", "outer:middle", "before"}));
  EXPECT_EQ(done, 0);
  ASSERT_TRUE(parked);

  parked.resume();
  EXPECT_EQ(
      log, (Log{"outer:begin", "before", "after", "outer:middle", "before", "after", "outer:end"}));
  EXPECT_EQ(done, 1);
}

// on_done may start the next task (the dispatcher resumes the connection from it).
struct Chain {
  int remaining = 3;
  int completions = 0;
  std::coroutine_handle<> parked;
  Log log;
};

void ChainDone(void* arg);

Task ChainStep(Chain* c) {
  c->log.push_back("step");
  co_await Parked{&c->parked};
}

void ChainDone(void* arg) {
  auto* c = static_cast<Chain*>(arg);
  ++c->completions;
  if (--c->remaining > 0) {
    EXPECT_FALSE(ChainStep(c).Start(&ChainDone, c));
  }
}

TEST(TaskTest, OnDoneMayStartAnotherTask) {
  Chain c;
  EXPECT_FALSE(ChainStep(&c).Start(&ChainDone, &c));
  for (int i = 0; i < 3; ++i) {
    std::coroutine_handle<> h = std::exchange(c.parked, {});
    ASSERT_TRUE(h) << i;
    h.resume();
  }
  EXPECT_EQ(c.completions, 3);
  EXPECT_EQ(c.log.size(), 3u);
  EXPECT_FALSE(c.parked);
}

Task RecordFrame(void** out) { *out = co_await FrameAddress{}; }

TEST(TaskTest, FramesAreReusedFromThePool) {
  // Under ASan, malloc quarantines freed blocks, so equal addresses show the pool at work.
  void* first = nullptr;
  void* second = nullptr;
  EXPECT_TRUE(RecordFrame(&first).Start(nullptr, nullptr));
  EXPECT_TRUE(RecordFrame(&second).Start(nullptr, nullptr));
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first, second);
}

TEST(FramePoolTest, AllocateFreeRoundTrip) {
  void* p = FramePool::Allocate(100);
  ASSERT_NE(p, nullptr);
  std::memset(p, 0xAB, 100);
  FramePool::Free(p, 100);
  void* q = FramePool::Allocate(100);
  EXPECT_EQ(q, p);
  FramePool::Free(q, 100);
}

TEST(FramePoolTest, SizesInOneGranuleShareBlocks) {
  // Blocks are rounded up to 64 bytes: 65..128 is one class, so a freed 100-byte block serves a
  // 128-byte request (it is large enough), but not a 129-byte one.
  void* p = FramePool::Allocate(100);
  std::memset(p, 0, 100);
  FramePool::Free(p, 100);
  void* q = FramePool::Allocate(128);
  EXPECT_EQ(q, p);
  std::memset(q, 0, 128);  // ASan: the block really has 128 bytes
  FramePool::Free(q, 128);
  void* r = FramePool::Allocate(129);
  EXPECT_NE(r, p);
  std::memset(r, 0, 129);
  FramePool::Free(r, 129);
  EXPECT_EQ(FramePool::Allocate(65), p);
  FramePool::Free(p, 65);
}

TEST(FramePoolTest, FreeListIsLastInFirstOut) {
  void* a = FramePool::Allocate(200);
  void* b = FramePool::Allocate(200);
  EXPECT_NE(a, b);
  FramePool::Free(a, 200);
  FramePool::Free(b, 200);
  EXPECT_EQ(FramePool::Allocate(200), b);
  EXPECT_EQ(FramePool::Allocate(200), a);
  FramePool::Free(a, 200);
  FramePool::Free(b, 200);
}

TEST(FramePoolTest, LargeBlocksAreNotPooledButWork) {
  constexpr std::size_t kBig = 64 * 1024;
  void* p = FramePool::Allocate(kBig);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, kBig);
  FramePool::Free(p, kBig);
}

TEST(FramePoolTest, BlockFreedOnAnotherThreadJoinsThatThreadsPool) {
  void* p = nullptr;
  std::thread([&]() { p = FramePool::Allocate(300); }).join();
  ASSERT_NE(p, nullptr);
  FramePool::Free(p, 300);
  EXPECT_EQ(FramePool::Allocate(300), p);
  FramePool::Free(p, 300);
}

}  // namespace
}  // namespace lavik
