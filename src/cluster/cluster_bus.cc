// The cluster bus: the thread, its links, building and sending messages, and the cron.
// Handling what arrives is cluster_process.cc's.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/clock.h"
#include "base/log.h"
#include "base/random.h"
#include "cluster/cluster.h"

namespace lavik {

using cluster::Link;
using cluster::Message;
using cluster::Node;

namespace {

constexpr int64_t kCronMs = 100;

}  // namespace

bool Cluster::Start(std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  start_ms_ = NowMs();
  if (!LoadConfig(error)) return false;
  if (myself_ == nullptr) {
    myself_ = CreateNode("", cluster::kMyself | cluster::kMaster);
    LogNotice("No cluster configuration found, I'm " + myself_->name);
  } else {
    LogNotice("Node configuration loaded, I'm " + myself_->name);
  }
  myself_->flags &= ~cluster::kNoFailover;  // clusterUpdateMyselfFlags
  if (opt_.replica_no_failover) myself_->flags |= cluster::kNoFailover;
  myself_->port = opt_.announce_port != 0 ? opt_.announce_port : opt_.port;
  const int bus = opt_.bus_port != 0 ? opt_.bus_port : opt_.port + 10000;
  myself_->cport = opt_.announce_bus_port != 0 ? opt_.announce_bus_port : bus;
  if (!opt_.announce_ip.empty()) myself_->ip = opt_.announce_ip;
  myself_->hostname = opt_.announce_hostname;
  if (opt_.port > 65535 - 10000 && opt_.bus_port == 0) {
    *error =
        "Redis port number too high. Cluster communication port is 10,000 port numbers "
        "higher than your Redis port. Your Redis port number must be 55535 or less.";
    return false;
  }
  // Bind the bus on the server's first bind address.
  std::string addr = opt_.bind.substr(0, opt_.bind.find(' '));
  if (addr.empty() || addr == "*") addr = "0.0.0.0";
  bool v6 = addr.find(':') != std::string::npos;
  listen_fd_ = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage ss{};
  socklen_t len;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(uint16_t(bus));
    inet_pton(AF_INET6, addr.c_str(), &a->sin6_addr);
    len = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(uint16_t(bus));
    inet_pton(AF_INET, addr.c_str(), &a->sin_addr);
    len = sizeof(sockaddr_in);
  }
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0 ||
      listen(listen_fd_, 511) != 0) {
    *error = "could not bind the cluster bus on " + addr + ":" + std::to_string(bus) + ": " +
             std::strerror(errno);
    close(listen_fd_);
    listen_fd_ = -1;
    return false;
  }
  if (pipe2(wake_fd_, O_NONBLOCK | O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (!SaveConfig(error)) return false;
  UpdateState();
  thread_ = std::thread([this] { BusLoop(); });
  return true;
}

void Cluster::Stop() {
  if (!thread_.joinable()) return;
  stop_ = true;
  Wake();
  thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& l : links_) {
    if (l->fd >= 0) close(l->fd);
  }
  links_.clear();
  for (auto& [name, n] : nodes_) n->link = n->inbound = nullptr;
  if (listen_fd_ >= 0) close(listen_fd_);
  for (int& fd : wake_fd_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  listen_fd_ = -1;
}

void Cluster::Wake() {
  if (wake_fd_[1] >= 0) {
    char c = 1;
    [[maybe_unused]] ssize_t r = write(wake_fd_[1], &c, 1);
  }
}

void Cluster::BusLoop() {
  std::vector<pollfd> fds;
  std::vector<Link*> polled;
  while (!stop_.load()) {
    fds.clear();
    polled.clear();
    {
      std::lock_guard<std::mutex> lock(mu_);
      fds.push_back({listen_fd_, POLLIN, 0});
      fds.push_back({wake_fd_[0], POLLIN, 0});
      for (auto& l : links_) {
        short ev = POLLIN;
        if (l->connecting || !l->wbuf.empty()) ev |= POLLOUT;
        fds.push_back({l->fd, ev, 0});
        polled.push_back(l.get());
      }
    }
    int64_t now = NowMs();
    int timeout = int(std::clamp<int64_t>(next_cron_ - now, 0, kCronMs));
    poll(fds.data(), fds.size(), timeout);
    if (stop_.load()) break;
    LoopOnce(fds, polled);
    RunDeferred();  // the replication side's work, without the state's mutex
  }
}

void Cluster::LoopOnce(const std::vector<pollfd>& fds, const std::vector<Link*>& polled) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t now = NowMs();
    if (fds[1].revents & POLLIN) {
      char buf[64];
      while (read(wake_fd_[0], buf, sizeof(buf)) > 0) {
      }
    }
    if (fds[0].revents & POLLIN) Accept(now);
    for (size_t i = 0; i < polled.size(); ++i) {
      Link* l = polled[i];
      const short re = fds[i + 2].revents;
      if (l->dead || re == 0) continue;
      if (l->connecting) {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0 || (re & (POLLERR | POLLHUP))) {
          CloseLink(l);
          continue;
        }
        if (!(re & POLLOUT)) continue;
        l->connecting = false;
      }
      if (re & (POLLIN | POLLERR | POLLHUP)) ReadLink(l, now);
      if (!l->dead && !l->wbuf.empty()) WriteLink(l);
    }
    if (now >= next_cron_) {
      Cron(now);
      next_cron_ = now + kCronMs;
    }
    if (handle_failover_ && (myself_->flags & cluster::kSlave)) {
      HandleManualFailover();
      HandleReplicaFailover(now);
    }
    // Messages queued by commands or by processing are flushed at once.
    for (auto& l : links_) {
      if (!l->dead && !l->connecting && !l->wbuf.empty()) WriteLink(l.get());
    }
    std::erase_if(links_, [](const std::unique_ptr<Link>& l) { return l->dead; });
    links_count_.store(links_.size(), std::memory_order_relaxed);
    if (save_pending_) SaveOrDie();
  }
}

void Cluster::Accept(int64_t now) {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    auto l = std::make_unique<Link>();
    l->fd = fd;
    l->inbound = true;
    l->ctime = now;
    links_.push_back(std::move(l));
  }
}

void Cluster::Connect(Node* n, int64_t now) {
  bool v6 = n->ip.find(':') != std::string::npos;
  int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_storage ss{};
  socklen_t len;
  bool ok;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(uint16_t(n->cport));
    ok = inet_pton(AF_INET6, n->ip.c_str(), &a->sin6_addr) == 1;
    len = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(uint16_t(n->cport));
    ok = inet_pton(AF_INET, n->ip.c_str(), &a->sin_addr) == 1;
    len = sizeof(sockaddr_in);
  }
  if (!ok || (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS)) {
    close(fd);
    if (n->ping_sent == 0) n->ping_sent = now;  // counts towards PFAIL as an unanswered ping
    return;
  }
  auto l = std::make_unique<Link>();
  l->fd = fd;
  l->connecting = true;
  l->ctime = now;
  l->node = n;
  n->link = l.get();
  Link* raw = l.get();
  links_.push_back(std::move(l));
  // Queue the first PING (or MEET) now; it leaves once the connection is up. An older ping
  // still unanswered keeps its time, so a flapping link cannot hide a failing node.
  const int64_t old_ping = n->ping_sent;
  SendPing(raw, (n->flags & cluster::kMeetFlag) ? cluster::kMeet : cluster::kPing, now);
  if (old_ping != 0) n->ping_sent = old_ping;
  n->flags &= ~cluster::kMeetFlag;
}

void Cluster::CloseLink(Link* l) {
  if (l->dead) return;
  l->dead = true;
  if (l->fd >= 0) close(l->fd);
  l->fd = -1;
  if (l->node != nullptr) {
    if (l->node->link == l) l->node->link = nullptr;
    if (l->node->inbound == l) l->node->inbound = nullptr;
  }
}

void Cluster::ReadLink(Link* l, int64_t now) {
  char buf[16384];
  for (;;) {
    ssize_t r = read(l->fd, buf, sizeof(buf));
    if (r > 0) {
      l->rbuf.append(buf, size_t(r));
      continue;
    }
    if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
      CloseLink(l);
      return;
    }
    if (errno == EAGAIN) break;
  }
  size_t at = 0;
  while (!l->dead) {
    std::string_view rest(l->rbuf.data() + at, l->rbuf.size() - at);
    const uint32_t len = cluster::PeekLength(rest);
    if (len == 0) break;
    if (len < 8 || std::memcmp(rest.data(), "RCmb", 4) != 0 || len > (64u << 20)) {
      CloseLink(l);  // not a cluster bus peer
      return;
    }
    if (rest.size() < len) break;
    Message m;
    if (cluster::Decode(rest.substr(0, len), &m)) {
      Process(l, m, now);
    } else {
      LogVerbose("cluster bus: dropped a malformed message");
    }
    at += len;
  }
  if (!l->dead) l->rbuf.erase(0, at);
}

void Cluster::WriteLink(Link* l) {
  while (!l->wbuf.empty()) {
    ssize_t r = send(l->fd, l->wbuf.data(), l->wbuf.size(), MSG_NOSIGNAL);
    if (r > 0) {
      l->wbuf.erase(0, size_t(r));
      continue;
    }
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
    CloseLink(l);
    return;
  }
}

void Cluster::Send(Link* l, const Message& m) {
  if (l == nullptr || l->dead) return;
  cluster::Encode(m, &l->wbuf);
  if (m.type < cluster::kMsgTypeCount) ++sent_[m.type];
}

void Cluster::Broadcast(const Message& m) {
  for (auto& [name, n] : nodes_) {
    if (n->link == nullptr || (n->flags & (cluster::kMyself | cluster::kHandshake))) continue;
    Send(n->link, m);
  }
}

void Cluster::Header(uint16_t type, Message* m) {
  m->type = type;
  m->sender = myself_->name;
  m->port = uint16_t(myself_->port);
  m->cport = uint16_t(myself_->cport);
  m->flags = myself_->flags;
  m->state = uint8_t(state_);
  m->current_epoch = current_epoch_;
  // A replica announces its master's slots and config epoch, and names it (clusterBuildMessageHdr).
  const Node* master = MyMaster();
  const Node& owner = master != nullptr ? *master : *myself_;
  m->config_epoch = owner.config_epoch;
  m->offset = MyReplOffset();
  m->slots = owner.slots;
  if (master != nullptr) m->slaveof = master->name;
  if (MasterPaused(NowMs())) m->mflags0 |= cluster::kFlagPaused;
  m->myip = opt_.announce_ip;
  m->hostname = myself_->hostname;
}

void Cluster::SendPing(Link* l, uint16_t type, int64_t now) {
  Message m;
  Header(type, &m);
  // Gossip about a tenth of the nodes (at least 3), never myself or the receiver, plus every
  // node in PFAIL, so failure reports spread fast.
  std::vector<Node*> candidates;
  for (auto& [name, n] : nodes_) {
    Node* p = n.get();
    if (p == myself_ || (p->flags & cluster::kPfail)) continue;
    if ((p->flags & (cluster::kHandshake | cluster::kNoAddr)) ||
        (p->link == nullptr && p->numslots == 0)) {
      continue;
    }
    candidates.push_back(p);
  }
  size_t wanted = std::max<size_t>(3, nodes_.size() / 10);
  const size_t fresh = nodes_.size() >= 2 ? nodes_.size() - 2 : 0;
  wanted = std::min(wanted, fresh);
  for (size_t i = 0; i < candidates.size() && m.gossip.size() < wanted; ++i) {
    std::swap(candidates[i], candidates[i + RandomBelow(candidates.size() - i)]);
  }
  auto add = [&](const Node& n) {
    cluster::Gossip& g = m.gossip.emplace_back();
    g.name = n.name;
    g.ping_sent = uint32_t(n.ping_sent / 1000);
    g.pong_received = uint32_t(n.pong_received / 1000);
    g.ip = n.ip;
    g.port = uint16_t(n.port);
    g.cport = uint16_t(n.cport);
    g.flags = n.flags;
    g.pport = uint16_t(n.pport);
  };
  for (size_t i = 0; i < candidates.size() && i < wanted; ++i) add(*candidates[i]);
  for (auto& [name, n] : nodes_) {
    if ((n->flags & cluster::kPfail) && !(n->flags & (cluster::kHandshake | cluster::kNoAddr))) {
      add(*n);
    }
  }
  if (l->node != nullptr && type == cluster::kPing) l->node->ping_sent = now;
  Send(l, m);
}

void Cluster::SendFail(const std::string& name) {
  Message m;
  Header(cluster::kFail, &m);
  m.about = name;
  Broadcast(m);
}

void Cluster::PropagatePublish(bool shard, std::string_view channel, std::string_view message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Message m;
    Header(shard ? cluster::kPublishShard : cluster::kPublish, &m);
    m.channel.assign(channel);
    m.payload.assign(message);
    if (!shard) {
      Broadcast(m);
    } else {
      // The shard: this node's master (or itself) and that master's replicas.
      const std::string& master =
          (myself_->flags & cluster::kSlave) ? myself_->slaveof : myself_->name;
      for (auto& [name, n] : nodes_) {
        if (n->link == nullptr || (n->flags & (cluster::kMyself | cluster::kHandshake))) continue;
        if (n->name == master || n->slaveof == master) Send(n->link, m);
      }
    }
  }
  Wake();  // the bus thread writes the links
}

void Cluster::SendUpdate(Link* l, const Node& owner) {
  if (l == nullptr) return;
  Message m;
  Header(cluster::kUpdate, &m);
  m.about = owner.name;
  m.update_epoch = owner.config_epoch;
  m.update_slots = owner.slots;
  Send(l, m);
}

void Cluster::Cron(int64_t now) {
  ++cron_iteration_;
  const int64_t timeout = NodeTimeout();
  const int64_t handshake_timeout = std::max<int64_t>(timeout, 1000);
  std::erase_if(blacklist_, [&](const auto& b) { return b.second <= now; });
  std::vector<Node*> expired;
  pfail_nodes_ = 0;
  for (auto& [name, n] : nodes_) {
    Node* p = n.get();
    if (p->flags & (cluster::kMyself | cluster::kNoAddr)) continue;
    if (p->flags & cluster::kPfail) ++pfail_nodes_;
    if ((p->flags & cluster::kHandshake) && now - p->ctime > handshake_timeout) {
      expired.push_back(p);
      continue;
    }
    if (p->link == nullptr) Connect(p, now);
  }
  for (Node* p : expired) DeleteNode(p);
  // Once a second, ping the node of a few random ones that answered longest ago.
  if (cron_iteration_ % 10 == 0) {
    std::vector<Node*> all;
    for (auto& [name, n] : nodes_) all.push_back(n.get());
    Node* best = nullptr;
    for (int i = 0; i < 5 && !all.empty(); ++i) {
      Node* p = all[RandomBelow(all.size())];
      if (p->link == nullptr || p->ping_sent != 0 ||
          (p->flags & (cluster::kMyself | cluster::kHandshake))) {
        continue;
      }
      if (best == nullptr || p->pong_received < best->pong_received) best = p;
    }
    if (best != nullptr) SendPing(best->link, cluster::kPing, now);
  }
  bool update = false;
  for (auto& [name, n] : nodes_) {
    Node* p = n.get();
    if (p->flags & (cluster::kMyself | cluster::kNoAddr | cluster::kHandshake)) continue;
    Link* l = p->link;
    // A master asked for a manual failover pings the replica continuously.
    if (mf_end_ != 0 && (myself_->flags & cluster::kMaster) && mf_replica_ == p && l != nullptr &&
        !l->connecting) {
      SendPing(l, cluster::kPing, now);
      continue;
    }
    // A link whose ping went unanswered for half the timeout is rebuilt: maybe only it is bad.
    if (l != nullptr && now - l->ctime > timeout && p->ping_sent != 0 &&
        now - p->ping_sent > timeout / 2 && now - p->data_received > timeout / 2) {
      CloseLink(l);
      l = nullptr;
    }
    if (l != nullptr && !l->connecting && p->ping_sent == 0 &&
        now - p->pong_received > timeout / 2) {
      SendPing(l, cluster::kPing, now);
      continue;
    }
    if (p->ping_sent == 0) continue;
    const int64_t delay = std::min(now - p->ping_sent, now - p->data_received);
    if (delay > timeout && !(p->flags & (cluster::kPfail | cluster::kFailFlag))) {
      LogVerbose("*** NODE " + p->name + " possibly failing");
      p->flags |= cluster::kPfail;
      update = true;
    }
  }
  FollowMasterIfNeeded();
  ManualFailoverCheckTimeout(now);
  if (myself_->flags & cluster::kSlave) {
    HandleManualFailover();
    HandleReplicaFailover(now);
  }
  HandleReplicaMigration(now);
  if (update || state_ != 0 || cron_iteration_ % 10 == 0) UpdateState();
}

}  // namespace lavik
