// Master: waiting for the replicas' acknowledgements — WAIT's waiters (AddWaiter,
// CheckWaiters) and SHUTDOWN's wait for lagging replicas (ReplicasInSync, StartShutdownWait;
// doc/replication.md, "SHUTDOWN and lagging replicas"). master.cc has the stream and the
// replicas' I/O.
#include <algorithm>
#include <string>
#include <utility>

#include "base/clock.h"
#include "base/log.h"
#include "replication/master.h"
#include "runtime/worker.h"

namespace lavik {

bool Master::AddWaiter(Waiter* w, bool may_block) {
  std::lock_guard<std::mutex> lock(mu_);
  w->seq = repl::LastSeq();
  w->offset = -1;
  // Every write made so far is in the backlog once the merge has passed it.
  const int64_t target = (backlog_ && next_seq_ > w->seq) ? merged_end_ : -1;
  int64_t count = 0;
  for (auto& s : slaves_) {
    if (s->state == Slave::State::kOnline && target >= 0 && s->ack >= target) ++count;
  }
  if (target >= 0 && w->seq == 0) {
    // No write since the start: every online replica counts (Redis compares with offset 0).
    count = 0;
    for (auto& s : slaves_) count += s->state == Slave::State::kOnline ? 1 : 0;
  }
  if (count >= w->need || !may_block || stop_) {
    w->count = count;
    return true;
  }
  if (!backlog_ && w->seq == 0) {
    w->count = 0;  // no replica ever: nothing can acknowledge; the timeout answers
  }
  waiters_.push_back(w);
  want_ack_ = true;
  EnsureThread();
  Wake();
  return false;
}

bool Master::InSyncLocked() const {
  const bool any = std::any_of(slaves_.begin(), slaves_.end(),
                               [](const auto& s) { return s->state != Slave::State::kDead; });
  if (!any) return true;
  if (repl::On() && next_seq_ <= repl::LastSeq()) return false;  // a write not merged yet
  return std::all_of(slaves_.begin(), slaves_.end(), [this](const auto& s) {
    return s->state == Slave::State::kDead || s->ack == end_;
  });
}

bool Master::ReplicasInSync() {
  Wake();  // merge now what the workers logged
  std::lock_guard<std::mutex> lock(mu_);
  return InSyncLocked();
}

bool Master::StartShutdownWait(int64_t deadline_ms, std::function<void(int)> done) {
  std::lock_guard<std::mutex> lock(mu_);
  if (sd_done_) return false;
  sd_done_ = std::move(done);
  sd_deadline_ms_ = deadline_ms;
  want_ack_ = true;
  EnsureThread();
  Wake();
  return true;
}

bool Master::AbortShutdownWait() {
  std::function<void(int)> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!sd_done_) return false;
    done = std::move(sd_done_);
    sd_done_ = nullptr;
  }
  done(kAborted);
  return true;
}

void Master::CheckShutdownWait(int64_t now_ms) {
  if (!sd_done_) return;
  const bool in_sync = InSyncLocked();
  if (!in_sync && now_ms < sd_deadline_ms_ && !stop_) return;
  std::function<void(int)> done = std::move(sd_done_);
  sd_done_ = nullptr;
  done(in_sync ? kInSync : kTimedOut);  // it posts to a worker or sets a promise: never locks mu_
}

void Master::LogShutdownSync() {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now_s = NowMs() / 1000;
  int replicas = 0, lagging = 0;
  for (auto& s : slaves_) {
    if (s->state == Slave::State::kDead) continue;
    ++replicas;
    if (s->ack == end_) continue;
    ++lagging;
    const int64_t lag = s->state == Slave::State::kOnline ? now_s - s->ack_ms / 1000 : 0;
    LogWarning("Lagging replica " + s->Name() + " reported offset " +
               std::to_string(end_ - s->ack) + " behind master, lag=" + std::to_string(lag) +
               ", state=" + std::string(s->StateName()) + ".");
  }
  if (replicas > 0) {
    LogNotice(std::to_string(replicas - lagging) + " of " + std::to_string(replicas) +
              " replicas are in sync when shutting down.");
  }
}

void Master::CheckWaiters(int64_t now_ms) {
  for (size_t i = 0; i < waiters_.size();) {
    Waiter* w = waiters_[i];
    if (w->offset < 0 && next_seq_ > w->seq) w->offset = w->seq == 0 ? 0 : merged_end_;
    int64_t count = 0;
    if (w->offset >= 0) {
      for (auto& s : slaves_) {
        if (s->state == Slave::State::kOnline && s->ack >= w->offset) ++count;
      }
    }
    w->count = count;
    if (count >= w->need || (w->deadline_ms != 0 && now_ms >= w->deadline_ms)) {
      waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(i));
      w->home->Post(w);
      continue;
    }
    ++i;
  }
}

}  // namespace lavik
