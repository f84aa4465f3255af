// The cluster bus's message handling, Redis 7.0's clusterProcessPacket and what it calls:
// PING/PONG/MEET (handshakes, addresses, roles, slot claims, gossip), FAIL, PUBLISH,
// FAILOVER_AUTH_REQUEST/_ACK, MFSTART and UPDATE; failure reports and the FAIL decision.
// The bus thread (cluster_bus.cc) calls Process with the state's mutex held.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "base/log.h"
#include "cluster/cluster.h"

namespace lavik {

using cluster::Link;
using cluster::Message;
using cluster::Node;

namespace {

// The address of a bus link's local (or remote) end.
std::string PeerIp(int fd, bool local) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  int r = local ? getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len)
                : getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  if (r != 0) return "";
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, buf, sizeof(buf));
  } else {
    inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr, buf, sizeof(buf));
  }
  return buf;
}

}  // namespace

void Cluster::Process(Link* l, const Message& m, int64_t now) {
  if (m.type < cluster::kMsgTypeCount) ++received_[m.type];
  const uint16_t type = m.type;
  Node* sender = FindNode(m.sender);
  if (sender != nullptr && !l->inbound && l->node != nullptr &&
      (l->node->flags & cluster::kHandshake) == 0 && l->node != sender) {
    sender = nullptr;  // judged below (a node that changed its name)
  }
  if (sender != nullptr) sender->data_received = now;
  if (sender != nullptr && !(sender->flags & cluster::kHandshake)) {
    if (m.current_epoch > current_epoch_) {
      current_epoch_ = m.current_epoch;
      save_pending_ = true;
    }
    if (m.config_epoch > sender->config_epoch) {
      sender->config_epoch = m.config_epoch;
      save_pending_ = true;
    }
    sender->repl_offset = m.offset;
    // A manual failover: the first offset my master sends once it paused its writes.
    if (mf_end_ != 0 && (myself_->flags & cluster::kSlave) && myself_->slaveof == sender->name &&
        (m.mflags0 & cluster::kFlagPaused) && mf_master_offset_ == -1) {
      mf_master_offset_ = int64_t(m.offset);
      handle_failover_ = true;
      LogNotice("Received replication offset for paused master manual failover: " +
                std::to_string(m.offset));
    }
  }
  if (sender != nullptr && l->inbound && sender->inbound == nullptr && l->node == nullptr) {
    l->node = sender;
    sender->inbound = l;
  }

  if (type == cluster::kPing || type == cluster::kMeet) {
    // Learn my own address from the first MEET (or any PING while I have none).
    if ((type == cluster::kMeet || myself_->ip.empty()) && opt_.announce_ip.empty()) {
      std::string ip = PeerIp(l->fd, true);
      if (!ip.empty() && ip != myself_->ip) {
        myself_->ip = ip;
        save_pending_ = true;
        Publish();
      }
    }
    if (sender == nullptr && type == cluster::kMeet) {
      Node* n = CreateNode("", cluster::kHandshake);
      n->ip = m.myip.empty() ? PeerIp(l->fd, false) : m.myip;
      n->port = m.port;
      n->pport = m.pport;
      n->cport = m.cport;
      save_pending_ = true;
      ProcessGossip(m, nullptr, now);
    }
    SendPing(l, cluster::kPong, now);
  }

  if (type == cluster::kPing || type == cluster::kPong || type == cluster::kMeet) {
    if (!l->inbound && l->node != nullptr) {
      Node* ln = l->node;
      if (ln->flags & cluster::kHandshake) {
        Node* known = FindNode(m.sender);
        if (known != nullptr && known != ln) {
          // We already know it under its real name: this handshake was a duplicate.
          if (known->ip != ln->ip || known->port != ln->port || known->cport != ln->cport) {
            known->ip = ln->ip;
            known->port = ln->port;
            known->cport = ln->cport;
            if (known->link != nullptr) CloseLink(known->link);
            known->flags &= ~cluster::kNoAddr;
          }
          DeleteNode(ln);
          save_pending_ = true;
          UpdateState();
          return;
        }
        RenameNode(ln, m.sender);
        ln->flags &= ~cluster::kHandshake;
        ln->flags |= m.flags & (cluster::kMaster | cluster::kSlave);
        save_pending_ = true;
        sender = ln;
      } else if (ln->name != m.sender) {
        ln->flags |= cluster::kNoAddr;
        ln->ip.clear();
        ln->port = ln->cport = 0;
        CloseLink(l);
        save_pending_ = true;
        return;
      }
    }
    if (sender != nullptr) {
      if (!m.hostname.empty() || !sender->hostname.empty()) {
        if (sender->hostname != m.hostname) {
          sender->hostname = m.hostname;
          save_pending_ = true;
        }
      }
      sender->flags = (sender->flags & ~cluster::kNoFailover) | (m.flags & cluster::kNoFailover);
      // A PING from a known node with a new address: update it.
      if (type == cluster::kPing && l->inbound && !(sender->flags & cluster::kHandshake)) {
        std::string ip = m.myip.empty() ? PeerIp(l->fd, false) : m.myip;
        if (ip != sender->ip || m.port != sender->port || m.cport != sender->cport) {
          sender->ip = ip;
          sender->port = m.port;
          sender->cport = m.cport;
          sender->flags &= ~cluster::kNoAddr;
          if (sender->link != nullptr) CloseLink(sender->link);
          save_pending_ = true;
          Publish();
        }
      }
    }
    if (!l->inbound && l->node != nullptr && type == cluster::kPong) {
      Node* ln = l->node;
      ln->pong_received = now;
      ln->ping_sent = 0;
      if (ln->flags & cluster::kPfail) {
        ln->flags &= ~cluster::kPfail;
        UpdateState();
      } else if (ln->flags & cluster::kFailFlag) {
        ClearFailureIfNeeded(ln, now);
      }
    }
    if (sender == nullptr) return;
    // Role switch: replica -> master or master -> replica, and a replica's master.
    if (m.slaveof.empty()) {
      SetNodeAsMaster(sender);
    } else {
      if (sender->flags & cluster::kMaster) {
        for (int s = 0; s < kNumSlots; ++s) {
          if (slots_[s] == sender) DelSlot(s);
        }
        sender->flags =
            (sender->flags & ~(cluster::kMaster | cluster::kMigrateTo)) | cluster::kSlave;
        save_pending_ = true;
        UpdateState();
      }
      Node* master = FindNode(m.slaveof);
      if (master != nullptr && sender->slaveof != master->name) {
        SetSlaveOf(sender, master->name);
        save_pending_ = true;
      }
    }
    Node* sender_master = (sender->flags & cluster::kMaster) ? sender : FindNode(sender->slaveof);
    bool dirty = sender_master != nullptr && sender_master->slots != m.slots;
    if ((sender->flags & cluster::kMaster) && dirty) {
      UpdateSlotsWith(sender, m.config_epoch, m.slots);
    }
    if (dirty) {
      for (int s = 0; s < kNumSlots; ++s) {
        if (!cluster::TestSlot(m.slots, s) || slots_[s] == sender || slots_[s] == nullptr) {
          continue;
        }
        if (slots_[s]->config_epoch > m.config_epoch) {
          SendUpdate(sender->link, *slots_[s]);
          break;
        }
      }
    }
    if ((myself_->flags & cluster::kMaster) && (sender->flags & cluster::kMaster) &&
        m.config_epoch == myself_->config_epoch) {
      HandleEpochCollision(sender);
    }
    ProcessGossip(m, sender, now);
  } else if (type == cluster::kFail) {
    if (sender == nullptr) return;
    Node* failing = FindNode(m.about);
    if (failing != nullptr && !(failing->flags & (cluster::kFailFlag | cluster::kMyself))) {
      LogNotice("FAIL message received from " + sender->name + " about " + failing->name);
      failing->flags |= cluster::kFailFlag;
      failing->fail_time = now;
      failing->flags &= ~cluster::kPfail;
      save_pending_ = true;
      UpdateState();
    }
  } else if (type == cluster::kPublish || type == cluster::kPublishShard) {
    if (sender == nullptr) return;  // Redis ignores a PUBLISH from a node it does not know
    if (opt_.on_publish) opt_.on_publish(type == cluster::kPublishShard, m.channel, m.payload);
  } else if (type == cluster::kAuthRequest) {
    if (sender == nullptr) return;
    SendFailoverAuthIfNeeded(sender, m, now);
  } else if (type == cluster::kAuthAck) {
    if (sender == nullptr) return;
    // A vote counts from a master serving slots, cast in (or after) my election's epoch.
    if ((sender->flags & cluster::kMaster) && sender->numslots > 0 &&
        m.current_epoch >= failover_auth_epoch_) {
      ++failover_auth_count_;
      handle_failover_ = true;
    }
  } else if (type == cluster::kMfStart) {
    // From one of my replicas: pause writes and send it my offset (Redis's MFSTART handling).
    if (sender == nullptr || sender->slaveof != myself_->name ||
        !(myself_->flags & cluster::kMaster)) {
      return;
    }
    ResetManualFailover();
    mf_end_ = now + kMfTimeoutMs;
    mf_replica_ = sender;
    mf_paused_ms_ = now;
    if (opt_.pause_writes) Defer(opt_.pause_writes);
    LogNotice("Manual failover requested by replica " + sender->name + ".");
    SendPing(sender->link != nullptr ? sender->link : l, cluster::kPing, now);
  } else if (type == cluster::kUpdate) {
    if (sender == nullptr) return;
    Node* n = FindNode(m.about);
    if (n == nullptr || n->config_epoch >= m.update_epoch) return;
    SetNodeAsMaster(n);
    n->config_epoch = m.update_epoch;
    save_pending_ = true;
    UpdateSlotsWith(n, m.update_epoch, m.update_slots);
  }
}

void Cluster::ProcessGossip(const Message& m, Node* sender, int64_t now) {
  for (const cluster::Gossip& g : m.gossip) {
    Node* n = FindNode(g.name);
    if (n != nullptr) {
      if (sender != nullptr && (sender->flags & cluster::kMaster) && n != myself_) {
        if (g.flags & (cluster::kFailFlag | cluster::kPfail)) {
          n->fail_reports[sender->name] = now;
          MarkFailingIfNeeded(n, now);
        } else {
          n->fail_reports.erase(sender->name);
        }
      }
      if (!(g.flags & (cluster::kFailFlag | cluster::kPfail)) && n->ping_sent == 0 &&
          n->fail_reports.empty()) {
        const int64_t pong = int64_t(g.pong_received) * 1000;
        if (pong <= now + 500 && pong > n->pong_received) n->pong_received = pong;
      }
      if ((n->flags & (cluster::kFailFlag | cluster::kPfail)) && !(g.flags & cluster::kNoAddr) &&
          !(g.flags & (cluster::kFailFlag | cluster::kPfail)) &&
          (n->ip != g.ip || n->port != g.port || n->cport != g.cport)) {
        if (n->link != nullptr) CloseLink(n->link);
        n->ip = g.ip;
        n->port = g.port;
        n->pport = g.pport;
        n->cport = g.cport;
        n->flags &= ~cluster::kNoAddr;
      }
    } else if (sender != nullptr && !(g.flags & cluster::kNoAddr)) {
      auto bl = blacklist_.find(g.name);
      if (bl != blacklist_.end() && bl->second > now) continue;
      if (g.name.size() != cluster::kNameLen) continue;
      Node* fresh = CreateNode(g.name, g.flags & ~(cluster::kMyself | cluster::kPfail |
                                                   cluster::kFailFlag | cluster::kMeetFlag));
      fresh->ip = g.ip;
      fresh->port = g.port;
      fresh->pport = g.pport;
      fresh->cport = g.cport;
      save_pending_ = true;
    }
  }
}

void Cluster::UpdateSlotsWith(Node* sender, uint64_t sender_epoch,
                              const cluster::SlotBitmap& slots) {
  if (sender == myself_) return;
  bool changed = false;
  std::vector<uint16_t> lost;
  // My shard's master: myself, or the master I replicate.
  Node* curmaster = (myself_->flags & cluster::kMaster) ? myself_ : MyMaster();
  Node* newmaster = nullptr;
  int sender_slots = 0, migrated_our_slots = 0;
  for (int s = 0; s < kNumSlots; ++s) {
    if (!cluster::TestSlot(slots, s)) continue;
    ++sender_slots;
    if (slots_[s] == sender) continue;
    // A slot being imported is ours to settle with SETSLOT, not gossip's.
    if (importing_from_[s] != nullptr) continue;
    if (slots_[s] == nullptr || slots_[s]->config_epoch < sender_epoch) {
      if (slots_[s] == myself_) {
        migrating_to_[s] = nullptr;
        lost.push_back(uint16_t(s));
      }
      if (curmaster != nullptr && slots_[s] == curmaster) {
        newmaster = sender;
        ++migrated_our_slots;
      }
      DelSlot(s);
      AddSlot(sender, s);
      changed = true;
    }
  }
  if (changed) {
    save_pending_ = true;
    UpdateState();
  }
  // My shard lost its last slot to the sender: it failed over (or took them over), and I
  // follow the new owner — a returning master, or a replica of the old one.
  if (newmaster != nullptr && curmaster->numslots == 0 &&
      (opt_.allow_replica_migration || sender_slots == migrated_our_slots)) {
    LogNotice("Configuration change detected. Reconfiguring myself as a replica of " +
              sender->name);
    SetMaster(sender);
    return;
  }
  // Keys left in slots another master now owns are stale (Redis's delKeysInSlot); the routing
  // table already sends their clients to the new owner.
  if (!lost.empty() && opt_.on_slots_lost) opt_.on_slots_lost(lost);
}

void Cluster::HandleEpochCollision(Node* sender) {
  // Only the node with the smaller name moves: both see the collision, one acts.
  if (sender->name <= myself_->name) return;
  ++current_epoch_;
  myself_->config_epoch = current_epoch_;
  save_pending_ = true;
  LogVerbose("WARNING: configEpoch collision with node " + sender->name + ". configEpoch set to " +
             std::to_string(current_epoch_));
}

void Cluster::MarkFailingIfNeeded(Node* n, int64_t now) {
  if (!(n->flags & cluster::kPfail) || (n->flags & cluster::kFailFlag)) return;
  const int64_t validity = NodeTimeout() * 2;
  std::erase_if(n->fail_reports, [&](const auto& r) { return now - r.second > validity; });
  size_t failures = n->fail_reports.size();
  if (myself_->flags & cluster::kMaster) ++failures;
  if (failures < size_t(Quorum())) return;
  LogNotice("Marking node " + n->name + " as failing (quorum reached).");
  n->flags = (n->flags & ~cluster::kPfail) | cluster::kFailFlag;
  n->fail_time = now;
  SendFail(n->name);  // a replica helps spread it too, as in Redis 7.0
  save_pending_ = true;
  UpdateState();
}

void Cluster::ClearFailureIfNeeded(Node* n, int64_t now) {
  if ((n->flags & cluster::kSlave) || n->numslots == 0 || now - n->fail_time > NodeTimeout() * 2) {
    n->flags &= ~cluster::kFailFlag;
    save_pending_ = true;
    UpdateState();
  }
}

}  // namespace lavik
