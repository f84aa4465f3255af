#include "scripting/script_locks.h"

#include <coroutine>

#include "commands/propagate.h"
#include "commands/shards.h"
#include "scripting/scripting.h"

namespace lavik {

namespace {

// ShardLockAwaiter (commands/multi_shard.h) that gives up while another script is busy.
class ScriptLockAwaiter : private MailboxItem {
 public:
  ScriptLockAwaiter(Shard* shard, const void* owner) : shard_(shard), owner_(owner) {}
  bool await_ready() {
    home_ = Worker::Current();
    if (shard_->worker != home_) return false;
    if (!shard_->locked()) {
      shard_->lock_owner = owner_;
      return true;
    }
    busy_ = ScriptBusyError();
    return !busy_.empty();
  }
  void await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    run = &TryTake;
    shard_->worker->Post(this);
  }
  // The -BUSY text it gave up with, or "" if it holds the lock.
  std::string_view await_resume() const { return busy_; }

  static void TryTake(MailboxItem* item) {
    auto* self = static_cast<ScriptLockAwaiter*>(item);
    if (self->shard_->locked()) {
      self->busy_ = ScriptBusyError();
      if (self->busy_.empty()) {
        self->shard_->waiting.push_back(self);
        return;
      }
    } else {
      self->shard_->lock_owner = self->owner_;
    }
    self->run = &Resume;
    self->home_->Post(self);
  }

 private:
  static void Resume(MailboxItem* item) { static_cast<ScriptLockAwaiter*>(item)->handle_.resume(); }

  Shard* shard_;
  const void* owner_;
  Worker* home_ = nullptr;
  std::string_view busy_;
  std::coroutine_handle<> handle_;
};

struct UnlockMessage : MailboxItem {
  Shard* shard = nullptr;
  static void Run(MailboxItem* item) {
    auto* m = static_cast<UnlockMessage*>(item);
    m->shard->Unlock();
    delete m;
  }
};

// Releases shards [0, end).
void UnlockShards(Context& ctx, int end) {
  Worker* self = Worker::Current();
  for (int id = 0; id < end; ++id) {
    Shard* s = &ctx.shards->at(id);
    if (s->worker == self) {
      s->Unlock();
      continue;
    }
    auto* m = new UnlockMessage();
    m->shard = s;
    m->run = &UnlockMessage::Run;
    s->worker->Post(m);
  }
}

}  // namespace

TaskOf<std::string_view> LockAllShards(Context& ctx, const void* owner) {
  for (int id = 0; id < ctx.shards->size(); ++id) {
    const std::string_view busy = co_await ScriptLockAwaiter(&ctx.shards->at(id), owner);
    if (!busy.empty()) {
      UnlockShards(ctx, id);
      co_return busy;
    }
  }
  co_return std::string_view();
}

void UnlockAllShards(Context& ctx) {
  repl::TakeSeqBeforeUnlock(ctx);  // the script's writes take their stream position now
  UnlockShards(ctx, ctx.shards->size());
}

bool IsScriptLockWaiter(const MailboxItem* item) {
  return item->run == &ScriptLockAwaiter::TryTake;
}

}  // namespace lavik
