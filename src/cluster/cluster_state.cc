// The cluster state: nodes, slots, epochs, nodes.conf and the published routing table.
#include <unistd.h>

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

uint16_t ParseFlags(std::string_view s) {
  uint16_t f = 0;
  while (!s.empty()) {
    size_t c = s.find(',');
    std::string_view w = s.substr(0, c);
    if (w == "myself") f |= cluster::kMyself;
    if (w == "master") f |= cluster::kMaster;
    if (w == "slave") f |= cluster::kSlave;
    if (w == "fail?") f |= cluster::kPfail;
    if (w == "fail") f |= cluster::kFailFlag;
    if (w == "handshake") f |= cluster::kHandshake;
    if (w == "noaddr") f |= cluster::kNoAddr;
    if (w == "nofailover") f |= cluster::kNoFailover;
    if (c == std::string_view::npos) break;
    s.remove_prefix(c + 1);
  }
  return f;
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

void Cluster::DeleteNode(Node* n) {
  for (int s = 0; s < kNumSlots; ++s) {
    if (importing_from_[s] == n) importing_from_[s] = nullptr;
    if (migrating_to_[s] == n) migrating_to_[s] = nullptr;
    if (slots_[s] == n) slots_[s] = nullptr;
  }
  for (auto& [name, other] : nodes_) other->fail_reports.erase(n->name);
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
  if (n.flags & cluster::kMaster) {
    for (int s = 0; s < kNumSlots; ++s) {
      if (!cluster::TestSlot(n.slots, s)) continue;
      int e = s;
      while (e + 1 < kNumSlots && cluster::TestSlot(n.slots, e + 1)) ++e;
      out->push_back(' ');
      out->append(std::to_string(s));
      if (e != s) out->append("-" + std::to_string(e));
      s = e;
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
      for (size_t i = 1; i + 1 < w.size(); i += 2) {
        const uint64_t v = std::strtoull(std::string(w[i + 1]).c_str(), nullptr, 10);
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
    if (colon == std::string_view::npos) return bad("bad address");
    n->ip = std::string(addr.substr(0, colon));
    n->port = std::atoi(std::string(addr.substr(colon + 1, at - colon - 1)).c_str());
    n->cport = at == std::string_view::npos ? n->port + 10000
                                            : std::atoi(std::string(addr.substr(at + 1)).c_str());
    n->flags = ParseFlags(w[2]) & ~(cluster::kPfail | cluster::kHandshake | cluster::kMeetFlag);
    if (n->flags & cluster::kMyself) myself_ = n;
    n->slaveof = w[3] == "-" ? std::string() : std::string(w[3]);
    if (std::atoll(std::string(w[4]).c_str()) != 0) n->ping_sent = now;
    if (std::atoll(std::string(w[5]).c_str()) != 0) n->pong_received = now;
    n->config_epoch = std::strtoull(std::string(w[6]).c_str(), nullptr, 10);
    for (size_t i = 8; i < w.size(); ++i) {
      std::string_view s = w[i];
      if (s.front() == '[') {
        // [slot->-name] migrating, [slot-<-name] importing
        size_t dash = s.find('-');
        if (dash == std::string_view::npos || s.size() < dash + 3 + cluster::kNameLen) {
          return bad("bad open slot");
        }
        int slot = std::atoi(std::string(s.substr(1, dash - 1)).c_str());
        bool migrating = s[dash + 1] == '>';
        std::string other(s.substr(dash + 3, cluster::kNameLen));
        Node* o = FindNode(other);
        if (o == nullptr) o = CreateNode(other, 0);
        if (slot < 0 || slot >= kNumSlots) return bad("bad slot");
        (migrating ? migrating_to_ : importing_from_)[slot] = o;
        continue;
      }
      size_t dash = s.find('-');
      int a = std::atoi(std::string(s.substr(0, dash)).c_str());
      int b =
          dash == std::string_view::npos ? a : std::atoi(std::string(s.substr(dash + 1)).c_str());
      if (a < 0 || b >= kNumSlots || a > b) return bad("bad slot range");
      for (int x = a; x <= b; ++x) AddSlot(n, x);
    }
  }
  if (myself_ == nullptr) {
    *error = "Unrecoverable error: corrupted cluster config file \"" + opt_.config_file +
             "\" (no myself line)";
    return false;
  }
  return true;
}

bool Cluster::SaveConfig(std::string* error) {
  save_pending_ = false;
  return WriteFileDurably(opt_.config_file, NodesText(true), error);
}

void Cluster::SaveOrDie() {
  std::string error;
  if (!SaveConfig(&error)) {
    LogWarning("Fatal: could not save the cluster configuration: " + error);
    _exit(1);  // as Redis: a node must never run on a state it could not persist
  }
}

int Cluster::Quorum() const { return size_ / 2 + 1; }

void Cluster::UpdateState() {
  int new_state = 0;
  if (opt_.require_full_coverage) {
    for (int s = 0; s < kNumSlots; ++s) {
      if (slots_[s] == nullptr || (slots_[s]->flags & cluster::kFailFlag)) {
        new_state = 1;
        break;
      }
    }
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
  // accepts writes, so a stale node does not serve slots it lost meanwhile.
  if (new_state == 0 && state_ == 1 && NowMs() - start_ms_ < 2000) return;
  if (new_state != state_) {
    state_ = new_state;
    LogNotice(std::string("Cluster state changed: ") + (state_ == 0 ? "ok" : "fail"));
  }
  Publish();
}

void Cluster::Publish() {
  auto t = std::make_shared<RouteTable>();
  std::map<const Node*, uint16_t> index;
  t->endpoints.push_back(Endpoint(*myself_));
  index[myself_] = RouteTable::kSelf;
  auto id = [&](const Node* n) -> uint16_t {
    if (n == nullptr) return RouteTable::kNone;
    auto [it, inserted] = index.try_emplace(n, uint16_t(t->endpoints.size()));
    if (inserted) t->endpoints.push_back(Endpoint(*n));
    return it->second;
  };
  for (int s = 0; s < kNumSlots; ++s) {
    t->owner[s] = id(slots_[s]);
    t->migrating[s] = id(migrating_to_[s]);
    t->importing[s] = importing_from_[s] != nullptr;
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
  return *cache.table;
}

}  // namespace lavik
