// RESET (Redis 7.0 resetCommand / clearClientConnectionState): brings a connection back to the
// state of a new one and replies +RESET. Discards MULTI and unwatches every key, leaves MONITOR,
// unsubscribes every channel, pattern and shard channel (without messages), turns CLIENT TRACKING
// off, forgets the name,
// turns CLIENT REPLY back ON, selects db 0, switches to RESP2 and authenticates as the default
// user (only if it needs no password, as a new connection). CLIENT NO-EVICT stays: Redis 7.0
// keeps it (7.2 clears it).
// RESET runs even inside MULTI (transaction.cc does not queue it) and in a subscribed RESP2
// connection (pubsub_client.cc lets it through).
#include "server/reset_command.h"

#include "acl/acl.h"
#include "client/client_state.h"
#include "pubsub/pubsub.h"
#include "server/client_hub.h"
#include "server/server.h"
#include "tracking/tracking.h"
#include "transaction/transaction.h"

namespace lavik {
namespace {

Task Reset(Context& ctx) {
  ClientState* cl = ctx.client;
  Server* server = ctx.server;
  if (TxState* tx = cl->tx.get()) {
    tx->queue.clear();
    tx->in_multi = false;
    tx->dirty_exec = false;
    tx->Unwatch();
  }
  // What a closing connection drops from the hub (MONITOR) and from the channel registry (every
  // subscription, on every worker) is exactly what RESET drops.
  server->client_hub().OnClose(cl);
  server->pubsub().OnClose(cl);
  co_await server->tracking().Disable(cl);  // CLIENT TRACKING off
  if (cl->closed) co_return;
  cl->name.clear();
  cl->resp = 2;
  cl->db = 0;
  cl->reply_off = false;
  cl->reply_skip_next = false;
  cl->discard_reply = false;
  cl->user = "default";
  cl->acl_user = server->acl().Find("default");
  cl->acl_version = server->acl().version();
  cl->authenticated = !server->auth_required();
  cl->conn->set_auth_required(server->auth_required());
  // The dispatcher chose this reply's target and protocol before RESET cleared CLIENT REPLY OFF
  // and HELLO 3: Redis sends +RESET in RESP2 either way.
  ctx.reply->SetOutput(cl->conn->output());
  ctx.reply->set_resp(2);
  ctx.reply->Simple("RESET");
  co_return;
}

const CommandSpec kResetCommands[] = {
    {"reset", 1,
     kCmdHome | kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdNoAuth | kCmdAllowBusy, 0,
     0, 0, &Reset, "@fast @connection", "connection", "Resets the connection.", "6.2.0"},
};

}  // namespace

std::span<const CommandSpec> ResetCommands() { return kResetCommands; }

}  // namespace lavik
