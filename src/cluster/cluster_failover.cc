// Cluster replicas and failover, Redis 7.0's rules (doc/cluster.md "Replicas and failover"):
// CLUSTER REPLICATE, a replica's role in gossip, the election a replica of a failed master runs
// (FAILOVER_AUTH_REQUEST / _ACK, votes by the slot-owning masters), the promotion, and the
// manual failover (CLUSTER FAILOVER [FORCE|TAKEOVER], MFSTART, the master's pause).
#include <algorithm>
#include <map>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "base/random.h"
#include "cluster/cluster.h"

namespace lavik {

using cluster::Message;
using cluster::Node;

namespace {

// A master reports its offset as final once its writes paused this long and the stream holds
// every write applied (Lavik's workers apply writes in parallel with the pause taking hold).
constexpr int64_t kMfSettleMs = 50;
constexpr int64_t kMigrationDelayMs = 5000;  // CLUSTER_SLAVE_MIGRATION_DELAY

}  // namespace

Node* Cluster::MyMaster() {
  if (!(myself_->flags & cluster::kSlave) || myself_->slaveof.empty()) return nullptr;
  return FindNode(myself_->slaveof);
}

uint64_t Cluster::MaxEpoch() const {
  uint64_t max = current_epoch_;
  for (auto& [name, n] : nodes_) max = std::max(max, n->config_epoch);
  return max;
}

void Cluster::RunDeferred() {
  std::lock_guard<std::mutex> run(deferred_mu_);
  std::vector<std::function<void()>> work;
  {
    std::lock_guard<std::mutex> lock(mu_);
    work.swap(deferred_);
  }
  for (auto& f : work) f();
}

void Cluster::SetMaster(Node* n) {
  if (myself_->flags & cluster::kMaster) {
    myself_->flags &= ~(cluster::kMaster | cluster::kMigrateTo);
    myself_->flags |= cluster::kSlave;
    for (int s = 0; s < kNumSlots; ++s) migrating_to_[s] = importing_from_[s] = nullptr;
  }
  SetSlaveOf(myself_, n->name);
  following_.clear();
  FollowMasterIfNeeded();
  ResetManualFailover();
  save_pending_ = true;
  UpdateState();
}

void Cluster::SetNodeAsMaster(Node* n) {
  if (n->flags & cluster::kMaster) return;
  if (!n->slaveof.empty() && n != myself_) n->flags |= cluster::kMigrateTo;
  n->flags &= ~cluster::kSlave;
  n->flags |= cluster::kMaster;
  n->slaveof.clear();
  save_pending_ = true;
  UpdateState();
}

void Cluster::FollowMasterIfNeeded() {
  Node* m = MyMaster();
  if (m == nullptr || m->ip.empty() || m->port == 0 || (m->flags & cluster::kNoAddr)) return;
  const std::string endpoint = Endpoint(*m);
  if (endpoint == following_) return;
  following_ = endpoint;
  LogNotice("Following the cluster master " + m->name + " at " + endpoint);
  if (opt_.follow) {
    Defer([f = opt_.follow, ip = m->ip, port = m->port] { f(ip, port); });
  }
}

std::string Cluster::Replicate(std::string_view name, size_t db_keys) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Node* n = FindNode(name);
    if (n == nullptr) return "ERR Unknown node " + std::string(name);
    if (n == myself_) return "ERR Can't replicate myself";
    if (n->flags & cluster::kSlave) return "ERR I can only replicate a master, not a replica.";
    if ((myself_->flags & cluster::kMaster) && (myself_->numslots != 0 || db_keys != 0)) {
      return "ERR To set a master the node must be empty and without assigned slots.";
    }
    SetMaster(n);
    SaveOrDie();
    Wake();
  }
  RunDeferred();
  return "";
}

int Cluster::ReplicaRank() {
  Node* master = MyMaster();
  if (master == nullptr) return 0;
  const int64_t mine = int64_t(MyReplOffset());
  int rank = 0;
  for (auto& [name, n] : nodes_) {
    if (n.get() == myself_ || n->slaveof != master->name || !(n->flags & cluster::kSlave)) {
      continue;
    }
    if (n->flags & cluster::kNoFailover) continue;
    if (int64_t(n->repl_offset) > mine) ++rank;
  }
  return rank;
}

void Cluster::BroadcastPong(bool local_replicas_only) {
  const int64_t now = NowMs();
  Node* master = MyMaster();
  for (auto& [name, n] : nodes_) {
    if (n->link == nullptr || n->link->connecting || n.get() == myself_ ||
        (n->flags & cluster::kHandshake)) {
      continue;
    }
    if (local_replicas_only) {
      const bool local =
          (n->flags & cluster::kSlave) && master != nullptr && n->slaveof == master->name;
      if (!local) continue;
    }
    SendPing(n->link, cluster::kPong, now);
  }
}

void Cluster::RequestFailoverAuth() {
  Message m;
  Header(cluster::kAuthRequest, &m);
  if (mf_end_ != 0) m.mflags0 |= cluster::kFlagForceAck;
  Broadcast(m);
}

void Cluster::HandleReplicaFailover(int64_t now) {
  handle_failover_ = false;
  Node* master = MyMaster();
  const bool manual = mf_end_ != 0 && mf_can_start_;
  const int64_t timeout = NodeTimeout();
  const int64_t auth_timeout = std::max<int64_t>(timeout * 2, 2000);
  const int64_t auth_retry = auth_timeout * 2;
  const int64_t auth_age = now - failover_auth_time_;
  if (master == nullptr || (!(master->flags & cluster::kFailFlag) && !manual) ||
      (opt_.replica_no_failover && !manual) || master->numslots == 0) {
    return;
  }
  int64_t data_age = opt_.repl_data_age_ms ? opt_.repl_data_age_ms() : 0;
  if (data_age > timeout) data_age -= timeout;
  if (opt_.replica_validity_factor != 0 &&
      data_age > int64_t(opt_.repl_ping_period_s) * 1000 + timeout * opt_.replica_validity_factor &&
      !manual) {
    return;  // our data is too old to be a candidate
  }
  if (auth_age > auth_retry) {
    failover_auth_time_ = now + 500 + int64_t(RandomBelow(500));
    failover_auth_count_ = 0;
    failover_auth_sent_ = false;
    failover_auth_rank_ = ReplicaRank();
    failover_auth_time_ += failover_auth_rank_ * 1000;
    if (mf_end_ != 0) {
      failover_auth_time_ = now;
      failover_auth_rank_ = 0;
      handle_failover_ = true;
    }
    LogNotice("Start of election delayed for " + std::to_string(failover_auth_time_ - now) +
              " milliseconds (rank #" + std::to_string(failover_auth_rank_) + ", offset " +
              std::to_string(MyReplOffset()) + ").");
    BroadcastPong(true);
    return;
  }
  if (!failover_auth_sent_ && mf_end_ == 0) {
    const int rank = ReplicaRank();
    if (rank > failover_auth_rank_) {
      failover_auth_time_ += int64_t(rank - failover_auth_rank_) * 1000;
      failover_auth_rank_ = rank;
    }
  }
  if (now < failover_auth_time_ || auth_age > auth_timeout) return;
  if (!failover_auth_sent_) {
    ++current_epoch_;
    failover_auth_epoch_ = current_epoch_;
    LogNotice("Starting a failover election for epoch " + std::to_string(current_epoch_) + ".");
    RequestFailoverAuth();
    failover_auth_sent_ = true;
    SaveOrDie();
    UpdateState();
    return;
  }
  if (failover_auth_count_ >= Quorum()) {
    LogNotice("Failover election won: I'm the new master.");
    if (myself_->config_epoch < failover_auth_epoch_) {
      myself_->config_epoch = failover_auth_epoch_;
      LogNotice("configEpoch set to " + std::to_string(myself_->config_epoch) +
                " after successful failover");
    }
    FailoverReplaceYourMaster();
  }
}

void Cluster::FailoverReplaceYourMaster() {
  Node* old = MyMaster();
  if (old == nullptr) return;
  SetNodeAsMaster(myself_);
  following_.clear();
  if (opt_.promote) Defer(opt_.promote);
  for (int s = 0; s < kNumSlots; ++s) {
    if (!cluster::TestSlot(old->slots, s)) continue;
    DelSlot(s);
    AddSlot(myself_, s);
  }
  UpdateState();
  SaveOrDie();
  BroadcastPong(false);
  ResetManualFailover();
}

void Cluster::SendFailoverAuthIfNeeded(Node* node, const Message& req, int64_t now) {
  if ((myself_->flags & cluster::kSlave) || myself_->numslots == 0) return;
  const std::string who = node->name + " (" + node->ip + ":" + std::to_string(node->port) + ")";
  if (req.current_epoch < current_epoch_) {
    LogNotice("Failover auth denied to " + who + ": reqEpoch (" +
              std::to_string(req.current_epoch) + ") < curEpoch(" + std::to_string(current_epoch_) +
              ")");
    return;
  }
  if (last_vote_epoch_ == current_epoch_) {
    LogNotice("Failover auth denied to " + who + ": already voted for epoch " +
              std::to_string(current_epoch_));
    return;
  }
  Node* master = (node->flags & cluster::kSlave) ? FindNode(node->slaveof) : nullptr;
  const bool force_ack = (req.mflags0 & cluster::kFlagForceAck) != 0;
  if ((node->flags & cluster::kMaster) || master == nullptr ||
      (!(master->flags & cluster::kFailFlag) && !force_ack)) {
    const char* why = (node->flags & cluster::kMaster) ? "it is a master node"
                      : master == nullptr              ? "I don't know its master"
                                                       : "its master is up";
    LogNotice("Failover auth denied to " + who + ": " + why);
    return;
  }
  if (now - master->voted_time < NodeTimeout() * 2) {
    LogNotice("Failover auth denied to " + who + ": can't vote about this master before " +
              std::to_string(NodeTimeout() * 2 - (now - master->voted_time)) + " milliseconds");
    return;
  }
  for (int s = 0; s < kNumSlots; ++s) {
    if (!cluster::TestSlot(req.slots, s)) continue;
    if (slots_[s] == nullptr || slots_[s]->config_epoch <= req.config_epoch) continue;
    LogNotice("Failover auth denied to " + who + ": slot " + std::to_string(s) + " epoch (" +
              std::to_string(slots_[s]->config_epoch) + ") > reqEpoch (" +
              std::to_string(req.config_epoch) + ")");
    return;
  }
  last_vote_epoch_ = current_epoch_;
  master->voted_time = now;
  SaveOrDie();
  if (node->link != nullptr) {
    Message ack;
    Header(cluster::kAuthAck, &ack);
    Send(node->link, ack);
  }
  LogNotice("Failover auth granted to " + who + " for epoch " + std::to_string(current_epoch_));
}

void Cluster::HandleReplicaMigration(int64_t now) {
  // Each master's working replicas (not FAIL), and its replicas by name. A master that has a
  // replica is one a replica may migrate to when it is left without (Redis sets MIGRATE_TO as
  // a replica is added; a replica that failed over has it from SetNodeAsMaster).
  std::map<const Node*, int> working;
  std::map<const Node*, std::vector<const Node*>> replicas;
  for (auto& [name, n] : nodes_) {
    if (!(n->flags & cluster::kSlave) || n->slaveof.empty()) continue;
    Node* m = FindNode(n->slaveof);
    if (m == nullptr || !(m->flags & cluster::kMaster)) continue;
    m->flags |= cluster::kMigrateTo;
    replicas[m].push_back(n.get());
    if (!(n->flags & cluster::kFailFlag)) ++working[m];
  }
  Node* mine = MyMaster();
  if (mine == nullptr) return;
  // clusterCron: orphaned masters (slots, no working replica, MIGRATE_TO), and the most
  // working replicas any working master has.
  int orphaned = 0, max_working = 0;
  for (auto& [name, n] : nodes_) {
    if (!(n->flags & cluster::kMaster) || (n->flags & cluster::kFailFlag)) continue;
    const int ok = working[n.get()];
    if (ok == 0 && n->numslots > 0 && (n->flags & cluster::kMigrateTo)) ++orphaned;
    max_working = std::max(max_working, ok);
  }
  if (orphaned == 0 || max_working < 2 || working[mine] != max_working ||
      !opt_.allow_replica_migration || state_ != 0) {
    return;
  }
  // clusterHandleSlaveMigration. My master has more than the barrier's working replicas
  // (neither FAIL nor PFAIL, myself included), so at least the barrier stay after I leave.
  int left = 0;
  for (const Node* r : replicas[mine]) {
    if (!(r->flags & (cluster::kFailFlag | cluster::kPfail))) ++left;
  }
  if (left <= opt_.migration_barrier) return;
  // The first orphaned master with slots is the target; the candidate is the replica with the
  // smallest name among the replicas of the masters with the most working replicas.
  Node* target = nullptr;
  const Node* candidate = myself_;
  for (auto& [name, n] : nodes_) {
    const int ok = (n->flags & cluster::kMaster) ? working[n.get()] : 0;
    const bool is_orphaned = (n->flags & cluster::kMaster) && !(n->flags & cluster::kFailFlag) &&
                             (n->flags & cluster::kMigrateTo) && ok == 0;
    if (is_orphaned) {
      if (target == nullptr && n->numslots > 0) target = n.get();
      if (n->orphaned_time == 0) n->orphaned_time = now;
    } else {
      n->orphaned_time = 0;
    }
    if ((n->flags & cluster::kMaster) && ok == max_working) {
      for (const Node* r : replicas[n.get()]) {
        if (r->name < candidate->name) candidate = r;
      }
    }
  }
  if (target != nullptr && candidate == myself_ &&
      now - target->orphaned_time > kMigrationDelayMs) {
    LogNotice("Migrating to orphaned master " + target->name);
    SetMaster(target);
  }
}

void Cluster::ResetManualFailover() {
  if (mf_replica_ != nullptr && opt_.unpause_writes) Defer(opt_.unpause_writes);
  mf_end_ = 0;
  mf_can_start_ = false;
  mf_replica_ = nullptr;
  mf_master_offset_ = -1;
  mf_paused_ms_ = 0;
}

void Cluster::ManualFailoverCheckTimeout(int64_t now) {
  if (mf_end_ != 0 && mf_end_ < now) {
    LogNotice("Manual failover timed out.");
    ResetManualFailover();
  }
}

void Cluster::HandleManualFailover() {
  if (mf_end_ == 0 || mf_can_start_ || mf_master_offset_ == -1) return;
  // As Redis: the offset the paused master reported, exactly (its replication PINGs and
  // GETACKs wait while it is paused, so nothing follows that offset in its stream).
  if (int64_t(MyReplOffset()) == mf_master_offset_) {
    mf_can_start_ = true;
    LogNotice("All master replication stream processed, manual failover can start.");
    handle_failover_ = true;
  }
}

bool Cluster::MasterPaused(int64_t now) {
  if (mf_end_ == 0 || !(myself_->flags & cluster::kMaster)) return false;
  if (now - mf_paused_ms_ < kMfSettleMs) return false;
  return !opt_.repl_settled || opt_.repl_settled();
}

std::string Cluster::Failover(bool force, bool takeover) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (myself_->flags & cluster::kMaster)
      return "ERR You should send CLUSTER FAILOVER to a replica";
    Node* master = MyMaster();
    if (master == nullptr) return "ERR I'm a replica but my master is unknown to me";
    if (!force && ((master->flags & cluster::kFailFlag) || master->link == nullptr)) {
      return "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE";
    }
    ResetManualFailover();
    const int64_t now = NowMs();
    mf_end_ = now + kMfTimeoutMs;
    if (takeover) {
      LogNotice("Taking over the master (user request).");
      const uint64_t max = MaxEpoch();
      if (myself_->config_epoch == 0 || myself_->config_epoch != max) {
        ++current_epoch_;
        myself_->config_epoch = current_epoch_;
      }
      FailoverReplaceYourMaster();
    } else if (force) {
      LogNotice("Forced failover user request accepted.");
      mf_can_start_ = true;
      handle_failover_ = true;
    } else {
      LogNotice("Manual failover user request accepted.");
      Message m;
      Header(cluster::kMfStart, &m);
      Send(master->link, m);
    }
    Wake();
  }
  RunDeferred();
  return "";
}

}  // namespace lavik
