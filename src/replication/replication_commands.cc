// REPLICAOF host port | NO ONE (and its old name SLAVEOF), ROLE. They reach the process's
// Replica through ctx.services (replica.h).
#include "replication/replication_commands.h"

#include <unistd.h>

#include <coroutine>
#include <string>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/numbers.h"
#include "client/client_state.h"
#include "client/services.h"
#include "net/connection.h"
#include "net/tls.h"
#include "replication/master.h"
#include "replication/replica.h"
#include "runtime/worker.h"

namespace lavik {
namespace {

Task ReplicaOf(Context& ctx) {
  Replica* replica = ctx.services->replica;
  // As Redis: a cluster node's replication follows its cluster role (CLUSTER REPLICATE).
  if (ctx.services->cluster != nullptr) {
    ctx.reply->Error("ERR REPLICAOF not allowed in cluster mode.");
    co_return;
  }
  if (ctx.services->master->failover_state() != Master::kNoFailover) {
    ctx.reply->Error("ERR REPLICAOF not allowed while failing over.");
    co_return;
  }
  if (EqualsNoCase(ctx.args[1], "no") && EqualsNoCase(ctx.args[2], "one")) {
    replica->Promote();
    ctx.reply->Ok();
    co_return;
  }
  int64_t port = 0;
  if (!ParseInt64(ctx.args[2], &port) || port < 0 || port > 65535) {
    ctx.reply->Error("ERR Invalid master port");
    co_return;
  }
  ctx.reply->Simple(replica->Follow(std::string(ctx.args[1]), static_cast<int>(port)));
}

Task Role(Context& ctx) {
  ctx.services->replica->WriteRole(*ctx.reply);
  co_return;
}

// SYNC / PSYNC: the connection becomes a replica of ours; the Master answers on its socket.
Task Sync(Context& ctx) {
  ClientState* cl = ctx.client;
  if (cl->replica) co_return;  // as Redis: a second SYNC from a replica is ignored
  Replica* replica = ctx.services->replica;
  if (ctx.args.size() > 3 && EqualsNoCase(ctx.args[0], "psync") &&
      EqualsNoCase(ctx.args[3], "failover")) {
    // Our master's FAILOVER: it hands us the role if we follow its history to the byte (it
    // asks <its replid> <offset+1>); then it continues as our replica (+CONTINUE below).
    LogWarning("Failover request received for replid " + std::string(ctx.args[1]) + ".");
    if (!replica->following()) {
      ctx.reply->Error("ERR PSYNC FAILOVER can't be sent to a master.");
      co_return;
    }
    if (!EqualsNoCase(ctx.args[1], replica->history().replid)) {
      ctx.reply->Error("ERR PSYNC FAILOVER replid must match my replid.");
      co_return;
    }
    replica->Promote();
    LogNotice("MASTER MODE enabled (failover request from 'id=" + std::to_string(cl->id) + "')");
  }
  if (ctx.services->master->failover_state() != Master::kNoFailover) {
    ctx.reply->Error("NOMASTERLINK Can't SYNC while failing over");
    co_return;
  }
  if (replica->following() && !replica->link_up()) {
    ctx.reply->Error("NOMASTERLINK Can't SYNC while not connected with my master");
    co_return;
  }
  Connection* c = cl->conn;
  if (c->output_pending() > 0) {
    ctx.reply->Error("ERR SYNC and PSYNC are invalid with pending output");
    co_return;
  }
  Master::Request r;
  r.client_id = cl->id;
  r.fd = dup(c->fd());
  if (r.fd < 0) {
    ctx.reply->Error("ERR can't serve the replica: out of file descriptors");
    co_return;
  }
  if (c->tls()) {
    // The Master's thread writes to the socket, so it takes the session whole (master.h).
    r.tls = c->DetachTls(&r.tls_input);
    if (r.tls == nullptr) {
      close(r.fd);
      ctx.reply->Error("ERR can't serve the replica: its TLS connection has I/O in flight");
      co_return;
    }
  }
  if (!cl->repl_ip.empty()) {
    r.ip = cl->repl_ip;
  } else {
    const std::string& peer = c->peer();
    r.ip = peer.substr(0, peer.rfind(':'));
  }
  r.port = cl->repl_listening_port;
  r.psync2 = cl->repl_psync2;
  r.rdb_only = cl->repl_rdb_only;
  r.capa_eof = cl->repl_capa_eof;
  r.psync = EqualsNoCase(ctx.args[0], "psync");
  if (r.psync) {
    r.replid = std::string(ctx.args[1]);
    if (!ParseInt64(ctx.args[2], &r.offset)) r.offset = -1;  // a full sync, as Redis
  }
  cl->replica = true;
  cl->reply_off = true;  // the Master writes to the replica; its REPLCONF ACKs get no reply
  Master* master = ctx.services->master;
  const uint64_t id = cl->id;
  auto previous = std::move(cl->on_free);
  cl->on_free = [master, id, previous = std::move(previous)] {
    master->Detach(id);
    if (previous) previous();
  };
  master->Attach(std::move(r));
}

Task Replconf(Context& ctx) {
  ClientState* cl = ctx.client;
  if (ctx.args.size() % 2 == 0) {
    ctx.reply->Error("ERR syntax error");
    co_return;
  }
  for (size_t i = 1; i + 1 < ctx.args.size(); i += 2) {
    const std::string_view opt = ctx.args[i];
    const std::string_view val = ctx.args[i + 1];
    int64_t n = 0;
    if (EqualsNoCase(opt, "listening-port")) {
      if (!ParseInt64(val, &n)) {
        ctx.reply->Error("ERR value is not an integer or out of range");
        co_return;
      }
      cl->repl_listening_port = static_cast<int>(n);
    } else if (EqualsNoCase(opt, "ip-address")) {
      if (val.size() >= 46) {
        ctx.reply->Error("ERR REPLCONF ip-address provided by replica instance is too long: " +
                         std::to_string(val.size()) + " bytes");
        co_return;
      }
      cl->repl_ip = std::string(val);
    } else if (EqualsNoCase(opt, "capa")) {
      if (EqualsNoCase(val, "psync2")) cl->repl_psync2 = true;
      if (EqualsNoCase(val, "eof")) cl->repl_capa_eof = true;
    } else if (EqualsNoCase(opt, "ack")) {
      // From a replica of ours: its offset; never answered.
      if (cl->replica && ParseInt64(val, &n)) ctx.services->master->Ack(cl->id, n);
      co_return;
    } else if (EqualsNoCase(opt, "getack")) {
      co_return;  // only a master asks it (replica_link.cc answers on the master's link)
    } else if (EqualsNoCase(opt, "rdb-only")) {
      if (!ParseInt64(val, &n)) {
        ctx.reply->Error("ERR value is not an integer or out of range");
        co_return;
      }
      if (n < 0 || n > 1) {
        ctx.reply->Error("ERR value is out of range, value must between 0 and 1");
        co_return;
      }
      cl->repl_rdb_only = n == 1;
    } else {
      ctx.reply->Error("ERR Unrecognized REPLCONF option: " + std::string(opt));
      co_return;
    }
  }
  ctx.reply->Ok();
}

// WAIT numreplicas timeout: resumed by the Master's thread.
struct WaitAwaiter : Master::Waiter {
  Master* master = nullptr;
  bool may_block = true;
  std::coroutine_handle<> handle;

  bool await_ready() const { return false; }
  bool await_suspend(std::coroutine_handle<> h) {
    handle = h;
    home = Worker::Current();
    run = [](MailboxItem* item) { static_cast<WaitAwaiter*>(item)->handle.resume(); };
    return !master->AddWaiter(this, may_block);
  }
  void await_resume() const {}
};

Task Wait(Context& ctx) {
  if (ctx.services->replica->following()) {
    ctx.reply->Error(
        "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 "
        "if a replica is configured to be writable (which is not the default) writes to "
        "replicas are just local and are not propagated.");
    co_return;
  }
  int64_t need = 0, timeout = 0;
  if (!ParseInt64(ctx.args[1], &need)) {
    ctx.reply->Error("ERR value is not an integer or out of range");
    co_return;
  }
  if (!ParseInt64(ctx.args[2], &timeout)) {
    ctx.reply->Error("ERR timeout is not an integer or out of range");
    co_return;
  }
  if (timeout < 0) {
    ctx.reply->Error("ERR timeout is negative");
    co_return;
  }
  WaitAwaiter w;
  w.master = ctx.services->master;
  w.may_block = !ctx.in_exec && !ctx.in_script;
  w.need = need;
  w.deadline_ms = timeout > 0 ? NowMs() + timeout : 0;
  co_await w;
  ctx.reply->Integer(w.count);
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]: parsed and checked as Redis
// 7.0's failoverCommand; the Master runs it (master.h).
Task Failover(Context& ctx) {
  if (ctx.services->cluster != nullptr) {
    ctx.reply->Error(
        "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.");
    co_return;
  }
  Master* master = ctx.services->master;
  if (ctx.args.size() == 2 && EqualsNoCase(ctx.args[1], "abort")) {
    const std::string err = master->AbortFailover();
    if (err.empty()) {
      ctx.reply->Ok();
    } else {
      ctx.reply->Error(err);
    }
    co_return;
  }
  Master::FailoverRequest r;
  bool have_timeout = false, have_to = false;
  for (size_t j = 1; j < ctx.args.size(); ++j) {
    const std::string_view a = ctx.args[j];
    if (EqualsNoCase(a, "timeout") && j + 1 < ctx.args.size() && !have_timeout) {
      if (!ParseInt64(ctx.args[j + 1], &r.timeout_ms)) {
        ctx.reply->Error("ERR value is not an integer or out of range");
        co_return;
      }
      if (r.timeout_ms <= 0) {
        ctx.reply->Error("ERR FAILOVER timeout must be greater than 0");
        co_return;
      }
      have_timeout = true;
      ++j;
    } else if (EqualsNoCase(a, "to") && j + 2 < ctx.args.size() && !have_to) {
      int64_t port = 0;
      if (!ParseInt64(ctx.args[j + 2], &port)) {
        ctx.reply->Error("ERR value is not an integer or out of range");
        co_return;
      }
      r.host = std::string(ctx.args[j + 1]);
      r.port = static_cast<int>(port);
      have_to = true;
      j += 2;
    } else if (EqualsNoCase(a, "force") && !r.force) {
      r.force = true;
    } else {
      ctx.reply->Error("ERR syntax error");
      co_return;
    }
  }
  const std::string err = master->StartFailover(r);
  if (err.empty()) {
    ctx.reply->Ok();
  } else {
    ctx.reply->Error(err);
  }
}

constexpr uint32_t kAdminStale = kCmdAdmin | kCmdNoScript | kCmdStale;
constexpr uint32_t kSyncFlags = kCmdHome | kCmdAdmin | kCmdNoScript | kCmdNoMulti;

const CommandSpec kReplicationCommands[] = {
    {"replicaof", 3, kAdminStale, 0, 0, 0, &ReplicaOf, "@admin @slow @dangerous", "server",
     "Make the server a replica of another instance, or promote it as master.", "5.0.0"},
    {"slaveof", 3, kAdminStale, 0, 0, 0, &ReplicaOf, "@admin @slow @dangerous", "server",
     "Make the server a replica of another instance, or promote it as master.", "1.0.0"},
    {"role", 1, kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, &Role,
     "@admin @fast @dangerous", "server",
     "Return the role of the instance in the context of replication", "2.8.12"},
    {"sync", 1, kSyncFlags, 0, 0, 0, &Sync, "@admin @slow @dangerous", "server",
     "Internal command used for replication", "1.0.0"},
    {"psync", -3, kSyncFlags, 0, 0, 0, &Sync, "@admin @slow @dangerous", "server",
     "Internal command used for replication", "2.8.0"},
    {"replconf", -1, kCmdHome | kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdAllowBusy,
     0, 0, 0, &Replconf, "@admin @slow @dangerous", "server",
     "An internal command for configuring the replication stream", "3.0.0"},
    {"failover", -1, kAdminStale, 0, 0, 0, &Failover, "@admin @slow @dangerous", "server",
     "Start a coordinated failover between this server and one of its replicas.", "6.2.0"},
    {"wait", 3, kCmdHome | kCmdNoScript, 0, 0, 0, &Wait, "@slow @connection", "generic",
     "Wait for the synchronous replication of all the write commands sent in the context of the "
     "current connection",
     "3.0.0"},
};

}  // namespace

std::span<const CommandSpec> ReplicationCommands() { return kReplicationCommands; }

}  // namespace lavik
