#include "server/server.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <future>
#include <random>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/db_key.h"
#include "base/log.h"
#include "blocking/list_blocking.h"
#include "client/client_state.h"
#include "cluster/cluster.h"
#include "cluster/cluster_route.h"
#include "cluster/local_effects.h"
#include "commands/migrate.h"
#include "config/live_settings.h"
#include "pubsub/keyspace_publish.h"
#include "pubsub/pubsub.h"
#include "replication/master.h"
#include "replication/replica.h"
#include "scripting/scripting.h"
#include "server/client_hub.h"
#include "server/command_registry.h"
#include "server/metrics_collect.h"
#include "server/rdb_load.h"
#include "server/rdb_save.h"
#include "server/tls_config.h"
#include "storage/device.h"
#include "storage/index.h"
#include "storage/store.h"
#include "tracking/tracking.h"

namespace lavik {
namespace {

constexpr int64_t kActiveExpireIntervalUs = 100 * 1000;
constexpr int64_t kActiveExpireBudgetUs = 2500;  // 25 ms per second at most, as Redis's default
constexpr int64_t kDrainTimeoutUs = 5 * 1000 * 1000;

// Keys this process expires go to its replicas as DEL (commands/propagate.h) — unless it follows
// a master itself: then the stream it passes on is its master's, DELs included.
std::atomic<const Replica*> g_expiry_replica{nullptr};
bool ExpiryPropagates() {
  if (!repl::On()) return false;
  const Replica* r = g_expiry_replica.load(std::memory_order_relaxed);
  return r != nullptr && !r->following();
}

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

std::string RandomHex(size_t n) {
  std::random_device rd;
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += kHex[rd() % 16];
  return s;
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

Server::Server(Config config) : config_(std::move(config)), table_(AllCommandFamilies()) {
  ResolveMemoryDefaults(&config_);  // cache-mb and max-memory
  registry_.LoadFrom(config_);
  if (const std::string* n = registry_.Value("databases")) DbMap::SetCount(std::stoi(*n));
  DbMap::SetClusterMode(ConfigValue("cluster-enabled") == "yes");
  acl_ = std::make_unique<Acl>(table_);
  if (!config_.requirepass.empty()) acl_->SetDefaultPassword(config_.requirepass);
  for (const auto& [name, value] : config_.extra_params) {
    if (name == "aclfile") aclfile_ = value;
  }
  maxclients_ = config_.maxclients;
  registry_.OnChange("requirepass", [this](std::string_view v) {
    acl_->SetDefaultPassword(v);
    return Status::Ok();
  });
  registry_.OnChange("maxclients", [this](std::string_view v) {
    maxclients_.store(std::strtoll(std::string(v).c_str(), nullptr, 10));
    return Status::Ok();
  });
  registry_.OnChange("defrag-paused", [this](std::string_view v) {
    defrag_paused_.store(v == "yes");
    return Status::Ok();
  });
  registry_.OnChange("cache-mb", [this](std::string_view v) {
    cache_mb_.store(std::strtoll(std::string(v).c_str(), nullptr, 10));
    return Status::Ok();
  });
  memory_guard_ =
      std::make_unique<MemoryGuard>(config_.threads > 0 ? config_.threads : DefaultThreads());
  InstallMemoryLimits(registry_, memory_guard_.get());
  registry_.OnChange("loglevel", [](std::string_view v) {
    SetLogLevel(v == "debug"     ? LogSeverity::kDebug
                : v == "verbose" ? LogSeverity::kVerbose
                : v == "warning" ? LogSeverity::kWarning
                                 : LogSeverity::kNotice);
    return Status::Ok();
  });
  // The listener is bound once at start-up; say so rather than pretend to rebind.
  for (const char* name : {"port", "bind"}) {
    registry_.OnChange(name, [](std::string_view) {
      return Status::Error("Lavik cannot change it at runtime; restart with the new value");
    });
  }
  InstallTlsConfigHooks(&registry_, &tls_);
  WireLiveSettings(&registry_);  // what handlers read while they run (config/live_settings.h)
  obs_ = std::make_unique<Observability>(table_,
                                         config_.threads > 0 ? config_.threads : DefaultThreads());
  obs_->WireConfig(&registry_);
  hub_ = std::make_unique<ClientHub>(this);
  hub_->Configure(registry_);
  pubsub_ = std::make_unique<PubSub>(
      &services_, [hub = hub_.get()](ClientState* cl) { hub->OnPubSubOutput(cl); });
  services_.pubsub = pubsub_.get();
  WireKeyspaceEvents(pubsub_.get(), &registry_);  // notify-keyspace-events (pubsub/)
  tracking_ = std::make_unique<Tracking>(
      &services_, [hub = hub_.get()](ClientState* cl) { hub->OnPubSubOutput(cl); },
      [this](int w, uint64_t id) -> ClientState* {
        for (ClientState* cl = client_lists_[w]; cl != nullptr; cl = cl->next) {
          if (cl->id == id) return cl;
        }
        return nullptr;
      });
  services_.tracking = tracking_.get();
  services_.track_held = &TrackHeldCommand;
  if (const std::string* v = registry_.Value("tracking-table-max-keys")) {
    tracking_->set_max_keys(std::strtoull(v->c_str(), nullptr, 10));
  }
  registry_.OnChange("tracking-table-max-keys", [this](std::string_view v) {
    tracking_->set_max_keys(std::strtoull(std::string(v).c_str(), nullptr, 10));
    return Status::Ok();
  });
  services_.observability = obs_.get();
  services_.commands = &table_;
  services_.acl = acl_.get();
  replica_ = std::make_unique<Replica>(Replica::Deps{
      [this]() -> ShardSet& { return *shards_; }, &services_, this,
      [this] { return next_client_id_.fetch_add(1); }, [this] { return listener_.port(); },
      [this](std::string_view name) { return ConfigValue(name); },
      [this](int64_t before, std::span<const std::string_view> args, size_t bytes) {
        master_->Feed(before, args, bytes);
      },
      [this](ReplyWriter& w) { master_->WriteReplicas(w); },
      [this](std::string* out) { master_->AppendSlaves(out); },
      [this](std::string* out) { master_->AppendBacklog(out); },
      [this](std::string_view master) {
        std::lock_guard<std::mutex> lock(config_mu_);
        registry_.SetInitial("replicaof", master);
      }});

  master_ = std::make_unique<Master>(
      Master::Deps{replica_.get(), [this](std::string_view name) { return ConfigValue(name); },
                   [this](const std::string& path, std::function<void(uint64_t)> started,
                          std::function<void(bool)> done) {
                     SaveForReplicas(path, std::move(started), std::move(done));
                   },
                   [this] {
                     const std::string dir = ConfigValue("dir");
                     return dir.empty() ? std::string(".") : dir;
                   }});
  services_.replica = replica_.get();
  services_.master = master_.get();
  g_expiry_replica.store(replica_.get());
  Store::SetExpiredKeySink(&ExpiryPropagates, &repl::PropagateExpired);
  for (const char* name : {"min-replicas-to-write", "min-replicas-max-lag"}) {
    registry_.OnChange(name, [this](std::string_view) {
      master_->ConfigChanged();
      return Status::Ok();
    });
  }
  services_.replica_read_only = [this] { return replica_->read_only(); };
  registry_.OnChange("replica-read-only", [this](std::string_view v) {
    replica_->set_read_only_config(v == "yes");
    return Status::Ok();
  });
  registry_.OnChange("dir", [](std::string_view v) {
    // The error Redis's chdir() gives for a path that is not a directory it may enter.
    struct stat st;
    const std::string path(v);
    int err = stat(path.c_str(), &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
    if (err == 0 && access(path.c_str(), X_OK) != 0) err = errno;
    return err == 0 ? Status::Ok() : Status::Error(std::strerror(err));
  });
  registry_.OnChange("dbfilename", [](std::string_view v) {
    if (v.find('/') != std::string_view::npos) {
      return Status::Error("dbfilename can't be a path, just a filename");
    }
    return Status::Ok();
  });
  registry_.OnChange("replica-serve-stale-data", [this](std::string_view v) {
    replica_->set_serve_stale_config(v == "yes");
    return Status::Ok();
  });
  services_.over_memory_limit = [guard = memory_guard_.get()] { return guard->oom(); };
  ConfigureScripting(registry_);
  SetScriptBusyHook(&Server::OnScriptBusy, this);
  run_id_ = RandomHex(40);
}

Server::~Server() {
  const Replica* mine = replica_.get();
  g_expiry_replica.compare_exchange_strong(mine, nullptr);
}

bool Server::StartCluster(std::string* error) {
  if (ConfigValue("cluster-enabled") != "yes") return true;
  Cluster::Options o;
  o.config_file = ConfigValue("cluster-config-file");
  const std::string dir = ConfigValue("dir");
  if (!o.config_file.empty() && o.config_file[0] != '/' && !dir.empty() && dir != ".") {
    o.config_file = dir + "/" + o.config_file;
  }
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
  cluster_ = std::make_unique<Cluster>(std::move(o));
  if (!cluster_->Start(error)) return false;
  services_.cluster = cluster_.get();
  services_.cluster_script_check = &ClusterScriptCallCheck;
  SetExecOpenSlotCheck(&ExecOpenSlotRedirect);
  services_.cluster_publish = [](const Services& s, std::string_view channel,
                                 std::string_view message) {
    s.cluster->PropagatePublish(channel, message);
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
  return true;
}

namespace {

// A replica's full sync: the snapshot opened on worker 0 (started(its sequence number)), the RDB
// written from it (the BGSAVE walk), then done(ok).
struct ReplicaSave : MailboxItem {
  Server* server = nullptr;
  std::string dir, name;
  std::function<void(uint64_t)> started;
  std::function<void(bool)> done;
  bool ok = false;
};

Task RunReplicaSave(ReplicaSave* job) {
  RdbSnapshot snap;
  co_await BeginRdbSnapshot(job->server->shards(), &snap);
  job->started(snap.seq);
  co_await SaveRdbFile(job->server->shards(), job->dir, job->name, &job->ok,
                       "temp-repl-walk-" + std::to_string(getpid()) + ".rdb", &snap);
  job->done(job->ok);
  delete job;
}

}  // namespace

void Server::SaveForReplicas(const std::string& path, std::function<void(uint64_t)> started,
                             std::function<void(bool)> done) {
  auto* job = new ReplicaSave();
  job->started = std::move(started);
  job->server = this;
  const size_t slash = path.rfind('/');
  job->dir = slash == std::string::npos ? "." : path.substr(0, slash);
  job->name = slash == std::string::npos ? path : path.substr(slash + 1);
  job->done = std::move(done);
  job->run = [](MailboxItem* item) {
    Task t = RunReplicaSave(static_cast<ReplicaSave*>(item));
    t.Start(nullptr, nullptr);
  };
  workers_[0]->Post(job);
}

Status Server::ConfigSet(std::vector<std::pair<std::string, std::string>> params,
                         bool local_client) {
  // CONFIG SET dir (allowed by enable-protected-configs) stores the absolute path, so dump.rdb
  // lands where CONFIG GET dir says (Redis chdir()s there and shows getcwd()); the "dir" hook
  // refuses a path that is not a directory.
  for (auto& [name, value] : params) {
    if (!EqualsNoCase(name, "dir")) continue;
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::canonical(value, ec);
    if (!ec) value = dir.string();
  }
  std::lock_guard<std::mutex> lock(config_mu_);
  return registry_.Set(params, local_client);
}

void Server::ConfigGet(std::span<const std::string_view> patterns,
                       std::vector<std::pair<std::string, std::string>>* out) {
  std::lock_guard<std::mutex> lock(config_mu_);
  registry_.Get(patterns, out);
}

void Server::RequestShutdown() {
  shutdown_requested_ = true;
  kill(getpid(), SIGTERM);
}

namespace {

struct SaveItem : MailboxItem {
  Server* server = nullptr;
  std::shared_ptr<std::promise<bool>> done;  // shared: the main thread may go as soon as it is set
};

Task SaveAndReport(SaveItem* item) {
  bool ok = false;
  co_await SaveBeforeShutdown(item->server, &ok);
  std::shared_ptr<std::promise<bool>> done = std::move(item->done);
  delete item;
  done->set_value(ok);
}

}  // namespace

bool Server::SaveOnSignal() {
  LogNotice("Saving the final RDB snapshot before exiting.");
  auto* item = new SaveItem();
  item->server = this;
  item->done = std::make_shared<std::promise<bool>>();
  std::future<bool> done = item->done->get_future();
  item->run = [](MailboxItem* m) {
    Task t = SaveAndReport(static_cast<SaveItem*>(m));
    t.Start(nullptr, nullptr);
  };
  workers_[0]->Post(item);
  return done.get();
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
  w->AddTurnHook([this, id]() { pubsub_->EndOfTurn(id); });    // this turn's pub/sub deliveries
  w->AddTurnHook([this, id]() { tracking_->EndOfTurn(id); });  // and invalidations
  tracking_->AttachStore(id, store);
  w->AddTurnHook(&Connection::FlushDirty);
  hub_->StartWorker(w, id);
  StartListBlocking(w, &shards_->at(id));
  w->AddTurnHook([store]() { store->EndOfTurn(); });
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
  if (config_.tomb_raider_interval_ms > 0) {
    w->AddTimer(config_.tomb_raider_interval_ms * 1000, [store]() { store->SweepTombstones(); });
  }
  if (id == 0 && rdb_to_load_.empty()) StartListeners(w);  // else once the RDB is in
  return true;
}

void Server::StartListeners(Worker* w) {
  if (config_.port != 0) listener_.Start(w, [this](int fd) { Adopt(fd); });
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
std::string Server::ConfigValue(std::string_view name) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string_view patterns[] = {name};
  ConfigGet(patterns, &out);
  return out.empty() ? std::string() : out[0].second;
}

uint64_t Server::StoredKeys() {
  uint64_t keys = 0;
  for (int i = 0; i < shards_->size(); ++i) keys += shards_->at(i).store.records();
  return keys;
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

void Server::Adopt(int fd, TlsSession* tls) {
  // Connections are dealt round-robin; each then lives on its worker for good.
  int target = next_worker_;
  next_worker_ = (next_worker_ + 1) % worker_count();
  uint64_t id = next_client_id_.fetch_add(1);
  RequestParser::Limits limits;
  if (target == 0) {
    Connection::Open(workers_[0].get(), fd, id, this, limits, tls);
    return;
  }
  struct AdoptItem : MailboxItem {
    Server* server;
    int fd;
    uint64_t id;
    TlsSession* tls;
  };
  auto* item = new AdoptItem();
  item->server = this;
  item->fd = fd;
  item->id = id;
  item->tls = tls;
  item->run = [](MailboxItem* m) {
    auto* a = static_cast<AdoptItem*>(m);
    Connection::Open(Worker::Current(), a->fd, a->id, a->server, RequestParser::Limits{}, a->tls);
    delete a;
  };
  workers_[target]->Post(item);
}

void Server::OnOpen(Connection& c) {
  auto* cl = new ClientState(&c);
  c.user_data = cl;
  c.set_auth_required(auth_required());
  cl->authenticated = !auth_required();  // as Redis: kept if a password is set later
  int w = c.worker()->id();
  cl->next = client_lists_[w];
  if (cl->next != nullptr) cl->next->prev = cl;
  client_lists_[w] = cl;
  stats_[w]->connections_received.Add();
  if (LogEnabled(LogSeverity::kVerbose)) LogVerbose("Accepted " + c.peer());
  int64_t now_connected = connected_clients_.fetch_add(1) + 1;
  if (draining_[w] != 0) {
    c.Abort();
  } else if (now_connected > maxclients()) {
    c.output()->append("-ERR max number of clients reached\r\n");
    c.CloseAfterReply();
    stats_[w]->rejected_connections.Add();
  } else if (!hub_->OnOpen(cl)) {
    stats_[w]->rejected_connections.Add();  // protected mode
  }
}

void Server::OnQueryBufferLimit(Connection& c) {
  hub_->OnQueryBufferLimit(static_cast<ClientState*>(c.user_data));
}

void Server::OnClose(Connection& c) {
  auto* cl = static_cast<ClientState*>(c.user_data);
  int w = c.worker()->id();
  if (c.peer_closed() && LogEnabled(LogSeverity::kVerbose)) {
    LogVerbose("Client closed connection id=" + std::to_string(cl->id) + " addr=" + c.peer() +
               " laddr=" + c.local() + " name=" + cl->name);
  }
  if (cl->prev != nullptr) {
    cl->prev->next = cl->next;
  } else {
    client_lists_[w] = cl->next;
  }
  if (cl->next != nullptr) cl->next->prev = cl->prev;
  connected_clients_.fetch_sub(1);
  hub_->OnClose(cl);
  pubsub_->OnClose(cl);
  tracking_->OnClose(cl);
  if (cl->pending) {
    cl->closed = true;  // freed by FinishCommand
  } else {
    delete cl;
  }
}

void Server::BeginDrain(int id) {
  draining_[id] = 1;
  if (id == 0) {
    listener_.Stop();
    tls_listener_.Stop();
  }
  // Requests already being handled finish and their replies go out; then the sockets close.
  for (ClientState* cl = client_lists_[id]; cl != nullptr; cl = cl->next) {
    cl->conn->CloseAfterReply();
  }
}

bool Server::WorkerDone(int id) {
  if (draining_[id] == 0) BeginDrain(id);
  Store& store = shards_->at(id).store;
  if (draining_[id] == 1 && client_lists_[id] == nullptr && Connection::LiveOnThisThread() == 0) {
    // Every acknowledged write reaches stable storage before the process exits.
    draining_[id] = 3;
    std::atomic<bool>* synced = synced_[id].get();
    [](Store* st, std::atomic<bool>* done) -> Task {
      bool ok = false;
      co_await st->FlushAndSync(&ok);
      if (!ok) LogWarning("shutdown: the data file could not be synced: " + st->log().error());
      done->store(true);
    }(&store, synced)
                                                  .Start(nullptr, nullptr);
  }
  if (draining_[id] == 3 && synced_[id]->load() && !store.defrag_running()) {
    draining_[id] = 2;
    drained_workers_.fetch_add(1);
  }
  // Every worker keeps looping until all are drained: a draining client may still need a hop
  // to another worker's shard.
  return drained_workers_.load() == worker_count() || MonotonicUs() > drain_deadline_us_;
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
  if (!OpenStorage(error)) return false;
  if (!config_.load_rdb.empty()) {
    rdb_to_load_ = config_.load_rdb;
  } else if (const std::string path = RdbFilePath(ConfigValue("dir"), ConfigValue("dbfilename"));
             StoredKeys() == 0 && access(path.c_str(), R_OK) == 0) {
    // As Redis loads dir/dbfilename at start-up, when the data file holds no key (it was just
    // created, or a load into it failed before).
    rdb_to_load_ = path;
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
  std::vector<Store*> ptrs;
  for (int i = 0; i < n; ++i) ptrs.push_back(&shards_->at(i).store);
  LogNotice(std::string(data_file_->fresh() ? "Formatted" : "Opened") + " data file " +
            config_.data_file + " (" + std::to_string(data_file_->segment_count()) +
            " segments of " + std::to_string(data_file_->segment_size() >> 20) + " MiB)");
  if (!Recover(
          data_file_.get(), ptrs, [n](uint16_t slot) { return SlotShard(slot, n); },
          [](const std::string& m) { LogNotice(m); }, &recovery_, error)) {
    return false;
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
  if (config_.port == 0 && tls_port == 0) {
    LogWarning("Configured to not listen anywhere, exiting.");
    return 1;
  }
  if (config_.port != 0 && !listener_.Bind(bind_address, config_.port, &error)) {
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
    if (!tls_listener_.Bind(bind_address, tls_port, &error)) {
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
    // As Redis: with save points, a signal writes dump.rdb first and a failed save keeps the
    // server running (SHUTDOWN decided for itself: shutdown_requested_).
    if (shutdown_requested_.load() || ConfigValue("save").empty() || SaveOnSignal()) break;
    LogWarning("Error trying to save the DB, can't exit.");
  }
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
  if (config_.shutdown_checkpoint) {
    std::vector<Store*> ptrs;
    for (int i = 0; i < worker_count(); ++i) ptrs.push_back(&shards_->at(i).store);
    if (WriteCheckpoint(data_file_.get(), ptrs, &error)) {
      LogNotice("Checkpoint written: the next start loads the index without scanning");
    } else {
      LogWarning("Checkpoint not written: " + error);
    }
  }
  LogNotice("Lavik is now ready to exit, bye bye...");
  return 0;
}

}  // namespace lavik
