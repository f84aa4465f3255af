#include "server/client_hub.h"

#include <algorithm>
#include <cstdlib>

#include "acl/acl.h"
#include "base/clock.h"
#include "base/log.h"
#include "blocking/list_blocking.h"
#include "commands/list_wait.h"
#include "config/config_registry.h"
#include "pubsub/pubsub_client.h"
#include "runtime/worker.h"
#include "scripting/scripting.h"
#include "server/server.h"
#include "tracking/tracking.h"
#include "transaction/transaction.h"

namespace lavik {
namespace {

// A closure run on one worker (Unpause, a new proto-max-bulk-len, a monitor line).
struct RunItem : MailboxItem {
  std::function<void()> fn;
};

void Post(Worker* w, std::function<void()> fn) {
  auto* item = new RunItem();
  item->fn = std::move(fn);
  item->run = [](MailboxItem* m) {
    auto* r = static_cast<RunItem*>(m);
    r->fn();
    delete r;
  };
  w->Post(item);
}

void EraseOne(std::vector<ClientState*>* list, ClientState* cl) {
  auto it = std::find(list->begin(), list->end(), cl);
  if (it != list->end()) list->erase(it);
}

int64_t ToInt(const std::string* v) {
  return v == nullptr ? 0 : std::strtoll(v->c_str(), nullptr, 10);
}

// The host part of "host:port" (IPv6 hosts are not bracketed in Connection::peer()).
std::string_view HostOf(std::string_view addr) {
  size_t colon = addr.rfind(':');
  return colon == std::string_view::npos ? addr : addr.substr(0, colon);
}

}  // namespace

ClientHub::ClientHub(Server* server)
    : server_(server), workers_(std::make_unique<PerWorker[]>(kMaxWorkers)) {}

ClientHub::~ClientHub() = default;

std::string& ClientHub::Sink() {
  thread_local std::string sink;
  // Nobody reads it; keep it from growing without bound across discarded replies.
  if (sink.size() > (1u << 16)) sink.clear();
  return sink;
}

void ClientHub::Configure(ConfigRegistry& registry) {
  timeout_s_ = ToInt(registry.Value("timeout"));
  registry.OnChange("timeout", [this](std::string_view v) {
    timeout_s_.store(std::strtoll(std::string(v).c_str(), nullptr, 10));
    return Status::Ok();
  });

  auto set_qbuf = [](std::string_view v) {
    Connection::SetQueryBufferLimit(std::strtoull(std::string(v).c_str(), nullptr, 10));
    return Status::Ok();
  };
  if (const std::string* v = registry.Value("client-query-buffer-limit")) set_qbuf(*v);
  registry.OnChange("client-query-buffer-limit", set_qbuf);

  auto set_obuf = [this](std::string_view v) {
    OutputLimit normal, pubsub;
    ParseOutputLimitClass(v, ClientType::kNormal, &normal);
    ParseOutputLimitClass(v, ClientType::kPubSub, &pubsub);
    std::lock_guard<std::mutex> lock(limit_mu_);
    normal_limit_ = normal;
    pubsub_limit_ = pubsub;
    // Subscribers (issue #4) will need the check even when normal clients have no limit.
    output_limit_on_.store(normal.enabled(), std::memory_order_relaxed);
    pubsub_limit_on_.store(pubsub.enabled(), std::memory_order_relaxed);
    return Status::Ok();
  };
  if (const std::string* v = registry.Value("client-output-buffer-limit")) set_obuf(*v);
  registry.OnChange("client-output-buffer-limit", set_obuf);

  proto_max_bulk_len_ = static_cast<uint64_t>(ToInt(registry.Value("proto-max-bulk-len")));
  registry.OnChange("proto-max-bulk-len", [this](std::string_view v) {
    proto_max_bulk_len_.store(std::strtoull(std::string(v).c_str(), nullptr, 10));
    // Every worker applies it to its connections now (the caller's own worker inline, so the
    // caller's next request already sees it).
    PostToAll([this](int w) { ApplyProtoMaxBulkLen(w); });
    return Status::Ok();
  });

  const std::string* pm = registry.Value("protected-mode");
  protected_mode_ = pm == nullptr || *pm == "yes";
  registry.OnChange("protected-mode", [this](std::string_view v) {
    protected_mode_.store(v == "yes");
    return Status::Ok();
  });
  if (const std::string* b = registry.Value("bind")) bind_ = *b;
}

void ClientHub::StartWorker(Worker* worker, int id) {
  worker->AddTimer(kTickUs, [this, worker, id]() { Tick(worker, id); });
}

void ClientHub::PostToAll(std::function<void(int)> fn) {
  Worker* self = Worker::Current();
  for (int w = 0; w < server_->worker_count(); ++w) {
    Worker* target = server_->worker(w);
    if (target == self) {
      fn(w);
    } else {
      Post(target, [fn, w]() { fn(w); });
    }
  }
}

void ClientHub::ApplyProtoMaxBulkLen(int worker) {
  const size_t n = proto_max_bulk_len_.load();
  for (ClientState* cl = server_->clients_of(worker); cl != nullptr; cl = cl->next) {
    cl->conn->set_max_bulk_len(n);
  }
}

// ---- Connections ----------------------------------------------------------------------------

bool ClientHub::OnOpen(ClientState* cl) {
  Connection* c = cl->conn;
  c->set_max_bulk_len(proto_max_bulk_len_.load(std::memory_order_relaxed));
  // Protected mode is about accepted clients: never our own link to our master (as Redis).
  if (!c->outbound() && ProtectedModeDenies(protected_mode_.load(std::memory_order_relaxed),
                                            server_->auth_required(), bind_, HostOf(c->peer()))) {
    c->output()->append("-").append(kProtectedModeDenied).append("\r\n");
    c->CloseAfterReply();
    return false;
  }
  return true;
}

void ClientHub::OnClose(ClientState* cl) {
  PerWorker& pw = workers_[cl->conn->worker()->id()];
  if (cl->monitor) {
    cl->monitor = false;
    EraseOne(&pw.monitors, cl);
    pw.monitor_count.fetch_sub(1, std::memory_order_relaxed);
    monitors_.fetch_sub(1, std::memory_order_relaxed);
  }
  if (cl->paused) {
    cl->paused = false;
    EraseOne(&pw.parked, cl);
  }
}

void ClientHub::OnQueryBufferLimit(ClientState* cl) {
  std::string bytes;
  AppendRepr(&bytes, cl->conn->input().substr(0, 64));
  LogWarning("Closing client that reached max query buffer length: " +
             ClientInfoLine(*cl, NowMs(), false) + " (qbuf initial bytes: " + bytes + ")");
}

void ClientHub::Kill(ClientState* cl) {
  cl->conn->Abort();
  // Blocked in BLPOP, XREAD...: end the wait now (no reply), or the connection would stay open
  // until the command's timeout, since only a hang-up of the peer ends a wait early.
  if (cl->pending) EndBlockedWait(cl->id, ListWaiter::Outcome::kGone);
  if (cl->paused) {
    // Its command never runs: end the wait now so the connection can close.
    PerWorker& pw = workers_[cl->conn->worker()->id()];
    cl->paused = false;
    EraseOne(&pw.parked, cl);
    cl->cmd_spec = nullptr;  // not run: nothing for MONITOR
    server_->FinishCommand(cl);
  }
}

ClientType ClientHub::TypeOf(const ClientState& cl) {
  // A monitor counts as a normal client, as in Redis; a client with any subscription (RESP2 or
  // RESP3) is "pubsub", which also selects the pubsub output limit.
  if (cl.master) return ClientType::kMaster;
  if (cl.replica) return ClientType::kReplica;
  return cl.pubsub != nullptr && cl.pubsub->subscribed() ? ClientType::kPubSub
                                                         : ClientType::kNormal;
}

bool ClientHub::UserExists(std::string_view user) const {
  return server_->acl().Find(user) != nullptr;
}

std::string ClientInfoLine(const ClientState& cl, int64_t now_ms, bool running, int64_t heard_ms) {
  const Connection& c = *cl.conn;
  // Flags in Redis's order; only those Lavik can have.
  std::string flags;
  if (cl.monitor) flags += 'O';
  if (cl.replica) flags += 'S';
  if (cl.master) flags += 'M';
  if (ClientHub::TypeOf(cl) == ClientType::kPubSub) flags += 'P';
  if (cl.paused || (cl.pending && cl.cmd_spec != nullptr && (cl.cmd_spec->flags & kCmdBlocking))) {
    flags += 'b';  // parked by CLIENT PAUSE, or in a blocking command (BLPOP...)
  }
  const TrackingClient* tr =
      cl.tracking != nullptr && cl.tracking->on ? cl.tracking.get() : nullptr;
  if (tr != nullptr) {
    flags += 't';
    if (tr->broken_redirect) flags += 'R';
    if (tr->bcast) flags += 'B';
  }
  if (cl.close_after_reply) flags += 'c';
  if (c.closing() && !cl.close_after_reply) flags += 'A';
  if (c.unix_socket()) flags += 'U';
  if (cl.no_evict) flags += 'e';
  if (flags.empty()) flags = "N";
  size_t argv_mem = 0;
  if (running || cl.pending) {
    for (std::string_view a : cl.cmd_args) argv_mem += a.size();
  }
  const size_t omem = c.output_pending();
  std::string s;
  s.reserve(320);
  s += "id=" + std::to_string(cl.id);
  s += " addr=" + c.peer();
  s += " laddr=" + c.local();
  s += " fd=" + std::to_string(c.fd());
  s += " name=" + cl.name;
  s += " age=" + std::to_string((now_ms - c.created_ms()) / 1000);
  s += " idle=" + std::to_string((now_ms - std::max(c.last_active_ms(), heard_ms)) / 1000);
  s += " flags=" + flags;
  const PubSubClient* ps = cl.pubsub.get();
  s += " db=" + std::to_string(cl.db) + " sub=" + std::to_string(ps ? ps->channels() : 0);
  s += " psub=" + std::to_string(ps ? ps->patterns() : 0);
  s += " ssub=" + std::to_string(ps ? ps->shard_channels() : 0);
  s += " multi=-1";
  s += " qbuf=" + std::to_string(c.input_length());
  s += " qbuf-free=" + std::to_string(c.input_capacity() - c.input_length());
  s += " argv-mem=" + std::to_string(argv_mem);
  s += " multi-mem=0";
  s += " rbs=" + std::to_string(c.input_capacity());
  s += " rbp=0 obl=0 oll=0";
  s += " omem=" + std::to_string(omem);
  s += " tot-mem=" + std::to_string(c.input_capacity() + omem + argv_mem + sizeof(cl));
  s += omem > 0 ? " events=rw" : " events=r";
  s += " cmd=";
  s += cl.last_command;
  s += " user=" + cl.user;
  s += " redir=" + std::to_string(tr != nullptr ? static_cast<int64_t>(tr->redirect) : -1);
  s += " resp=" + std::to_string(cl.resp);
  return s;
}

// ---- CLIENT PAUSE ---------------------------------------------------------------------------

void ClientHub::Pause(int64_t end_ms, bool all) {
  std::lock_guard<std::mutex> lock(pause_mu_);
  int type = all ? kPauseAll : kPauseWrite;
  // As in Redis, a new pause never shortens or weakens one in force.
  if (client_type_.load() == kPauseNone || end_ms > client_end_ms_.load()) client_end_ms_ = end_ms;
  if (type > client_type_.load()) client_type_ = type;
  CombinePauses();
}

void ClientHub::Unpause() {
  {
    std::lock_guard<std::mutex> lock(pause_mu_);
    client_type_ = kPauseNone;
    client_end_ms_ = 0;
    CombinePauses();
  }
  PostToAll([this](int w) { ResumeParked(w); });
}

void ClientHub::PauseForFailover(bool on) {
  {
    std::lock_guard<std::mutex> lock(pause_mu_);
    failover_pause_ = on;
    CombinePauses();
  }
  if (!on) PostToAll([this](int w) { ResumeParked(w); });
}

void ClientHub::PauseForShutdown(bool on) {
  {
    std::lock_guard<std::mutex> lock(pause_mu_);
    shutdown_pause_ = on;
    CombinePauses();
  }
  if (!on) PostToAll([this](int w) { ResumeParked(w); });
}

void ClientHub::CombinePauses() {
  int type = client_type_.load();
  int64_t end = client_end_ms_.load();
  if (failover_pause_ || shutdown_pause_) {
    type = std::max<int>(type, kPauseWrite);
    end = INT64_MAX;  // until FAILOVER ends it
  }
  pause_type_ = type;
  pause_end_ms_ = type == kPauseNone ? 0 : end;
}

bool ClientHub::PauseActive(int64_t now_ms) const {
  return pause_type_.load(std::memory_order_relaxed) != kPauseNone &&
         now_ms < pause_end_ms_.load(std::memory_order_relaxed);
}

bool ClientHub::ShouldParkSlow(const ClientState* cl, const CommandSpec* spec) const {
  // Monitors are replicas to Redis, and replicas are never paused; QUIT is not a command that
  // Redis 7.0 can pause either (it is answered before the lookup).
  if (cl->monitor || spec->name == "quit" || !PauseActive(NowMs())) return false;
  if (pause_type_.load(std::memory_order_relaxed) == kPauseAll) return true;
  // WRITE also holds PUBLISH/SPUBLISH and PFCOUNT (which may write its cached count): Redis 7.0
  // pauses "may-replicate" commands with writes, and an EXEC whose queue holds one; scripts that
  // may write too (EVAL without a no-writes shebang, FCALL of a writing function).
  const auto may_replicate = [](const CommandSpec* s, std::span<const std::string_view> args) {
    return (s->flags & kCmdWrite) != 0 || s->name == "publish" || s->name == "spublish" ||
           s->name == "pfcount" || ScriptMayWrite(*s, args);
  };
  if (may_replicate(spec, cl->cmd_args)) return true;
  if (spec->name != "exec" || cl->tx == nullptr || !cl->tx->in_multi) return false;
  for (const TxState::Queued& q : cl->tx->queue) {
    std::vector<std::string_view> argv(q.args.begin(), q.args.end());
    if (may_replicate(q.spec, argv)) return true;
  }
  return false;
}

void ClientHub::Park(ClientState* cl) {
  cl->paused = true;
  cl->pending = true;  // the connection holds this request (and its order) until we resume
  workers_[cl->conn->worker()->id()].parked.push_back(cl);
}

void ClientHub::ResumeParked(int worker) {
  PerWorker& pw = workers_[worker];
  if (pw.parked.empty()) return;
  std::vector<ClientState*> batch;
  batch.swap(pw.parked);
  for (size_t i = 0; i < batch.size(); ++i) {
    ClientState* cl = batch[i];
    cl->paused = false;
    if (cl->closed || cl->conn->closing()) {
      cl->cmd_spec = nullptr;  // not run: nothing for MONITOR
      server_->FinishCommand(cl);
    } else if (ShouldPark(cl, cl->cmd_spec)) {
      pw.parked.push_back(cl);  // a new pause began meanwhile
      cl->paused = true;
    } else {
      cl->writer.SetOutput(cl->discard_reply ? &Sink() : cl->conn->output());
      if (server_->Execute(cl, cl->cmd_spec, cl->cmd_args) != RequestHandler::Result::kPending) {
        server_->FinishCommand(cl);
      }
    }
  }
}

// ---- Per-worker tick ------------------------------------------------------------------------

void ClientHub::Tick(Worker* worker, int id) {
  PerWorker& pw = workers_[id];
  const int64_t now = NowMs();
  if (client_type_.load(std::memory_order_relaxed) != kPauseNone &&
      client_end_ms_.load(std::memory_order_relaxed) <= now) {
    std::lock_guard<std::mutex> lock(pause_mu_);
    if (client_end_ms_.load() <= now) {  // CLIENT PAUSE timed out (FAILOVER's may remain)
      client_type_ = kPauseNone;
      CombinePauses();
    }
  }
  // A stopping worker runs what it holds, so shutdown is not stuck behind a pause.
  if (!pw.parked.empty() && (!PauseActive(now) || worker->stop_requested())) ResumeParked(id);
  if (!pw.parked.empty() && pw.ticks % 2 == 0) DropHungUpParked(id);  // every 100 ms
  // Idle clients: a few scans a second are plenty for a limit counted in seconds.
  if (++pw.ticks % 4 == 0 && timeout_s_.load(std::memory_order_relaxed) > 0) {
    CloseIdleClients(id, now);
  }
}

void ClientHub::DropHungUpParked(int id) {
  std::vector<ClientState*>& parked = workers_[id].parked;
  for (size_t i = 0; i < parked.size();) {
    ClientState* cl = parked[i];
    if (cl->conn->closing() || ClientHungUp(cl->conn->fd())) {
      Kill(cl);  // takes it off `parked`; its command is finished unrun
    } else {
      ++i;
    }
  }
}

void ClientHub::CloseIdleClients(int id, int64_t now_ms) {
  const int64_t limit_ms = timeout_s_.load(std::memory_order_relaxed) * 1000;
  for (ClientState* cl = server_->clients_of(id); cl != nullptr; cl = cl->next) {
    // As Redis: monitors, replicas (a TLS one's connection reads nothing: the Master's thread
    // does), our own master's link (it may be quiet between pings), and clients waiting on a
    // command, are never idle-closed.
    if (cl->monitor || cl->replica || cl->master || cl->pending || cl->conn->closing()) continue;
    if (now_ms - cl->conn->last_active_ms() > limit_ms) {
      Log(LogSeverity::kVerbose, "Closing idle client");
      cl->conn->Abort();
    }
  }
}

// ---- After a command: MONITOR and output limits ---------------------------------------------

void ClientHub::AfterCommandSlow(ClientState* cl) {
  if (monitors_.load(std::memory_order_relaxed) != 0) FeedMonitors(cl);
  if (output_limit_on_.load(std::memory_order_relaxed)) CheckOutputLimit(cl);
}

void ClientHub::AddMonitor(ClientState* cl) {
  PerWorker& pw = workers_[cl->conn->worker()->id()];
  cl->monitor = true;
  pw.monitors.push_back(cl);
  pw.monitor_count.fetch_add(1, std::memory_order_relaxed);
  monitors_.fetch_add(1, std::memory_order_relaxed);
}

void ClientHub::FeedMonitors(ClientState* cl) {
  const CommandSpec* spec = cl->cmd_spec;
  // Redis hides administrative commands (CONFIG, CLIENT KILL, MONITOR...) and a few others.
  if (spec == nullptr || (spec->flags & (kCmdAdmin | kCmdSkipMonitor)) || spec->name == "quit") {
    return;
  }
  std::string line;
  AppendMonitorLine(&line, NowUs(), cl->db, cl->conn->peer(), cl->cmd_args);
  const int home = cl->conn->worker()->id();
  for (int w = 0; w < server_->worker_count(); ++w) {
    if (workers_[w].monitor_count.load(std::memory_order_relaxed) == 0) continue;
    if (w == home) {
      DeliverMonitorLine(w, line);
    } else {
      Post(server_->worker(w), [this, w, line]() { DeliverMonitorLine(w, line); });
    }
  }
}

void ClientHub::DeliverMonitorLine(int worker, const std::string& line) {
  // Copy: CheckOutputLimit may close a monitor, which OnClose removes from the list later.
  std::vector<ClientState*> monitors = workers_[worker].monitors;
  for (ClientState* m : monitors) {
    if (m->conn->closing()) continue;
    m->conn->output()->append(line);
    if (output_limit_on_.load(std::memory_order_relaxed)) CheckOutputLimit(m);
  }
}

bool ClientHub::CheckOutputLimit(ClientState* cl) {
  Connection* c = cl->conn;
  if (c->closing()) return false;
  OutputLimit limit;
  {
    std::lock_guard<std::mutex> lock(limit_mu_);
    limit = TypeOf(*cl) == ClientType::kPubSub ? pubsub_limit_ : normal_limit_;
  }
  if (!cl->obuf_limit.Exceeded(limit, c->output_pending(), NowMs())) return false;
  LogWarning("Client " + ClientInfoLine(*cl, NowMs(), false) +
             " scheduled to be closed ASAP for overcoming of output buffer limits.");
  c->Abort();
  return true;
}

}  // namespace lavik
