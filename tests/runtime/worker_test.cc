#include "runtime/worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/shard_hop.h"
#include "runtime/task.h"
#include "runtime/test_worker.h"

namespace lavik {
namespace {

using std::chrono::milliseconds;

using test_worker::FnItem;
using test_worker::WaitFor;

void PostFn(Worker& w, std::function<void()> fn) { w.Post(new FnItem(std::move(fn))); }

bool Started(std::string*) { return true; }
bool StopNow() { return true; }

// Two started workers, stopped and joined at the end of the test.
class WorkerTest : public ::testing::Test {
 protected:
  void StartAll() {
    for (auto& w : workers_) {
      w->Start(&Started, &StopNow);
      std::string error;
      ASSERT_TRUE(w->WaitStarted(&error)) << error;
    }
  }
  // Stops and joins both workers. A test whose timers or turn hooks capture its locals calls
  // this before returning: those keep running until the worker stops, and would otherwise
  // write into a stack frame that is gone (TearDown's own, as it happens).
  void StopAll() {
    for (auto& w : workers_) w->RequestStop();
    for (auto& w : workers_) w->Join();
  }
  void TearDown() override { StopAll(); }
  Worker& w(int i) { return *workers_[i]; }

  std::vector<std::unique_ptr<Worker>> workers_ = [] {
    std::vector<std::unique_ptr<Worker>> v;
    v.push_back(std::make_unique<Worker>(0, -1));
    v.push_back(std::make_unique<Worker>(1, -1));
    return v;
  }();
};

TEST_F(WorkerTest, CurrentIsNullOnNonWorkerThread) {
  EXPECT_EQ(Worker::Current(), nullptr);
  EXPECT_EQ(w(0).id(), 0);
  EXPECT_EQ(w(1).id(), 1);
}

TEST_F(WorkerTest, PostRunsOnTheWorkerThread) {
  StartAll();
  std::atomic<int> ran_on[2] = {-1, -1};
  std::thread::id thread_of[2];
  for (int i = 0; i < 2; ++i) {
    PostFn(w(i), [&, i]() {
      thread_of[i] = std::this_thread::get_id();
      ran_on[i].store(Worker::Current()->id(), std::memory_order_release);
    });
  }
  ASSERT_TRUE(WaitFor([&]() { return ran_on[0].load() >= 0 && ran_on[1].load() >= 0; }));
  EXPECT_EQ(ran_on[0].load(), 0);
  EXPECT_EQ(ran_on[1].load(), 1);
  EXPECT_NE(thread_of[0], std::this_thread::get_id());
  EXPECT_NE(thread_of[1], std::this_thread::get_id());
  EXPECT_NE(thread_of[0], thread_of[1]);
}

TEST_F(WorkerTest, PostBeforeStartRunsAfterStart) {
  std::atomic<bool> ran{false};
  PostFn(w(0), [&]() { ran.store(true); });
  StartAll();
  EXPECT_TRUE(WaitFor([&]() { return ran.load(); }));
}

TEST_F(WorkerTest, PostsFromOneProducerRunInOrder) {
  StartAll();
  constexpr int kItems = 10000;
  std::vector<int> order;  // touched only on worker 0
  std::atomic<bool> finished{false};
  for (int i = 0; i < kItems; ++i) PostFn(w(0), [&order, i]() { order.push_back(i); });
  PostFn(w(0), [&]() { finished.store(true, std::memory_order_release); });
  ASSERT_TRUE(WaitFor([&]() { return finished.load(std::memory_order_acquire); }));
  ASSERT_EQ(order.size(), static_cast<size_t>(kItems));
  for (int i = 0; i < kItems; ++i) ASSERT_EQ(order[i], i);
  EXPECT_GE(w(0).mailbox_items(), static_cast<uint64_t>(kItems + 1));
}

TEST_F(WorkerTest, TimersFire) {
  std::atomic<int> before_start{0};
  std::atomic<int> from_thread{0};
  std::atomic<int> thread_ok{0};
  w(0).AddTimer(1000, [&]() {
    if (Worker::Current() == &w(0)) thread_ok.fetch_add(1);
    before_start.fetch_add(1);
  });
  StartAll();
  // Timers may also be added on the worker's own thread.
  PostFn(w(1), [&]() { w(1).AddTimer(2000, [&]() { from_thread.fetch_add(1); }); });
  EXPECT_TRUE(WaitFor([&]() { return before_start.load() >= 5 && from_thread.load() >= 3; }));
  StopAll();
  EXPECT_EQ(thread_ok.load(), before_start.load());
}

TEST_F(WorkerTest, TurnHooksRun) {
  std::atomic<int> hooks{0};
  w(0).AddTurnHook([&]() { hooks.fetch_add(1); });
  StartAll();
  PostFn(w(0), []() {});
  EXPECT_TRUE(WaitFor([&]() { return hooks.load() >= 1; }));
  StopAll();
}

TEST_F(WorkerTest, WakeWithinEndsAWaitThatNothingElseWouldEnd) {
  // No timers and no traffic: without WakeWithin the first turn's wait would last forever.
  std::atomic<int> turns{0};
  w(0).AddTurnHook([&]() {
    if (turns.fetch_add(1) < 3) w(0).WakeWithin(1000);
  });
  StartAll();
  EXPECT_TRUE(WaitFor([&]() { return turns.load() >= 4; }));
  // Asked three times: after the fourth turn the worker sleeps until something happens.
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(turns.load(), 4);
  StopAll();
}

TEST_F(WorkerTest, PostQuietRunsAtTheNextWakeUpAndNotBefore) {
  StartAll();
  // Let worker 0 run out of work and wait (no timers, no traffic).
  std::atomic<bool> idle{false};
  PostFn(w(0), [&]() { idle.store(true); });
  ASSERT_TRUE(WaitFor([&]() { return idle.load(); }));
  std::this_thread::sleep_for(milliseconds(200));

  std::atomic<int> ran{0};
  w(0).PostQuiet(new FnItem([&]() { ran.fetch_add(1); }));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(ran.load(), 0);  // nothing woke the worker
  w(0).WakeIfSleeping();
  EXPECT_TRUE(WaitFor([&]() { return ran.load() == 1; }));

  // A later Post wakes it; the quiet item queued before it runs first.
  std::this_thread::sleep_for(milliseconds(50));
  std::vector<int> order;  // touched only on worker 0
  std::atomic<bool> finished{false};
  w(0).PostQuiet(new FnItem([&]() { order.push_back(1); }));
  PostFn(w(0), [&]() {
    order.push_back(2);
    finished.store(true, std::memory_order_release);
  });
  ASSERT_TRUE(WaitFor([&]() { return finished.load(std::memory_order_acquire); }));
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

// Items whose prefetch hook logs "p<i>" and whose run logs "r<i>"; the flush logs "f". Only the
// worker's thread writes the log once started.
struct LoggedItem : MailboxItem {
  LoggedItem(std::vector<std::string>* log, int i) : log(log), i(i) {
    prefetch = [](MailboxItem* self) {
      auto* item = static_cast<LoggedItem*>(self);
      item->log->push_back("p" + std::to_string(item->i));
    };
    run = [](MailboxItem* self) {
      auto* item = static_cast<LoggedItem*>(self);
      item->log->push_back("r" + std::to_string(item->i));
      delete item;
    };
  }
  std::vector<std::string>* log;
  int i;
};

TEST_F(WorkerTest, MailboxBatchPrefetchesThenRunsInPushOrder) {
  std::vector<std::string> log;
  std::atomic<int> done{0};
  w(0).SetPrefetchFlush(
      [](void* arg) {
        auto* l = static_cast<std::vector<std::string>*>(arg);
        l->push_back("f");
      },
      &log);
  for (int i = 0; i < 3; ++i) w(0).Post(new LoggedItem(&log, i));
  // An item without a prefetch hook runs in its place, and adds nothing to the flush.
  PostFn(w(0), [&]() { log.push_back("plain"); });
  PostFn(w(0), [&]() { done.store(1); });
  StartAll();
  ASSERT_TRUE(WaitFor([&]() { return done.load() == 1; }));
  StopAll();
  EXPECT_EQ(log, (std::vector<std::string>{"p0", "p1", "p2", "f", "r0", "r1", "r2", "plain"}));
}

// State of a hopping coroutine; written only by the coroutine and the hop bodies, which the
// mailbox hand-offs order, and read by the test after `finished`.
struct HopState {
  Worker* home = nullptr;
  Worker* target = nullptr;
  int hops = 0;
  int ran_on_target = 0;
  int resumed_at_home = 0;
  int started_at_home = 0;
  std::atomic<bool> finished{false};
};

Task HopLoop(HopState* s) {
  if (Worker::Current() == s->home) ++s->started_at_home;
  for (int i = 0; i < s->hops; ++i) {
    co_await ShardHop(s->target, [s]() {
      if (Worker::Current() == s->target) ++s->ran_on_target;
    });
    if (Worker::Current() == s->home) ++s->resumed_at_home;
  }
}

void MarkFinished(void* arg) {
  static_cast<HopState*>(arg)->finished.store(true, std::memory_order_release);
}

// Starts HopLoop on s->home, as the dispatcher starts a handler.
void StartHopLoop(HopState* s) {
  PostFn(*s->home, [s]() {
    if (HopLoop(s).Start(&MarkFinished, s)) MarkFinished(s);
  });
}

TEST_F(WorkerTest, ShardHopRunsOnTargetAndResumesAtHome) {
  StartAll();
  HopState s;
  s.home = &w(0);
  s.target = &w(1);
  s.hops = 1;
  StartHopLoop(&s);
  ASSERT_TRUE(WaitFor([&]() { return s.finished.load(std::memory_order_acquire); }));
  EXPECT_EQ(s.started_at_home, 1);
  EXPECT_EQ(s.ran_on_target, 1);
  EXPECT_EQ(s.resumed_at_home, 1);
}

TEST_F(WorkerTest, ShardHopToOwnWorkerRunsInline) {
  StartAll();
  HopState s;
  s.home = &w(0);
  s.target = &w(0);
  s.hops = 100;
  const uint64_t items_before = w(0).mailbox_items();
  StartHopLoop(&s);
  ASSERT_TRUE(WaitFor([&]() { return s.finished.load(std::memory_order_acquire); }));
  EXPECT_EQ(s.ran_on_target, 100);
  EXPECT_EQ(s.resumed_at_home, 100);
  // Only the item that started the loop went through the mailbox: no hop was posted.
  EXPECT_EQ(w(0).mailbox_items() - items_before, 1u);
}

// ShardCall of a handler that finished without a coroutine (an empty Task), on the caller's own
// worker (inline) and on another: the caller resumes at home either way.
struct CallState {
  Worker* home = nullptr;
  Worker* target = nullptr;
  int handler_runs = 0;
  int resumed_at_home = 0;
  std::atomic<bool> finished{false};
};

Task NoFrameHandler(CallState* s) {
  if (Worker::Current() == s->target) ++s->handler_runs;
  return Task();
}

Task CallTwice(CallState* s) {
  co_await ShardCall(s->target, [s]() { return NoFrameHandler(s); });
  if (Worker::Current() == s->home) ++s->resumed_at_home;
  co_await ShardCall(s->target, [s]() { return NoFrameHandler(s); });
  if (Worker::Current() == s->home) ++s->resumed_at_home;
}

void MarkCallFinished(void* arg) {
  static_cast<CallState*>(arg)->finished.store(true, std::memory_order_release);
}

TEST_F(WorkerTest, ShardCallOfAnEmptyTaskResumesAtHome) {
  StartAll();
  for (int target : {0, 1}) {
    CallState s;
    s.home = &w(0);
    s.target = &w(target);
    PostFn(*s.home, [&s]() {
      if (CallTwice(&s).Start(&MarkCallFinished, &s)) MarkCallFinished(&s);
    });
    ASSERT_TRUE(WaitFor([&]() { return s.finished.load(std::memory_order_acquire); }));
    EXPECT_EQ(s.handler_runs, 2) << target;
    EXPECT_EQ(s.resumed_at_home, 2) << target;
  }
}

TEST_F(WorkerTest, TenThousandHopRoundTrips) {
  StartAll();
  HopState s;
  s.home = &w(0);
  s.target = &w(1);
  s.hops = 10000;
  StartHopLoop(&s);
  ASSERT_TRUE(
      WaitFor([&]() { return s.finished.load(std::memory_order_acquire); }, milliseconds(20000)));
  EXPECT_EQ(s.started_at_home, 1);
  EXPECT_EQ(s.ran_on_target, 10000);
  EXPECT_EQ(s.resumed_at_home, 10000);
}

TEST_F(WorkerTest, HopsInBothDirectionsAtOnce) {
  StartAll();
  HopState a;
  a.home = &w(0);
  a.target = &w(1);
  a.hops = 3000;
  HopState b;
  b.home = &w(1);
  b.target = &w(0);
  b.hops = 3000;
  StartHopLoop(&a);
  StartHopLoop(&b);
  ASSERT_TRUE(
      WaitFor([&]() { return a.finished.load() && b.finished.load(); }, milliseconds(20000)));
  EXPECT_EQ(a.ran_on_target, 3000);
  EXPECT_EQ(a.resumed_at_home, 3000);
  EXPECT_EQ(b.ran_on_target, 3000);
  EXPECT_EQ(b.resumed_at_home, 3000);
}

TEST(WorkerStopTest, RequestStopAndJoinTerminate) {
  Worker worker(0, -1);
  worker.Start(&Started, &StopNow);
  std::string error;
  ASSERT_TRUE(worker.WaitStarted(&error)) << error;
  EXPECT_FALSE(worker.stop_requested());
  worker.RequestStop();
  EXPECT_TRUE(worker.stop_requested());
  worker.Join();  // would hang if the sleeping loop missed the wake-up
}

TEST(WorkerStopTest, LoopRunsUntilDoneSaysYes) {
  // `done` is polled after a stop request; the loop keeps draining its mailbox meanwhile.
  Worker worker(0, -1);
  std::atomic<int> done_calls{0};
  std::atomic<bool> drained{false};
  worker.Start(&Started, [&]() { return done_calls.fetch_add(1) >= 3 && drained.load(); });
  std::string error;
  ASSERT_TRUE(worker.WaitStarted(&error)) << error;
  worker.RequestStop();
  ASSERT_TRUE(WaitFor([&]() { return done_calls.load() >= 2; }));
  worker.Post(new FnItem([&]() { drained.store(true); }));
  worker.Join();
  EXPECT_TRUE(drained.load());
  EXPECT_GE(done_calls.load(), 4);
}

TEST(WorkerStopTest, StoppingLoopPollsDoneInsteadOfSpinning) {
  // While `done` says "not yet" (the server draining its clients, up to seconds), the loop is
  // meant to re-check it at least every 10 ms, sleeping in between ("poll at least every 10 ms",
  // worker.cc). A loop that never sleeps calls `done` hundreds of thousands of times here.
  Worker worker(0, -1);
  std::atomic<int> done_calls{0};
  std::atomic<bool> may_stop{false};
  worker.Start(&Started, [&]() {
    done_calls.fetch_add(1);
    return may_stop.load();
  });
  std::string error;
  ASSERT_TRUE(worker.WaitStarted(&error)) << error;
  worker.RequestStop();
  std::this_thread::sleep_for(milliseconds(100));
  const int calls = done_calls.load();
  may_stop.store(true);
  worker.Join();
  // ~10 checks in 100 ms; allow plenty of slack for early wake-ups.
  EXPECT_LT(calls, 200) << "the stopping worker busy-loops instead of polling";
}

TEST(WorkerStopTest, FailedInitIsReported) {
  Worker worker(3, -1);
  worker.Start(
      [](std::string* error) {
        *error = "no shard for you";
        return false;
      },
      &StopNow);
  std::string error;
  EXPECT_FALSE(worker.WaitStarted(&error));
  EXPECT_EQ(error, "no shard for you");
  worker.Join();
}

}  // namespace
}  // namespace lavik
