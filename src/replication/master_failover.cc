// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]: the Master's side of Redis 7.0's
// failoverCommand / updateFailoverStatus (doc/replication.md, "FAILOVER").
#include <algorithm>
#include <string>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/log.h"
#include "commands/propagate.h"
#include "replication/master.h"
#include "replication/replica.h"

namespace lavik {

Master::Slave* Master::FindSlave(const std::string& host, int port) {
  for (auto& s : slaves_) {
    if (s->state != Slave::State::kDead && EqualsNoCase(s->req.ip, host) && s->req.port == port)
      return s.get();
  }
  return nullptr;
}

std::string Master::StartFailover(const FailoverRequest& r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failover_.load() != kNoFailover) return "ERR FAILOVER already in progress.";
  if (deps_.replica->following()) return "ERR FAILOVER is not valid when server is a replica.";
  const bool any = std::any_of(slaves_.begin(), slaves_.end(),
                               [](const auto& s) { return s->state != Slave::State::kDead; });
  if (!any) return "ERR FAILOVER requires connected replicas.";
  if (r.force && (r.timeout_ms == 0 || r.host.empty())) {
    return "ERR FAILOVER with force option requires both a timeout and target HOST and IP.";
  }
  if (!r.host.empty()) {
    Slave* s = FindSlave(r.host, r.port);
    if (s == nullptr) return "ERR FAILOVER target HOST and PORT is not a replica.";
    if (s->state != Slave::State::kOnline) return "ERR FAILOVER target replica is not online.";
    LogNotice("FAILOVER requested to " + r.host + ":" + std::to_string(r.port) + ".");
  } else {
    LogNotice("FAILOVER requested to any replica.");
  }
  fo_host_ = r.host;
  fo_port_ = r.host.empty() ? 0 : r.port;
  fo_force_ = r.force;
  fo_end_ms_ = r.timeout_ms > 0 ? NowMs() + r.timeout_ms : 0;
  failover_ = kWaitingForSync;
  if (deps_.pause_writes) deps_.pause_writes(true);
  EnsureThread();
  Wake();
  return "";
}

std::string Master::AbortFailover() {
  std::lock_guard<std::mutex> lock(mu_);
  if (failover_.load() == kNoFailover) return "ERR No failover in progress.";
  EndFailover("Failover manually aborted");
  return "";
}

void Master::ClearFailover() {
  fo_host_.clear();
  fo_port_ = 0;
  fo_force_ = false;
  fo_end_ms_ = 0;
  failover_ = kNoFailover;
  if (deps_.pause_writes) deps_.pause_writes(false);
}

void Master::EndFailover(const std::string& why) {
  if (failover_.load() == kNoFailover) return;
  LogNotice(fo_host_.empty()
                ? "FAILOVER to any replica aborted: " + why
                : "FAILOVER to " + fo_host_ + ":" + std::to_string(fo_port_) + " aborted: " + why);
  // Already following the target: back to being a master (a new replid, as Redis's
  // replicationUnsetMaster; the old one stays continuable as replid2).
  if (failover_.load() == kFailoverInProgress) deps_.replica->Promote();
  ClearFailover();
}

void Master::FailoverPsyncDone(bool ok, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failover_.load() != kFailoverInProgress) return;
  if (ok) {
    LogNotice("FAILOVER to " + fo_host_ + ":" + std::to_string(fo_port_) + " completed.");
    ClearFailover();
  } else {
    EndFailover(why);
  }
}

void Master::UpdateFailover(int64_t now_ms) {
  if (failover_.load() != kWaitingForSync) return;
  auto fail_over = [this] {
    failover_ = kFailoverInProgress;
    // Our own history (replid, offset) is what the target continues: PSYNC <replid>
    // <offset+1> FAILOVER promotes it and it answers +CONTINUE.
    deps_.replica->Follow(fo_host_, fo_port_, true);
  };
  if (fo_end_ms_ != 0 && fo_end_ms_ <= now_ms) {
    if (fo_force_) {
      LogNotice("FAILOVER to " + fo_host_ + ":" + std::to_string(fo_port_) +
                " time out exceeded, failing over.");
      fail_over();
    } else {
      EndFailover("Replica never caught up before timeout");
    }
    return;
  }
  Slave* target = nullptr;
  if (!fo_host_.empty()) {
    target = FindSlave(fo_host_, fo_port_);
  } else {
    for (auto& s : slaves_) {
      if (s->state == Slave::State::kOnline && s->ack == end_) {
        target = s.get();
        fo_host_ = s->req.ip;
        fo_port_ = s->req.port;
        break;
      }
    }
  }
  // Every write numbered so far is in the stream (a write that finished on a worker but is not
  // yet merged would otherwise be lost), and the target acknowledged all of it.
  const bool merged = next_seq_ > repl::LastSeq();
  if (target != nullptr && target->state == Slave::State::kOnline && target->ack == end_ &&
      merged) {
    LogNotice("Failover target " + fo_host_ + ":" + std::to_string(fo_port_) +
              " is synced, failing over.");
    fail_over();
  }
}

}  // namespace lavik
