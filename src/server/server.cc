#include "server/server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <future>
#include <random>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/db_key.h"
#include "base/log.h"
#include "client/client_state.h"
#include "cluster/cluster.h"
#include "config/live_settings.h"
#include "pubsub/keyspace_publish.h"
#include "pubsub/pubsub.h"
#include "rdb/codec.h"
#include "replication/master.h"
#include "replication/replica.h"
#include "replication/sync_stream.h"
#include "runtime/shard_hop.h"
#include "scripting/scripting.h"
#include "server/client_hub.h"
#include "server/command_registry.h"
#include "server/rdb_save.h"
#include "server/tls_config.h"
#include "storage/store.h"
#include "tracking/tracking.h"

namespace lavik {
namespace {

// Keys this process expires go to its replicas as DEL (commands/propagate.h) — unless it follows
// a master itself: then the stream it passes on is its master's, DELs included.
std::atomic<const Replica*> g_expiry_replica{nullptr};
bool ExpiryPropagates() {
  if (!repl::On()) return false;
  const Replica* r = g_expiry_replica.load(std::memory_order_relaxed);
  return r != nullptr && !r->following();
}

std::string RandomHex(size_t n) {
  std::random_device rd;
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += kHex[rd() % 16];
  return s;
}

}  // namespace

Server::Server(Config config) : config_(std::move(config)), table_(AllCommandFamilies()) {
  ResolveMemoryDefaults(&config_);  // cache-mb and max-memory
  registry_.LoadFrom(config_);
  if (const std::string* n = registry_.Value("databases")) DbMap::SetCount(std::stoi(*n));
  DbMap::SetClusterMode(ConfigValue("cluster-enabled") == "yes");
  acl_ = std::make_unique<Acl>(table_);
  acl_->set_pubsub_default_all(ConfigValue("acl-pubsub-default") == "allchannels");
  registry_.OnChange("acl-pubsub-default", [this](std::string_view v) {
    acl_->set_pubsub_default_all(v == "allchannels");  // users created from now on
    return Status::Ok();
  });
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
  tomb_raider_ms_.store(config_.tomb_raider_interval_ms);
  tcp_keepalive_s_.store(std::strtoll(ConfigValue("tcp-keepalive").c_str(), nullptr, 10));
  stop_writes_on_save_error_.store(ConfigValue("stop-writes-on-bgsave-error") == "yes");
  registry_.OnChange("stop-writes-on-bgsave-error", [this](std::string_view v) {
    stop_writes_on_save_error_.store(v == "yes");
    return Status::Ok();
  });
  acl_log_.set_max_len(std::strtoull(ConfigValue("acllog-max-len").c_str(), nullptr, 10));
  registry_.OnChange("acllog-max-len", [this](std::string_view v) {
    acl_log_.set_max_len(std::strtoull(std::string(v).c_str(), nullptr, 10));
    return Status::Ok();
  });
  has_save_points_.store(!ConfigValue("save").empty());
  registry_.OnChange("save", [this](std::string_view v) {
    has_save_points_.store(!v.empty());
    return Status::Ok();
  });
  registry_.OnChange("tcp-keepalive", [this](std::string_view v) {
    tcp_keepalive_s_.store(std::strtoll(std::string(v).c_str(), nullptr, 10));  // new clients
    return Status::Ok();
  });
  replica_apply_window_.store(
      std::strtoll(ConfigValue("replica-apply-window").c_str(), nullptr, 10));
  registry_.OnChange("replica-apply-window", [this](std::string_view v) {
    replica_apply_window_.store(std::strtoll(std::string(v).c_str(), nullptr, 10));
    return Status::Ok();
  });
  registry_.OnChange("tomb-raider-interval-ms", [this](std::string_view v) {
    tomb_raider_ms_.store(std::strtoll(std::string(v).c_str(), nullptr, 10));
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
      [this](int64_t before, std::string_view command) { master_->Feed(before, command); },
      [this](ReplyWriter& w) { master_->WriteReplicas(w); },
      [this](std::string* out) { master_->AppendSlaves(out); },
      [this](std::string* out) { master_->AppendBacklog(out); },
      [this](std::string_view master) {
        std::lock_guard<std::mutex> lock(config_mu_);
        registry_.SetInitial("replicaof", master);
      }});

  master_ = std::make_unique<Master>(Master::Deps{
      replica_.get(), [this](std::string_view name) { return ConfigValue(name); },
      [this](const std::string& path, std::shared_ptr<SyncStream> stream,
             std::function<void(uint64_t, int64_t)> started, std::function<void(bool)> done) {
        SaveForReplicas(path, std::move(stream), std::move(started), std::move(done));
      },
      [this] {
        const std::string dir = ConfigValue("dir");
        return dir.empty() ? std::string(".") : dir;
      },
      [this](bool on) { hub_->PauseForFailover(on); }});
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
  services_.disk_error = [this] { return DiskErrorDeniesWrites(); };
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
  rdb::SetCompression(ConfigValue("rdbcompression") == "yes");
  registry_.OnChange("rdbcompression", [](std::string_view v) {
    rdb::SetCompression(v == "yes");
    return Status::Ok();
  });
  registry_.OnChange("replica-serve-stale-data", [this](std::string_view v) {
    replica_->set_serve_stale_config(v == "yes");
    return Status::Ok();
  });
  replica_ignore_maxmemory_.store(ConfigValue("replica-ignore-maxmemory") == "yes");
  registry_.OnChange("replica-ignore-maxmemory", [this](std::string_view v) {
    replica_ignore_maxmemory_.store(v == "yes");
    return Status::Ok();
  });
  services_.over_memory_limit = [this] { return MemoryRefusesWrites(); };
  ConfigureScripting(registry_);
  SetScriptBusyHook(&Server::OnScriptBusy, this);
  run_id_ = RandomHex(40);
}

bool Server::MemoryRefusesWrites() const {
  return memory_guard_->oom() &&
         !(replica_ignore_maxmemory_.load(std::memory_order_relaxed) && replica_->following());
}

Server::~Server() {
  const Replica* mine = replica_.get();
  g_expiry_replica.compare_exchange_strong(mine, nullptr);
}

namespace {

// A replica's full sync: the snapshot opened on worker 0 (started(its sequence number, its
// stream offset or -1)), the RDB
// written from it (the BGSAVE walk) to a file or, diskless, to the replicas' stream, then done(ok).
struct ReplicaSave : MailboxItem {
  Server* server = nullptr;
  std::string dir, name;
  std::shared_ptr<SyncStream> stream;
  std::function<void(uint64_t, int64_t)> started;
  std::function<void(bool)> done;
  bool ok = false;
};

Task RunReplicaSave(ReplicaSave* job) {
  Server* const server = job->server;
  // To disk it is a BGSAVE of dump.rdb, as Redis's: LASTSAVE and rdb_changes_since_last_save
  // follow it (the writes counted before the snapshot opens are all in it).
  uint64_t dirty = 0;
  const int64_t start_ms = NowMs();
  if (job->stream == nullptr) {
    for (int w = 0; w < server->worker_count(); ++w) {
      co_await ShardCall(server->worker(w), [server, w, &dirty]() -> Task {
        dirty += server->shards().at(w).store.stats().dirty;
        co_return;
      });
    }
  }
  RdbSnapshot snap;
  co_await BeginRdbSnapshot(job->server->shards(), &snap);
  job->started(snap.seq, snap.repl.valid ? snap.repl.offset : -1);
  if (job->stream != nullptr) {
    co_await StreamRdb(job->server->shards(), job->stream.get(), &job->ok, &snap);
  } else {
    co_await SaveRdbFile(job->server->shards(), job->dir, job->name, &job->ok,
                         "temp-repl-walk-" + std::to_string(getpid()) + ".rdb", &snap);
    SaveState& state = server->save_state();
    state.last_ok = job->ok;
    state.last_bgsave_s = (NowMs() - start_ms) / 1000;
    if (job->ok) {
      state.dirty_at_save = dirty;
      state.last_save_s = NowMs() / 1000;
    }
  }
  job->done(job->ok);
  delete job;
}

}  // namespace

void Server::SaveForReplicas(const std::string& path, std::shared_ptr<SyncStream> stream,
                             std::function<void(uint64_t, int64_t)> started,
                             std::function<void(bool)> done) {
  auto* job = new ReplicaSave();
  job->stream = std::move(stream);
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

bool Server::BeginShutdownWait(int64_t timeout_ms, std::function<void(int)> done) {
  {
    std::lock_guard<std::mutex> lock(shutdown_mu_);
    if (shutdown_waiting_) return false;
    shutdown_waiting_ = true;
  }
  const int64_t deadline = NowMs() + timeout_ms;
  shutdown_deadline_ms_ = deadline;
  LogNotice("User requested shutdown...");
  hub_->PauseForShutdown(true);
  LogNotice("Waiting for replicas before shutting down.");
  master_->StartShutdownWait(deadline, std::move(done));
  return true;
}

bool Server::JoinShutdownWait(std::function<void(bool resumed)> resumed) {
  std::lock_guard<std::mutex> lock(shutdown_mu_);
  if (!shutdown_waiting_) return false;
  shutdown_joined_.push_back(std::move(resumed));
  return true;
}

void Server::EndShutdownWait(bool resumed) {
  std::vector<std::function<void(bool)>> joined;
  {
    std::lock_guard<std::mutex> lock(shutdown_mu_);
    if (!shutdown_waiting_) return;
    shutdown_waiting_ = false;
    joined.swap(shutdown_joined_);
  }
  shutdown_deadline_ms_ = -1;
  if (resumed) hub_->PauseForShutdown(false);  // exiting: the workers drain what is parked
  for (auto& f : joined) f(resumed);
}

bool Server::AbortShutdown() {
  if (!master_->AbortShutdownWait()) return false;
  LogNotice("Shutdown manually aborted.");
  return true;
}

int64_t Server::shutdown_in_ms() const {
  const int64_t deadline = shutdown_deadline_ms_.load();
  return deadline < 0 ? -1 : std::max<int64_t>(0, deadline - NowMs());
}

bool Server::WaitForReplicasOnSignal() {
  const int64_t timeout_s = std::stoll(ConfigValue("shutdown-timeout"));
  if (timeout_s == 0 || master_->ReplicasInSync()) return true;
  auto outcome = std::make_shared<std::promise<int>>();
  std::future<int> done = outcome->get_future();
  if (!BeginShutdownWait(timeout_s * 1000, [outcome](int o) { outcome->set_value(o); })) {
    return false;  // a SHUTDOWN waits already: it decides
  }
  if (done.get() == Master::kAborted) {
    EndShutdownWait(true);
    return false;
  }
  return true;
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

void Server::Adopt(int fd, TlsSession* tls) {
  // tcp-keepalive, as Redis's anetKeepAlive: probes after that many idle seconds, then every
  // third of it, three of them; 0 leaves the socket without keep-alive.
  if (const int idle = static_cast<int>(tcp_keepalive_s_.load(std::memory_order_relaxed));
      idle > 0) {
    const int one = 1, interval = std::max(1, idle / 3), count = 3;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  }
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
  } else if (now_connected > maxclients() && !c.outbound()) {  // not our master's link
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

void Server::Prefetch(Connection& c, std::span<const std::string_view> keys) {
  const auto* cl = static_cast<const ClientState*>(c.user_data);
  if (cl == nullptr) return;
  // The stored keys, as Execute will make them (base/db_key.h), without allocating; only those
  // of this worker's shard (a command on another shard's key runs on its worker).
  const int db = DbMap::Physical(cl->db);
  Shard& local = shards_->local();
  std::array<char, 256> buf;
  for (std::string_view key : keys) {
    if (key.empty()) continue;
    const std::string_view stored = DbKeyInto(db, key, buf.data(), buf.size());
    if (stored.empty()) continue;
    if (&shards_->at(shards_->ShardOf(stored)) == &local) local.store.PrefetchKey(stored);
  }
}

void Server::PrefetchFlush() { shards_->local().store.PrefetchFlush(); }

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
    unix_listener_.Stop();
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

}  // namespace lavik
