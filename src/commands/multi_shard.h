// Tools for handlers whose keys may live on several shards (MGET, MSET, DEL k1 k2, RENAME...).
//
//   KeyPlan plan(ctx, keys);            // which shard each key is on
//   co_await plan.Lock();               // atomic section across those shards (no-op for one)
//   co_await plan.On(s, [&](Store& st) { ... });   // runs on shard s's worker
//   co_await plan.Unlock();
//
// When every key is on the worker the handler runs on (always true with --threads 1, and the
// dispatcher routes single-shard commands to their shard), all of this runs inline: no hop.
#pragma once

#include <coroutine>
#include <span>
#include <string_view>
#include <vector>

#include "commands/command.h"
#include "commands/shards.h"
#include "runtime/shard_hop.h"

namespace lavik {

// Takes one shard's lock for `owner`, waiting behind earlier holders and queued commands.
class ShardLockAwaiter : private MailboxItem {
 public:
  ShardLockAwaiter(Shard* shard, const void* owner) : shard_(shard), owner_(owner) {}
  bool await_ready() {
    home_ = Worker::Current();
    if (shard_->worker == home_ && !shard_->locked()) {
      shard_->lock_owner = owner_;
      return true;
    }
    return false;
  }
  void await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    run = &TryTake;
    shard_->worker->Post(this);
  }
  void await_resume() {}

 private:
  static void TryTake(MailboxItem* item) {
    auto* self = static_cast<ShardLockAwaiter*>(item);
    if (self->shard_->locked()) {
      self->shard_->waiting.push_back(self);
      return;
    }
    self->shard_->lock_owner = self->owner_;
    self->run = &Resume;
    self->home_->Post(self);
  }
  static void Resume(MailboxItem* item) { static_cast<ShardLockAwaiter*>(item)->handle_.resume(); }

  Shard* shard_;
  const void* owner_;
  Worker* home_ = nullptr;
  std::coroutine_handle<> handle_;
};

class KeyPlan {
 public:
  // Keys are views that must outlive the plan (they are the command's arguments).
  KeyPlan(Context& ctx, std::span<const std::string_view> keys);
  KeyPlan(Context& ctx, std::vector<std::string_view> keys);

  const std::vector<int>& shards() const { return shard_ids_; }  // ascending, unique
  int shard_of(size_t key_index) const { return key_shard_[key_index]; }
  const std::vector<std::string_view>& keys() const { return keys_; }
  bool single_shard() const { return shard_ids_.size() <= 1; }

  // Widens the plan to every shard, for a command that learns the names of some keys only
  // while it runs (SORT's BY/GET patterns): locking them all keeps it atomic. Call before Lock.
  void CoverAllShards();

  Task Lock();
  Task Unlock();

  // fn(Store&) runs on the shard's worker and must not suspend.
  template <typename Fn>
  auto On(int shard_id, Fn fn) {
    Shard* s = &ctx_.shards->at(shard_id);
    return ShardHop(s->worker, [s, fn = std::move(fn)]() mutable { fn(s->store); });
  }
  // fn(Store&) returns a Task (it may read the device); it runs on the shard's worker.
  template <typename Fn>
  auto Run(int shard_id, Fn fn) {
    Shard* s = &ctx_.shards->at(shard_id);
    return ShardCall(s->worker, [s, fn = std::move(fn)]() mutable { return fn(s->store); });
  }

 private:
  void Build();

  Context& ctx_;
  std::vector<std::string_view> keys_;
  std::vector<int> key_shard_;
  std::vector<int> shard_ids_;
  bool locked_ = false;
};

}  // namespace lavik
