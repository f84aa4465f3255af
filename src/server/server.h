// Server: owns the workers, their shards, the listener and the command table; turns requests
// from connections into handler runs on the right worker; runs start-up and graceful shutdown.
//
// Request path (see doc/threading.md): Connection → Server::OnRequest (lookup, arity, auth) →
// route by key: the owning shard's worker runs the handler (inline when that is the connection's
// own worker and the shard is unlocked; otherwise the arguments are copied into a message posted
// to that worker, whose reply comes back the same way) → reply in the connection's buffer.
//
// Thread safety: OnOpen/OnRequest/OnClose run on the connection's worker. The members marked
// "any thread" are safe from every worker; the rest is set up before the workers start.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "acl/acl_log.h"
#include "client/services.h"
#include "commands/command.h"
#include "commands/command_table.h"
#include "commands/shards.h"
#include "config/config.h"
#include "config/config_registry.h"
#include "net/connection.h"
#include "net/listener.h"
#include "net/tls.h"
#include "observability/observability.h"
#include "observability/worker_stats.h"
#include "runtime/worker.h"
#include "server/memory_guard.h"
#include "server/save_state.h"
#include "storage/data_file.h"
#include "storage/recovery.h"

namespace lavik {

class ClientHub;
class Cluster;
class ClientState;
class PubSub;
class Master;
class Replica;
class SyncStream;
class Tracking;
struct RemoteCommand;

// A counter with one writer (its worker) and racy-but-atomic readers (INFO): a plain increment,
// no locked instruction on the hot path.
class Server : public RequestHandler {
 public:
  explicit Server(Config config);
  ~Server() override;

  // Binds, starts the workers and serves until SIGINT/SIGTERM or SHUTDOWN. Returns the process
  // exit code (0 after a clean shutdown, 1 if start-up failed).
  int Run();

  // RequestHandler (connection's worker).
  void OnOpen(Connection& c) override;
  Result OnRequest(Connection& c, std::span<const std::string_view> args) override;
  void OnClose(Connection& c) override;
  void OnQueryBufferLimit(Connection& c) override;
  void Prefetch(Connection& c, std::span<const std::string_view> keys) override;
  void PrefetchFlush() override;

  // --- For command handlers ---
  const Config& config() const { return config_; }
  const CommandTable& commands() const { return table_; }
  ShardSet& shards() { return *shards_; }
  Worker* worker(int id) { return workers_[id].get(); }
  int worker_count() const { return static_cast<int>(workers_.size()); }
  WorkerStats& stats(int worker_id) { return *stats_[worker_id]; }
  ClientState* clients_of(int worker_id) { return client_lists_[worker_id]; }  // owner thread
  int listening_port() const { return listener_.port(); }
  int64_t start_time_ms() const { return start_ms_; }
  const std::string& run_id() const { return run_id_; }
  std::atomic<int64_t>& connected_clients() { return connected_clients_; }
  Observability& observability() { return *obs_; }  // command stats, SLOWLOG, LATENCY, /metrics
  ClientHub& client_hub() { return *hub_; }         // CLIENT PAUSE/KILL, MONITOR, limits
  PubSub& pubsub() { return *pubsub_; }             // channel registry (pubsub/pubsub.h)
  Replica& replica() { return *replica_; }          // REPLICAOF state (replication/replica.h)
  Master& master() { return *master_; }             // serving replicas (replication/master.h)
  Tracking& tracking() { return *tracking_; }       // client-side caching (tracking/tracking.h)
  Cluster* cluster() { return cluster_.get(); }     // null unless cluster-enabled (cluster.h)

  // CONFIG GET/SET (any thread; serialized by a mutex).
  // local_client: a loopback or unix-socket client (enable-protected-configs local).
  Status ConfigSet(std::vector<std::pair<std::string, std::string>> params,
                   bool local_client = false);
  void ConfigGet(std::span<const std::string_view> patterns,
                 std::vector<std::pair<std::string, std::string>>* out);
  std::string ConfigValue(std::string_view name);  // one parameter's value ("" if unknown)
  // ACL users and log (any thread; see acl.h). NOAUTH applies while the default user is off or
  // has a password.
  bool auth_required() const { return acl_->default_needs_auth(); }
  Acl& acl() { return *acl_; }
  AclLog& acl_log() { return acl_log_; }
  const std::string& aclfile() const { return aclfile_; }  // empty: no ACL file
  int64_t maxclients() const { return maxclients_.load(std::memory_order_relaxed); }

  // Any thread: begin a graceful shutdown (as SIGTERM does).
  void RequestShutdown();  // SHUTDOWN (it saved already, or was told NOSAVE)
  bool SaveOnSignal();     // main thread: SIGTERM/SIGINT with save points (dump.rdb first)

  // SHUTDOWN or a signal waiting for lagging replicas (shutdown-timeout; doc/replication.md,
  // "SHUTDOWN and lagging replicas"). Begin: writes are held and the Master waits; `done`
  // (Master::ShutdownOutcome) comes once from the replication thread. False if a wait already
  // runs: a second SHUTDOWN joins it instead (`resumed` is then called, from any thread, with
  // true if the server goes on running, false if it exits).
  bool BeginShutdownWait(int64_t timeout_ms, std::function<void(int)> done);
  bool JoinShutdownWait(std::function<void(bool resumed)> resumed);  // false: none runs
  // The initiator's end of it: `resumed` (aborted, or the save failed) lifts the write pause.
  void EndShutdownWait(bool resumed);
  bool AbortShutdown();            // SHUTDOWN ABORT: false if no wait runs
  int64_t shutdown_in_ms() const;  // INFO's shutdown_in_milliseconds; -1 while none runs

  DataFile& data_file() { return *data_file_; }
  const RecoveryReport& recovery() const { return recovery_; }
  bool defrag_paused() const { return defrag_paused_.load(std::memory_order_relaxed); }
  MemoryGuard& memory_guard() { return *memory_guard_; }  // any thread (see memory_guard.h)
  SaveState& save_state() { return save_state_; }
  // Over the memory limit, unless this is a replica with replica-ignore-maxmemory yes (as
  // Redis's performEvictions, which then never fails).
  bool MemoryRefusesWrites() const;
  // stop-writes-on-bgsave-error yes, save points set, and the last background save failed.
  bool DiskErrorDeniesWrites() const {
    return !save_state_.last_ok.load(std::memory_order_relaxed) &&
           stop_writes_on_save_error_.load(std::memory_order_relaxed) &&
           has_save_points_.load(std::memory_order_relaxed);
  }  // any thread (see save_state.h)
  size_t registered_buffer_bytes(int id) const { return io_pools_[id]->bytes(); }  // worker id

 private:
  friend struct RemoteCommand;
  friend class ClientHub;  // resumes parked commands (Execute, FinishCommand)
  bool OpenStorage(std::string* error);
  bool StartCluster(std::string* error);  // cluster-enabled yes: nodes.conf, the bus
  std::string ClusterConfigPath();        // cluster-config-file, in dir when relative
  // Start-up: this server follows a master once it runs (`replicaof`, or in cluster mode
  // nodes.conf says it is a replica), so its data continue that master's history.
  bool FollowsAtStart();
  // The cluster's first CLUSTER REPLICATE-like follow, from nodes.conf before the data are open,
  // waits here until they are (StartCluster).
  std::mutex early_follow_mu_;
  bool following_allowed_ = false;
  std::pair<std::string, int> early_follow_;
  bool StartWorkers(std::string* error);
  bool InitWorker(int id, std::string* error);
  void StartListeners(Worker* w);                 // on worker 0
  bool LoadRdbBeforeServing(std::string* error);  // main thread, workers running
  bool WorkerDone(int id);
  void Adopt(int fd, TlsSession* tls = nullptr);  // takes ownership of tls
  void BeginDrain(int id);
  uint64_t StoredKeys();  // index entries of every shard (start-up)
  Result Execute(ClientState* cl, const CommandSpec* spec, std::span<const std::string_view> args);
  // `db`: the physical database the command runs in (its keys in args are stored keys of it);
  // `single_shard_write`: counted in the shard's writes_suspended() while it is suspended.
  Result RunAtHome(ClientState* cl, const CommandSpec* spec, std::span<const std::string_view> args,
                   int db, bool single_shard_write);
  Result RunRemote(ClientState* cl, const CommandSpec* spec, std::span<const std::string_view> args,
                   int shard, int db, bool track, bool propagate);
  void FinishCommand(ClientState* cl);
  // Our master's stream, applied concurrently (doc/replication.md "Ordering"), worker 0: a
  // single-shard command for another worker is posted there apart from the link, which goes on
  // with the next command; any other waits (StreamHold) until every such command finished.
  // True with *r set if one of the two happened.
  bool StreamRunsApart(ClientState* cl, const CommandSpec* spec,
                       std::span<const std::string_view> args, int shard, int db, Result* r);
  void StreamPostChain(int shard);  // the lane's queued commands, as one chain
  void StreamChainHome(RemoteCommand* head);
  // Writes an RDB for replicas of ours at `path` (on worker 0): started(the snapshot's sequence
  // number, commands/propagate.h; the stream offset of its instant, -1 if none is known) once
  // its snapshot is open, then done(ok).
  void SaveForReplicas(const std::string& path, std::shared_ptr<SyncStream> stream,
                       std::function<void(uint64_t, int64_t)> started,
                       std::function<void(bool)> done);
  // A command run at home while replication is on: its entry for the stream (propagate.h).
  void FinishPropagation(ClientState* cl);
  static void OnHomeDone(void* arg);
  // A script just passed busy-reply-threshold: the commands queued behind its shard locks get
  // -BUSY (dispatcher.cc).
  static void OnScriptBusy(void* server);
  // Cluster mode (cluster/cluster_route.h): false if the command was redirected or refused.
  bool ClusterCheckOrReply(ClientState* cl, const CommandSpec* spec,
                           std::span<const std::string_view> args);
  // On the keys' worker: an open slot's missing keys answered -ASK/-TRYAGAIN (true: don't run).
  bool OpenSlotRejects(Context& ctx, std::span<const std::string_view> args);
  // On the keys' worker just before the handler: routed again if the cluster published new
  // routes since the dispatcher's check, then OpenSlotRejects (true: replied, don't run).
  bool ClusterRunRejects(Context& ctx, std::span<const std::string_view> args);
  int RouteShard(const CommandSpec* spec, std::span<const std::string_view> args,
                 bool* multi) const;

  Config config_;
  CommandTable table_;
  Services services_;  // what handlers reach through ctx.services (client/services.h)
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<WorkerStats>> stats_;
  std::vector<ClientState*> client_lists_;
  // per worker: 0 serving, 1 closing clients, 3 syncing the log, 2 done
  std::vector<int> draining_;
  std::vector<std::unique_ptr<std::atomic<bool>>> synced_;
  std::unique_ptr<DataFile> data_file_;
  std::vector<std::unique_ptr<IoBufferPool>> io_pools_;  // per worker, registered buffers
  std::unique_ptr<ShardSet> shards_;
  RecoveryReport recovery_;
  std::atomic<bool> defrag_paused_{false};
  std::atomic<int64_t> cache_mb_{0};
  std::atomic<int64_t> tomb_raider_ms_{0};   // tomb-raider-interval-ms, live
  std::atomic<int64_t> tcp_keepalive_s_{0};  // tcp-keepalive, for the next accepted client
  std::atomic<bool> stop_writes_on_save_error_{true};  // stop-writes-on-bgsave-error
  std::atomic<bool> has_save_points_{false};           // CONFIG save is not empty
  std::atomic<bool> replica_ignore_maxmemory_{true};   // replica-ignore-maxmemory
  // replica-apply-window: the most commands of our master's stream run apart at once (0: one
  // command at a time, as Redis applies it).
  std::atomic<int64_t> replica_apply_window_{1024};
  // Worker 0: per worker, a chain of the stream's commands is there (busy), and those queued for
  // the next chain (first..last, linked by chain_next); the link's command held until the
  // window empties; the link's address and name for SLOWLOG.
  struct StreamLane {
    bool busy = false;
    RemoteCommand* first = nullptr;
    RemoteCommand* last = nullptr;
  };
  std::vector<StreamLane> stream_lanes_;
  // Posts the lanes' first chains on the loop turn after the link parsed what it had (Defer),
  // so a chain carries every command of that read, not the first alone.
  struct StreamFlush : MailboxItem {
    explicit StreamFlush(Server* s) : server(s) { run = &Server::StreamFlushLanes; }
    Server* server;
    bool pending = false;
  };
  StreamFlush stream_flush_{this};
  static void StreamFlushLanes(MailboxItem* item);
  ClientState* stream_held_ = nullptr;
  bool stream_held_full_ = false;   // it waits for room in the window, not for the window to empty
  int64_t stream_apart_bytes_ = 0;  // the arguments of the commands apart (bounded)
  uint64_t stream_client_ = 0;
  std::string stream_peer_, stream_name_;
  std::unique_ptr<MemoryGuard> memory_guard_;
  SaveState save_state_;
  std::atomic<bool> shutdown_requested_{false};
  bool WaitForReplicasOnSignal();  // main thread: false if aborted, or a SHUTDOWN's wait runs
  std::mutex shutdown_mu_;
  bool shutdown_waiting_ = false;                           // under shutdown_mu_
  std::vector<std::function<void(bool)>> shutdown_joined_;  // under shutdown_mu_
  std::atomic<int64_t> shutdown_deadline_ms_{-1};
  std::string rdb_to_load_;  // a dump.rdb imported before the listeners start (rdb_file.h)
  int64_t applied_cache_mb_ = 0;
  Listener listener_;       // plain TCP on `port` (not bound when port is 0)
  Listener tls_listener_;   // TLS on tls-port (not bound when it is 0)
  Listener unix_listener_;  // unixsocket (not bound when it is "")
  TlsContextSlot tls_;      // the context new TLS connections use (empty: TLS off)
  std::atomic<uint64_t> next_client_id_{1};
  std::atomic<int64_t> connected_clients_{0};
  std::atomic<int> drained_workers_{0};
  std::atomic<bool> shutting_down_{false};
  int64_t drain_deadline_us_ = 0;
  int next_worker_ = 0;  // accept round-robin (worker 0 only)
  int64_t start_ms_ = 0;
  std::string run_id_;

  std::mutex config_mu_;
  ConfigRegistry registry_;
  std::unique_ptr<Acl> acl_;
  AclLog acl_log_;
  std::string aclfile_;
  std::atomic<int64_t> maxclients_{10000};
  std::unique_ptr<Observability> obs_;
  std::unique_ptr<ClientHub> hub_;
  std::unique_ptr<PubSub> pubsub_;
  std::unique_ptr<Replica> replica_;  // REPLICAOF (replication/replica.h)
  std::unique_ptr<Master> master_;    // PSYNC from replicas (replication/master.h)
  std::unique_ptr<Tracking> tracking_;
  std::unique_ptr<Cluster> cluster_;  // cluster mode (cluster/cluster.h); null when off
};

}  // namespace lavik
