// Connection commands: PING, ECHO, QUIT, SELECT, AUTH, HELLO, CLIENT.
#include <strings.h>

#include <algorithm>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "acl/acl_client.h"
#include "base/ascii.h"
#include "base/clock.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "client/client_state.h"
#include "commands/command.h"
#include "commands/command_table.h"
#include "protocol/errors.h"
#include "pubsub/pubsub_client.h"
#include "replication/master.h"
#include "replication/replica.h"
#include "runtime/shard_hop.h"
#include "server/client_hub.h"
#include "server/command_registry.h"
#include "server/server.h"
#include "tracking/tracking.h"

namespace lavik {
namespace {

// The server's Redis-compatibility level, as HELLO and INFO report it (see doc/commands.md).
constexpr std::string_view kRedisVersion = "7.0.15";

Task Ping(Context& ctx) {
  if (ctx.args.size() > 2) {
    ctx.reply->Error(WrongArityError("ping"));
  } else if (ctx.client->resp == 2 && ctx.client->pubsub && ctx.client->pubsub->subscribed()) {
    ctx.reply->Array(2);  // a subscribed RESP2 client reads only arrays: ["pong", <arg or "">]
    ctx.reply->Bulk("pong");
    ctx.reply->Bulk(ctx.args.size() == 2 ? ctx.args[1] : std::string_view());
  } else if (ctx.args.size() == 1) {
    ctx.reply->Simple("PONG");
  } else {
    ctx.reply->Bulk(ctx.args[1]);
  }
  co_return;
}

Task Echo(Context& ctx) {
  ctx.reply->Bulk(ctx.args[1]);
  co_return;
}

Task Quit(Context& ctx) {
  ctx.reply->Ok();
  ctx.client->close_after_reply = true;
  co_return;
}

Task Select(Context& ctx) {
  int64_t db;
  if (!ParseInt64(ctx.args[1], &db)) {
    ctx.reply->Error(kErrNotInteger);
  } else if (db < INT32_MIN || db > INT32_MAX) {
    ctx.reply->Error(kErrNotInt32);
  } else if (db != 0 && ctx.services != nullptr && ctx.services->cluster != nullptr) {
    ctx.reply->Error("ERR SELECT is not allowed in cluster mode");
  } else if (db < 0 || db >= DbMap::Count()) {
    ctx.reply->Error(kErrDbIndexRange);
  } else {
    ctx.db = DbMap::Physical(static_cast<int>(db));
    // A script's SELECT lasts until the script ends (Redis 7.0); EXEC's stays with the client.
    if (!ctx.in_script && ctx.client != nullptr) ctx.client->db = static_cast<int>(db);
    ctx.reply->Ok();
  }
  co_return;
}

Task Auth(Context& ctx) {
  if (ctx.args.size() > 3) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  std::string_view user = "default";
  std::string_view pass = ctx.args[1];
  if (ctx.args.size() == 2) {
    if (ctx.server->acl().Find("default")->nopass) {
      ctx.reply->Error(kErrAuthNotConfigured);
      co_return;
    }
  } else {
    user = ctx.args[1];
    pass = ctx.args[2];
  }
  if (AclAuthenticate(*ctx.server, *ctx.client, user, pass, ctx.args[0])) {
    ctx.reply->Ok();
  } else {
    ctx.reply->Error(kErrWrongPass);
  }
}

bool ValidClientName(std::string_view name) {
  for (char c : name) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

Task Hello(Context& ctx) {
  int64_t ver = 0;
  if (ctx.args.size() >= 2) {
    if (!ParseInt64(ctx.args[1], &ver)) {
      ctx.reply->Error("ERR Protocol version is not an integer or out of range");
      co_return;
    }
    if (ver < 2 || ver > 3) {
      ctx.reply->Error(kErrNoProto);
      co_return;
    }
  }
  std::string_view user, pass, name;
  bool has_auth = false;
  bool has_name = false;
  for (size_t j = 2; j < ctx.args.size(); ++j) {
    size_t more = ctx.args.size() - 1 - j;
    if (EqualsNoCase(ctx.args[j], "auth") && more >= 2) {
      user = ctx.args[j + 1];
      pass = ctx.args[j + 2];
      has_auth = true;
      j += 2;
    } else if (EqualsNoCase(ctx.args[j], "setname") && more >= 1) {
      name = ctx.args[j + 1];
      has_name = true;
      ++j;
    } else {
      ctx.reply->Error("ERR Syntax error in HELLO option '" + std::string(ctx.args[j]) + "'");
      co_return;
    }
  }
  ClientState* cl = ctx.client;
  if (has_auth) {
    if (!AclAuthenticate(*ctx.server, *cl, user, pass, ctx.args[0])) {
      ctx.reply->Error(kErrWrongPass);
      co_return;
    }
  }
  if (!cl->authenticated && ctx.server->auth_required()) {
    ctx.reply->Error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
        "AUTH <user> <pass> option can be used to authenticate the client and select the "
        "RESP protocol version at the same time");
    co_return;
  }
  if (has_name) {
    if (!ValidClientName(name)) {
      ctx.reply->Error("ERR Client names cannot contain spaces, newlines or special characters.");
      co_return;
    }
    cl->name = std::string(name);
  }
  if (ver != 0) {
    cl->resp = static_cast<int>(ver);
    ctx.reply->set_resp(cl->resp);
  }
  ReplyWriter& w = *ctx.reply;
  w.Map(7);
  w.Bulk("server");
  w.Bulk("redis");
  w.Bulk("version");
  w.Bulk(kRedisVersion);
  w.Bulk("proto");
  w.Integer(cl->resp);
  w.Bulk("id");
  w.Integer(static_cast<int64_t>(cl->id));
  w.Bulk("mode");
  w.Bulk("standalone");
  w.Bulk("role");
  w.Bulk(ctx.server->replica().following() ? "replica" : "master");
  w.Bulk("modules");
  w.Array(0);
}

Task ClientId(Context& ctx) {
  ctx.reply->Integer(static_cast<int64_t>(ctx.client->id));
  co_return;
}

Task ClientSetName(Context& ctx) {
  if (!ValidClientName(ctx.args[2])) {
    ctx.reply->Error("ERR Client names cannot contain spaces, newlines or special characters.");
    co_return;
  }
  ctx.client->name = std::string(ctx.args[2]);
  ctx.reply->Ok();
}

Task ClientGetName(Context& ctx) {
  if (ctx.client->name.empty()) {
    ctx.reply->Null();
  } else {
    ctx.reply->Bulk(ctx.client->name);
  }
  co_return;
}

Task ClientInfo(Context& ctx) {
  ctx.reply->Verbatim(ClientInfoLine(*ctx.client, NowMs(), true) + "\n");
  co_return;
}

Task ClientList(Context& ctx) {
  // Redis 7.0 takes one filter: TYPE <type>, or ID <id> [<id> ...].
  bool has_type = false;
  ClientType type = ClientType::kNormal;
  std::vector<int64_t> ids;
  if (ctx.args.size() == 4 && EqualsNoCase(ctx.args[2], "type")) {
    if (!ParseClientType(ctx.args[3], &type)) {
      ctx.reply->Error("ERR Unknown client type '" + std::string(ctx.args[3]) + "'");
      co_return;
    }
    has_type = true;
  } else if (ctx.args.size() >= 4 && EqualsNoCase(ctx.args[2], "id")) {
    for (size_t i = 3; i < ctx.args.size(); ++i) {
      int64_t id;
      if (!ParseInt64(ctx.args[i], &id)) {
        ctx.reply->Error("ERR Invalid client ID");
        co_return;
      }
      ids.push_back(id);
    }
  } else if (ctx.args.size() != 2) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  std::string out;
  const int64_t now = NowMs();
  Server* server = ctx.server;
  for (int w = 0; w < server->worker_count(); ++w) {
    co_await ShardHop(server->worker(w), [&, w]() {
      for (ClientState* cl = server->clients_of(w); cl != nullptr; cl = cl->next) {
        if (has_type && ClientHub::TypeOf(*cl) != type) continue;
        if (!ids.empty() &&
            std::find(ids.begin(), ids.end(), static_cast<int64_t>(cl->id)) == ids.end()) {
          continue;
        }
        // A replica's REPLCONF ACKs are its interaction; over TLS the Master's thread reads them.
        const int64_t heard = cl->replica ? server->master().LastHeardMs(cl->id) : 0;
        out += ClientInfoLine(*cl, now, cl == ctx.client, heard);
        out += '\n';
      }
    });
  }
  ctx.reply->Verbatim(out);
}

Task ClientHelp(Context& ctx) {
  static const char* kLines[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CACHING (YES|NO)",
      "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
      "GETREDIR",
      "    Return the client ID we are redirecting to when tracking is enabled.",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are:",
      "    * ADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made from the specified address",
      "    * LADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made to specified local address",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Kill connections by type.",
      "    * USER <username>",
      "      Kill connections authenticated by <username>.",
      "    * SKIPME (YES|NO)",
      "      Skip killing current connection (default: yes).",
      "    * MAXAGE <maxage>",
      "      Kill connections older than the specified age.",
      "LIST [options ...]",
      "    Return information about client connections. Options:",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Return clients of specified type.",
      "    * ID <client-id> [<client-id> ...]",
      "      Return clients of specified IDs only.",
      "UNPAUSE",
      "    Stop the current client pause, resuming traffic.",
      "PAUSE <timeout> [WRITE|ALL]",
      "    Suspend all, or just write, clients for <timeout> milliseconds.",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
      "         [OPTIN] [OPTOUT] [NOLOOP]",
      "    Control server assisted client side caching.",
      "TRACKINGINFO",
      "    Report tracking status for the current connection.",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "NO-EVICT (ON|OFF)",
      "    Protect current client connection from eviction.",
      "HELP",
      "    Print this help.",
  };
  ctx.reply->Array(std::size(kLines));
  for (const char* l : kLines) ctx.reply->Simple(l);
  co_return;
}

constexpr uint32_t kConn = kCmdHome | kCmdLoading | kCmdStale;

const CommandSpec kClientSubcommands[] = {
    {"client|id", 2, kConn | kCmdNoScript, 0, 0, 0, &ClientId, "@slow @connection", "connection",
     "Returns the unique client ID of the connection.", "5.0.0"},
    {"client|setname", 3, kConn | kCmdNoScript, 0, 0, 0, &ClientSetName, "@slow @connection",
     "connection", "Sets the connection name.", "2.6.9"},
    {"client|getname", 2, kConn | kCmdNoScript, 0, 0, 0, &ClientGetName, "@slow @connection",
     "connection", "Returns the name of the connection.", "2.6.9"},
    {"client|info", 2, kConn | kCmdNoScript, 0, 0, 0, &ClientInfo, "@slow @connection",
     "connection", "Returns information about the connection.", "6.2.0"},
    {"client|list", -2, kConn | kCmdAdmin | kCmdNoScript, 0, 0, 0, &ClientList,
     "@admin @slow @dangerous @connection", "connection", "Lists open connections.", "2.4.0"},
    {"client|kill", -3, kConn | kCmdAdmin | kCmdNoScript, 0, 0, 0, &ClientKillCommand,
     "@admin @slow @dangerous @connection", "connection", "Terminates open connections.", "2.4.0"},
    {"client|unblock", -3, kConn | kCmdAdmin | kCmdNoScript, 0, 0, 0, &ClientUnblockCommand,
     "@admin @slow @dangerous @connection", "connection",
     "Unblock a client blocked in a blocking command from a different connection", "5.0.0"},
    {"client|pause", -3, kConn | kCmdAdmin | kCmdNoScript, 0, 0, 0, &ClientPauseCommand,
     "@admin @slow @dangerous @connection", "connection", "Suspends commands processing.", "3.0.0"},
    {"client|unpause", 2, kConn | kCmdAdmin | kCmdNoScript, 0, 0, 0, &ClientUnpauseCommand,
     "@admin @slow @dangerous @connection", "connection",
     "Resumes processing commands from paused clients.", "6.2.0"},
    {"client|no-evict", 3, kConn | kCmdAdmin | kCmdNoScript, 0, 0, 0, &ClientNoEvictCommand,
     "@admin @slow @dangerous @connection", "connection",
     "Sets the client eviction mode of the connection.", "7.0.0"},
    {"client|reply", 3, kConn | kCmdNoScript, 0, 0, 0, &ClientReplyCommand, "@slow @connection",
     "connection", "Instructs the server whether to reply to commands.", "3.2.0"},
    {"client|tracking", -3, kConn | kCmdNoScript, 0, 0, 0, &ClientTrackingCommand,
     "@slow @connection", "connection",
     "Enable or disable server assisted client side caching support", "6.0.0"},
    {"client|caching", 3, kConn | kCmdNoScript, 0, 0, 0, &ClientCachingCommand, "@slow @connection",
     "connection", "Instruct the server about tracking or not keys in the next request", "6.0.0"},
    {"client|getredir", 2, kConn | kCmdNoScript, 0, 0, 0, &ClientGetRedirCommand,
     "@slow @connection", "connection", "Get tracking notifications redirection client ID if any",
     "6.0.0"},
    {"client|trackinginfo", 2, kConn | kCmdNoScript, 0, 0, 0, &ClientTrackingInfoCommand,
     "@slow @connection", "connection",
     "Return information about server assisted client side caching for the current connection",
     "6.2.0"},
    {"client|help", 2, kConn, 0, 0, 0, &ClientHelp, "@slow @connection", "connection",
     "Returns helpful text about the different subcommands.", "5.0.0"},
};

const CommandSpec kConnectionCommands[] = {
    // As Redis 7.0's PING: no `loading` or `stale` flag, so a replica answers -LOADING during a
    // full sync and -MASTERDOWN with replica-serve-stale-data no.
    {"ping", -1, kCmdHome | kCmdFast, 0, 0, 0, &Ping, "@fast @connection", "connection",
     "Returns the server's liveliness response.", "1.0.0"},
    {"echo", 2, kConn | kCmdFast, 0, 0, 0, &Echo, "@fast @connection", "connection",
     "Returns the given string.", "1.0.0"},
    {"quit", -1, kConn | kCmdNoAuth | kCmdFast | kCmdAllowBusy, 0, 0, 0, &Quit, "@fast @connection",
     "connection", "Closes the connection.", "1.0.0"},
    {"select", 2, kConn | kCmdFast, 0, 0, 0, &Select, "@fast @connection", "connection",
     "Changes the selected database.", "1.0.0"},
    {"auth", -2, kConn | kCmdNoAuth | kCmdNoScript | kCmdFast, 0, 0, 0, &Auth, "@fast @connection",
     "connection", "Authenticates the connection.", "1.0.0"},
    {"hello", -1, kConn | kCmdNoAuth | kCmdNoScript | kCmdFast, 0, 0, 0, &Hello,
     "@fast @connection", "connection", "Handshakes with the Redis server.", "6.0.0"},
    {"monitor", 1, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdHome, 0, 0, 0,
     &MonitorCommand, "@admin @slow @dangerous", "server",
     "Listens for all requests received by the server in real-time.", "1.0.0"},
    {"client", -2, kCmdHome, 0, 0, 0, nullptr, "@slow", "connection",
     "A container for client connection commands.", "2.4.0", kClientSubcommands},
};

}  // namespace

std::span<const CommandSpec> ConnectionCommands() { return kConnectionCommands; }

}  // namespace lavik
