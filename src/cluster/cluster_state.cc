// The cluster state: nodes, slots, epochs, nodes.conf and the published routing table.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/clock.h"
#include "base/durable_file.h"
#include "base/log.h"
#include "base/random.h"
#include "cluster/cluster.h"

namespace lavik {

using cluster::Node;
using cluster::RouteTable;

namespace {

std::string RandomName() {
  static const char kHex[] = "0123456789abcdef";
  std::string s(cluster::kNameLen, '0');
  for (char& c : s) c = kHex[RandomBelow(16)];
  return s;
}

void AppendFlags(uint16_t f, std::string* out) {
  static const std::pair<uint16_t, const char*> kNames[] = {
      {cluster::kMyself, "myself"}, {cluster::kMaster, "master"},
      {cluster::kSlave, "slave"},   {cluster::kPfail, "fail?"},
      {cluster::kFailFlag, "fail"}, {cluster::kHandshake, "handshake"},
      {cluster::kNoAddr, "noaddr"}, {cluster::kNoFailover, "nofailover"}};
  size_t start = out->size();
  for (const auto& [bit, name] : kNames) {
    if (!(f & bit)) continue;
    if (out->size() != start) out->push_back(',');
    out->append(name);
  }
  if (out->size() == start) out->append("noflags");
}

// CLUSTER NODES' flags field; false on a flag Redis does not write (Redis panics on one).
bool ParseFlags(std::string_view s, uint16_t* flags) {
  uint16_t f = 0;
  while (!s.empty()) {
    size_t c = s.find(',');
    std::string_view w = s.substr(0, c);
    if (w == "myself") {
      f |= cluster::kMyself;
    } else if (w == "master") {
      f |= cluster::kMaster;
    } else if (w == "slave") {
      f |= cluster::kSlave;
    } else if (w == "fail?") {
      f |= cluster::kPfail;
    } else if (w == "fail") {
      f |= cluster::kFailFlag;
    } else if (w == "handshake") {
      f |= cluster::kHandshake;
    } else if (w == "noaddr") {
      f |= cluster::kNoAddr;
    } else if (w == "nofailover") {
      f |= cluster::kNoFailover;
    } else if (w != "noflags") {
      return false;
    }
    if (c == std::string_view::npos) break;
    s.remove_prefix(c + 1);
  }
  *flags = f;
  return true;
}

// A decimal field of nodes.conf: digits only, at most `max`.
bool ParseField(std::string_view s, uint64_t max, uint64_t* v) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t x = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = uint64_t(c - '0');
    if (x > (UINT64_MAX - d) / 10) return false;
    x = x * 10 + d;
  }
  if (x > max) return false;
  *v = x;
  return true;
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> w;
  while (!line.empty()) {
    size_t b = line.find_first_not_of(' ');
    if (b == std::string_view::npos) break;
    line.remove_prefix(b);
    size_t e = line.find(' ');
    w.push_back(line.substr(0, e));
    if (e == std::string_view::npos) break;
    line.remove_prefix(e);
  }
  return w;
}

}  // namespace

Cluster::Cluster(Options options)
    : opt_(std::move(options)), node_timeout_ms_(opt_.node_timeout_ms) {}

Cluster::~Cluster() { Stop(); }

Node* Cluster::CreateNode(std::string name, uint16_t flags) {
  auto n = std::make_unique<Node>();
  n->name = name.empty() ? RandomName() : std::move(name);
  n->flags = flags;
  n->ctime = NowMs();
  Node* p = n.get();
  nodes_[p->name] = std::move(n);
  return p;
}

Node* Cluster::FindNode(std::string_view name) {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second.get();
}

void Cluster::SetSlaveOf(Node* n, const std::string& master) {
  if (n->slaveof == master) return;
  n->slaveof = master;
  n->replica_since = ++replicas_learned_;
}

std::vector<const Node*> Cluster::ReplicasOf(const Node& master,
                                             const std::function<bool(const Node&)>& keep) const {
  std::vector<const Node*> out;
  for (const auto& [name, n] : nodes_) {
    if (n->slaveof == master.name && keep(*n)) out.push_back(n.get());
  }
  std::sort(out.begin(), out.end(),
            [](const Node* a, const Node* b) { return a->replica_since < b->replica_since; });
  return out;
}

void Cluster::DeleteNode(Node* n) {
  route_nodes_.clear();  // its address may be reused by a new node: the next Publish rebuilds
  for (int s = 0; s < kNumSlots; ++s) {
    if (importing_from_[s] == n) importing_from_[s] = nullptr;
    if (migrating_to_[s] == n) migrating_to_[s] = nullptr;
    if (slots_[s] == n) slots_[s] = nullptr;
  }
  for (auto& [name, other] : nodes_) other->fail_reports.erase(n->name);
  if (mf_replica_ == n) mf_replica_ = nullptr;
  if (n->link != nullptr) CloseLink(n->link);
  if (n->inbound != nullptr) CloseLink(n->inbound);
  for (auto& l : links_) {
    if (l->node == n) l->node = nullptr;
  }
  nodes_.erase(n->name);
}

void Cluster::RenameNode(Node* n, const std::string& name) {
  auto it = nodes_.find(n->name);
  std::unique_ptr<Node> owned = std::move(it->second);
  nodes_.erase(it);
  owned->name = name;
  nodes_[name] = std::move(owned);
}

bool Cluster::AddSlot(Node* n, int slot) {
  if (slots_[slot] != nullptr) return false;
  cluster::SetSlot(n->slots, slot);
  ++n->numslots;
  slots_[slot] = n;
  return true;
}

void Cluster::DelSlot(int slot) {
  Node* n = slots_[slot];
  if (n == nullptr) return;
  cluster::ClearSlot(n->slots, slot);
  --n->numslots;
  slots_[slot] = nullptr;
}

std::string Cluster::Endpoint(const Node& n) const { return n.ip + ":" + std::to_string(n.port); }

void Cluster::NodeLine(const Node& n, std::string* out) {
  out->append(n.name);
  out->push_back(' ');
  out->append(n.ip);
  out->append(":" + std::to_string(n.port) + "@" + std::to_string(n.cport));
  if (!n.hostname.empty()) out->append("," + n.hostname);
  out->push_back(' ');
  AppendFlags(n.flags, out);
  out->push_back(' ');
  out->append(n.slaveof.empty() ? "-" : n.slaveof);
  uint64_t epoch = n.config_epoch;
  if (!n.slaveof.empty()) {
    if (const Node* m = FindNode(n.slaveof)) epoch = m->config_epoch;
  }
  out->append(" " + std::to_string(n.ping_sent) + " " + std::to_string(n.pong_received) + " " +
              std::to_string(epoch) + " ");
  out->append((n.link != nullptr || (n.flags & cluster::kMyself)) ? "connected" : "disconnected");
  if (n.flags & cluster::kMaster && n.numslots > 0) {
    // Whole bytes at a time where they are all clear or all set: a reshard saves this text
    // after every SETSLOT, so the walk must not cost 16384 bit tests per node.
    auto set = [&](int slot) { return cluster::TestSlot(n.slots, slot); };
    for (int s = 0; s < kNumSlots;) {
      if ((s & 7) == 0 && n.slots[s >> 3] == 0) {
        s += 8;
        continue;
      }
      if (!set(s)) {
        ++s;
        continue;
      }
      int e = s;
      while (e + 1 < kNumSlots) {
        if (((e + 1) & 7) == 0 && e + 8 < kNumSlots && n.slots[(e + 1) >> 3] == 0xff) {
          e += 8;
        } else if (set(e + 1)) {
          ++e;
        } else {
          break;
        }
      }
      out->push_back(' ');
      out->append(std::to_string(s));
      if (e != s) out->append("-" + std::to_string(e));
      s = e + 1;
    }
  }
  if (n.flags & cluster::kMyself) {
    for (int s = 0; s < kNumSlots; ++s) {
      if (migrating_to_[s] != nullptr) {
        out->append(" [" + std::to_string(s) + "->-" + migrating_to_[s]->name + "]");
      } else if (importing_from_[s] != nullptr) {
        out->append(" [" + std::to_string(s) + "-<-" + importing_from_[s]->name + "]");
      }
    }
  }
  out->push_back('\n');
}

std::string Cluster::NodesText(bool for_file) {
  std::string out;
  for (auto& [name, n] : nodes_) {
    if (for_file && (n->flags & cluster::kHandshake)) continue;
    NodeLine(*n, &out);
  }
  if (for_file) {
    out += "vars currentEpoch " + std::to_string(current_epoch_) + " lastVoteEpoch " +
           std::to_string(last_vote_epoch_) + "\n";
  }
  return out;
}

bool cluster::ConfigSaysReplica(const std::string& path) {
  std::string text, error;
  bool exists = false;
  if (!ReadWholeFile(path, &text, &exists, &error) || !exists) return false;
  for (size_t pos = 0; pos < text.size();) {
    const size_t nl = std::min(text.find('\n', pos), text.size());
    const std::vector<std::string_view> w = Words(std::string_view(text).substr(pos, nl - pos));
    pos = nl + 1;
    if (w.size() < 3 || w[0] == "vars") continue;
    const std::string_view flags = w[2];
    if (flags.find("myself") != std::string_view::npos) {
      return flags.find("slave") != std::string_view::npos;
    }
  }
  return false;
}

bool Cluster::LoadConfig(std::string* error) {
  std::string text;
  bool exists = false;
  if (!ReadWholeFile(opt_.config_file, &text, &exists, error)) return false;
  if (!exists || text.find_first_not_of(" \r\n\t") == std::string::npos) return true;
  const int64_t now = NowMs();
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::vector<std::string_view> w = Words(line);
    if (w.empty()) continue;
    auto bad = [&](const char* why) {
      *error = "Unrecoverable error: corrupted cluster config file \"" + opt_.config_file +
               "\" (line " + std::to_string(line_no) + ": " + why + ")";
      return false;
    };
    if (w[0] == "vars") {
      if (w.size() % 2 != 1) return bad("a vars name without a value");
      for (size_t i = 1; i + 1 < w.size(); i += 2) {
        uint64_t v = 0;
        if (!ParseField(w[i + 1], UINT64_MAX, &v)) return bad("bad vars value");
        if (w[i] == "currentEpoch") current_epoch_ = v;
        if (w[i] == "lastVoteEpoch") last_vote_epoch_ = v;
      }
      continue;
    }
    if (w.size() < 8) return bad("too few fields");
    if (w[0].size() != cluster::kNameLen) return bad("bad node name");
    Node* n = FindNode(w[0]);
    if (n == nullptr) n = CreateNode(std::string(w[0]), 0);
    // ip:port@cport[,hostname]
    std::string_view addr = w[1];
    if (size_t c = addr.find(','); c != std::string_view::npos) {
      n->hostname = std::string(addr.substr(c + 1));
      addr = addr.substr(0, c);
    }
    size_t colon = addr.rfind(':');
    size_t at = addr.find('@');
    if (colon == std::string_view::npos || (at != std::string_view::npos && at < colon)) {
      return bad("bad address");
    }
    uint64_t port = 0, cport = 0, ping = 0, pong = 0, epoch = 0;
    if (!ParseField(addr.substr(colon + 1, at == std::string_view::npos ? at : at - colon - 1),
                    65535, &port)) {
      return bad("bad port");
    }
    if (at != std::string_view::npos && !ParseField(addr.substr(at + 1), 65535, &cport)) {
      return bad("bad bus port");
    }
    uint16_t flags = 0;
    if (!ParseFlags(w[2], &flags)) return bad("unknown flag");
    if (w[3] != "-" && w[3].size() != cluster::kNameLen) return bad("bad master name");
    if (!ParseField(w[4], UINT64_MAX, &ping) || !ParseField(w[5], UINT64_MAX, &pong)) {
      return bad("bad ping or pong time");
    }
    if (!ParseField(w[6], UINT64_MAX, &epoch)) return bad("bad config epoch");
    if (w[7] != "connected" && w[7] != "disconnected") return bad("bad link state");
    if ((flags & cluster::kMyself) && myself_ != nullptr && myself_ != n) {
      return bad("a second myself node");
    }
    n->ip = std::string(addr.substr(0, colon));
    n->port = int(port);
    n->cport = at == std::string_view::npos ? n->port + 10000 : int(cport);
    n->flags = flags & ~(cluster::kPfail | cluster::kHandshake | cluster::kMeetFlag);
    if (n->flags & cluster::kMyself) myself_ = n;
    if (w[3] == "-") {
      n->slaveof.clear();
    } else {
      SetSlaveOf(n, std::string(w[3]));  // in the file's order, as Redis's loader adds them
    }
    if (ping != 0) n->ping_sent = now;
    if (pong != 0) n->pong_received = now;
    n->config_epoch = epoch;
    for (size_t i = 8; i < w.size(); ++i) {
      std::string_view s = w[i];
      if (s.front() == '[') {
        // [slot->-name] migrating, [slot-<-name] importing
        size_t dash = s.find('-');
        if (dash == std::string_view::npos || s.size() != dash + 4 + cluster::kNameLen ||
            (s[dash + 1] != '>' && s[dash + 1] != '<') || s.back() != ']') {
          return bad("bad open slot");
        }
        uint64_t slot = 0;
        if (!ParseField(s.substr(1, dash - 1), kNumSlots - 1, &slot)) return bad("bad slot");
        bool migrating = s[dash + 1] == '>';
        std::string other(s.substr(dash + 3, cluster::kNameLen));
        Node* o = FindNode(other);
        if (o == nullptr) o = CreateNode(other, 0);
        (migrating ? migrating_to_ : importing_from_)[slot] = o;
        continue;
      }
      size_t dash = s.find('-');
      uint64_t a = 0, b = 0;
      if (!ParseField(s.substr(0, dash), kNumSlots - 1, &a) ||
          (dash != std::string_view::npos && !ParseField(s.substr(dash + 1), kNumSlots - 1, &b))) {
        return bad("bad slot range");
      }
      if (dash == std::string_view::npos) b = a;
      if (a > b) return bad("bad slot range");
      for (uint64_t x = a; x <= b; ++x) AddSlot(n, int(x));
    }
  }
  if (myself_ == nullptr) {
    *error = "Unrecoverable error: corrupted cluster config file \"" + opt_.config_file +
             "\" (no myself line)";
    return false;
  }
  synced_epochs_ = {current_epoch_, myself_->config_epoch, last_vote_epoch_};  // as on disk
  return true;
}

bool Cluster::SaveConfig(std::string* error) {
  save_pending_ = false;
  // An epoch a node gave out (a vote, a config epoch) must survive a power loss, or it could be
  // given twice; the slot table and the node list need not (the epochs settle them again), so
  // SETSLOT, ADDSLOTS, MEET... skip the fsyncs, which cost ~10 ms each per reshard step here.
  const std::array<uint64_t, 3> epochs{current_epoch_, myself_->config_epoch, last_vote_epoch_};
  if (epochs == synced_epochs_) return WriteFileInPlace(opt_.config_file, NodesText(true), error);
  if (!WriteFileDurably(opt_.config_file, NodesText(true), error)) return false;
  synced_epochs_ = epochs;
  return true;
}

void Cluster::SaveOrDie() {
  std::string error;
  if (!SaveConfig(&error)) {
    LogWarning("Fatal: could not save the cluster configuration: " + error);
    _exit(1);  // as Redis: a node must never run on a state it could not persist
  }
}

int Cluster::Quorum() const { return size_ / 2 + 1; }

void Cluster::UpdateState(int slot) {
  int new_state = 0;
  if (opt_.require_full_coverage) {
    // Every slot has one owner at most (AddSlot/DelSlot keep numslots), so the slots are all
    // served iff the owners not in FAIL hold 16384 between them.
    int covered = 0;
    for (auto& [name, n] : nodes_) {
      if (!(n->flags & cluster::kFailFlag)) covered += n->numslots;
    }
    if (covered != kNumSlots) new_state = 1;
  }
  int size = 0, reachable = 0;
  for (auto& [name, n] : nodes_) {
    if ((n->flags & cluster::kMaster) && n->numslots > 0) {
      ++size;
      if (!(n->flags & (cluster::kFailFlag | cluster::kPfail))) ++reachable;
    }
  }
  size_ = size;
  if (reachable < Quorum()) new_state = 1;
  // As Redis: a master that starts (or restarts) waits a moment for the others' view before it
  // accepts writes, so a stale node does not serve slots it lost meanwhile. The route table is
  // published all the same (the cluster still down in it): the request path reads one.
  if (new_state == 0 && state_ == 1 && (myself_->flags & cluster::kMaster) &&
      NowMs() - start_ms_ < 2000) {
    new_state = state_;
  }
  if (new_state != state_) {
    state_ = new_state;
    LogNotice(std::string("Cluster state changed: ") + (state_ == 0 ? "ok" : "fail"));
  }
  Publish(slot);
}

bool Cluster::RouteId(const Node* n, uint16_t* id) const {
  if (n == nullptr) {
    *id = RouteTable::kNone;
    return true;
  }
  for (size_t i = 0; i < route_nodes_.size(); ++i) {
    if (route_nodes_[i] == n) {
      *id = uint16_t(i);
      return true;
    }
  }
  return false;
}

void Cluster::Publish(int slot) {
  uint16_t owner = 0, migrating = 0;
  if (slot >= 0 && routes_ != nullptr && RouteId(slots_[slot], &owner) &&
      RouteId(migrating_to_[slot], &migrating)) {
    auto t = std::make_shared<RouteTable>(*routes_);  // ~80 KB copied, not 16384 slots rebuilt
    t->owner[slot] = owner;
    t->migrating[slot] = migrating;
    t->importing[slot] = importing_from_[slot] != nullptr;
    t->ok = state_ == 0;
    t->allow_reads_when_down = opt_.allow_reads_when_down;
    routes_ = std::move(t);
    routes_version_.fetch_add(1, std::memory_order_release);
    return;
  }
  auto t = std::make_shared<RouteTable>();
  route_nodes_.assign(1, myself_);
  std::map<const Node*, uint16_t> index;
  t->endpoints.push_back(Endpoint(*myself_));
  index[myself_] = RouteTable::kSelf;
  // Runs of slots share an owner: the last answer is kept, so the map is asked once per run.
  const Node* last = nullptr;
  uint16_t last_id = RouteTable::kNone;
  auto id = [&](const Node* n) -> uint16_t {
    if (n == nullptr) return RouteTable::kNone;
    if (n == last) return last_id;
    auto [it, inserted] = index.try_emplace(n, uint16_t(t->endpoints.size()));
    if (inserted) {
      t->endpoints.push_back(Endpoint(*n));
      route_nodes_.push_back(n);
    }
    last = n;
    last_id = it->second;
    return last_id;
  };
  for (int s = 0; s < kNumSlots; ++s) {
    t->owner[s] = id(slots_[s]);
    t->migrating[s] = id(migrating_to_[s]);
    t->importing[s] = importing_from_[s] != nullptr;
  }
  if ((myself_->flags & cluster::kSlave) && !myself_->slaveof.empty()) {
    if (const Node* m = FindNode(myself_->slaveof)) t->my_master = id(m);
  }
  t->ok = state_ == 0;
  t->allow_reads_when_down = opt_.allow_reads_when_down;
  routes_ = std::move(t);
  routes_version_.fetch_add(1, std::memory_order_release);
}

const RouteTable& Cluster::Routes() const {
  struct Cache {
    const Cluster* owner = nullptr;
    uint64_t version = 0;
    std::shared_ptr<const RouteTable> table;
  };
  thread_local Cache cache;
  const uint64_t v = routes_version_.load(std::memory_order_acquire);
  if (cache.owner != this || cache.version != v) {
    std::lock_guard<std::mutex> lock(const_cast<std::mutex&>(mu_));
    cache.owner = this;
    cache.version = routes_version_.load(std::memory_order_relaxed);
    cache.table = routes_;
  }
  if (cache.table == nullptr) {
    // Before the first publication (Start publishes one): no slot served here, the cluster down.
    static const RouteTable* const kNothing = [] {
      auto* t = new RouteTable();
      t->owner.fill(RouteTable::kNone);
      t->migrating.fill(RouteTable::kNone);
      t->importing.fill(0);
      return t;
    }();
    return *kNothing;
  }
  return *cache.table;
}

}  // namespace lavik
