#include "commands/multi_shard.h"

#include <algorithm>

#include "commands/propagate.h"

namespace lavik {

KeyPlan::KeyPlan(Context& ctx, std::span<const std::string_view> keys)
    : ctx_(ctx), keys_(keys.begin(), keys.end()) {
  Build();
}

KeyPlan::KeyPlan(Context& ctx, std::vector<std::string_view> keys)
    : ctx_(ctx), keys_(std::move(keys)) {
  Build();
}

void KeyPlan::Build() {
  key_shard_.reserve(keys_.size());
  for (std::string_view k : keys_) key_shard_.push_back(ctx_.shards->ShardOf(k));
  shard_ids_ = key_shard_;
  std::sort(shard_ids_.begin(), shard_ids_.end());
  shard_ids_.erase(std::unique(shard_ids_.begin(), shard_ids_.end()), shard_ids_.end());
}

void KeyPlan::CoverAllShards() {
  shard_ids_.resize(ctx_.shards->size());
  for (int s = 0; s < ctx_.shards->size(); ++s) shard_ids_[s] = s;
}

Task KeyPlan::Lock() {
  // Even one shard is locked: a step may wait for the device, and no other command may touch
  // these keys meanwhile. (Taking an unlocked local shard's lock is a field write.)
  if (ctx_.in_exec) co_return;  // EXEC holds these shards' locks already
  for (int id : shard_ids_) co_await ShardLockAwaiter(&ctx_.shards->at(id), this);
  locked_ = true;
}

Task KeyPlan::Unlock() {
  if (!locked_) co_return;
  locked_ = false;
  repl::TakeSeqBeforeUnlock(ctx_);  // the stream's order is the keys' (commands/propagate.h)
  for (int id : shard_ids_) {
    Shard* s = &ctx_.shards->at(id);
    co_await ShardHop(s->worker, [s]() { s->Unlock(); });
  }
}

}  // namespace lavik
