// The replication thread: connect, handshake, partial sync, then the link's lifetime. The full
// sync's load is in replica_sync.cc; the link's request handling, ROLE and INFO in
// replica_link.cc.
#include "replication/replica.h"

#include <fcntl.h>
#include <unistd.h>

#include <random>

#include "base/clock.h"
#include "base/db_key.h"
#include "base/log.h"
#include "base/numbers.h"
#include "client/client_state.h"
#include "client/services.h"
#include "commands/shards.h"
#include "net/tls.h"
#include "replication/saved_history.h"
#include "replication/socket_source.h"
#include "runtime/worker.h"

namespace lavik {

std::string NewReplId() {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(40, '0');
  for (char& c : id) c = kHex[rd() % 16];
  return id;
}

namespace {

constexpr int64_t kConnectTimeoutMs = 5000;

}  // namespace

Replica::Replica(Deps deps) : deps_(std::move(deps)), replid_(NewReplId()) {
  replid2_.assign(40, '0');
}

Replica::~Replica() { Stop(); }

void Replica::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Replica::History Replica::history() const {
  std::lock_guard<std::mutex> lock(mu_);
  return History{replid_, replid2_, offset_.load(), second_offset_};
}

bool Replica::link_up() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !host_.empty() && state_ == State::kConnected;
}

void Replica::NewHistory() {
  std::lock_guard<std::mutex> lock(mu_);
  replid_ = NewReplId();
  replid2_.assign(40, '0');
  second_offset_ = -1;
}

bool Replica::Cancelled(uint64_t gen) const { return stop_.load() || gen_.load() != gen; }

void Replica::SetState(State s) {
  std::lock_guard<std::mutex> lock(mu_);
  SetStateLocked(s);
}

void Replica::SetStateLocked(State s) {
  state_ = s;
  connected_ = s == State::kConnected;
}

void Replica::TakeSavedHistory(const std::string& data_file, bool replicaof_configured) {
  SavedHistory h;
  std::string why;
  if (!lavik::TakeSavedHistory(data_file, &h, &why)) {
    if (!why.empty()) LogWarning("Replication history not restored: " + why);
    return;
  }
  if (!replicaof_configured) {
    // A master: as RestoreFromRdb's, the history becomes replid2 and the backlog starts right
    // after it (the caller opens it), so the replicas of before the restart continue.
    {
      std::lock_guard<std::mutex> lock(mu_);
      replid2_ = h.replid;
      second_offset_ = h.offset + 1;
      offset_ = h.offset;
      synced_ = true;
      restored_master_ = h.offset;
    }
    LogNotice("Replication history of the data file kept as the secondary replid " + h.replid +
              ", offset " + std::to_string(h.offset) + " (former replicas may continue it)");
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  replid_ = h.replid;
  replid2_.assign(40, '0');
  second_offset_ = -1;
  offset_ = h.offset;
  stream_db_ = h.db;
  synced_ = true;
  LogNotice("Replication history restored: replid " + h.replid + ", offset " +
            std::to_string(h.offset) + " (a partial resynchronization may continue it)");
}

void Replica::ForgetSavedHistory() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!synced_) return;
  LogNotice("Replication history dropped: an RDB file was loaded at start-up");
  replid_ = NewReplId();
  replid2_.assign(40, '0');
  second_offset_ = -1;
  offset_ = 0;
  stream_db_ = 0;
  synced_ = false;
  restored_master_ = -1;
}

int64_t Replica::restored_master_offset() const {
  std::lock_guard<std::mutex> lock(mu_);
  return restored_master_;
}

void Replica::RestoreFromRdb(const std::string& replid, int64_t offset, int db, bool as_replica) {
  std::lock_guard<std::mutex> lock(mu_);
  if (as_replica) {
    replid_ = replid;
    replid2_.assign(40, '0');
    second_offset_ = -1;
    offset_ = offset;
    stream_db_ = db;
    LogNotice("Replication history restored from the RDB: replid " + replid + ", offset " +
              std::to_string(offset) + " (a partial resynchronization may continue it)");
  } else {
    replid2_ = replid;
    second_offset_ = offset + 1;
    offset_ = offset;
    LogNotice("Replication history of the RDB kept as the secondary replid " + replid +
              ", offset " + std::to_string(offset) + " (former replicas may continue it)");
  }
  synced_ = true;
}

bool Replica::SnapshotHistory(bool master_backlog, std::string* replid, int64_t* offset, int* db,
                              bool* valid, bool* by_seq) {
  std::lock_guard<std::mutex> lock(mu_);
  *valid = false;
  *by_seq = false;
  if (host_.empty()) {
    if (!master_backlog) return true;  // in no replication chain: nothing worth keeping
    *valid = true;
    *by_seq = true;
    *replid = replid_;
    return true;
  }
  if (!synced_) return true;  // no history (never synced, or a sync cut half-way)
  // The link counts a command when it starts: one still running (or finished on another worker,
  // its completion not yet back) may or may not be in the snapshot.
  // (A command HoldStream held has not started: not counted, not run.)
  if (link_live_.load() && held_ == nullptr && (link_ == nullptr || link_->request_pending())) {
    return false;
  }
  if (apart_count_.load() != 0) return false;  // commands run apart from the link, not finished
  *valid = true;
  *replid = replid_;
  *offset = offset_.load();
  *db = link_ != nullptr ? static_cast<ClientState*>(link_->user_data)->db : stream_db_.load();
  return true;
}

bool Replica::SaveHistoryAtShutdown(const std::string& data_file, bool master_valid,
                                    int64_t master_offset, int master_db) {
  SavedHistory h;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (host_.empty()) {
      // A master: its own history, as Redis's rdbPopulateSaveInfo for a master with a backlog.
      if (!master_valid) return true;
      h.replid = replid_;
      h.offset = master_offset;
      h.db = master_db;
    } else {
      if (!synced_) return true;  // nothing to continue (never synced, or a sync cut half-way)
      h.replid = replid_;
      h.offset = offset_.load();
      h.db = stream_db_.load();
    }
  }
  std::string error;
  if (!SaveHistory(data_file, h, &error)) {
    LogWarning("Replication history not saved (the next start does a full sync): " + error);
    return false;
  }
  LogNotice("Replication history saved: replid " + h.replid + ", offset " +
            std::to_string(h.offset));
  return true;
}

bool Replica::has_history() const {
  std::lock_guard<std::mutex> lock(mu_);
  return synced_;
}

std::string Replica::Follow(const std::string& host, int port, bool failover) {
  std::unique_lock<std::mutex> lock(mu_);
  if (host_ == host && port_ == port) return "OK Already connected to specified master";
  const bool was_replica = !host_.empty();
  failover_psync_ = failover;
  // As Redis's replicationCacheMasterUsingMyself: the target continues our own history.
  if (failover) synced_ = true;
  host_ = host;
  port_ = port;
  SetStateLocked(State::kConnect);
  down_since_s_ = 0;
  ro_config_ = deps_.config_value("replica-read-only") != "no";
  serve_stale_ = deps_.config_value("replica-serve-stale-data") != "no";
  following_ = true;
  ++gen_;
  deps_.set_replicaof(host + " " + std::to_string(port));
  LogNotice(std::string(was_replica ? "Changing" : "Connecting to") + " MASTER " + host + ":" +
            std::to_string(port));
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  lock.unlock();
  cv_.notify_all();
  return "OK";
}

void Replica::FollowConfigured(std::string_view value) {
  const size_t sp = value.rfind(' ');
  int64_t port = 0;
  if (sp == std::string_view::npos || !ParseInt64(value.substr(sp + 1), &port)) return;
  Follow(std::string(value.substr(0, sp)), static_cast<int>(port));
}

void Replica::Promote() {
  std::unique_lock<std::mutex> lock(mu_);
  if (host_.empty()) return;
  host_.clear();
  port_ = 0;
  SetStateLocked(State::kNone);
  following_ = false;
  ++gen_;
  deps_.set_replicaof("no one");
  // As Redis's shiftReplicationId: a replica of ours may still continue from the old history.
  replid2_ = replid_;
  second_offset_ = offset_.load() + 1;
  replid_ = NewReplId();
  synced_ = true;
  failover_psync_ = false;
  LogNotice("MASTER MODE enabled (user request from 'id=?')");
  lock.unlock();
  cv_.notify_all();
  // Writes from clients come next: no restart may roll the data back to the stream's last cut.
  VoidCuts();
  // The link closes now, not at the thread's next tick: nothing more of it is applied.
  if (deps_.shards) PostToLink(true);
}

void Replica::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (host_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const uint64_t gen = gen_;
    const std::string host = host_;
    const int port = port_;
    lock.unlock();
    const bool served = SyncOnce(gen, host, port);
    lock.lock();
    if (!served && !Cancelled(gen)) {
      cv_.wait_for(lock, std::chrono::seconds(1), [&] { return Cancelled(gen); });
    }
  }
}

bool Replica::SyncOnce(uint64_t gen, const std::string& host, int port) {
  SetState(State::kConnecting);
  LogNotice("MASTER <-> REPLICA sync started");
  const auto cancelled = [this, gen] { return Cancelled(gen); };
  std::string error;
  const int fd = ConnectTcp(host, port, kConnectTimeoutMs, cancelled, &error);
  if (fd < 0) {
    LogWarning("Error condition on socket for SYNC: " + error);
    SetState(State::kConnect);
    return false;
  }
  int64_t timeout_s = 60;
  ParseInt64(deps_.config_value("repl-timeout"), &timeout_s);
  SocketSource src(fd, cancelled, timeout_s * 1000);
  std::unique_ptr<TlsSession> tls;
  if (deps_.config_value("tls-replication") == "yes") {
    // As Redis's connTLSConnect: the link is TLS from its first byte; the master is verified
    // against tls-ca-cert-file / -dir.
    tls = new_tls_session_ ? new_tls_session_(&error) : nullptr;
    if (tls == nullptr || !src.StartTls(tls.get())) {
      LogWarning("Unable to connect to MASTER: " +
                 (tls == nullptr ? (error.empty() ? std::string("TLS is not available") : error)
                                 : src.error()));
      close(fd);
      SetState(State::kConnect);
      return false;
    }
  }
  std::string reply;
  bool failover = false;
  bool ok = Handshake(src, &reply, &failover);
  if (failover && !Cancelled(gen)) {
    // FAILOVER's step: the target either took over (+CONTINUE, or +FULLRESYNC) or refused; a
    // refusal (or a PSYNC not written) ends the failover, which promotes us back.
    const bool accepted =
        ok && (reply.rfind("+CONTINUE", 0) == 0 || reply.rfind("+FULLRESYNC", 0) == 0);
    if (!accepted) {
      close(fd);
      SetState(State::kConnect);
      if (failover_done_) {
        failover_done_(false, reply.empty() ? "Write error to failover target"
                                            : "Failover target rejected psync request");
      }
      return false;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      failover_psync_ = false;
    }
    if (failover_done_) failover_done_(true, "");
  }
  if (ok && reply.rfind("+FULLRESYNC", 0) == 0) {
    ok = FullSync(src, reply);
  } else if (ok && reply.rfind("+CONTINUE", 0) == 0) {
    bool renamed = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::string_view id = std::string_view(reply).substr(9);
      while (!id.empty() && id.front() == ' ') id.remove_prefix(1);
      if (id.size() == 40 && id != replid_) {  // the master's history changed its name (PSYNC2)
        LogWarning("Master replication ID changed to " + std::string(id));
        replid2_ = replid_;
        second_offset_ = offset_.load() + 1;
        replid_ = std::string(id);
        renamed = true;
      }
    }
    // As Redis: our own replicas reconnect, and continue under the new name (via replid2).
    if (renamed && history_renamed_) history_renamed_();
    LogNotice("Successful partial resynchronization with master.");
  } else if (ok) {
    LogWarning("Unexpected reply to PSYNC from master: " + reply);
    ok = false;
  }
  if (!ok || Cancelled(gen)) {
    close(fd);
    SetState(State::kConnect);
    return false;
  }
  ServeLink(gen, fd, src.TakeBuffered(), std::move(tls));
  return true;
}

bool Replica::Handshake(SocketSource& src, std::string* psync_reply, bool* failover) {
  SetState(State::kHandshake);
  std::string line;
  auto ask = [&](std::initializer_list<std::string_view> cmd, const char* what) {
    if (!src.WriteAll(RespArray(cmd)) || !src.ReadLine(&line)) {
      LogWarning(std::string("Master did not answer ") + what + ": " + src.error());
      return false;
    }
    last_io_ms_ = NowMs();
    return true;
  };
  if (!ask({"PING"}, "PING")) return false;
  // Redis takes an authentication error here as a live master too.
  if (line[0] == '-' && line.rfind("-NOAUTH", 0) != 0 && line.rfind("-NOPERM", 0) != 0 &&
      line.rfind("-ERR operation not permitted", 0) != 0) {
    LogWarning("Error reply to PING from master: '" + line + "'");
    return false;
  }
  // masterauth (with masteruser, an ACL user's) for a master with requirepass or ACL users.
  const std::string pass = deps_.config_value("masterauth");
  if (!pass.empty()) {
    const std::string user = deps_.config_value("masteruser");
    const bool asked =
        user.empty() ? ask({"AUTH", pass}, "AUTH") : ask({"AUTH", user, pass}, "AUTH");
    if (!asked) return false;
    if (line[0] == '-') {
      LogWarning("Unable to AUTH to MASTER: " + line);
      return false;
    }
  }
  // What the master shows in INFO's slaveN lines (and Sentinel connects to): replica-announce-port
  // and replica-announce-ip when they are set.
  std::string port = deps_.config_value("replica-announce-port");
  if (port.empty() || port == "0") port = std::to_string(deps_.listening_port());
  if (!ask({"REPLCONF", "listening-port", port}, "REPLCONF listening-port")) return false;
  if (line[0] == '-')
    LogNotice("(Non critical) Master does not understand REPLCONF listening-port: " + line);
  if (const std::string ip = deps_.config_value("replica-announce-ip"); !ip.empty()) {
    if (!ask({"REPLCONF", "ip-address", ip}, "REPLCONF ip-address")) return false;
    if (line[0] == '-')
      LogNotice("(Non critical) Master does not understand REPLCONF ip-address: " + line);
  }
  if (!ask({"REPLCONF", "capa", "eof", "capa", "psync2"}, "REPLCONF capa")) return false;
  if (line[0] == '-') LogNotice("(Non critical) Master does not understand REPLCONF capa: " + line);
  std::string id = "?", offset = "-1";
  {
    std::lock_guard<std::mutex> lock(mu_);
    *failover = failover_psync_;
    if (synced_) {
      id = replid_;
      offset = std::to_string(offset_.load() + 1);
      LogNotice("Trying a partial resynchronization (request " + id + ":" + offset + ").");
    } else {
      LogNotice("Partial resynchronization not possible (no cached master)");
    }
  }
  const bool sent = *failover ? src.WriteAll(RespArray({"PSYNC", id, offset, "FAILOVER"}))
                              : src.WriteAll(RespArray({"PSYNC", id, offset}));
  if (!sent) {
    LogWarning("Unable to send PSYNC to master: " + src.error());
    return false;
  }
  do {  // the master may send newlines while it prepares the payload
    if (!src.ReadLine(psync_reply)) {
      LogWarning("Master did not answer PSYNC: " + src.error());
      *psync_reply = "-" + src.error();  // read, not written: the target's refusal
      return false;
    }
  } while (psync_reply->empty());
  last_io_ms_ = NowMs();
  return true;
}

void Replica::ServeLink(uint64_t gen, int fd, std::string leftover,
                        std::unique_ptr<TlsSession> tls) {
  struct OpenItem : MailboxItem {
    Replica* self;
    int fd;
    uint64_t id;
    std::string leftover;
    std::unique_ptr<TlsSession> tls;
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    link_closed_ = false;
    link_gen_ = gen;
    SetStateLocked(State::kConnected);
  }
  auto* item = new OpenItem();
  item->self = this;
  item->fd = fd;
  item->id = deps_.next_client_id();
  item->leftover = std::move(leftover);
  item->tls = std::move(tls);
  item->run = [](MailboxItem* m) {
    auto* it = static_cast<OpenItem*>(m);
    Connection::Open(Worker::Current(), it->fd, it->id, it->self, RequestParser::Limits{},
                     it->tls.release(), it->leftover);
    delete it;
  };
  deps_.shards().at(0).worker->Post(item);
  int64_t timeout_s = 60;
  ParseInt64(deps_.config_value("repl-timeout"), &timeout_s);
  // A first consistency point right away: after a full sync, the data are the RDB's.
  last_cut_start_ms_ = 0;
  MaybeStartCut(gen);
  std::unique_lock<std::mutex> lock(mu_);
  bool closing = false;
  int64_t next_ack_ms = NowMs() + 1000;
  while (!link_closed_) {
    cv_.wait_for(lock, std::chrono::milliseconds(kCutIntervalMs));
    if (pending_cut_ != nullptr) WritePendingCut(lock);
    if (link_closed_ || closing) continue;
    const bool cancelled = Cancelled(gen);
    if (!cancelled && NowMs() < next_ack_ms) {
      lock.unlock();
      MaybeStartCut(gen);
      lock.lock();
      continue;
    }
    next_ack_ms = NowMs() + 1000;
    const bool timed_out = NowMs() - last_io_ms_.load() > timeout_s * 1000;
    if (timed_out) LogWarning("MASTER timeout: no data nor PING received...");
    closing = cancelled || timed_out;
    lock.unlock();
    PostToLink(closing);
    lock.lock();
  }
}

void Replica::PostToLink(bool close) {
  struct LinkItem : MailboxItem {
    Replica* self;
    bool close;
  };
  auto* item = new LinkItem();
  item->self = this;
  item->close = close;
  item->run = [](MailboxItem* m) {
    auto* it = static_cast<LinkItem*>(m);
    Connection* c = it->self->link_;
    if (c != nullptr && !c->closing()) {
      if (it->close) {
        c->Abort();
      } else {
        c->output()->append(RespArray({"REPLCONF", "ACK", std::to_string(it->self->AckOffset())}));
      }
    }
    delete it;
  };
  deps_.shards().at(0).worker->Post(item);
}

}  // namespace lavik
