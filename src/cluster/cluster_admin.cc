// The Cluster's side of the CLUSTER subcommands: state edits under mu_, Redis 7.0's replies.
#include <arpa/inet.h>

#include <algorithm>

#include "base/clock.h"
#include "base/log.h"
#include "cluster/cluster.h"
#include "protocol/reply_writer.h"

namespace lavik {

using cluster::Link;
using cluster::Node;

namespace {

constexpr const char* kTypeNames[cluster::kMsgTypeCount] = {
    "ping",     "pong",   "meet",    "fail",   "publish",     "auth-req",
    "auth-ack", "update", "mfstart", "module", "publishshard"};

void Line(std::string* out, std::string_view name, uint64_t v) {
  out->append(name);
  out->push_back(':');
  out->append(std::to_string(v));
  out->append("\r\n");
}

}  // namespace

std::string Cluster::MyId() {
  std::lock_guard<std::mutex> lock(mu_);
  return myself_->name;
}

bool Cluster::IsMaster() {
  std::lock_guard<std::mutex> lock(mu_);
  return (myself_->flags & cluster::kMaster) != 0;
}

bool Cluster::MyselfHasSlots() {
  std::lock_guard<std::mutex> lock(mu_);
  return myself_->numslots > 0;
}

void Cluster::SetAnnounceHostname(std::string h) {
  std::lock_guard<std::mutex> lock(mu_);
  opt_.announce_hostname = h;
  if (myself_ != nullptr) myself_->hostname = std::move(h);
}

void Cluster::SetRequireFullCoverage(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  opt_.require_full_coverage = on;
  if (myself_ != nullptr) UpdateState();
}

void Cluster::SetAllowReadsWhenDown(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  opt_.allow_reads_when_down = on;
  if (myself_ != nullptr) Publish();
}

void Cluster::SetReplicaNoFailover(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  opt_.replica_no_failover = on;
  if (myself_ == nullptr) return;
  // clusterUpdateMyselfFlags: the flag the other nodes see (ranks, votes) follows at once.
  const uint16_t old = myself_->flags;
  myself_->flags = (myself_->flags & ~cluster::kNoFailover) | (on ? cluster::kNoFailover : 0);
  if (myself_->flags != old) {
    save_pending_ = true;
    UpdateState();
  }
}

void Cluster::SetReplicaValidityFactor(int factor) {
  std::lock_guard<std::mutex> lock(mu_);
  opt_.replica_validity_factor = factor;
}

void Cluster::SetAllowReplicaMigration(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  opt_.allow_replica_migration = on;
}

void Cluster::SetMigrationBarrier(int barrier) {
  std::lock_guard<std::mutex> lock(mu_);
  opt_.migration_barrier = barrier;
}

void Cluster::SetReplPingPeriod(int seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  opt_.repl_ping_period_s = seconds;
}

void Cluster::Info(std::string* out) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t assigned = 0, ok = 0, pfail = 0, fail = 0;
  for (int s = 0; s < kNumSlots; ++s) {
    const Node* n = slots_[s];
    if (n == nullptr) continue;
    ++assigned;
    if (n->flags & cluster::kFailFlag) {
      ++fail;
    } else if (n->flags & cluster::kPfail) {
      ++pfail;
    } else {
      ++ok;
    }
  }
  out->append(state_ == 0 ? "cluster_state:ok\r\n" : "cluster_state:fail\r\n");
  Line(out, "cluster_slots_assigned", assigned);
  Line(out, "cluster_slots_ok", ok);
  Line(out, "cluster_slots_pfail", pfail);
  Line(out, "cluster_slots_fail", fail);
  Line(out, "cluster_known_nodes", nodes_.size());
  Line(out, "cluster_size", uint64_t(size_));
  Line(out, "cluster_current_epoch", current_epoch_);
  Line(out, "cluster_my_epoch", myself_->config_epoch);
  uint64_t total = 0;
  for (int t = 0; t < cluster::kMsgTypeCount; ++t) {
    if (sent_[t] == 0) continue;
    total += sent_[t];
    Line(out, std::string("cluster_stats_messages_") + kTypeNames[t] + "_sent", sent_[t]);
  }
  Line(out, "cluster_stats_messages_sent", total);
  total = 0;
  for (int t = 0; t < cluster::kMsgTypeCount; ++t) {
    if (received_[t] == 0) continue;
    total += received_[t];
    Line(out, std::string("cluster_stats_messages_") + kTypeNames[t] + "_received", received_[t]);
  }
  Line(out, "cluster_stats_messages_received", total);
  Line(out, "total_cluster_links_buffer_limit_exceeded", 0);
}

std::vector<std::string> Cluster::ReplicaNames(std::string_view master) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  const Node* m = FindNode(master);
  if (m == nullptr) return out;
  for (const Node* n : ReplicasOf(*m, [](const Node&) { return true; })) out.push_back(n->name);
  return out;
}

void Cluster::Nodes(std::string* out) {
  std::lock_guard<std::mutex> lock(mu_);
  *out = NodesText(false);
}

void Cluster::Slots(ReplyWriter& w) {
  std::lock_guard<std::mutex> lock(mu_);
  struct Range {
    int start, end;
    const Node* n;
  };
  std::vector<Range> ranges;
  for (int s = 0; s < kNumSlots; ++s) {
    const Node* n = slots_[s];
    if (n == nullptr) continue;
    if (!ranges.empty() && ranges.back().n == n && ranges.back().end == s - 1) {
      ranges.back().end = s;
    } else {
      ranges.push_back({s, s, n});
    }
  }
  auto node_entry = [&](const Node& n) {
    w.Array(4);
    w.Bulk(n.ip.empty() ? "?" : n.ip);
    w.Integer(n.port);
    w.Bulk(n.name);
    if (n.hostname.empty()) {
      w.Map(0);
    } else {
      w.Map(1);
      w.Bulk("hostname");
      w.Bulk(n.hostname);
    }
  };
  w.Array(ranges.size());
  for (const Range& r : ranges) {
    const std::vector<const Node*> replicas = ReplicasOf(*r.n, [this](const Node& n) {
      // As Redis's isReplicaAvailable: not failing, and some data replicated.
      const uint64_t offset = &n == myself_ ? MyReplOffset() : n.repl_offset;
      return (n.flags & cluster::kSlave) && !(n.flags & cluster::kFailFlag) && offset != 0;
    });
    w.Array(3 + replicas.size());
    w.Integer(r.start);
    w.Integer(r.end);
    node_entry(*r.n);
    for (const Node* rep : replicas) node_entry(*rep);
  }
}

void Cluster::Shards(ReplyWriter& w) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const Node*> masters;
  for (auto& [name, n] : nodes_) {
    if (n->flags & cluster::kMaster) masters.push_back(n.get());
  }
  auto details = [&](const Node& n) {
    w.Map(n.hostname.empty() ? 7 : 8);
    w.Bulk("id");
    w.Bulk(n.name);
    w.Bulk("port");
    w.Integer(n.port);
    w.Bulk("ip");
    w.Bulk(n.ip);
    w.Bulk("endpoint");
    w.Bulk(n.ip.empty() ? "?" : n.ip);
    if (!n.hostname.empty()) {
      w.Bulk("hostname");
      w.Bulk(n.hostname);
    }
    w.Bulk("role");
    w.Bulk((n.flags & cluster::kSlave) ? "replica" : "master");
    const int64_t offset = int64_t(&n == myself_ ? MyReplOffset() : n.repl_offset);
    w.Bulk("replication-offset");
    w.Integer(offset);
    // As Redis 7.0: a replica that has replicated nothing yet is "loading".
    w.Bulk("health");
    w.Bulk((n.flags & cluster::kFailFlag)                 ? "fail"
           : ((n.flags & cluster::kSlave) && offset == 0) ? "loading"
                                                          : "online");
  };
  w.Array(masters.size());
  for (const Node* m : masters) {
    w.Map(2);
    w.Bulk("slots");
    std::vector<int> pairs;
    for (int s = 0; s < kNumSlots; ++s) {
      if (!cluster::TestSlot(m->slots, s)) continue;
      int e = s;
      while (e + 1 < kNumSlots && cluster::TestSlot(m->slots, e + 1)) ++e;
      pairs.push_back(s);
      pairs.push_back(e);
      s = e;
    }
    w.Array(pairs.size());
    for (int p : pairs) w.Integer(p);
    std::vector<const Node*> members{m};
    for (const Node* n : ReplicasOf(*m, [](const Node&) { return true; })) members.push_back(n);
    w.Bulk("nodes");
    w.Array(members.size());
    for (const Node* n : members) details(*n);
  }
}

void Cluster::Links(ReplyWriter& w) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const Link*> out;
  for (auto& [name, n] : nodes_) {
    if (n.get() == myself_) continue;
    if (n->link != nullptr) out.push_back(n->link);
    if (n->inbound != nullptr) out.push_back(n->inbound);
  }
  w.Array(out.size());
  for (const Link* l : out) {
    w.Map(6);
    w.Bulk("direction");
    w.Bulk(l->inbound ? "from" : "to");
    w.Bulk("node");
    w.Bulk(l->node->name);
    w.Bulk("create-time");
    w.Integer(l->ctime);
    w.Bulk("events");
    w.Bulk(l->wbuf.empty() ? "r" : "rw");
    w.Bulk("send-buffer-allocated");
    w.Integer(int64_t(l->wbuf.capacity()));
    w.Bulk("send-buffer-used");
    w.Integer(int64_t(l->wbuf.size()));
  }
}

namespace {

// Checks ADDSLOTS/DELSLOTS's slots in order as Redis does: busy (or unassigned), then repeated.
std::string CheckSlots(const std::vector<int>& slots, bool del,
                       const std::array<Node*, kNumSlots>& owners) {
  std::vector<uint8_t> seen(kNumSlots, 0);
  for (int s : slots) {
    if (del && owners[s] == nullptr)
      return "ERR Slot " + std::to_string(s) + " is already unassigned";
    if (!del && owners[s] != nullptr) return "ERR Slot " + std::to_string(s) + " is already busy";
    if (seen[s]++) return "ERR Slot " + std::to_string(s) + " specified multiple times";
  }
  return "";
}

}  // namespace

std::string Cluster::AddSlots(const std::vector<int>& slots) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string err = CheckSlots(slots, false, slots_);
  if (!err.empty()) return err;
  for (int s : slots) {
    importing_from_[s] = nullptr;  // we own it now
    AddSlot(myself_, s);
  }
  UpdateState();
  SaveOrDie();
  return "";
}

std::string Cluster::DelSlots(const std::vector<int>& slots) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string err = CheckSlots(slots, true, slots_);
  if (!err.empty()) return err;
  for (int s : slots) DelSlot(s);
  UpdateState();
  SaveOrDie();
  return "";
}

void Cluster::FlushSlots() {
  std::lock_guard<std::mutex> lock(mu_);
  for (int s = 0; s < kNumSlots; ++s) {
    if (slots_[s] == myself_) DelSlot(s);
  }
  UpdateState();
  SaveOrDie();
}

std::string Cluster::SetSlot(int slot, std::string_view action, std::string_view name,
                             size_t keys_in_slot) {
  std::lock_guard<std::mutex> lock(mu_);
  if (myself_->flags & cluster::kSlave) return "ERR Please use SETSLOT only with masters.";
  Node* n = FindNode(name);
  if (action == "migrating") {
    if (slots_[slot] != myself_)
      return "ERR I'm not the owner of hash slot " + std::to_string(slot);
    if (n == nullptr) return "ERR I don't know about node " + std::string(name);
    if (n->flags & cluster::kSlave) return "ERR Target node is not a master";
    migrating_to_[slot] = n;
  } else if (action == "importing") {
    if (slots_[slot] == myself_) {
      return "ERR I'm already the owner of hash slot " + std::to_string(slot);
    }
    if (n == nullptr) return "ERR I don't know about node " + std::string(name);
    if (n->flags & cluster::kSlave) return "ERR Target node is not a master";
    importing_from_[slot] = n;
  } else if (action == "stable") {
    importing_from_[slot] = nullptr;
    migrating_to_[slot] = nullptr;
  } else {  // node
    if (n == nullptr) return "ERR Unknown node " + std::string(name);
    if (n->flags & cluster::kSlave) return "ERR Target node is not a master";
    if (slots_[slot] == myself_ && n != myself_ && keys_in_slot != 0) {
      return "ERR Can't assign hashslot " + std::to_string(slot) +
             " to a different node while I still hold keys for this hash slot.";
    }
    if (keys_in_slot == 0) migrating_to_[slot] = nullptr;
    DelSlot(slot);
    AddSlot(n, slot);
    if (n == myself_ && importing_from_[slot] != nullptr) {
      // A slot migrated by hand: a fresh epoch makes this node's claim win everywhere.
      uint64_t max_epoch = 0;
      for (auto& [nm, node] : nodes_) max_epoch = std::max(max_epoch, node->config_epoch);
      if (myself_->config_epoch == 0 || myself_->config_epoch != max_epoch) {
        ++current_epoch_;
        myself_->config_epoch = current_epoch_;
      }
      importing_from_[slot] = nullptr;
      for (auto& [nm, node] : nodes_) {
        if (node->link != nullptr && !(node->flags & (cluster::kMyself | cluster::kHandshake))) {
          SendPing(node->link, cluster::kPong, NowMs());
        }
      }
      Wake();
    }
  }
  UpdateState(slot);
  SaveOrDie();
  return "";
}

std::string Cluster::Meet(const std::string& ip, int port, int bus_port) {
  unsigned char buf[sizeof(in6_addr)];
  std::string norm = ip;
  if (inet_pton(AF_INET, ip.c_str(), buf) != 1) {
    if (inet_pton(AF_INET6, ip.c_str(), buf) != 1) return "inval";
    char out[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, buf, out, sizeof(out));
    norm = out;
  }
  if (port <= 0 || port > 65535 || bus_port <= 0 || bus_port > 65535) return "inval";
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [name, n] : nodes_) {
    if ((n->flags & cluster::kHandshake) && n->ip == norm && n->port == port &&
        n->cport == bus_port) {
      return "";  // a handshake with it is under way
    }
  }
  Node* n = CreateNode("", cluster::kHandshake | cluster::kMeetFlag);
  n->ip = norm;
  n->port = port;
  n->cport = bus_port;
  Wake();
  return "";
}

std::string Cluster::Forget(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  Node* n = FindNode(name);
  if (n == nullptr) return "ERR Unknown node " + std::string(name);
  if (n == myself_) return "ERR I tried hard but I can't forget myself...";
  if ((myself_->flags & cluster::kSlave) && myself_->slaveof == n->name) {
    return "ERR Can't forget my master!";
  }
  blacklist_[n->name] = NowMs() + 60000;
  DeleteNode(n);
  UpdateState();
  SaveOrDie();
  return "";
}

std::string Cluster::Reset(bool hard) {
  std::unique_lock<std::mutex> lock(mu_);
  if (myself_->flags & cluster::kSlave) {  // a replica turns into an empty master
    SetNodeAsMaster(myself_);
    following_.clear();
    if (opt_.promote) Defer(opt_.promote);
  }
  ResetManualFailover();
  for (int s = 0; s < kNumSlots; ++s) {
    migrating_to_[s] = importing_from_[s] = nullptr;
    DelSlot(s);
  }
  std::vector<Node*> others;
  for (auto& [name, n] : nodes_) {
    if (n.get() != myself_) others.push_back(n.get());
  }
  for (Node* n : others) DeleteNode(n);
  if (hard) {
    current_epoch_ = last_vote_epoch_ = 0;
    myself_->config_epoch = 0;
    Node* fresh = CreateNode("", 0);
    const std::string name = fresh->name;
    nodes_.erase(name);
    RenameNode(myself_, name);
    LogNotice("Node hard reset, now I'm " + name);
  }
  UpdateState();
  SaveOrDie();
  lock.unlock();
  RunDeferred();
  return "";
}

std::string Cluster::SaveConfigOrError() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string error;
  if (!SaveConfig(&error)) return "ERR error saving the cluster node config: " + error;
  return "";
}

std::string Cluster::BumpEpoch(std::string* reply) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t max_epoch = 0;
  for (auto& [nm, node] : nodes_) max_epoch = std::max(max_epoch, node->config_epoch);
  bool bumped = false;
  if (myself_->config_epoch == 0 || myself_->config_epoch != max_epoch) {
    ++current_epoch_;
    myself_->config_epoch = current_epoch_;
    bumped = true;
    SaveOrDie();
  }
  *reply = (bumped ? "BUMPED " : "STILL ") + std::to_string(myself_->config_epoch);
  return "";
}

std::string Cluster::SetConfigEpoch(uint64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (nodes_.size() > 1) {
    return "ERR The user can assign a config epoch only when the node does not know any other "
           "node.";
  }
  if (myself_->config_epoch != 0) return "ERR Node config epoch is already non-zero";
  myself_->config_epoch = epoch;
  if (current_epoch_ < epoch) current_epoch_ = epoch;
  UpdateState();
  SaveOrDie();
  return "";
}

std::string Cluster::CountFailureReports(std::string_view name, int64_t* count) {
  std::lock_guard<std::mutex> lock(mu_);
  Node* n = FindNode(name);
  if (n == nullptr) return "ERR Unknown node " + std::string(name);
  const int64_t now = NowMs(), validity = NodeTimeout() * 2;
  std::erase_if(n->fail_reports, [&](const auto& r) { return now - r.second > validity; });
  *count = int64_t(n->fail_reports.size());
  return "";
}

}  // namespace lavik
