// Cluster: this node's view of a Redis Cluster (`cluster-enabled yes`) and the cluster bus that
// keeps it in step with the other nodes — Redis 7.0's design, spoken byte for byte
// (doc/cluster.md): nodes with 40-hex names, 16384 slots each owned by one master, config
// epochs deciding who owns a contested slot, PING/PONG/MEET with gossip, PFAIL/FAIL detection,
// FAIL and UPDATE messages, nodes.conf written atomically after every change of state.
//
// The request path never takes the state's mutex: every change that moves routing (slots,
// MIGRATING/IMPORTING, addresses, cluster_state) publishes an immutable RouteTable and bumps
// a version; each worker keeps the table it last saw and re-reads it only when the version
// moved (one atomic load per keyed command in cluster mode). With cluster mode off there is no
// Cluster object at all and the dispatcher's check is one null test.
//
// Thread safety: every public method may be called from any thread. The bus runs on one thread
// of its own (poll(), non-blocking sockets); it and the CLUSTER commands share the state under
// mu_, held for a message's or a command's processing, never across a wait.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/slot.h"
#include "cluster/bus_message.h"

struct pollfd;

namespace lavik {

class ReplyWriter;

namespace cluster {

struct Link;

struct Node {
  std::string name;
  uint16_t flags = 0;
  std::string ip;
  std::string hostname;
  int port = 0, cport = 0, pport = 0;
  uint64_t config_epoch = 0;
  uint64_t repl_offset = 0;  // the header's offset in its last message
  std::string slaveof;       // a replica's master (name); empty for masters
  // When this node learned `slaveof` (Cluster::SetSlaveOf's count): SLOTS and SHARDS list a
  // master's replicas in that order, as Redis lists its master->slaves array.
  uint64_t replica_since = 0;
  SlotBitmap slots{};
  int numslots = 0;
  int64_t ctime = 0, ping_sent = 0, pong_received = 0, data_received = 0, fail_time = 0;
  int64_t voted_time = 0;     // a master: when this node last voted for one of its replicas
  int64_t orphaned_time = 0;  // a master: since when it has had no working replica (0: has)
  std::map<std::string, int64_t> fail_reports;  // reporter's name -> last report (ms)
  Link* link = nullptr;                         // outbound
  Link* inbound = nullptr;                      // accepted from it
};

struct Link {
  int fd = -1;
  bool inbound = false;
  bool connecting = false;
  bool dead = false;
  Node* node = nullptr;
  std::string rbuf, wbuf;
  int64_t ctime = 0;
};

// What the request path reads: immutable once published.
struct RouteTable {
  static constexpr uint16_t kNone = 0xFFFF;
  static constexpr uint16_t kSelf = 0;
  std::array<uint16_t, kNumSlots> owner;      // endpoint index (kSelf: this node), kNone
  std::array<uint16_t, kNumSlots> migrating;  // MIGRATING to (endpoint index) or kNone
  std::array<uint8_t, kNumSlots> importing;   // 1: IMPORTING here
  std::vector<std::string> endpoints;         // "ip:port" by index ([0]: this node)
  uint16_t my_master = kNone;                 // a replica: its master's endpoint (READONLY reads)
  bool ok = false;                            // cluster_state:ok
  bool allow_reads_when_down = false;
};

// Start-up, before the data are opened: whether the nodes.conf at `path` says this node
// (`myself`) is a replica, so it will follow a master as soon as the cluster starts (the data
// then continue that master's history: server/server_start.cc). False if the file is missing or
// has no such line.
bool ConfigSaysReplica(const std::string& path);

}  // namespace cluster

class Cluster {
 public:
  struct Options {
    std::string config_file = "nodes.conf";
    int64_t node_timeout_ms = 15000;
    int port = 6379;   // the clients' port
    int bus_port = 0;  // cluster-port; 0: port + 10000
    std::string bind;  // the address(es) the bus listens on (the server's bind)
    std::string announce_ip, announce_hostname;
    int announce_port = 0, announce_bus_port = 0;
    bool require_full_coverage = true;
    bool allow_reads_when_down = false;
    // The bus thread calls these under the state's mutex, so they must only hand work over:
    // slots this node lost to a higher config epoch (their keys are to be deleted), a PUBLISH
    // (shard: PUBLISHSHARD) from another node to deliver here, and this node's replication
    // offset (INFO's master_repl_offset) for the header and SHARDS.
    std::function<void(const std::vector<uint16_t>& slots)> on_slots_lost;
    std::function<void(bool shard, std::string_view channel, std::string_view message)> on_publish;
    std::function<int64_t()> repl_offset;
    // Replicas and failover (cluster_failover.cc). Called without the state's mutex, from the
    // bus thread or a CLUSTER command: follow a master (REPLICAOF host port), stop following
    // and keep the data (REPLICAOF NO ONE), and a replica's data age — milliseconds since the
    // master was last heard while the link is up, since it went down otherwise (a huge value
    // when it never was up).
    std::function<void(const std::string& host, int port)> follow;
    std::function<void()> promote;
    std::function<int64_t()> repl_data_age_ms;
    // A master during a manual failover: pause client writes (a pause of its own, apart from
    // CLIENT PAUSE; the cluster lifts it when the failover ends or times out), end the pause;
    // and whether every write applied so far is in the replication stream (so the offset sent
    // to the replica is final).
    std::function<void()> pause_writes;
    std::function<void()> unpause_writes;
    std::function<bool()> repl_settled;
    bool allow_replica_migration = true;  // cluster-allow-replica-migration
    bool replica_no_failover = false;     // cluster-replica-no-failover
    int replica_validity_factor = 10;     // cluster-replica-validity-factor
    int repl_ping_period_s = 10;          // repl-ping-replica-period
    int migration_barrier = 1;            // cluster-migration-barrier
  };
  explicit Cluster(Options options);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Start-up: reads nodes.conf (or creates this node and writes it), binds the bus port and
  // starts the bus thread. False with *error on failure.
  bool Start(std::string* error);
  void Stop();

  // Live settings (CONFIG SET).
  void SetNodeTimeout(int64_t ms) { node_timeout_ms_.store(ms, std::memory_order_relaxed); }
  void SetAnnounceHostname(std::string h);
  void SetRequireFullCoverage(bool on);
  void SetAllowReadsWhenDown(bool on);
  void SetReplicaNoFailover(bool on);  // also myself's `nofailover` flag, as Redis
  void SetReplicaValidityFactor(int factor);
  void SetAllowReplicaMigration(bool on);
  void SetMigrationBarrier(int barrier);
  void SetReplPingPeriod(int seconds);

  // --- Request path ---
  // The routing table this thread saw last, refreshed when the cluster published a new one.
  const cluster::RouteTable& Routes() const;
  // Moves each time a new table is published (before the command that changed it replies).
  uint64_t RoutesVersion() const { return routes_version_.load(std::memory_order_acquire); }
  // MOVED/ASK's target text ("ip:port") of an endpoint index.
  uint64_t connections() const { return links_count_.load(std::memory_order_relaxed); }

  // PUBLISH in cluster mode: the message goes to every other node over the bus (Redis 7.0's
  // clusterPropagatePublish); each delivers it to its own subscribers.
  // shard (SPUBLISH): only to the other nodes of this node's shard — its master and replicas
  // (clusterPropagatePublishShard).
  void PropagatePublish(bool shard, std::string_view channel, std::string_view message);

  // --- CLUSTER commands (cluster_commands.cc); each writes its reply ---
  std::string MyId();
  void Info(std::string* out);
  void Nodes(std::string* out);
  // The names of `master`'s replicas in the order SLOTS lists them (REPLICAS follows it).
  std::vector<std::string> ReplicaNames(std::string_view master);
  void Slots(ReplyWriter& w);
  void Shards(ReplyWriter& w);
  void Links(ReplyWriter& w);
  // Slot edits: empty on success, else the error text (nothing changed).
  std::string AddSlots(const std::vector<int>& slots);
  std::string DelSlots(const std::vector<int>& slots);
  void FlushSlots();
  // SETSLOT: `keys_in_slot` counts this node's keys in the slot (asked before the call).
  std::string SetSlot(int slot, std::string_view action, std::string_view node,
                      size_t keys_in_slot);
  std::string Meet(const std::string& ip, int port, int bus_port);
  std::string Forget(std::string_view name);
  std::string Reset(bool hard);
  std::string SaveConfigOrError();
  std::string BumpEpoch(std::string* reply);
  std::string SetConfigEpoch(uint64_t epoch);
  std::string CountFailureReports(std::string_view name, int64_t* count);
  // REPLICATE: `db_keys` counts this node's keys (asked before the call).
  std::string Replicate(std::string_view name, size_t db_keys);
  // FAILOVER [FORCE|TAKEOVER] (cluster_failover.cc).
  std::string Failover(bool force, bool takeover);
  bool MyselfHasSlots();
  // Slots owned here (for FLUSHSLOTS' emptiness check, RESET's key check).
  bool IsMaster();

 private:
  using Node = cluster::Node;
  using Link = cluster::Link;

  // cluster_state.cc (mu_ held)
  Node* CreateNode(std::string name, uint16_t flags);
  Node* FindNode(std::string_view name);
  // n is (now) a replica of `master`: recorded with the next replica_since when it changes.
  void SetSlaveOf(Node* n, const std::string& master);
  // The known replicas of `master` that `keep` accepts, in the order this node learned them.
  std::vector<const Node*> ReplicasOf(const Node& master,
                                      const std::function<bool(const Node&)>& keep) const;
  void DeleteNode(Node* n);
  void RenameNode(Node* n, const std::string& name);
  bool AddSlot(Node* n, int slot);
  void DelSlot(int slot);
  void NodeLine(const Node& n, std::string* out);
  std::string NodesText(bool for_file);
  bool LoadConfig(std::string* error);
  bool SaveConfig(std::string* error);
  void SaveOrDie();
  // slot >= 0: only that slot's routes changed (SETSLOT), so Publish may patch a copy of the
  // current table instead of rebuilding all 16384 entries.
  void UpdateState(int slot = -1);
  void Publish(int slot = -1);
  bool RouteId(const Node* n, uint16_t* id) const;
  int Quorum() const;
  std::string Endpoint(const Node& n) const;
  uint64_t MyReplOffset() const { return opt_.repl_offset ? uint64_t(opt_.repl_offset()) : 0; }
  int64_t NodeTimeout() const { return node_timeout_ms_.load(std::memory_order_relaxed); }

  // cluster_bus.cc
  void BusLoop();
  void LoopOnce(const std::vector<pollfd>& fds, const std::vector<Link*>& polled);
  void Cron(int64_t now);
  void Accept(int64_t now);
  void Connect(Node* n, int64_t now);
  void ReadLink(Link* l, int64_t now);
  void WriteLink(Link* l);
  void CloseLink(Link* l);
  void Header(uint16_t type, cluster::Message* m);
  void SendPing(Link* l, uint16_t type, int64_t now);
  void SendFail(const std::string& name);
  void SendUpdate(Link* l, const Node& owner);
  void Send(Link* l, const cluster::Message& m);
  void Broadcast(const cluster::Message& m);
  void Wake();

  // cluster_process.cc (mu_ held): clusterProcessPacket and what it calls.
  void Process(Link* l, const cluster::Message& m, int64_t now);
  void ProcessGossip(const cluster::Message& m, Node* sender, int64_t now);
  void UpdateSlotsWith(Node* sender, uint64_t sender_epoch, const cluster::SlotBitmap& slots);
  void HandleEpochCollision(Node* sender);
  void MarkFailingIfNeeded(Node* n, int64_t now);
  void ClearFailureIfNeeded(Node* n, int64_t now);

  // cluster_failover.cc (mu_ held): Redis 7.0's replica roles and failover election.
  Node* MyMaster();               // myself's master when a replica, else null
  void SetMaster(Node* n);        // clusterSetMaster
  void SetNodeAsMaster(Node* n);  // clusterSetNodeAsMaster
  void FollowMasterIfNeeded();    // the replication link points at myself's master
  int ReplicaRank();              // clusterGetSlaveRank
  void HandleReplicaFailover(int64_t now);
  void HandleManualFailover();
  void HandleReplicaMigration(
      int64_t now);  // clusterCron's orphan count + clusterHandleSlaveMigration
  void ManualFailoverCheckTimeout(int64_t now);
  void ResetManualFailover();
  void RequestFailoverAuth();
  void SendFailoverAuthIfNeeded(Node* node, const cluster::Message& req, int64_t now);
  void FailoverReplaceYourMaster();
  void BroadcastPong(bool local_replicas_only);
  uint64_t MaxEpoch() const;
  bool MasterPaused(int64_t now);  // a master's PAUSED flag: paused and its offset final
  // Work for the replication side, run after mu_ is released (RunDeferred).
  void Defer(std::function<void()> f) { deferred_.push_back(std::move(f)); }
  void RunDeferred();

  Options opt_;
  std::atomic<int64_t> node_timeout_ms_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Node>, std::less<>> nodes_;
  Node* myself_ = nullptr;
  uint64_t current_epoch_ = 0;
  uint64_t replicas_learned_ = 0;  // the last Node::replica_since given
  uint64_t last_vote_epoch_ = 0;
  // The epochs (current, myself's config, last vote) of the last fsynced nodes.conf: a save that
  // changes one of them is fsynced, the others are not (as Redis's CLUSTER_TODO_FSYNC_CONFIG).
  std::array<uint64_t, 3> synced_epochs_{};
  int state_ = 1;  // 0 ok, 1 fail
  int size_ = 0;   // masters with slots
  std::array<Node*, kNumSlots> slots_{};
  std::array<Node*, kNumSlots> migrating_to_{};
  std::array<Node*, kNumSlots> importing_from_{};
  std::map<std::string, int64_t, std::less<>> blacklist_;  // forgotten: name -> until (ms)
  std::array<uint64_t, cluster::kMsgTypeCount> sent_{}, received_{};
  int64_t start_ms_ = 0;
  int64_t pfail_nodes_ = 0;
  bool save_pending_ = false;
  uint64_t cron_iteration_ = 0;
  int64_t next_cron_ = 0;  // bus thread

  std::vector<std::unique_ptr<Link>> links_;  // bus thread (and CLUSTER LINKS under mu_)
  int listen_fd_ = -1;
  int wake_fd_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> links_count_{0};

  // Failover (under mu_), Redis's failover_auth_* and mf_* fields.
  int64_t failover_auth_time_ = 0;
  int failover_auth_count_ = 0;
  bool failover_auth_sent_ = false;
  int failover_auth_rank_ = 0;
  uint64_t failover_auth_epoch_ = 0;
  bool handle_failover_ = false;  // votes arrived: run the election step before sleeping
  static constexpr int64_t kMfTimeoutMs = 5000;  // a manual failover's time (CLUSTER_MF_TIMEOUT)
  int64_t mf_end_ = 0;  // a manual failover in progress until then (0: none)
  bool mf_can_start_ = false;
  Node* mf_replica_ = nullptr;  // a master: the replica that asked (MFSTART)
  int64_t mf_master_offset_ = -1;
  int64_t mf_paused_ms_ = 0;  // a master: when it paused writes for mf_replica_
  std::string following_;     // the "ip:port" the replication link was pointed at
  std::vector<std::function<void()>> deferred_;
  std::mutex deferred_mu_;  // RunDeferred: one runner at a time, in order

  std::shared_ptr<const cluster::RouteTable> routes_;  // under mu_
  std::vector<const Node*> route_nodes_;  // routes_'s endpoints' nodes, by index; under mu_
  std::atomic<uint64_t> routes_version_{0};
};

}  // namespace lavik
