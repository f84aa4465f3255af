// CLIENT KILL, UNBLOCK, PAUSE, UNPAUSE, NO-EVICT, REPLY and MONITOR (registered with the other
// connection commands in connection_commands.cc). Replies and errors are Redis 7.0.15's.
#include <climits>
#include <string>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/numbers.h"
#include "blocking/list_blocking.h"
#include "client/client_admin.h"
#include "client/client_state.h"
#include "protocol/errors.h"
#include "runtime/shard_hop.h"
#include "server/client_hub.h"
#include "server/server.h"

namespace lavik {

Task ClientKillCommand(Context& ctx) {
  KillFilter filter;
  std::string error = ParseKillFilter(ctx.args, &filter);
  if (!error.empty()) {
    ctx.reply->Error(error);
    co_return;
  }
  if (!filter.user.empty() && !ctx.server->client_hub().UserExists(filter.user)) {
    ctx.reply->Error("ERR No such user '" + filter.user + "'");
    co_return;
  }
  Server* server = ctx.server;
  ClientState* caller = ctx.client;
  ClientHub* hub = &server->client_hub();
  int64_t killed = 0;
  const int64_t now = NowMs();
  // Each worker closes its own matching clients; the count comes back with the hop.
  for (int w = 0; w < server->worker_count(); ++w) {
    co_await ShardHop(server->worker(w), [&, w]() {
      ClientState* next = nullptr;
      for (ClientState* cl = server->clients_of(w); cl != nullptr; cl = next) {
        next = cl->next;
        if (cl->conn->closing() && cl != caller) continue;  // already on its way out
        ClientFacts facts;
        facts.id = cl->id;
        facts.addr = cl->conn->peer();
        facts.laddr = cl->conn->local();
        facts.user = cl->user;
        facts.type = ClientHub::TypeOf(*cl);
        facts.age_s = (now - cl->conn->created_ms()) / 1000;
        facts.is_caller = cl == caller;
        if (!KillFilterMatches(filter, facts)) continue;
        ++killed;
        if (cl == caller) {
          cl->close_after_reply = true;  // the caller still gets its reply
        } else {
          hub->Kill(cl);
        }
      }
    });
  }
  if (!filter.old_form) {
    ctx.reply->Integer(killed);
  } else if (killed == 0) {
    ctx.reply->Error("ERR No such client");
  } else {
    ctx.reply->Ok();
  }
}

// CLIENT UNBLOCK id [TIMEOUT|ERROR]: the blocked client lives on one worker; each worker looks
// among its own blocked clients (EndBlockedWait), so none is touched from a foreign thread. A
// client parked by CLIENT PAUSE is not blocked in a command: 0 (Redis 7.0.15 crashes there).
Task ClientUnblockCommand(Context& ctx) {
  if (ctx.args.size() > 4) {
    ctx.reply->Error("ERR unknown subcommand or wrong number of arguments for '" +
                     std::string(ctx.args[1]) + "'. Try CLIENT HELP.");
    co_return;
  }
  ListWaiter::Outcome why = ListWaiter::Outcome::kTimeout;
  if (ctx.args.size() == 4) {
    if (EqualsNoCase(ctx.args[3], "error")) {
      why = ListWaiter::Outcome::kUnblockError;
    } else if (!EqualsNoCase(ctx.args[3], "timeout")) {
      ctx.reply->Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
      co_return;
    }
  }
  int64_t id;
  if (!ParseInt64(ctx.args[2], &id)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  Server* server = ctx.server;
  bool unblocked = false;
  for (int w = 0; w < server->worker_count() && !unblocked; ++w) {
    co_await ShardHop(server->worker(w),
                      [&]() { unblocked = EndBlockedWait(static_cast<uint64_t>(id), why); });
  }
  ctx.reply->Integer(unblocked ? 1 : 0);
}

Task ClientPauseCommand(Context& ctx) {
  bool all = true;
  if (ctx.args.size() > 4) {
    ctx.reply->Error("ERR unknown subcommand or wrong number of arguments for '" +
                     std::string(ctx.args[1]) + "'. Try CLIENT HELP.");
    co_return;
  }
  if (ctx.args.size() == 4) {
    if (EqualsNoCase(ctx.args[3], "write")) {
      all = false;
    } else if (!EqualsNoCase(ctx.args[3], "all")) {
      ctx.reply->Error("ERR CLIENT PAUSE mode must be WRITE or ALL");
      co_return;
    }
  }
  int64_t timeout;
  if (!ParseInt64(ctx.args[2], &timeout)) {
    ctx.reply->Error(kErrTimeoutNotInteger);
    co_return;
  }
  if (timeout < 0) {
    ctx.reply->Error(kErrTimeoutNegative);
    co_return;
  }
  const int64_t now = NowMs();
  // Redis adds the timeout to the clock without an overflow check; the sum wraps into the past,
  // so an absurd timeout pauses nothing. Keep that outcome without the undefined overflow.
  int64_t end = timeout > INT64_MAX - now ? 0 : now + timeout;
  ctx.server->client_hub().Pause(end, all);
  ctx.reply->Ok();
}

Task ClientUnpauseCommand(Context& ctx) {
  ctx.server->client_hub().Unpause();
  ctx.reply->Ok();
  co_return;
}

Task ClientNoEvictCommand(Context& ctx) {
  // Lavik never evicts clients (it has no maxmemory-clients), so the flag is only shown.
  if (EqualsNoCase(ctx.args[2], "on")) {
    ctx.client->no_evict = true;
  } else if (EqualsNoCase(ctx.args[2], "off")) {
    ctx.client->no_evict = false;
  } else {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  ctx.reply->Ok();
}

Task ClientReplyCommand(Context& ctx) {
  ClientState* cl = ctx.client;
  if (EqualsNoCase(ctx.args[2], "on")) {
    cl->reply_off = false;
    cl->reply_skip_next = false;
    // ON always answers, even when this very command was to be skipped (as in Redis).
    cl->discard_reply = false;
    ctx.reply->SetOutput(cl->conn->output());
    ctx.reply->Ok();
  } else if (EqualsNoCase(ctx.args[2], "off")) {
    cl->reply_off = true;  // no reply, not even to this command
  } else if (EqualsNoCase(ctx.args[2], "skip")) {
    if (!cl->reply_off) cl->reply_skip_next = true;
  } else {
    ctx.reply->Error(kErrSyntax);
  }
  co_return;
}

Task MonitorCommand(Context& ctx) {
  if (ctx.client->monitor) co_return;  // Redis ignores a second MONITOR: no reply at all
  ctx.server->client_hub().AddMonitor(ctx.client);
  ctx.reply->Ok();
}

}  // namespace lavik
