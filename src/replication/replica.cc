// The replication thread: connect, handshake, full or partial sync, then the link's lifetime.
// The link's request handling, ROLE and INFO are in replica_link.cc.
#include "replication/replica.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "base/clock.h"
#include "base/db_key.h"
#include "base/log.h"
#include "base/numbers.h"
#include "client/client_state.h"
#include "client/services.h"
#include "commands/command_table.h"
#include "commands/shards.h"
#include "net/tls.h"
#include "rdb/file_format.h"
#include "replication/rdb_file.h"
#include "replication/rdb_stream.h"
#include "replication/saved_history.h"
#include "replication/socket_source.h"
#include "runtime/mailbox.h"
#include "runtime/worker.h"
#include "storage/store.h"

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
constexpr size_t kEofMarkLen = 40;

// A command run on a worker by a thread that waits for it (the flush before a full sync).
struct BlockingCommand : MailboxItem {
  Context ctx;
  std::string reply;
  ReplyWriter writer{&reply, 2};
  std::vector<std::string_view> argv;
  ShardSet* shards = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;

  static void Done(void* arg) {
    auto* self = static_cast<BlockingCommand*>(arg);
    std::lock_guard<std::mutex> lock(self->mu);
    self->done = true;
    self->cv.notify_all();
  }
  static void RunHere(MailboxItem* item) {
    auto* self = static_cast<BlockingCommand*>(item);
    self->ctx.store = &self->shards->local().store;
    self->ctx.now_ms = NowMs();
    Task t = self->ctx.spec->handler(self->ctx);
    if (t.Start(&Done, self)) Done(self);
  }
};

// Keys stored across every database, each shard's count read on its own worker.
uint64_t StoredKeys(ShardSet& shards) {
  struct Count : MailboxItem {
    Store* store = nullptr;
    std::mutex* mu = nullptr;
    std::condition_variable* cv = nullptr;
    int* left = nullptr;
    uint64_t keys = 0;
  };
  std::mutex mu;
  std::condition_variable cv;
  int left = shards.size();
  std::vector<Count> counts(static_cast<size_t>(shards.size()));
  for (int s = 0; s < shards.size(); ++s) {
    Count& c = counts[static_cast<size_t>(s)];
    c.store = &shards.at(s).store;
    c.mu = &mu;
    c.cv = &cv;
    c.left = &left;
    c.run = [](MailboxItem* m) {
      auto* self = static_cast<Count*>(m);
      self->keys = self->store->size();
      std::lock_guard<std::mutex> lock(*self->mu);
      if (--*self->left == 0) self->cv->notify_all();
    };
    shards.at(s).worker->Post(&c);
  }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return left == 0; });
  uint64_t keys = 0;
  for (const Count& c : counts) keys += c.keys;
  return keys;
}

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

bool Replica::FlushAll() {
  const CommandSpec* spec = deps_.services->commands->FindOriginal("flushall");
  if (spec == nullptr) return false;
  BlockingCommand cmd;
  cmd.argv = {"FLUSHALL"};
  cmd.shards = &deps_.shards();
  cmd.ctx.args = cmd.argv;
  cmd.ctx.reply = &cmd.writer;
  cmd.ctx.shards = &deps_.shards();
  cmd.ctx.services = deps_.services;
  cmd.ctx.spec = spec;
  cmd.run = &BlockingCommand::RunHere;
  deps_.shards().at(0).worker->Post(&cmd);
  std::unique_lock<std::mutex> lock(cmd.mu);
  cmd.cv.wait(lock, [&] { return cmd.done; });
  if (cmd.reply.rfind("+OK", 0) == 0) return true;
  LogWarning("Flushing the old data before the sync failed: " + cmd.reply);
  return false;
}

bool Replica::FullSync(SocketSource& src, const std::string& reply) {
  // +FULLRESYNC <replid> <offset>
  const size_t sp1 = reply.find(' '), sp2 = reply.find(' ', sp1 + 1);
  int64_t master_offset = 0;
  if (sp1 == std::string::npos || sp2 != sp1 + 41 ||
      !ParseInt64(std::string_view(reply).substr(sp2 + 1), &master_offset)) {
    LogWarning("Master replied with wrong +FULLRESYNC syntax: " + reply);
    return false;
  }
  const std::string master_id = reply.substr(sp1 + 1, 40);
  LogNotice("Full resync from master: " + master_id + ":" + std::to_string(master_offset));
  SetState(State::kSync);
  std::string header;
  do {
    if (!src.ReadLine(&header)) {
      LogWarning("I/O error reading bulk count from MASTER: " + src.error());
      return false;
    }
  } while (header.empty());
  if (header[0] == '-') {
    LogWarning("MASTER aborted replication with an error: " + header.substr(1));
    return false;
  }
  std::string eof_mark;
  int64_t total = -1;
  if (header.rfind("$EOF:", 0) == 0 && header.size() == 5 + kEofMarkLen) {
    eof_mark = header.substr(5);
  } else if (header[0] != '$' || !ParseInt64(std::string_view(header).substr(1), &total) ||
             total < 0) {
    LogWarning("Bad protocol from MASTER, the first byte is not '$' (we received '" + header +
               "'), are you sure the host and port are right?");
    return false;
  }
  {
    // As Redis drops its cached master at +FULLRESYNC: the old history cannot be continued.
    std::lock_guard<std::mutex> lock(mu_);
    sync_total_ = total;
    synced_ = false;
  }
  sync_read_ = 0;
  const bool to_parser = LoadsFromSocket();
  LogNotice("MASTER <-> REPLICA sync: receiving " +
            (total >= 0 ? std::to_string(total) + " bytes from master"
                        : std::string("streamed RDB from master with EOF")) +
            (to_parser ? " to parser" : " to disk"));
  RdbLoadReport report;
  if (!(to_parser ? LoadFromSocket(src, total, eof_mark, &report)
                  : LoadThroughDisk(src, total, eof_mark, &report))) {
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    replid_ = master_id;
    replid2_.assign(40, '0');
    second_offset_ = -1;
    offset_ = master_offset;
    // As Redis's replicationCreateMasterClient: the stream continues in the RDB's
    // repl-stream-db (a chained master's stream starts mid-way, in its master's database; a
    // master's own starts with a SELECT anyway).
    stream_db_ = report.repl_stream_db >= 0 ? report.repl_stream_db : 0;
    synced_ = true;
  }
  // After a diskless payload the master starts the stream only once the replica ACKs, so ACK at
  // once, as Redis does, rather than at the next one-second ACK.
  if (!eof_mark.empty()) {
    src.WriteAll(RespArray({"REPLCONF", "ACK", std::to_string(master_offset)}));
  }
  LogNotice("MASTER <-> REPLICA sync: Finished with success (" + std::to_string(report.keys) +
            " keys, " + std::to_string(report.expired) + " expired, in " +
            std::to_string(report.elapsed_ms) + " ms)");
  return true;
}

bool Replica::LoadsFromSocket() {
  return deps_.config_value("repl-diskless-load") == "on-empty-db" &&
         StoredKeys(deps_.shards()) == 0;
}

// Redis empties the dataset before loading, and so does Lavik: a load from the socket that fails
// half-way leaves a partial dataset, and the next sync flushes again.
bool Replica::LoadFromSocket(SocketSource& src, int64_t total, const std::string& eof_mark,
                             RdbLoadReport* report) {
  LogNotice("MASTER <-> REPLICA sync: Flushing old data");
  BeginLoading(total >= 0 ? total : 0);  // as Redis: the $EOF form's size is 0
  const bool flushed = FlushAll();
  struct LoadingFlag {
    std::atomic<bool>& flag;
    ~LoadingFlag() { flag = false; }
  } loading{loading_};
  if (!flushed) return false;
  LogNotice("MASTER <-> REPLICA sync: Loading DB in memory");
  const uint64_t start = src.consumed();
  rdb::FileReader reader(src, kMaxDatabases);
  std::string error;
  bool ok = reader.ReadHeader();
  if (!ok) error = reader.error();
  if (ok) ok = StoreRdbStream(deps_.shards(), reader, true, report, &error, &load_progress_);
  if (ok && !eof_mark.empty()) {
    std::string mark;
    ok = src.ReadAppend(kEofMarkLen, &mark) && mark == eof_mark;
    if (!ok)
      error = "the $EOF mark does not follow the RDB at offset " + std::to_string(reader.offset());
  } else if (ok && src.consumed() - start != static_cast<uint64_t>(total)) {
    ok = false;
    error = "the RDB ends at offset " + std::to_string(src.consumed() - start) + " of " +
            std::to_string(total) + " payload bytes";
  }
  sync_read_ = static_cast<int64_t>(src.consumed() - start);
  if (!ok) {
    if (!src.error().empty()) error += " (" + src.error() + ")";
    LogWarning("Failed trying to load the MASTER synchronization DB: " + error +
               "; the replica retries the sync");
  }
  return ok;
}

bool Replica::LoadThroughDisk(SocketSource& src, int64_t total, const std::string& eof_mark,
                              RdbLoadReport* report) {
  const std::string dir = deps_.config_value("dir");
  const std::string tmp = RdbFilePath(
      dir, "temp-" + std::to_string(NowMs() / 1000) + "." + std::to_string(getpid()) + ".rdb");
  std::string error;
  if (!ReceiveFile(src, total, eof_mark, tmp, &error)) {
    unlink(tmp.c_str());
    LogWarning("I/O error trying to sync with MASTER: " + error +
               "; the old data stay, and the replica retries the sync");
    return false;
  }
  struct LoadingFlag {
    std::atomic<bool>& flag;
    ~LoadingFlag() { flag = false; }
  } loading{loading_};
  // The file is checked whole first, the old data still served, so a corrupt payload changes
  // nothing; the flush starts the -LOADING window.
  struct stat st {};
  const int64_t size = stat(tmp.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
  const auto flush = [this, size] {
    LogNotice("MASTER <-> REPLICA sync: Flushing old data");
    BeginLoading(size);
    if (!FlushAll()) return false;
    LogNotice("MASTER <-> REPLICA sync: Loading DB in memory");
    return true;
  };
  if (!LoadRdbFile(deps_.shards(), tmp, report, &error, flush, &load_progress_)) {
    unlink(tmp.c_str());
    LogWarning("Failed trying to load the MASTER synchronization DB from disk: " + error +
               "; the replica retries the sync");
    return false;
  }
  // As Redis, the payload stays as dir/dbfilename (renamed once loaded, so a corrupt one never
  // replaces a good file); rdb-del-sync-files yes with no `save` point removes it instead.
  if (deps_.config_value("rdb-del-sync-files") == "yes" && deps_.config_value("save").empty()) {
    LogNotice(
        "Removing the RDB file obtained from the master. This replica has persistence "
        "disabled");
    unlink(tmp.c_str());
    return true;
  }
  const std::string target = RdbFilePath(dir, deps_.config_value("dbfilename"));
  if (rename(tmp.c_str(), target.c_str()) != 0) {
    LogWarning("Failed trying to rename the temp DB into " + target +
               " in MASTER <-> REPLICA synchronization: " + std::strerror(errno));
    unlink(tmp.c_str());
  }
  return true;
}

void Replica::BeginLoading(int64_t total_bytes) {
  load_progress_.loaded_bytes = 0;
  load_progress_.rdb_used_mem = 0;
  load_total_ = total_bytes;
  load_start_s_ = NowMs() / 1000;
  loading_ = true;
}

bool Replica::ReceiveFile(SocketSource& src, int64_t total, const std::string& eof_mark,
                          const std::string& path, std::string* error) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "Opening the temp file needed for MASTER <-> REPLICA synchronization: " +
             std::string(std::strerror(errno));
    return false;
  }
  constexpr size_t kPiece = 1 << 20;
  uint64_t written = 0;
  std::string tail;  // the $EOF form: the last bytes received, to find the mark at the end
  bool done = total == 0;
  while (!done) {
    const size_t want =
        total >= 0 ? std::min<uint64_t>(kPiece, static_cast<uint64_t>(total) - written) : kPiece;
    const std::string_view got = src.ReadSome(want);
    if (got.empty()) {
      *error = "connection lost after " + std::to_string(written) + " bytes" +
               (src.error().empty() ? std::string() : " (" + src.error() + ")");
      close(fd);
      return false;
    }
    last_io_ms_ = NowMs();
    for (size_t at = 0; at < got.size();) {
      const ssize_t n = write(fd, got.data() + at, got.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        *error =
            "Write error or short write writing to the DB dump file needed for MASTER <-> "
            "REPLICA synchronization: " +
            std::string(std::strerror(errno));
        close(fd);
        return false;
      }
      at += static_cast<size_t>(n);
    }
    written += got.size();
    sync_read_ = static_cast<int64_t>(written);
    if (total >= 0) {
      done = written == static_cast<uint64_t>(total);
    } else {
      // As Redis: the master sends nothing after the mark until we ACK, so the mark ends what
      // has arrived.
      if (got.size() >= kEofMarkLen) {
        tail.assign(got.substr(got.size() - kEofMarkLen));
      } else {
        tail.append(got);
        if (tail.size() > kEofMarkLen) tail.erase(0, tail.size() - kEofMarkLen);
      }
      done = tail == eof_mark;
    }
  }
  bool ok = true;
  if (!eof_mark.empty() && ftruncate(fd, static_cast<off_t>(written - kEofMarkLen)) != 0)
    ok = false;
  if (ok && fsync(fd) != 0) ok = false;
  if (!ok)
    *error = "Failed trying to sync the temp DB to disk: " + std::string(std::strerror(errno));
  close(fd);
  return ok;
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
  std::unique_lock<std::mutex> lock(mu_);
  bool closing = false;
  while (!link_closed_) {
    cv_.wait_for(lock, std::chrono::seconds(1));
    if (link_closed_ || closing) continue;
    const bool timed_out = NowMs() - last_io_ms_.load() > timeout_s * 1000;
    if (timed_out) LogWarning("MASTER timeout: no data nor PING received...");
    closing = Cancelled(gen) || timed_out;
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
        c->output()->append(
            RespArray({"REPLCONF", "ACK", std::to_string(it->self->offset_.load())}));
      }
    }
    delete it;
  };
  deps_.shards().at(0).worker->Post(item);
}

}  // namespace lavik
