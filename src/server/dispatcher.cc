// Server's request path: command lookup, checks, routing to the owning shard, replies.

#include <utility>
#include <vector>

#include "acl/acl_client.h"
#include "base/clock.h"
#include "base/db_key.h"
#include "client/client_state.h"
#include "cluster/cluster.h"
#include "cluster/cluster_route.h"
#include "commands/command_keys.h"
#include "commands/propagate.h"
#include "protocol/errors.h"
#include "pubsub/pubsub_client.h"
#include "replication/master.h"
#include "replication/replica.h"
#include "scripting/scripting.h"
#include "server/client_hub.h"
#include "server/remote_command.h"
#include "server/server.h"
#include "tracking/tracking.h"
#include "transaction/transaction.h"

namespace lavik {

namespace {

// The clock reading that ended the last command completed on this worker, and whose it was. The
// same client's next command, dispatched in the same loop turn, starts at it instead of reading
// the clock again: in a pipeline only its parse lies between the two, so commandstats and the
// slow log see the same durations give or take that parse, for one clock reading per command
// instead of two. Any other command's dispatch uses it up.
struct LastDone {
  const ClientState* client = nullptr;
  uint64_t turn = 0;
  int64_t ns = 0;
};
thread_local LastDone last_done;

}  // namespace

// The reply of `cl`'s command `spec` is complete: counted and timed on `home`, the client's
// worker, and its end reading kept for the client's next command.
void CommandFinished(Observability& obs, Worker& home, const ClientState* cl,
                     const CommandSpec* spec, bool failed) {
  const int64_t end = obs.CommandDone(home.id(), spec, cl, cl->cmd_args, cl->cmd_start_ns, failed);
  last_done = {cl, home.loop().turns(), end};
}

int64_t CommandStartNs(const ClientState* cl, Worker& worker) {
  const LastDone last = last_done;
  last_done.client = nullptr;
  if (last.client == cl && last.turn == worker.loop().turns()) return last.ns;
  return MonotonicNs();
}

namespace {

// Refused by a replica that does not serve stale data: a command without the `stale` flag, or
// an EXEC whose queue holds one (as Redis's is_denystale_command).
bool DeniedWhileStale(const CommandSpec& spec, const ClientState* cl) {
  if (!(spec.flags & kCmdStale)) return true;
  if (spec.name != "exec" || cl->tx == nullptr) return false;
  for (const TxState::Queued& q : cl->tx->queue) {
    if (!(q.spec->flags & kCmdStale)) return true;
  }
  return false;
}

}  // namespace

bool Server::ClusterCheckOrReply(ClientState* cl, const CommandSpec* spec,
                                 std::span<const std::string_view> args) {
  // RESTORE-ASKING (the `asking` flag) implies ASKING, as in Redis.
  const bool asking = cl->cluster_asking || (spec->flags & kCmdAsking) != 0;
  TxState* tx = cl->tx.get();
  const bool in_multi = tx != nullptr && tx->in_multi;
  // ASKING covers the next command, or the transaction it opens (Redis's resetClient rule).
  if (spec->name != "asking" && spec->name != "multi" && !(in_multi && spec->name != "exec")) {
    cl->cluster_asking = false;
  }
  const bool exec = spec->name == "exec" && in_multi;
  uint32_t open = 0;
  const uint64_t version = cluster_->RoutesVersion();
  if (ClusterRouteOrReply(*cluster_, *spec, args, exec ? &tx->queue : nullptr, asking,
                          cl->cluster_readonly, cl->writer, &open)) {
    cl->ctx.cluster_open = open;
    // A command runs a moment later, maybe on another worker: if a SETSLOT (MIGRATING, NODE)
    // or a lost slot lands in between, it routes again there (ClusterRunRejects) — else a new
    // key could be written here after the last GETKEYSINSLOT of a migration, and be lost.
    // EXEC checks its queue on the slot's worker itself (transaction.h).
    // Every routed command but EXEC has cluster_routes set: the run sites test only that.
    cl->ctx.cluster_routes = exec ? 0 : version + 1;
    cl->ctx.cluster_asking = asking;
    return true;
  }
  if (exec) {  // a redirected EXEC discards the transaction, as Redis does
    tx->in_multi = false;
    tx->dirty_exec = false;
    tx->queue.clear();
    tx->Unwatch();
  }
  return false;
}

bool Server::ClusterRunRejects(Context& ctx, std::span<const std::string_view> args) {
  const uint64_t routed = ctx.cluster_routes;
  ctx.cluster_routes = 0;
  if (routed != 0 && cluster_->RoutesVersion() + 1 != routed) {
    uint32_t open = 0;
    const bool readonly = ctx.client != nullptr && ctx.client->cluster_readonly;
    if (!ClusterRouteOrReply(*cluster_, *ctx.spec, args, nullptr, ctx.cluster_asking, readonly,
                             *ctx.reply, &open)) {
      ctx.cluster_open = 0;
      return true;
    }
    ctx.cluster_open = open;
  }
  return ctx.cluster_open != 0 && OpenSlotRejects(ctx, args);
}

bool Server::OpenSlotRejects(Context& ctx, std::span<const std::string_view> args) {
  if (ctx.spec->name == "exec") return false;  // EXEC checks its whole queue (transaction.h)
  const uint32_t open = ctx.cluster_open;
  ctx.cluster_open = 0;
  const int slot = open_slot::SlotOf(open);
  if (SlotShard(static_cast<uint16_t>(slot), shards_->size()) != Worker::Current()->id()) {
    return false;  // a command that runs away from its keys: they are taken as present
  }
  return OpenSlotRejectsOrReply(*cluster_, open, *ctx.store, *ctx.spec, args, ctx.now_ms,
                                *ctx.reply);
}

int Server::RouteShard(const CommandSpec* spec, std::span<const std::string_view> args,
                       bool* multi) const {
  *multi = false;
  if (spec->first_key <= 0 || (spec->flags & kCmdHome)) return -1;
  const int argc = static_cast<int>(args.size());
  if (spec->first_key >= argc) return -1;
  if (shards_->size() == 1) return 0;
  int last = spec->last_key < 0 ? argc + spec->last_key : spec->last_key;
  if (last >= argc) last = argc - 1;
  const int shard = shards_->ShardOf(args[spec->first_key]);
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
  // Our master's link answers to no user (Redis's master client has none): ACL rules written on
  // the replica, or the default user's removal, never refuse or close its stream.
  if (!cl->master && cl->acl_version != acl_->version() && !AclRefreshUser(*this, *cl)) {
    return Result::kClose;
  }
  if (!cl->master && !cl->acl_user->unrestricted && !AclPermitOrReply(*this, *cl, *spec, args)) {
    obs_->CommandRejected(c.worker()->id(), spec);  // NOPERM counts as rejected, as in Redis
    return Result::kDone;
  }
  // Cluster mode: the keys' slot must be served here (one null test while cluster mode is off).
  if (cluster_ != nullptr && !cl->master && !ClusterCheckOrReply(cl, spec, args)) {
    obs_->CommandRejected(c.worker()->id(), spec);
    return Result::kDone;
  }
  // Writes that would grow memory are refused while the non-evictable part is over the limit
  // (never our master's stream: a write refused there would be lost on this replica).
  if ((spec->flags & kCmdDenyOom) && !cl->master && MemoryRefusesWrites()) {
    obs_->CommandRejected(c.worker()->id(), spec);  // rejected_calls, as Redis counts OOM
    w.Error(kErrOOM);
    return Result::kDone;
  }
  // As Redis's writeCommandsDeniedByDiskError: with save points set, after a failed background
  // save, writes (and PING) get -MISCONF until a save succeeds. Our master's stream applies.
  if (DiskErrorDeniesWrites() && ((spec->flags & kCmdWrite) || spec->name == "ping") && !cl->master)
      [[unlikely]] {
    obs_->CommandRejected(c.worker()->id(), spec);
    w.Error(kErrMisconf);
    return Result::kDone;
  }
  if ((spec->flags & kCmdWrite) && !cl->master && replica_->read_only()) {
    obs_->CommandRejected(c.worker()->id(), spec);
    w.Error(kErrReadOnlyReplica);
    return Result::kDone;
  }
  if ((spec->flags & kCmdWrite) && master_->refuses_writes() && !cl->master) [[unlikely]] {
    obs_->CommandRejected(c.worker()->id(), spec);  // min-replicas-to-write
    w.Error("NOREPLICAS Not enough good replicas to write.");
    return Result::kDone;
  }
  if (replica_->refuses_stale() && !cl->master && DeniedWhileStale(*spec, cl)) {
    obs_->CommandRejected(c.worker()->id(), spec);  // replica-serve-stale-data no, link down
    w.Error(kErrMasterDown);
    return Result::kDone;
  }
  if (!(spec->flags & kCmdLoading) && replica_->loading()) {  // a replica's full sync
    obs_->CommandRejected(c.worker()->id(), spec);
    w.Error(kErrLoading);
    return Result::kDone;
  }
  // Our master's stream is never refused for a busy script (its replies are dropped: the write
  // would be lost); a command for the script's shards waits for them, as Redis holds its
  // master's input until the script ends.
  if (std::string_view busy = ScriptBusyError();
      !busy.empty() && !(spec->flags & kCmdAllowBusy) && !cl->master) {
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
  const int db = DbMap::Physical(cl->db);
  if (StoredKeyArgs(*spec, args, db, &cl->db_arena, &cl->db_argv)) args = cl->db_argv;
  bool multi = false;
  int shard = RouteShard(spec, args, &multi);
  if (Result r; cl->master && StreamRunsApart(cl, spec, args, shard, db, &r)) [[unlikely]] {
    return r;
  }
  stats_[c.worker()->id()]->commands.Add();
  cl->cmd_start_ns = CommandStartNs(cl, *c.worker());  // a CLIENT PAUSE wait is not its latency
  // Client-side caching: a tracking client's reads are remembered on their keys' workers before
  // they run, so no write after the read can miss them (one null test for other clients).
  const bool track = cl->tracking != nullptr && Tracking::ShouldRemember(cl, *spec);
  const int home = c.worker()->id();
  const bool propagate =
      repl::On() && !cl->master && repl::Propagates(*spec) && !replica_->following();
  if (shard >= 0 && (shard != home || shards_->at(shard).locked())) {
    return RunRemote(cl, spec, args, shard, db, track, propagate);
  }
  if (track) tracking_->Remember(home, *shards_, *spec, args, cl->id, home);
  if (propagate) [[unlikely]] {
    auto* call = new ReplCall();
    call->batch = repl::IsBatch(*spec);
    call->by_dirty = shard >= 0 && !(spec->flags & kCmdHome);
    call->dirty0 = shards_->local().store.stats().dirty;
    if (repl::NeedsReply(*spec)) {  // the rewrite reads the reply: captured, then passed on
      call->out = cl->writer.output();
      cl->writer.SetOutput(&call->reply);
    }
    cl->ctx.repl = call;
  }
  return RunAtHome(cl, spec, args, db, shard >= 0 && SuspendedWriteCounts(*spec));
}

RequestHandler::Result Server::RunAtHome(ClientState* cl, const CommandSpec* spec,
                                         std::span<const std::string_view> args, int db,
                                         bool single_shard_write) {
  Context& ctx = cl->ctx;
  ctx.args = args;
  ctx.reply = &cl->writer;
  ctx.store = &shards_->local().store;
  ctx.client = cl;
  ctx.shards = shards_.get();
  ctx.server = this;
  ctx.services = &services_;
  ctx.spec = spec;
  ctx.now_ms = WallMsAt(cl->cmd_start_ns);
  ctx.client_id = cl->id;
  ctx.db = db;
  ctx.in_script = false;
  ctx.from_master = cl->master;
  cl->cmd_errors = cl->writer.errors();
  if (ctx.cluster_routes != 0 && ClusterRunRejects(ctx, args)) {
    obs_->CommandDone(cl->conn->worker()->id(), spec, cl, cl->cmd_args, cl->cmd_start_ns, true);
    return Result::kDone;
  }
  Tracking::SetWriter(cl->tracking != nullptr ? cl->id : 0);
  Task t = spec->handler(ctx);
  const bool done = t.Start(&Server::OnHomeDone, cl);
  Tracking::SetWriter(0);
  if (done) {
    if (ctx.repl != nullptr) [[unlikely]]
      FinishPropagation(cl);
    CommandFinished(*obs_, *cl->conn->worker(), cl, spec, cl->writer.errors() != cl->cmd_errors);
    return cl->close_after_reply ? Result::kClose : Result::kDone;
  }
  if (single_shard_write) {
    shards_->local().WriteSuspended();
    cl->write_suspended = true;
    if (ctx.repl != nullptr) [[unlikely]]
      repl::TakeSeqIfWritten(ctx, shards_->local().store.stats().dirty);
  }
  cl->pending = true;
  return Result::kPending;
}

void Server::OnHomeDone(void* arg) {
  auto* cl = static_cast<ClientState*>(arg);
  if (cl->write_suspended) {
    cl->ctx.server->shards_->local().WriteFinished();
    cl->write_suspended = false;
  }
  if (cl->ctx.repl != nullptr) [[unlikely]]
    cl->ctx.server->FinishPropagation(cl);
  if (!cl->closed) cl->conn->output();  // the reply was written after the turn's flush
  CommandFinished(*cl->ctx.server->obs_, *cl->conn->worker(), cl, cl->ctx.spec,
                  cl->writer.errors() != cl->cmd_errors);
  cl->ctx.server->FinishCommand(cl);
}

RequestHandler::Result Server::RunRemote(ClientState* cl, const CommandSpec* spec,
                                         std::span<const std::string_view> args, int shard, int db,
                                         bool track, bool propagate) {
  RemoteCommand* m = NewRemoteCommand(this, shards_.get(), cl, spec, args, db);
  m->client = cl;
  m->propagate = propagate;
  m->ctx.cluster_open = cl->ctx.cluster_open;
  m->ctx.cluster_routes = cl->ctx.cluster_routes;
  m->ctx.cluster_asking = cl->ctx.cluster_asking;
  cl->ctx.cluster_open = 0;
  cl->ctx.cluster_routes = 0;
  m->track = track;
  m->writer_id = cl->tracking != nullptr ? cl->id : 0;
  cl->cmd_errors = m->writer.errors();
  m->run = &RemoteCommand::RunOnShard;
  m->prefetch = &RemoteCommand::PrefetchOnShard;
  // Its reply leaves from where it runs, when nothing else of the client's has to go with it
  // or after it: not a client whose output other workers add to (pub/sub, tracking), or whose
  // commands MONITOR shows (fed when the command finishes at home).
  if (!(spec->flags & kCmdBlocking) && !cl->discard_reply && !cl->close_after_reply &&
      !cl->master && cl->pubsub == nullptr && cl->tracking == nullptr && !propagate &&
      !hub_->HasMonitors()) {
    m->lent_fd = cl->conn->LendSocket();
    m->start_ns = cl->cmd_start_ns;
    m->errors0 = cl->cmd_errors;
  }
  cl->pending = true;
  shards_->at(shard).worker->Post(m);
  return Result::kPending;
}

namespace {
constexpr int64_t kStreamApartBytes = 64 << 20;  // past it, the link waits for the window
}  // namespace

bool Server::StreamRunsApart(ClientState* cl, const CommandSpec* spec,
                             std::span<const std::string_view> args, int shard, int db, Result* r) {
  const int64_t window = replica_apply_window_.load(std::memory_order_relaxed);
  if (window == 0 && replica_->apart_count() == 0) return false;  // one at a time, as Redis
  const int home = cl->conn->worker()->id();
  // A command for another worker (its keys there) goes apart, behind those already sent there:
  // each worker runs the stream's commands for it in the stream's order, one after the other.
  // One for this worker runs now, on the link: no command apart touches its keys.
  const bool apart = shard >= 0 && shard != home && !(spec->flags & kCmdBlocking);
  if (shard == home && !shards_->at(home).locked()) return false;
  if (!apart || static_cast<int64_t>(replica_->apart_count()) >= window ||
      stream_apart_bytes_ >= kStreamApartBytes) {
    if (replica_->apart_count() == 0) return false;
    // Anything else (keyless, several workers', EXEC, REPLCONF GETACK...) waits until every
    // command apart finished, then runs on the link as it always did: the stream's order holds
    // across workers at every such command.
    stream_held_ = cl;
    stream_held_full_ = apart;
    cl->pending = true;
    *r = Result::kPending;
    return true;
  }
  if (stream_lanes_.empty()) stream_lanes_.resize(static_cast<size_t>(shards_->size()));
  if (stream_client_ != cl->id) {
    stream_client_ = cl->id;
    stream_peer_ = cl->conn->peer();
    stream_name_ = cl->name;
  }
  stats_[home]->commands.Add();
  RemoteCommand* m = NewRemoteCommand(this, shards_.get(), cl, spec, args, db);
  m->client = nullptr;  // the link may close first: nothing of its client is used
  stream_apart_bytes_ += static_cast<int64_t>(m->arena.size());
  m->propagate = false;
  m->track = false;
  m->writer_id = 0;
  m->errors0 = m->writer.errors();
  m->stream_token = replica_->ApartBegin();
  m->lane = shard;
  m->chain_next = nullptr;
  StreamLane& lane = stream_lanes_[static_cast<size_t>(shard)];
  if (lane.last != nullptr) {
    lane.last->chain_next = m;
  } else {
    lane.first = m;
  }
  lane.last = m;
  if (!lane.busy && !stream_flush_.pending) {
    stream_flush_.pending = true;
    m->home->Defer(&stream_flush_);
  }
  *r = Result::kDone;
  return true;
}

void Server::StreamFlushLanes(MailboxItem* item) {
  auto* flush = static_cast<StreamFlush*>(item);
  flush->pending = false;
  Server* s = flush->server;
  for (int shard = 0; shard < static_cast<int>(s->stream_lanes_.size()); ++shard) {
    const StreamLane& lane = s->stream_lanes_[static_cast<size_t>(shard)];
    if (!lane.busy && lane.first != nullptr) s->StreamPostChain(shard);
  }
}

void Server::StreamPostChain(int shard) {
  StreamLane& lane = stream_lanes_[static_cast<size_t>(shard)];
  RemoteCommand* head = lane.first;
  lane.first = lane.last = nullptr;
  lane.busy = true;
  for (RemoteCommand* m = head; m != nullptr; m = m->chain_next) m->chain_head = head;
  head->cursor = head;
  head->run = &RemoteCommand::RunChain;
  shards_->at(shard).worker->Post(head);
}

void Server::StreamChainHome(RemoteCommand* head) {
  const int shard = head->lane;
  const int home = head->home->id();
  bool empty = false;
  for (RemoteCommand* m = head; m != nullptr;) {
    RemoteCommand* next = m->chain_next;
    const bool failed = m->writer.errors() != m->errors0;
    obs_->CommandRanFor(home, m->ctx.spec, stream_peer_, stream_name_, m->argv, m->run_ns, failed);
    empty = replica_->ApartEnd(m->stream_token, failed ? m->ctx.spec->name : std::string_view());
    stream_apart_bytes_ -= static_cast<int64_t>(m->arena.size());
    m->chain_next = m->chain_head = m->cursor = nullptr;
    ReleaseRemoteCommand(m);
    m = next;
  }
  StreamLane& lane = stream_lanes_[static_cast<size_t>(shard)];
  lane.busy = false;
  if (lane.first != nullptr) StreamPostChain(shard);
  // The link's command that waited: for every command apart to finish, or for room in the
  // window (half of it, so the link is not woken for each finished chain). Run now, even if
  // the link closed meanwhile: the stream's offset already counts it.
  const bool room = stream_held_full_ &&
                    static_cast<int64_t>(replica_->apart_count()) * 2 <=
                        replica_apply_window_.load(std::memory_order_relaxed) &&
                    stream_apart_bytes_ * 2 <= kStreamApartBytes;
  if ((empty || room) && stream_held_ != nullptr) {
    ClientState* cl = std::exchange(stream_held_, nullptr);
    if (Execute(cl, cl->cmd_spec, cl->cmd_args) != Result::kPending) FinishCommand(cl);
  }
}

void Server::FinishPropagation(ClientState* cl) {
  Context& ctx = cl->ctx;
  ReplCall* call = ctx.repl;
  std::string reply;
  if (call->out != nullptr) {
    reply.swap(call->reply);
    cl->writer.SetOutput(call->out);
    if (!cl->closed) call->out->append(reply);
  }
  const bool changed = call->by_dirty ? shards_->local().store.stats().dirty != call->dirty0
                                      : cl->writer.errors() == cl->cmd_errors;
  repl::Finish(ctx, changed, reply);
}

void Server::FinishCommand(ClientState* cl) {
  cl->pending = false;
  if (cl->tracking != nullptr) tracking_->ReleaseHeld(cl);  // after the reply, as Redis
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
