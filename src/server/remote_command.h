// RemoteCommand: a command of a client of one worker, run on the worker that owns its keys (or
// queued behind its own shard's lock). Server::RunRemote (dispatcher.cc) copies the arguments
// into a pooled RemoteCommand and posts it; RunOnShard runs the handler there into the command's
// own reply buffer; ReturnHome appends the reply to the connection — or ReplyOnLentSocket sends it
// from where it ran, on a socket the connection lent (doc/threading.md, "A reply from the worker
// that ran it"). Our master's stream run apart travels as chains of them (RunChain).
// Internal to the server library: dispatcher.cc and remote_command.cc.
//
// Thread safety: created, pooled and finished on the client's (home) worker; run on the keys'
// worker, which hands it back through the mailbox (or, for a lent socket, lent_state).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command.h"
#include "protocol/reply_writer.h"
#include "runtime/mailbox.h"

namespace lavik {

class ClientState;
class Observability;
class Server;
class ShardSet;
class Worker;

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
  bool track = false;      // a tracking client's read: remember its keys there (tracking.h)
  uint64_t writer_id = 0;  // the client, when it tracks (NOLOOP)

  bool rejected = false;         // answered -BUSY without running (counted as rejected)
  bool propagate = false;        // its effect goes to the replication stream (commands/propagate.h)
  bool write_suspended = false;  // counted in the shard's writes_suspended() (commands/shards.h)

  // Our master's stream run apart from the link (Server::StreamRunsApart): commands for one
  // worker travel as a chain, run there one after the other, each once the one before finished.
  RemoteCommand* chain_next = nullptr;
  RemoteCommand* chain_head = nullptr;  // every link of a chain
  RemoteCommand* cursor = nullptr;      // the head's: the next to run
  int lane = 0;
  int64_t stream_token = 0;  // Replica::ApartBegin's
  int64_t run_ns = 0;    // on its worker: when it started, then how long it ran (SLOWLOG, stats)
  uint64_t errors0 = 0;  // the writer's error count at dispatch (chains, lent socket)

  // The client's socket, lent for this command's reply (Connection::LendSocket), or -1. The
  // worker that ran the command sends the reply itself and queues the command home without a
  // wake-up (Worker::PostQuiet) before the reply leaves, so whatever the client does next — its
  // next request, a close — finds it queued there. lent_state settles who goes on with it:
  // 0 → 1 when the reply left (the sender is done with the command); 0 → 2 when home ran it
  // first, then the sender posts it home again. Home runs ReturnHomeLent.
  int lent_fd = -1;
  int64_t start_ns = 0;  // the client's cmd_start_ns (commandstats, timed where it ran)
  size_t lent_sent = 0;  // the reply's bytes that left on the lent socket
  std::atomic<int> lent_state{0};

  static void RunOnShard(MailboxItem* item);
  // Before RunOnShard, in a batch from the mailbox: its first key's index and cache entries.
  static void PrefetchOnShard(MailboxItem* item);
  static void RunChain(MailboxItem* item);
  static void ChainStepDone(void* arg);
  static void ChainHome(MailboxItem* item);
  // While a script is past busy-reply-threshold a queued command without allow-busy is answered
  // -BUSY at once (Redis answers it from inside the script's loop); true if it was.
  static bool RejectIfBusy(RemoteCommand* m);
  static void Done(void* arg);
  static void ReturnHome(MailboxItem* item);
  // On the worker that ran it: true if the reply left on the lent socket.
  static bool ReplyOnLentSocket(RemoteCommand* m);
  static void ReturnHomeLent(MailboxItem* item);
};

// A RemoteCommand from this worker's pool for `cl`'s command, arguments copied; its reply goes
// into its own buffer, in the client's protocol. Home worker only.
RemoteCommand* NewRemoteCommand(Server* server, ShardSet* shards, const ClientState* cl,
                                const CommandSpec* spec, std::span<const std::string_view> args,
                                int db);
// Back to the home worker's pool.
void ReleaseRemoteCommand(RemoteCommand* m);

// A single-shard command counted while suspended (Shard::WriteSuspended): a write, not a
// blocking one (it may wait for a push as long as it likes), not one run at home with its
// shards' locks (an RDB snapshot waits for those locks instead).
inline bool SuspendedWriteCounts(const CommandSpec& spec) {
  return (spec.flags & kCmdWrite) && !(spec.flags & (kCmdBlocking | kCmdHome));
}

// Command timing (dispatcher.cc), on the client's worker: the reply of `cl`'s command `spec` is
// complete — counted and timed on `home`, its end reading kept for the client's next command;
// and where that next command starts (MonotonicNs).
void CommandFinished(Observability& obs, Worker& home, const ClientState* cl,
                     const CommandSpec* spec, bool failed);
int64_t CommandStartNs(const ClientState* cl, Worker& worker);

}  // namespace lavik
