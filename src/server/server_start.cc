// Server start-up: storage, workers, listeners, the cluster, the RDB loaded before serving, and
// Run()'s lifecycle (signals, drain, checkpoint). The rest of Server is in server.cc.
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/clock.h"
#include "base/log.h"
#include "blocking/list_blocking.h"
#include "cluster/cluster.h"
#include "cluster/cluster_route.h"
#include "cluster/local_effects.h"
#include "commands/migrate.h"
#include "config/config_values.h"
#include "pubsub/pubsub.h"
#include "replication/master.h"
#include "replication/rdb_file.h"
#include "replication/replica.h"
#include "scripting/scripting.h"
#include "server/client_hub.h"
#include "server/metrics_collect.h"
#include "server/rdb_save.h"
#include "server/server.h"
#include "server/tls_config.h"
#include "storage/device.h"
#include "storage/index.h"
#include "storage/store.h"
#include "tracking/tracking.h"

namespace lavik {
namespace {

constexpr const char* kNoClientEviction =
    "maxmemory-clients: Lavik does not evict clients; only 0 (off, Redis's default) is accepted";

SyncPolicy NamedSyncPolicy(std::string_view name) {
  return name == "always" ? SyncPolicy::kAlways
         : name == "no"   ? SyncPolicy::kNo
                          : SyncPolicy::kEverysec;
}

// Sets a store's sync policy on its own worker (CONFIG SET appendfsync).
struct SyncPolicyItem : MailboxItem {
  SyncPolicyItem(Store* s, SyncPolicy p) : store(s), policy(p) {
    run = [](MailboxItem* item) {
      auto* self = static_cast<SyncPolicyItem*>(item);
      self->store->set_sync_policy(self->policy);
      delete self;
    };
  }
  Store* store;
  SyncPolicy policy;
};

constexpr int64_t kActiveExpireIntervalUs = 100 * 1000;
constexpr int64_t kActiveExpireBudgetUs = 2500;  // 25 ms per second at most, as Redis's default
constexpr int64_t kDrainTimeoutUs = 5 * 1000 * 1000;

std::vector<int> AllowedCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int i = 0; i < CPU_SETSIZE; ++i) {
      if (CPU_ISSET(i, &set)) cpus.push_back(i);
    }
  }
  return cpus;
}

LogSeverity SeverityOf(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return LogSeverity::kDebug;
    case LogLevel::kVerbose:
      return LogSeverity::kVerbose;
    case LogLevel::kNotice:
      return LogSeverity::kNotice;
    case LogLevel::kWarning:
      return LogSeverity::kWarning;
  }
  return LogSeverity::kNotice;
}

}  // namespace

std::string Server::ClusterConfigPath() {
  std::string path = ConfigValue("cluster-config-file");
  const std::string dir = ConfigValue("dir");
  if (!path.empty() && path[0] != '/' && !dir.empty() && dir != ".") path = dir + "/" + path;
  return path;
}

bool Server::FollowsAtStart() {
  if (!ConfigValue("replicaof").empty()) return true;
  return ConfigValue("cluster-enabled") == "yes" && cluster::ConfigSaysReplica(ClusterConfigPath());
}

bool Server::StartCluster(std::string* error) {
  if (ConfigValue("cluster-enabled") != "yes") return true;
  // Refused rather than ignored: the bus would go out in the clear, and TLS peers could not
  // talk to it.
  const char* kNoBusTls =
      "tls-cluster yes: Lavik's cluster bus has no TLS (clients may still use "
      "tls-port)";
  if (ConfigValue("tls-cluster") == "yes") {
    *error = kNoBusTls;
    return false;
  }
  registry_.OnChange("tls-cluster", [kNoBusTls](std::string_view v) {
    return v == "yes" ? Status::Error(kNoBusTls) : Status::Ok();
  });
  Cluster::Options o;
  o.config_file = ClusterConfigPath();
  auto num = [this](std::string_view name) { return std::atoll(ConfigValue(name).c_str()); };
  o.node_timeout_ms = num("cluster-node-timeout");
  o.port = listener_.port();
  o.bus_port = static_cast<int>(num("cluster-port"));
  o.bind = config_.bind;
  o.announce_ip = ConfigValue("cluster-announce-ip");
  o.announce_hostname = ConfigValue("cluster-announce-hostname");
  o.announce_port = static_cast<int>(num("cluster-announce-port"));
  o.announce_bus_port = static_cast<int>(num("cluster-announce-bus-port"));
  o.require_full_coverage = ConfigValue("cluster-require-full-coverage") == "yes";
  o.allow_reads_when_down = ConfigValue("cluster-allow-reads-when-down") == "yes";
  o.on_slots_lost = [this](const std::vector<uint16_t>& slots) {
    DeleteKeysInSlots(*shards_, slots);
  };
  o.on_publish = [this](bool shard, std::string_view channel, std::string_view message) {
    PublishFromBus(services_, shard, channel, message);
  };
  o.repl_offset = [this] { return replica_->repl_offset(); };
  // A replica's master, from nodes.conf at start-up: followed once the data are open (the first
  // PSYNC continues the history they follow, server_start's FollowsAtStart); later, at once.
  o.follow = [this](const std::string& host, int port) {
    {
      std::lock_guard<std::mutex> lock(early_follow_mu_);
      if (!following_allowed_) {
        early_follow_ = {host, port};
        return;
      }
    }
    replica_->Follow(host, port);
  };
  o.promote = [this] { replica_->Promote(); };
  o.repl_data_age_ms = [this] { return replica_->DataAgeMs(); };
  // The manual failover's own write pause (Redis's PAUSE_DURING_FAILOVER), apart from CLIENT
  // PAUSE: neither ends the other. The cluster lifts it when the failover ends or times out.
  o.pause_writes = [this] {
    master_->SetFailoverPause(true);
    hub_->PauseForFailover(true);
  };
  o.unpause_writes = [this] {
    master_->SetFailoverPause(false);
    hub_->PauseForFailover(false);
  };
  o.repl_settled = [this] { return master_->StreamSettled(); };
  o.allow_replica_migration = ConfigValue("cluster-allow-replica-migration") == "yes";
  o.replica_no_failover = ConfigValue("cluster-replica-no-failover") == "yes";
  o.replica_validity_factor = static_cast<int>(num("cluster-replica-validity-factor"));
  o.repl_ping_period_s = static_cast<int>(num("repl-ping-replica-period"));
  o.migration_barrier = static_cast<int>(num("cluster-migration-barrier"));
  cluster_ = std::make_unique<Cluster>(std::move(o));
  if (!cluster_->Start(error)) return false;
  services_.cluster = cluster_.get();
  services_.cluster_script_check = &ClusterScriptCallCheck;
  SetExecOpenSlotCheck(&ExecOpenSlotRedirect);
  services_.cluster_publish = [](const Services& s, bool shard, std::string_view channel,
                                 std::string_view message) {
    s.cluster->PropagatePublish(shard, channel, message);
  };
  Cluster* c = cluster_.get();
  registry_.OnChange("cluster-node-timeout", [c](std::string_view v) {
    c->SetNodeTimeout(std::atoll(std::string(v).c_str()));
    return Status::Ok();
  });
  registry_.OnChange("cluster-announce-hostname", [c](std::string_view v) {
    c->SetAnnounceHostname(std::string(v));
    return Status::Ok();
  });
  registry_.OnChange("cluster-require-full-coverage", [c](std::string_view v) {
    c->SetRequireFullCoverage(v == "yes");
    return Status::Ok();
  });
  registry_.OnChange("cluster-allow-reads-when-down", [c](std::string_view v) {
    c->SetAllowReadsWhenDown(v == "yes");
    return Status::Ok();
  });
  registry_.OnChange("cluster-replica-no-failover", [c](std::string_view v) {
    c->SetReplicaNoFailover(v == "yes");
    return Status::Ok();
  });
  registry_.OnChange("cluster-allow-replica-migration", [c](std::string_view v) {
    c->SetAllowReplicaMigration(v == "yes");
    return Status::Ok();
  });
  const auto int_hook = [c](void (Cluster::*set)(int)) {
    return [c, set](std::string_view v) {
      (c->*set)(std::atoi(std::string(v).c_str()));
      return Status::Ok();
    };
  };
  registry_.OnChange("cluster-replica-validity-factor",
                     int_hook(&Cluster::SetReplicaValidityFactor));
  registry_.OnChange("cluster-migration-barrier", int_hook(&Cluster::SetMigrationBarrier));
  registry_.OnChange("repl-ping-replica-period", int_hook(&Cluster::SetReplPingPeriod));
  return true;
}

bool Server::InitWorker(int id, std::string* error) {
  Worker* w = workers_[id].get();
  Store* store = &shards_->at(id).store;
  // Registered (fixed) I/O buffers: needs this worker's ring, so it happens on its thread.
  if (auto* dev = dynamic_cast<UringDevice*>(&store->device())) {
    const size_t bytes = static_cast<size_t>(config_.registered_buffer_mb_per_worker) << 20;
    if (!io_pools_[id]->Init(w->loop().ring(), bytes, error)) {
      LogWarning("worker " + std::to_string(id) + ": no registered buffers (" + *error +
                 "); using plain reads and writes");
      error->clear();
    } else if (io_pools_[id]->bytes() > 0) {
      dev->AttachPool(io_pools_[id].get());
    }
  }
  w->AddTurnHook(&Connection::ProcessReady);  // first: the requests this turn's reads brought
  w->AddTurnHook([this, id]() { pubsub_->EndOfTurn(id); });    // this turn's pub/sub deliveries
  w->AddTurnHook([this, id]() { tracking_->EndOfTurn(id); });  // and invalidations
  tracking_->AttachStore(id, store);
  w->AddTurnHook(&Connection::FlushDirty);
  hub_->StartWorker(w, id);
  StartListBlocking(w, &shards_->at(id));
  w->AddTurnHook([store]() { store->EndOfTurn(); });
  // Commands from other workers arrive in batches: their keys are prefetched together.
  w->SetPrefetchFlush([](void* s) { static_cast<Store*>(s)->PrefetchFlush(); }, store);
  if (id == 0) {  // CONFIG save points, once a second as Redis's serverCron checks them
    w->AddTimer(1'000'000, [this]() {
      Task t = CheckSavePoints(this);
      t.Start(nullptr, nullptr);
    });
  }
  w->AddTimer(kActiveExpireIntervalUs, [this, id, store, w]() {
    Shard& shard = shards_->at(id);
    int64_t now = NowMs();
    store->Tick(now);
    // Not while a multi-shard command is mid-way (its keys) or CLIENT PAUSE is in force.
    if (!shard.locked() && !hub_->Paused()) {
      stats_[id]->expired_keys_active.Add(store->ActiveExpireCycle(now, kActiveExpireBudgetUs));
    }
    memory_guard_->Refresh(*this, id, cache_mb_.load());  // the value cache's share, OOM flag
    store->set_defrag_paused(defrag_paused());
    if (!w->stop_requested() && !store->defrag_running()) {
      Task t = store->Defrag(false);
      t.Start(nullptr, nullptr);
    }
  });
  // The tombstone sweep, every tomb-raider-interval-ms (0: never); CONFIG SET takes effect at
  // once: checked on the 100 ms tick, so intervals are rounded up to it.
  w->AddTimer(kActiveExpireIntervalUs, [this, store, last = MonotonicUs() / 1000]() mutable {
    const int64_t every = tomb_raider_ms_.load(std::memory_order_relaxed);
    const int64_t now = MonotonicUs() / 1000;
    if (every > 0 && now - last >= every) {
      last = now;
      store->SweepTombstones();
    } else if (every <= 0) {
      last = now;
    }
  });
  if (id == 0 && rdb_to_load_.empty()) StartListeners(w);  // else once the RDB is in
  return true;
}

void Server::StartListeners(Worker* w) {
  if (config_.port != 0) listener_.Start(w, [this](int fd) { Adopt(fd); });
  if (!ConfigValue("unixsocket").empty()) unix_listener_.Start(w, [this](int fd) { Adopt(fd); });
  if (tls_.enabled()) {
    tls_listener_.Start(w, [this](int fd) {
      std::shared_ptr<TlsContext> ctx = tls_.Get();
      std::unique_ptr<TlsSession> session = ctx ? ctx->NewSession() : nullptr;
      if (session == nullptr) {
        close(fd);
        return;
      }
      Adopt(fd, session.release());
    });
  }
}

bool Server::LoadRdbBeforeServing(std::string* error) {
  LogNotice("Loading RDB file " + rdb_to_load_ +
            (config_.load_rdb.empty()
                 ? " (CONFIG dir + dbfilename: it exists and the data file holds no key)"
                 : " (--load-rdb)"));
  RdbLoadReport report;
  if (!LoadRdbFile(*shards_, rdb_to_load_, &report, error)) {
    *error = "the RDB file " + rdb_to_load_ + " was not loaded: " + *error;
    return false;
  }
  LogNotice("Done loading RDB, keys loaded: " + std::to_string(report.keys) +
            ", keys expired: " + std::to_string(report.expired) + ", function libraries: " +
            std::to_string(report.functions) + ", in " + std::to_string(report.elapsed_ms) + " ms");
  // Redis 7.0's loadDataFromDisk: the RDB's replication fields (doc/rdb.md, "Replication
  // fields"). A replica continues that history; a master keeps it as replid2 and starts its
  // backlog right after it, so its former replicas continue.
  if (report.has_repl) {
    const bool as_replica = !ConfigValue("replicaof").empty();
    replica_->RestoreFromRdb(report.repl_id, report.repl_offset, report.repl_stream_db, as_replica);
    if (!as_replica) master_->RestoreBacklogAt(report.repl_offset);
  }
  struct StartItem : MailboxItem {
    Server* server;
  };
  auto* item = new StartItem();
  item->server = this;
  item->run = [](MailboxItem* m) {
    auto* it = static_cast<StartItem*>(m);
    it->server->StartListeners(Worker::Current());
    delete it;
  };
  workers_[0]->Post(item);
  return true;
}

bool Server::StartWorkers(std::string* error) {
  int n = config_.threads > 0 ? config_.threads : DefaultThreads();
  std::vector<int> cpus = AllowedCpus();
  std::vector<Worker*> raw;
  for (int i = 0; i < n; ++i) {
    int cpu = (config_.pin_workers && !cpus.empty()) ? cpus[i % cpus.size()] : -1;
    workers_.push_back(std::make_unique<Worker>(i, cpu));
    stats_.push_back(std::make_unique<WorkerStats>());
    raw.push_back(workers_.back().get());
    services_.workers.push_back(workers_.back().get());
    services_.worker_stats.push_back(stats_.back().get());
  }
  client_lists_.assign(n, nullptr);
  draining_.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    synced_.push_back(std::make_unique<std::atomic<bool>>(false));
    io_pools_.push_back(std::make_unique<IoBufferPool>());
  }
  // A replica (`replicaof`, or a cluster node nodes.conf says is one) continues the history its
  // data follow; a master keeps it as replid2.
  replica_->TakeSavedHistory(config_.data_file, FollowsAtStart());
  // tls-replication: the link to our master (as Redis's client context: tls-client-cert-file and
  // its key if set, else tls-cert-file's).
  replica_->set_tls_session_factory([this](std::string* error) -> std::unique_ptr<TlsSession> {
    TlsSettings s;
    {
      std::lock_guard<std::mutex> lock(config_mu_);
      s = TlsSettingsFrom(registry_);
    }
    if (const std::string cert = ConfigValue("tls-client-cert-file"); !cert.empty()) {
      s.cert_file = cert;
      s.key_file = ConfigValue("tls-client-key-file");
      s.key_file_pass = ConfigValue("tls-client-key-file-pass");
    }
    std::shared_ptr<TlsContext> ctx = TlsContext::CreateClient(s, error);
    return ctx == nullptr ? nullptr : ctx->NewClientSession();
  });
  // dump.rdb's replication fields (server/rdb_save.h): what a snapshot's instant says of the
  // history, and for a master the stream offset of its last write.
  SetRdbReplHooks(RdbReplHooks{[this](bool on) {
                                 master_->WatchSeqs(on);
                                 replica_->HoldStream(on);
                               },
                               [this](RdbReplInfo* info, bool* by_seq) {
                                 return replica_->SnapshotHistory(master_->backlog_active(),
                                                                  &info->replid, &info->offset,
                                                                  &info->db, &info->valid, by_seq);
                               },
                               [this](uint64_t seq, int64_t* offset, int* db) {
                                 return master_->OffsetOfSeq(seq, offset, db);
                               }});
  if (!OpenStorage(error)) return false;
  if (!config_.load_rdb.empty()) {
    rdb_to_load_ = config_.load_rdb;
  } else if (const std::string path = RdbFilePath(ConfigValue("dir"), ConfigValue("dbfilename"));
             StoredKeys() == 0 && !replica_->has_history() && access(path.c_str(), R_OK) == 0) {
    // As Redis loads dir/dbfilename at start-up, when the data file holds no key (it was just
    // created, or a load into it failed before) — unless those data follow a replication
    // history (saved at a clean shutdown, or a consistency point rolled back to): an empty
    // data set a replica's stream continues.
    rdb_to_load_ = path;
  }
  // A master restarted on its data file (no RDB to load): its backlog starts where the saved
  // history ended, before any client can look.
  if (const int64_t at = replica_->restored_master_offset(); at >= 0 && rdb_to_load_.empty()) {
    master_->RestoreBacklogAt(at);
  }
  for (int i = 0; i < n; ++i) {
    workers_[i]->Start([this, i](std::string* err) { return InitWorker(i, err); },
                       [this, i]() { return WorkerDone(i); });
  }
  bool ok = true;
  for (int i = 0; i < n; ++i) {
    std::string err;
    if (!workers_[i]->WaitStarted(&err)) {
      *error = "worker " + std::to_string(i) + ": " + err;
      ok = false;
    }
  }
  if (!rdb_to_load_.empty()) replica_->ForgetSavedHistory();
  if (ok && !rdb_to_load_.empty()) ok = LoadRdbBeforeServing(error);
  return ok;
}

bool Server::OpenStorage(std::string* error) {
  const int n = worker_count();
  DataFile::Options opts;
  opts.path = config_.data_file;
  opts.max_size = config_.data_file_size;
  opts.shards = static_cast<uint32_t>(n);
  data_file_ = DataFile::Open(opts, error);
  if (!data_file_) return false;
  if (!data_file_->direct_io()) {
    LogWarning("the file system of '" + config_.data_file +
               "' does not support O_DIRECT: using the page cache");
  }
  if (ConfigValue("cluster-enabled") == "yes") {
    // Cluster mode: db-0 fingerprints carry their slot (CLUSTER GETKEYSINSLOT from the index,
    // commands/slot_keys.h), and MIGRATE sends RESTORE-ASKING, as Redis does in a cluster.
    Index::SetSlotFingerprints(true);
    SetMigrateRestoreAsking(true);
  }
  StoreOptions so;
  so.sync = config_.appendfsync == AppendFsync::kAlways     ? SyncPolicy::kAlways
            : config_.appendfsync == AppendFsync::kEverysec ? SyncPolicy::kEverysec
                                                            : SyncPolicy::kNo;
  so.cache_bytes = static_cast<size_t>(config_.cache_mb) * (1u << 20) / n;
  so.max_buffers =
      std::max<size_t>(2, static_cast<size_t>(config_.registered_buffer_mb_per_worker) *
                              (1u << 20) / so.buffer_bytes);
  so.shard_count = static_cast<uint32_t>(n);
  cache_mb_.store(config_.cache_mb);
  std::vector<std::unique_ptr<Store>> stores;
  std::vector<Worker*> raw;
  for (int i = 0; i < n; ++i) {
    raw.push_back(workers_[i].get());
    stores.push_back(std::make_unique<Store>(
        static_cast<uint32_t>(i), data_file_.get(),
        std::make_unique<UringDevice>(&workers_[i]->loop(), data_file_->fd()), so));
    stores.back()->SetCacheMb(config_.cache_mb, n);
  }
  shards_ = std::make_unique<ShardSet>(raw, std::move(stores));
  // CONFIG SET appendfsync acts at once, as Redis's: every store takes the new policy on its
  // own worker, before any command queued after the CONFIG SET's reply.
  registry_.OnChange("appendfsync", [this](std::string_view v) {
    const SyncPolicy policy = NamedSyncPolicy(v);
    for (int i = 0; i < shards_->size(); ++i) {
      Shard& shard = shards_->at(i);
      if (Worker::Current() == shard.worker) {
        shard.store.set_sync_policy(policy);
      } else {
        shard.worker->Post(new SyncPolicyItem(&shard.store, policy));
      }
    }
    return Status::Ok();
  });
  std::vector<Store*> ptrs;
  for (int i = 0; i < n; ++i) ptrs.push_back(&shards_->at(i).store);
  LogNotice(std::string(data_file_->fresh() ? "Formatted" : "Opened") + " data file " +
            config_.data_file + " (" + std::to_string(data_file_->segment_count()) +
            " segments of " + std::to_string(data_file_->segment_size() >> 20) + " MiB)");
  // A replica restarted after a crash (no history saved at a clean shutdown): back to the data
  // file's last replication cut, whose offset its master may continue from
  // (doc/replication.md "A replica killed -9 continues").
  const ReplCut cut = data_file_->superblock().cut;
  const bool rollback = cut.valid() && FollowsAtStart() && !replica_->has_history();
  if (!Recover(
          data_file_.get(), ptrs, [n](uint16_t slot) { return SlotShard(slot, n); },
          [](const std::string& m) { LogNotice(m); }, &recovery_, error, rollback)) {
    return false;
  }
  if (recovery_.rolled_back) {
    LogNotice("Data rolled back to the replication consistency point at offset " +
              std::to_string(cut.offset) + ": " + std::to_string(recovery_.dropped_records) +
              " records and " + std::to_string(recovery_.dropped_segments) +
              " segments written after it dropped");
    replica_->RestoreFromCut(cut);
  }
  // SWAPDB's map, as the superblock last recorded it.
  for (int d = 0; d < kMaxDatabases; ++d) {
    DbMap::Set(d, data_file_->superblock().db_map[static_cast<size_t>(d)]);
  }
  LogNotice(std::string("Index loaded ") +
            (recovery_.from_checkpoint
                 ? "from the checkpoint"
                 : "by scanning " + std::to_string(recovery_.segments) + " segments (" +
                       std::to_string(recovery_.records) + " records)") +
            ": " + std::to_string(recovery_.keys) + " keys in " +
            std::to_string(recovery_.elapsed_ms) + " ms");
  return OpenFunctionLibraries(config_.data_file, data_file_->fresh(), error);
}

int Server::Run() {
  std::string error;
  if (!OpenLog(config_.log_dir, SeverityOf(config_.loglevel), &error)) {
    std::fprintf(stderr, "lavik: %s\n", error.c_str());
    return 1;
  }
  // Signals are taken synchronously by this thread (sigwait); workers inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);  // logrotate: reopen the log file
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  LogNotice("Lavik " LAVIK_VERSION " starting, pid=" + std::to_string(getpid()));
  for (const auto& [from, to] : config_.renamed_commands) {
    if (std::string e = table_.Rename(from, to); !e.empty()) {
      LogWarning("Fatal: rename-command " + from + ": " + e);
      return 1;
    }
  }
  const std::string bind_address = config_.bind.substr(0, config_.bind.find(' '));
  const int tls_port = TlsPortFrom(registry_);
  // Client eviction (Redis 7.0's maxmemory-clients) is not there: refused, not ignored.
  if (ConfigValue("maxmemory-clients") != "0") {
    LogWarning(std::string("Fatal: ") + kNoClientEviction);
    return 1;
  }
  registry_.OnChange("maxmemory-clients", [](std::string_view v) {
    return v == "0" ? Status::Ok() : Status::Error(kNoClientEviction);
  });
  const std::string unix_path = ConfigValue("unixsocket");
  if (config_.port == 0 && tls_port == 0 && unix_path.empty()) {
    LogWarning("Configured to not listen anywhere, exiting.");
    return 1;
  }
  const int backlog = std::atoi(ConfigValue("tcp-backlog").c_str());  // as Redis's tcp-backlog
  if (!unix_path.empty()) {
    const unsigned perm = static_cast<unsigned>(
        std::strtoul(ConfigValue("unixsocketperm").c_str(), nullptr, 8));  // octal, as Redis
    if (!unix_listener_.BindUnix(unix_path, perm, &error, backlog)) {
      LogWarning("Fatal: could not listen on unix socket " + error);
      return 1;
    }
  }
  if (config_.port != 0 && !listener_.Bind(bind_address, config_.port, &error, backlog)) {
    LogWarning("Fatal: could not listen on " + error);
    return 1;
  }
  if (tls_port != 0) {
    std::shared_ptr<TlsContext> ctx = TlsContext::Create(TlsSettingsFrom(registry_), &error);
    if (ctx == nullptr) {
      LogWarning("Fatal: could not configure TLS: " + error);
      return 1;
    }
    tls_.Set(std::move(ctx));
    SetTlsLogSink([](std::string_view m) { Log(LogSeverity::kVerbose, m); });
    if (!tls_listener_.Bind(bind_address, tls_port, &error, backlog)) {
      LogWarning("Fatal: could not listen on " + error);
      return 1;
    }
  }
  if (!aclfile_.empty() && !acl_->LoadFile(aclfile_, &error)) {
    LogWarning("Aborting Lavik startup because of ACL errors: " + error);
    return 1;
  }
  if (!StartCluster(&error)) {
    LogWarning("Fatal: " + error);
    return 1;
  }
  start_ms_ = NowMs();
  save_state_.last_save_s = start_ms_ / 1000;  // LASTSAVE before the first SAVE, as Redis
  if (!obs_->BindMetrics(config_, &error)) {
    LogWarning("Fatal: " + error);
    return 1;
  }
  if (!StartWorkers(&error)) {
    LogWarning("Fatal: " + error);
    for (auto& w : workers_) w->RequestStop();
    for (auto& w : workers_) w->Join();
    return 1;
  }
  LogNotice("Serving on " + config_.bind + ":" + std::to_string(listener_.port()) +
            (tls_port != 0 ? " and TLS port " + std::to_string(tls_listener_.port()) : "") +
            " with " + std::to_string(workers_.size()) + " worker(s)");
  StartMetrics(this, obs_.get());
  LogNotice("Ready to accept connections tcp");
  replica_->FollowConfigured(ConfigValue("replicaof"));
  std::pair<std::string, int> early;
  {
    std::lock_guard<std::mutex> lock(early_follow_mu_);
    following_allowed_ = true;
    early.swap(early_follow_);
  }
  if (!early.first.empty()) replica_->Follow(early.first, early.second);
  if (ConfigValue("min-replicas-to-write") != "0") master_->ConfigChanged();

  int sig = 0;
  for (;;) {
    while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
      if (ReopenLog(&error)) {
        LogNotice("Received SIGHUP, log file reopened");
      } else {
        LogWarning(error);
      }
    }
    if (shutdown_requested_.load()) break;  // SHUTDOWN waited and saved for itself
    // As Redis's prepareForShutdown with shutdown-on-sigterm / -sigint's flags: unless "now",
    // wait for lagging replicas first (SHUTDOWN ABORT resumes); with save points (or "save",
    // never with "nosave") write dump.rdb, and a failed save keeps the server running unless
    // "force".
    const config_values::ShutdownFlags how = config_values::ShutdownOnSignalFlags(
        ConfigValue(sig == SIGINT ? "shutdown-on-sigint" : "shutdown-on-sigterm"));
    if (!how.now && !WaitForReplicasOnSignal()) continue;
    master_->LogShutdownSync();
    const bool save = how.save || (!how.nosave && !ConfigValue("save").empty());
    if (!save || SaveOnSignal() || how.force) break;
    LogWarning("Error trying to save the DB, can't exit.");
    EndShutdownWait(true);
  }
  EndShutdownWait(false);  // a SHUTDOWN that joined the wait: its connection closes with us
  shutting_down_ = true;
  LogNotice(std::string("Received ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
            ", shutting down: finishing in-flight requests");
  drain_deadline_us_ = MonotonicUs() + kDrainTimeoutUs;
  obs_->StopMetrics();  // before the workers stop: a scrape may be waiting for them
  replica_->Stop();     // and the replication thread, which waits for them too
  if (cluster_ != nullptr) cluster_->Stop();
  master_->Stop();  // the replicas of ours (WAIT clients get their answer)
  for (auto& w : workers_) w->RequestStop();
  for (auto& w : workers_) w->Join();
  if (ConfigValue("shutdown-checkpoint") == "yes") {  // CONFIG SET may have changed it
    std::vector<Store*> ptrs;
    for (int i = 0; i < worker_count(); ++i) ptrs.push_back(&shards_->at(i).store);
    if (WriteCheckpoint(data_file_.get(), ptrs, &error)) {
      LogNotice("Checkpoint written: the next start loads the index without scanning");
    } else {
      LogWarning("Checkpoint not written: " + error);
    }
  }
  // The replication id and offset, for a partial resync after the restart
  // (replication/saved_history.h): a replica's, once everything the stream applied is on the
  // device; a master's, once the stream counts every write the workers made.
  int64_t master_offset = 0;
  int master_db = 0;
  const bool master_valid = master_->FinishStream(&master_offset, &master_db);
  if (std::string sync_error; data_file_->SyncNow(&sync_error)) {
    replica_->SaveHistoryAtShutdown(config_.data_file, master_valid, master_offset, master_db);
  } else {
    LogWarning("Replication history not saved: " + sync_error);
  }
  LogNotice("Lavik is now ready to exit, bye bye...");
  return 0;
}

}  // namespace lavik
