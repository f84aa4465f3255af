// Server's request path: command lookup, checks, routing to the owning shard, replies.
#include <strings.h>

#include <cstring>
#include <vector>

#include "acl/acl_client.h"
#include "base/clock.h"
#include "base/db_key.h"
#include "client/client_state.h"
#include "commands/command_keys.h"
#include "protocol/errors.h"
#include "pubsub/pubsub_client.h"
#include "replication/replica.h"
#include "scripting/scripting.h"
#include "server/client_hub.h"
#include "server/server.h"
#include "transaction/transaction.h"

namespace lavik {

// A command sent to another worker (or queued behind a shard lock): it carries a copy of its
// arguments, since the connection's buffer belongs to the home worker. Pooled per home worker.
struct RemoteCommand : MailboxItem {
  Server* server = nullptr;
  ClientState* client = nullptr;
  Worker* home = nullptr;
  std::string arena;
  std::vector<std::string_view> argv;
  std::string reply;
  ReplyWriter writer{&reply, 2};
  Context ctx;

  static void RunOnShard(MailboxItem* item);
  static void Done(void* arg);
  static void ReturnHome(MailboxItem* item);
};

namespace {

// Freed with the thread, so a clean exit leaves nothing behind.
struct CommandPool : std::vector<RemoteCommand*> {
  ~CommandPool() {
    for (RemoteCommand* m : *this) delete m;
  }
};
thread_local CommandPool command_pool;

RemoteCommand* AcquireCommand() {
  if (command_pool.empty()) return new RemoteCommand();
  RemoteCommand* m = command_pool.back();
  command_pool.pop_back();
  return m;
}

void ReleaseCommand(RemoteCommand* m) {
  m->reply.clear();
  if (m->reply.capacity() > (1u << 20)) m->reply.shrink_to_fit();
  if (m->arena.capacity() > (1u << 20)) m->arena = std::string();
  if (command_pool.size() < 1024) {
    command_pool.push_back(m);
  } else {
    delete m;
  }
}

}  // namespace

void RemoteCommand::RunOnShard(MailboxItem* item) {
  auto* m = static_cast<RemoteCommand*>(item);
  Shard& shard = m->server->shards().local();
  if (shard.locked()) {
    shard.waiting.push_back(m);  // run again by Shard::Unlock, in arrival order
    return;
  }
  m->ctx.store = &shard.store;
  m->ctx.now_ms = NowMs();
  m->writer.set_error_sink(m->server->obs_->stats.error_sink(Worker::Current()->id()));
  Task t = m->ctx.spec->handler(m->ctx);
  if (t.Start(&RemoteCommand::Done, m)) Done(m);
}

void RemoteCommand::Done(void* arg) {
  auto* m = static_cast<RemoteCommand*>(arg);
  m->run = &RemoteCommand::ReturnHome;
  m->home->Post(m);
}

void RemoteCommand::ReturnHome(MailboxItem* item) {
  auto* m = static_cast<RemoteCommand*>(item);
  ClientState* cl = m->client;
  if (!cl->closed && !cl->discard_reply) cl->conn->output()->append(m->reply);
  Server* server = m->server;
  server->obs_->CommandDone(m->home->id(), m->ctx.spec, cl, m->argv, cl->cmd_start_ns,
                            m->writer.errors() != cl->cmd_errors);
  ReleaseCommand(m);
  server->FinishCommand(cl);
}

int Server::RouteShard(const CommandSpec* spec, std::span<const std::string_view> args,
                       bool* multi) const {
  *multi = false;
  if (spec->first_key <= 0 || (spec->flags & kCmdHome)) return -1;
  const int argc = static_cast<int>(args.size());
  if (spec->first_key >= argc) return -1;
  int last = spec->last_key < 0 ? argc + spec->last_key : spec->last_key;
  if (last >= argc) last = argc - 1;
  const int shard = shards_->ShardOf(args[spec->first_key]);
  if (shards_->size() == 1) return shard;
  for (int i = spec->first_key + spec->key_step; i <= last; i += spec->key_step) {
    if (shards_->ShardOf(args[i]) != shard) {
      *multi = true;
      return -1;
    }
  }
  return shard;
}

RequestHandler::Result Server::OnRequest(Connection& c, std::span<const std::string_view> args) {
  auto* cl = static_cast<ClientState*>(c.user_data);
  MultiRejectGuard multi_guard(cl->tx.get());  // a command rejected below flags an open MULTI
  ReplyWriter& w = cl->writer;
  w.SetOutput(hub_->ReplyTarget(cl));  // CLIENT REPLY OFF|SKIP send nothing
  w.set_resp(cl->resp);
  w.set_error_sink(obs_->stats.error_sink(c.worker()->id()));

  const CommandSpec* spec = table_.Find(args[0]);
  if (spec == nullptr) {
    w.Error(UnknownCommandError(args[0], args.subspan(1)));
    return Result::kDone;
  }
  // A container (CLIENT, CONFIG) needs a subcommand; COMMAND alone is a command of its own.
  if (!spec->subcommands.empty() && !(args.size() == 1 && spec->handler != nullptr)) {
    if (args.size() < 2) {
      obs_->CommandRejected(c.worker()->id(), spec);
      w.Error(WrongArityError(spec->name));
      return Result::kDone;
    }
    const CommandSpec* sub = CommandTable::FindSubcommand(*spec, args[1]);
    if (sub == nullptr) {
      w.Error(UnknownSubcommandError(args[0], args[1]));
      return Result::kDone;
    }
    spec = sub;
  }
  if (!CommandTable::ArityOk(*spec, args.size())) {
    obs_->CommandRejected(c.worker()->id(), spec);
    w.Error(WrongArityError(spec->name));
    return Result::kDone;
  }
  if (!cl->authenticated && !(spec->flags & kCmdNoAuth) && auth_required()) {
    obs_->CommandRejected(c.worker()->id(), spec);
    w.Error(kErrNoAuth);
    return Result::kDone;
  }
  cl->last_command = spec->name;  // before the ACL check: ACL LOG's client-info names it
  if (cl->acl_version != acl_->version() && !AclRefreshUser(*this, *cl)) return Result::kClose;
  if (!cl->acl_user->unrestricted && !AclPermitOrReply(*this, *cl, *spec, args)) {
    obs_->CommandRejected(c.worker()->id(), spec);  // NOPERM counts as rejected, as in Redis
    return Result::kDone;
  }
  // Writes that would grow memory are refused while the non-evictable part is over the limit.
  if ((spec->flags & kCmdDenyOom) && memory_guard_->oom()) {
    obs_->CommandRejected(c.worker()->id(), spec);  // rejected_calls, as Redis counts OOM
    w.Error(kErrOOM);
    return Result::kDone;
  }
  if ((spec->flags & kCmdWrite) && !cl->master && replica_->read_only()) {
    obs_->CommandRejected(c.worker()->id(), spec);
    w.Error(kErrReadOnlyReplica);
    return Result::kDone;
  }
  if (!(spec->flags & kCmdLoading) && replica_->loading()) {  // a replica's full sync
    obs_->CommandRejected(c.worker()->id(), spec);
    w.Error(kErrLoading);
    return Result::kDone;
  }
  if (std::string_view busy = ScriptBusyError(); !busy.empty() && !(spec->flags & kCmdAllowBusy)) {
    obs_->CommandRejected(c.worker()->id(), spec);  // a script past busy-reply-threshold
    w.Error(busy);
    return Result::kDone;
  }
  // A subscribed RESP2 connection carries only pub/sub traffic (one null check otherwise).
  if (cl->pubsub != nullptr && cl->resp == 2 && cl->pubsub->subscribed() &&
      !AllowedWhileSubscribedResp2(spec->name)) {
    obs_->CommandRejected(c.worker()->id(), spec);
    w.Error(SubscribedContextError(spec->name));
    return Result::kDone;
  }
  if (ClientHub::MonitorRejects(cl, spec)) {
    w.Error("ERR Replica can't interact with the keyspace");
    return Result::kDone;
  }
  multi_guard.Passed();
  cl->cmd_spec = spec;
  cl->cmd_args = args;
  if (hub_->ShouldPark(cl, spec)) {  // CLIENT PAUSE: Execute runs when the pause ends
    hub_->Park(cl);
    return Result::kPending;
  }
  Result r = Execute(cl, spec, args);
  if (r != Result::kPending) hub_->AfterCommand(cl);
  return r;
}

RequestHandler::Result Server::Execute(ClientState* cl, const CommandSpec* spec,
                                       std::span<const std::string_view> args) {
  if (cl->tx != nullptr && QueueInMultiOrReply(cl, spec, args)) return Result::kDone;  // MULTI
  Connection& c = *cl->conn;
  stats_[c.worker()->id()]->commands.Add();
  cl->cmd_start_ns = MonotonicNs();  // when it runs: a CLIENT PAUSE wait is not its latency
  const int db = DbMap::Physical(cl->db);
  if (StoredKeyArgs(*spec, args, db, &cl->db_arena, &cl->db_argv)) args = cl->db_argv;
  bool multi = false;
  int shard = RouteShard(spec, args, &multi);
  if (shard >= 0 && (shard != c.worker()->id() || shards_->at(shard).locked())) {
    return RunRemote(cl, spec, args, shard, db);
  }
  return RunAtHome(cl, spec, args, db);
}

RequestHandler::Result Server::RunAtHome(ClientState* cl, const CommandSpec* spec,
                                         std::span<const std::string_view> args, int db) {
  Context& ctx = cl->ctx;
  ctx.args = args;
  ctx.reply = &cl->writer;
  ctx.store = &shards_->local().store;
  ctx.client = cl;
  ctx.shards = shards_.get();
  ctx.server = this;
  ctx.services = &services_;
  ctx.spec = spec;
  ctx.now_ms = NowMs();
  ctx.client_id = cl->id;
  ctx.db = db;
  ctx.in_script = false;
  cl->cmd_errors = cl->writer.errors();
  Task t = spec->handler(ctx);
  if (t.Start(&Server::OnHomeDone, cl)) {
    obs_->CommandDone(cl->conn->worker()->id(), spec, cl, args, cl->cmd_start_ns,
                      cl->writer.errors() != cl->cmd_errors);
    return cl->close_after_reply ? Result::kClose : Result::kDone;
  }
  cl->pending = true;
  return Result::kPending;
}

void Server::OnHomeDone(void* arg) {
  auto* cl = static_cast<ClientState*>(arg);
  if (!cl->closed) cl->conn->output();  // the reply was written after the turn's flush
  cl->ctx.server->obs_->CommandDone(cl->conn->worker()->id(), cl->ctx.spec, cl, cl->ctx.args,
                                    cl->cmd_start_ns, cl->writer.errors() != cl->cmd_errors);
  cl->ctx.server->FinishCommand(cl);
}

RequestHandler::Result Server::RunRemote(ClientState* cl, const CommandSpec* spec,
                                         std::span<const std::string_view> args, int shard,
                                         int db) {
  RemoteCommand* m = AcquireCommand();
  m->server = this;
  m->client = cl;
  m->home = cl->conn->worker();
  size_t total = 0;
  for (std::string_view a : args) total += a.size();
  m->arena.resize(total);
  m->argv.clear();
  char* p = m->arena.data();
  for (std::string_view a : args) {
    if (!a.empty()) std::memcpy(p, a.data(), a.size());
    m->argv.emplace_back(p, a.size());
    p += a.size();
  }
  m->writer.SetOutput(&m->reply);
  m->writer.set_resp(cl->resp);
  m->ctx = Context{};
  m->ctx.args = m->argv;
  m->ctx.reply = &m->writer;
  m->ctx.shards = shards_.get();
  m->ctx.spec = spec;
  m->ctx.client_id = cl->id;
  m->ctx.db = db;
  cl->cmd_errors = m->writer.errors();
  m->run = &RemoteCommand::RunOnShard;
  cl->pending = true;
  shards_->at(shard).worker->Post(m);
  return Result::kPending;
}

void Server::FinishCommand(ClientState* cl) {
  cl->pending = false;
  Connection* c = cl->conn;
  if (cl->closed) {
    delete cl;
  } else {
    hub_->AfterCommand(cl);
    if (cl->close_after_reply) c->CloseAfterReply();
  }
  c->Resume();
}

}  // namespace lavik
