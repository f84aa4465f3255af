#include "commands/multi_shard.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/test_worker.h"
#include "storage/test_data_file.h"

namespace lavik {
namespace {

using test_worker::FnItem;
using test_worker::WaitFor;

// The first key named prefix<i> that lives on `shard`.
std::string KeyOnShard(const ShardSet& shards, int shard, const std::string& prefix) {
  for (int i = 0;; ++i) {
    std::string key = prefix + std::to_string(i);
    if (shards.ShardOf(key) == shard) return key;
  }
}

// Two started workers, each owning one shard.
class KeyPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      workers_.push_back(std::make_unique<Worker>(i, -1));
      raw_.push_back(workers_.back().get());
    }
    shards_ = std::make_unique<ShardSet>(raw_, file_.MakeStores(2));
    for (auto& w : workers_) {
      w->Start([](std::string*) { return true; }, []() { return true; });
      std::string error;
      ASSERT_TRUE(w->WaitStarted(&error)) << error;
    }
  }
  void TearDown() override {
    for (auto& w : workers_) w->RequestStop();
    for (auto& w : workers_) w->Join();
  }

  TestDataFile file_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> raw_;
  std::unique_ptr<ShardSet> shards_;
};

struct Shared {
  ShardSet* shards = nullptr;
  std::string k0;  // on shard 0
  std::string k1;  // on shard 1
  std::atomic<int> finished{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> holders{0};  // commands inside their locked section
  // One counter per shard, touched only on that shard's worker (inside On() hops); the test keeps
  // them here rather than in the Store so it checks the lock, not the storage API.
  int64_t counter[2] = {0, 0};
};

void CountFinished(void* arg) { static_cast<Shared*>(arg)->finished.fetch_add(1); }

// Increments a counter on each shard with a read and a write hop per shard: without the locks,
// two such commands interleave and lose updates.
Task Transfer(Shared* s) {
  Context ctx;
  ctx.shards = s->shards;
  std::vector<std::string_view> keys = {s->k0, s->k1};
  KeyPlan plan(ctx, keys);
  co_await plan.Lock();
  if (s->holders.fetch_add(1) != 0) s->overlaps.fetch_add(1);
  int64_t a = 0;
  int64_t b = 0;
  const int s0 = plan.shard_of(0);
  const int s1 = plan.shard_of(1);
  co_await plan.On(s0, [&](Store&) { a = s->counter[s0]; });
  co_await plan.On(s1, [&](Store&) { b = s->counter[s1]; });
  co_await plan.On(s0, [&](Store&) { s->counter[s0] = a + 1; });
  co_await plan.On(s1, [&](Store&) { s->counter[s1] = b + 1; });
  s->holders.fetch_sub(1);
  co_await plan.Unlock();
}

void StartTransfers(Worker& home, Shared* s, int n) {
  home.Post(new FnItem([s, n]() {
    for (int i = 0; i < n; ++i) {
      if (Transfer(s).Start(&CountFinished, s)) CountFinished(s);
    }
  }));
}

TEST_F(KeyPlanTest, PlanGroupsKeysByShard) {
  Context ctx;
  ctx.shards = shards_.get();
  const std::string a = KeyOnShard(*shards_, 0, "a");
  const std::string b = KeyOnShard(*shards_, 1, "b");
  const std::string c = KeyOnShard(*shards_, 0, "c");
  std::vector<std::string_view> keys = {b, a, c, b};
  KeyPlan plan(ctx, keys);
  EXPECT_EQ(plan.shards(), (std::vector<int>{0, 1}));
  EXPECT_FALSE(plan.single_shard());
  EXPECT_EQ(plan.shard_of(0), 1);
  EXPECT_EQ(plan.shard_of(1), 0);
  EXPECT_EQ(plan.shard_of(2), 0);
  EXPECT_EQ(plan.shard_of(3), 1);
  EXPECT_EQ(plan.keys().size(), 4u);

  std::vector<std::string_view> tagged = {"{t}x", "{t}y", "z{t}"};
  KeyPlan one(ctx, tagged);
  EXPECT_TRUE(one.single_shard());
  EXPECT_EQ(one.shards().size(), 1u);
}

TEST_F(KeyPlanTest, CoverAllShardsWidensThePlan) {
  Context ctx;
  ctx.shards = shards_.get();
  const std::string a = KeyOnShard(*shards_, 1, "a");
  std::vector<std::string_view> keys = {a};
  KeyPlan plan(ctx, keys);
  EXPECT_TRUE(plan.single_shard());
  plan.CoverAllShards();
  EXPECT_EQ(plan.shards(), (std::vector<int>{0, 1}));
  EXPECT_FALSE(plan.single_shard());
  EXPECT_EQ(plan.shard_of(0), 1);  // the keys keep their shards
}

TEST_F(KeyPlanTest, LocksMakeCrossShardSectionsAtomic) {
  Shared s;
  s.shards = shards_.get();
  s.k0 = KeyOnShard(*shards_, 0, "k");
  s.k1 = KeyOnShard(*shards_, 1, "k");
  constexpr int kPerWorker = 300;
  // Commands from both workers at once, so each worker's own shard is contended too.
  StartTransfers(*workers_[0], &s, kPerWorker);
  StartTransfers(*workers_[1], &s, kPerWorker);
  ASSERT_TRUE(WaitFor([&]() { return s.finished.load() == 2 * kPerWorker; }));
  EXPECT_EQ(s.overlaps.load(), 0);

  // Read the results on the owning workers.
  std::atomic<int64_t> v0{-1};
  std::atomic<int64_t> v1{-1};
  std::atomic<int> unlocked{0};
  for (int i = 0; i < 2; ++i) {
    Shard* shard = &shards_->at(i);
    std::atomic<int64_t>* out = i == 0 ? &v0 : &v1;
    const int64_t* counter = &s.counter[i];
    workers_[i]->Post(new FnItem([shard, counter, out, &unlocked]() {
      if (!shard->locked() && shard->waiting.empty()) unlocked.fetch_add(1);
      out->store(*counter);  // last: the test waits for it
    }));
  }
  ASSERT_TRUE(WaitFor([&]() { return v0.load() >= 0 && v1.load() >= 0; }));
  EXPECT_EQ(v0.load(), 2 * kPerWorker);
  EXPECT_EQ(v1.load(), 2 * kPerWorker);
  EXPECT_EQ(unlocked.load(), 2);
}

}  // namespace
}  // namespace lavik
