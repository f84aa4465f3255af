#include "server/remote_command.h"

#include <cstring>
#include <deque>
#include <utility>
#include <vector>

#include "client/client_state.h"
#include "commands/propagate.h"
#include "net/connection.h"
#include "scripting/script_locks.h"
#include "scripting/scripting.h"
#include "server/server.h"
#include "tracking/tracking.h"

namespace lavik {
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

// The arguments into the command's own arena (the connection's buffer is the home worker's).
void CopyArgs(RemoteCommand* m, std::span<const std::string_view> args) {
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
}

// A command of `cl` for another worker, its arguments copied, its reply into its own buffer.
}  // namespace

RemoteCommand* NewRemoteCommand(Server* server, ShardSet* shards, const ClientState* cl,
                                const CommandSpec* spec, std::span<const std::string_view> args,
                                int db) {
  RemoteCommand* m = AcquireCommand();
  m->server = server;
  m->home = cl->conn->worker();
  CopyArgs(m, args);
  m->rejected = false;
  m->lent_fd = -1;
  m->writer.SetOutput(&m->reply);
  m->writer.set_resp(cl->resp);
  m->ctx = Context{};
  m->ctx.args = m->argv;
  m->ctx.reply = &m->writer;
  m->ctx.shards = shards;
  m->ctx.spec = spec;
  m->ctx.client_id = cl->id;
  m->ctx.db = db;
  m->ctx.from_master = cl->master;
  return m;
}

void ReleaseRemoteCommand(RemoteCommand* m) {
  m->reply.clear();
  if (m->reply.capacity() > (1u << 20)) m->reply.shrink_to_fit();
  if (m->arena.capacity() > (1u << 20)) m->arena = std::string();
  if (command_pool.size() < 1024) {
    command_pool.push_back(m);
  } else {
    delete m;
  }
}
namespace {

// Runs on each worker once a script turns busy: its shard's queued commands get -BUSY, and
// scripts waiting for its lock give up with it (they retry the lock, which sees the busy state).
struct BusySweep : MailboxItem {
  Server* server = nullptr;
  static void Run(MailboxItem* item) {
    auto* sweep = static_cast<BusySweep*>(item);
    Shard& shard = sweep->server->shards().local();
    std::deque<MailboxItem*> queued;
    queued.swap(shard.waiting);
    std::vector<MailboxItem*> scripts;
    for (MailboxItem* waiting : queued) {
      if (waiting->run == &RemoteCommand::RunOnShard &&
          RemoteCommand::RejectIfBusy(static_cast<RemoteCommand*>(waiting))) {
        continue;
      }
      if (IsScriptLockWaiter(waiting) && !ScriptBusyError().empty()) {
        scripts.push_back(waiting);
        continue;
      }
      shard.waiting.push_back(waiting);  // EXEC and multi-shard commands keep waiting
    }
    for (MailboxItem* script : scripts) script->run(script);
    delete sweep;
  }
};

}  // namespace

void Server::OnScriptBusy(void* server) {
  auto* s = static_cast<Server*>(server);
  for (int id = 0; id < s->shards().size(); ++id) {
    auto* sweep = new BusySweep();
    sweep->server = s;
    sweep->run = &BusySweep::Run;
    s->shards().at(id).worker->Post(sweep);
  }
}

void RemoteCommand::PrefetchOnShard(MailboxItem* item) {
  auto* m = static_cast<RemoteCommand*>(item);
  // The arguments are stored keys already (Server::Execute); the second is the first key of
  // most commands, and only a hint.
  if (m->run == &RemoteCommand::RunOnShard && m->argv.size() >= 2 && !m->argv[1].empty()) {
    m->server->shards().local().store.PrefetchKey(m->argv[1]);
  }
}

void RemoteCommand::RunOnShard(MailboxItem* item) {
  auto* m = static_cast<RemoteCommand*>(item);
  Shard& shard = m->server->shards().local();
  if (shard.locked()) {
    if (RejectIfBusy(m)) return;
    shard.waiting.push_back(m);  // run again by Shard::Unlock, in arrival order
    return;
  }
  m->ctx.store = &shard.store;
  m->ctx.now_ms = NowMs();
  const int here = Worker::Current()->id();
  m->writer.set_error_sink(m->server->obs_->stats.error_sink(here));
  if (m->track) {
    m->server->tracking_->Remember(here, m->server->shards(), *m->ctx.spec, m->argv,
                                   m->ctx.client_id, m->home->id());
  }
  if (m->ctx.cluster_routes != 0 && m->server->ClusterRunRejects(m->ctx, m->argv)) {
    Done(m);  // -ASK / -TRYAGAIN instead of running
    return;
  }
  if (m->propagate) [[unlikely]] {
    m->ctx.repl = new ReplCall();
    m->ctx.repl->dirty0 = shard.store.stats().dirty;
    m->ctx.repl->batch = repl::IsBatch(*m->ctx.spec);
  }
  Tracking::SetWriter(m->writer_id);
  Task t = m->ctx.spec->handler(m->ctx);
  const bool done = t.Start(&RemoteCommand::Done, m);
  Tracking::SetWriter(0);
  if (done) {
    Done(m);
  } else if (SuspendedWriteCounts(*m->ctx.spec)) {
    shard.WriteSuspended();
    m->write_suspended = true;
    if (m->ctx.repl != nullptr) [[unlikely]]
      repl::TakeSeqIfWritten(m->ctx, shard.store.stats().dirty);
  }
}

void RemoteCommand::RunChain(MailboxItem* item) {
  auto* head = static_cast<RemoteCommand*>(item);
  Shard& shard = head->server->shards().local();
  const int here = Worker::Current()->id();
  while (RemoteCommand* m = head->cursor) {
    if (shard.locked()) {  // as RunOnShard's: run again by Shard::Unlock, in arrival order
      shard.waiting.push_back(head);
      return;
    }
    m->ctx.store = &shard.store;
    m->run_ns = MonotonicNs();
    m->ctx.now_ms = WallMsAt(m->run_ns);
    m->writer.set_error_sink(m->server->obs_->stats.error_sink(here));
    Task t = m->ctx.spec->handler(m->ctx);
    if (!t.Start(&RemoteCommand::ChainStepDone, m)) {
      if (SuspendedWriteCounts(*m->ctx.spec)) {
        shard.WriteSuspended();
        m->write_suspended = true;
      }
      return;  // ChainStepDone goes on with the next
    }
    m->run_ns = MonotonicNs() - m->run_ns;
    head->cursor = m->chain_next;
  }
  head->run = &RemoteCommand::ChainHome;
  head->home->Post(head);
}

void RemoteCommand::ChainStepDone(void* arg) {
  auto* m = static_cast<RemoteCommand*>(arg);
  m->run_ns = MonotonicNs() - m->run_ns;
  if (m->write_suspended) {
    m->server->shards().local().WriteFinished();
    m->write_suspended = false;
  }
  RemoteCommand* head = m->chain_head;
  head->cursor = m->chain_next;
  // On the next loop turn, not inside the finished command's frame.
  Worker::Current()->Defer(head);
}

void RemoteCommand::ChainHome(MailboxItem* item) {
  auto* head = static_cast<RemoteCommand*>(item);
  head->server->StreamChainHome(head);
}

bool RemoteCommand::RejectIfBusy(RemoteCommand* m) {
  const std::string_view busy = ScriptBusyError();
  if (busy.empty() || (m->ctx.spec->flags & kCmdAllowBusy) || m->ctx.from_master) return false;
  m->writer.set_error_sink(m->server->obs_->stats.error_sink(Worker::Current()->id()));
  m->writer.Error(busy);
  m->rejected = true;
  Done(m);
  return true;
}

void RemoteCommand::Done(void* arg) {
  auto* m = static_cast<RemoteCommand*>(arg);
  if (m->write_suspended) {
    m->server->shards().local().WriteFinished();
    m->write_suspended = false;
  }
  if (m->ctx.repl != nullptr) [[unlikely]] {  // on the keys' worker: the stream's order
    repl::Finish(m->ctx, m->ctx.store->stats().dirty != m->ctx.repl->dirty0, m->reply);
  }
  m->prefetch = nullptr;
  if (m->lent_fd >= 0 && ReplyOnLentSocket(m)) return;
  m->run = &RemoteCommand::ReturnHome;
  m->home->Post(m);
}

bool RemoteCommand::ReplyOnLentSocket(RemoteCommand* m) {
  if (m->rejected) return false;
  const bool failed = m->writer.errors() != m->errors0;
  if (!m->server->obs_->CommandDoneAway(Worker::Current()->id(), m->ctx.spec, m->start_ns,
                                        failed)) {
    return false;  // a slow one: the slow log's entry is written at home
  }
  Worker* home = m->home;
  m->run = &RemoteCommand::ReturnHomeLent;
  m->lent_state.store(0, std::memory_order_relaxed);
  home->PostQuiet(m);
  m->lent_sent = Connection::SendLent(m->lent_fd, m->reply);
  const bool rest = m->lent_sent < m->reply.size();
  // After this exchange the command is home's: touch nothing of it.
  if (m->lent_state.exchange(1, std::memory_order_acq_rel) == 2) {
    home->Post(m);  // home ran it before the reply left: it runs again, now with a wake-up
  } else if (rest) {
    home->WakeIfSleeping();  // what did not fit in the socket leaves from home, now
  }
  return true;
}

void RemoteCommand::ReturnHomeLent(MailboxItem* item) {
  auto* m = static_cast<RemoteCommand*>(item);
  if (m->lent_state.exchange(2, std::memory_order_acq_rel) != 1) return;  // posted again
  ClientState* cl = m->client;
  if (m->lent_sent < m->reply.size() && !cl->closed) {
    cl->conn->output()->append(m->reply, m->lent_sent, std::string::npos);
  }
  Server* server = m->server;
  ReleaseRemoteCommand(m);
  server->FinishCommand(cl);
}

void RemoteCommand::ReturnHome(MailboxItem* item) {
  auto* m = static_cast<RemoteCommand*>(item);
  ClientState* cl = m->client;
  if (!cl->closed && !cl->discard_reply) cl->conn->output()->append(m->reply);
  Server* server = m->server;
  if (m->rejected) {
    server->obs_->CommandRejected(m->home->id(), m->ctx.spec);
  } else {
    // SLOWLOG shows the client's arguments (cmd_args), not the keys' stored form.
    CommandFinished(*server->obs_, *m->home, cl, m->ctx.spec, m->writer.errors() != cl->cmd_errors);
  }
  ReleaseRemoteCommand(m);
  server->FinishCommand(cl);
}

}  // namespace lavik
