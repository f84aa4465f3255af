// ACL commands (SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT, DRYRUN, LOG, GENPASS, LOAD,
// SAVE, HELP) and the ACL hooks of acl_client.h.
#include <openssl/rand.h>

#include <algorithm>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "acl/acl_client.h"
#include "acl/acl_log.h"
#include "base/ascii.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/numbers.h"
#include "client/client_state.h"
#include "commands/command_table.h"
#include "protocol/errors.h"
#include "runtime/shard_hop.h"
#include "server/client_hub.h"
#include "server/command_registry.h"
#include "server/server.h"

namespace lavik {
namespace {

constexpr std::string_view kErrNoAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users "
    "via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis "
    "configuration file set) in order to store users in the Redis configuration.";

void LogDenial(Server& server, ClientState& cl, std::string_view reason, std::string object,
               std::string username) {
  AclLogEntry e;
  e.reason = reason;
  e.context = "toplevel";
  e.object = std::move(object);
  e.username = std::move(username);
  e.created_ms = NowMs();
  e.client_info = ClientInfoLine(cl, e.created_ms, /*running=*/true);
  server.acl_log().Add(std::move(e));
}

void SetUser(ClientState& cl, std::shared_ptr<const AclUser> user, uint64_t version) {
  cl.user = user->name;
  cl.acl_user = std::move(user);
  cl.acl_version = version;
}

// Closes (after their current reply) the clients whose user is in `names`, on every worker; all
// non-default users' clients when `names` is empty (ACL LOAD).
Task KickClients(Context& ctx, std::vector<std::string> names) {
  Server* server = ctx.server;
  ClientState* self = ctx.client;
  auto doomed = [&names](const ClientState& cl) {
    if (names.empty()) return cl.user != "default";
    return std::find(names.begin(), names.end(), cl.user) != names.end();
  };
  for (int w = 0; w < server->worker_count(); ++w) {
    co_await ShardHop(server->worker(w), [&, w]() {
      for (ClientState* cl = server->clients_of(w); cl != nullptr; cl = cl->next) {
        if (cl == self || !doomed(*cl)) continue;
        cl->authenticated = false;
        cl->conn->CloseAfterReply();
      }
    });
  }
  if (doomed(*self)) self->close_after_reply = true;
}

// "ERR unknown subcommand or wrong number of arguments for 'LOG'. Try ACL HELP."
std::string BadUse(std::string_view sub) {
  return "ERR unknown subcommand or wrong number of arguments for '" + std::string(sub) +
         "'. Try ACL HELP.";
}

Task AclSetUser(Context& ctx) {
  std::string error;
  if (ctx.server->acl().SetUser(ctx.args[2], ctx.args.subspan(3), &error)) {
    ctx.reply->Ok();
  } else {
    ctx.reply->Error(error);
  }
  co_return;
}

Task AclGetUser(Context& ctx) {
  const Acl& acl = ctx.server->acl();
  std::shared_ptr<const AclUser> u = acl.Find(ctx.args[2]);
  ReplyWriter& w = *ctx.reply;
  if (u == nullptr) {
    w.Null();
    co_return;
  }
  w.Map(6);
  w.Bulk("flags");
  std::vector<std::string_view> flags = Acl::Flags(*u);
  w.Set(flags.size());
  for (std::string_view f : flags) w.Bulk(f);
  w.Bulk("passwords");
  w.Array(u->passwords.size());
  for (const std::string& p : u->passwords) w.Bulk(p);
  w.Bulk("commands");
  w.Bulk(acl.DescribeCommands(*u));
  w.Bulk("keys");
  w.Bulk(Acl::DescribeKeys(*u));
  w.Bulk("channels");
  w.Bulk(Acl::DescribeChannels(*u));
  w.Bulk("selectors");
  w.Array(0);
}

Task AclDelUser(Context& ctx) {
  std::span<const std::string_view> names = ctx.args.subspan(2);
  for (std::string_view n : names) {
    if (n == "default") {
      ctx.reply->Error("ERR The 'default' user cannot be removed");
      co_return;
    }
  }
  int deleted = ctx.server->acl().DelUsers(names);
  if (deleted > 0) co_await KickClients(ctx, std::vector<std::string>(names.begin(), names.end()));
  ctx.reply->Integer(deleted);
}

Task AclList(Context& ctx) {
  const Acl& acl = ctx.server->acl();
  auto users = acl.Users();
  ctx.reply->Array(users.size());
  for (const auto& u : users) ctx.reply->Bulk("user " + u->name + " " + acl.Describe(*u));
  co_return;
}

Task AclUsers(Context& ctx) {
  auto users = ctx.server->acl().Users();
  ctx.reply->Array(users.size());
  for (const auto& u : users) ctx.reply->Bulk(u->name);
  co_return;
}

Task AclWhoAmI(Context& ctx) {
  ctx.reply->Bulk(ctx.client->user);
  co_return;
}

Task AclCat(Context& ctx) {
  if (ctx.args.size() > 3) {
    ctx.reply->Error(BadUse(ctx.args[1]));
    co_return;
  }
  if (ctx.args.size() == 2) {
    std::span<const std::string_view> cats = Acl::Categories();
    ctx.reply->Array(cats.size());
    for (std::string_view c : cats) ctx.reply->Bulk(c);
    co_return;
  }
  std::vector<std::string_view> names;
  if (!ctx.server->acl().CommandsInCategory(ctx.args[2], &names)) {
    ctx.reply->Error("ERR Unknown category '" + std::string(ctx.args[2].substr(0, 128)) + "'");
    co_return;
  }
  ctx.reply->Array(names.size());
  for (std::string_view n : names) ctx.reply->Bulk(n);
}

Task AclDryRun(Context& ctx) {
  const Acl& acl = ctx.server->acl();
  std::shared_ptr<const AclUser> u = acl.Find(ctx.args[2]);
  if (u == nullptr) {
    ctx.reply->Error("ERR User '" + std::string(ctx.args[2]) + "' not found");
    co_return;
  }
  std::span<const std::string_view> cmd_args = ctx.args.subspan(3);
  const CommandSpec* spec = ctx.server->commands().Find(cmd_args[0]);
  if (spec != nullptr && !spec->subcommands.empty() && cmd_args.size() >= 2) {
    spec = CommandTable::FindSubcommand(*spec, cmd_args[1]);
  }
  if (spec == nullptr) {
    ctx.reply->Error("ERR Command '" + std::string(cmd_args[0]) + "' not found");
    co_return;
  }
  if (!CommandTable::ArityOk(*spec, cmd_args.size())) {
    ctx.reply->Error(WrongArityError(spec->name));
    co_return;
  }
  AclVerdict v = acl.Check(*u, *spec, cmd_args);
  switch (v.kind) {
    case AclVerdict::kOk:
      ctx.reply->Ok();
      break;
    case AclVerdict::kCommand:
      ctx.reply->Bulk("This user has no permissions to run the '" + std::string(spec->name) +
                      "' command");
      break;
    case AclVerdict::kKey:
      ctx.reply->Bulk("This user has no permissions to access the '" +
                      std::string(cmd_args[v.arg]) + "' key");
      break;
    case AclVerdict::kChannel:
      ctx.reply->Bulk("This user has no permissions to access the '" +
                      std::string(cmd_args[v.arg]) + "' channel");
      break;
  }
}

Task AclLogCmd(Context& ctx) {
  if (ctx.args.size() > 3) {
    ctx.reply->Error(BadUse(ctx.args[1]));
    co_return;
  }
  int64_t count = 10;
  if (ctx.args.size() == 3) {
    if (EqualsNoCase(ctx.args[2], "reset")) {
      ctx.server->acl_log().Reset();
      ctx.reply->Ok();
      co_return;
    }
    if (!ParseInt64(ctx.args[2], &count)) {
      ctx.reply->Error(kErrNotInteger);
      co_return;
    }
    if (count < 0) count = 0;
  }
  std::vector<AclLogEntry> entries = ctx.server->acl_log().Newest(static_cast<size_t>(count));
  const int64_t now = NowMs();
  ReplyWriter& w = *ctx.reply;
  w.Array(entries.size());
  for (const AclLogEntry& e : entries) {
    w.Map(7);
    w.Bulk("count");
    w.Integer(static_cast<int64_t>(e.count));
    w.Bulk("reason");
    w.Bulk(e.reason);
    w.Bulk("context");
    w.Bulk(e.context);
    w.Bulk("object");
    w.Bulk(e.object);
    w.Bulk("username");
    w.Bulk(e.username);
    w.Bulk("age-seconds");
    w.Double(static_cast<double>(now - e.created_ms) / 1000.0);
    w.Bulk("client-info");
    w.Bulk(e.client_info);
  }
}

Task AclGenPass(Context& ctx) {
  if (ctx.args.size() > 3) {
    ctx.reply->Error(BadUse(ctx.args[1]));
    co_return;
  }
  constexpr int64_t kMaxBits = 4096;
  int64_t bits = 256;
  if (ctx.args.size() == 3 && !ParseInt64(ctx.args[2], &bits)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  if (bits <= 0 || bits > kMaxBits) {
    ctx.reply->Error(
        "ERR ACL GENPASS argument must be the number of bits for the output password, a "
        "positive number up to 4096");
    co_return;
  }
  const size_t chars = static_cast<size_t>((bits + 3) / 4);
  unsigned char raw[kMaxBits / 8];
  RAND_bytes(raw, static_cast<int>((chars + 1) / 2));
  static const char* kHex = "0123456789abcdef";
  std::string pass;
  for (size_t i = 0; i < chars; ++i) pass += kHex[(raw[i / 2] >> ((i % 2) * 4)) & 15];
  ctx.reply->Bulk(pass);
}

Task AclLoad(Context& ctx) {
  const std::string& path = ctx.server->aclfile();
  if (path.empty()) {
    ctx.reply->Error(kErrNoAclFile);
    co_return;
  }
  std::string error;
  if (!ctx.server->acl().LoadFile(path, &error)) {
    ctx.reply->Error("ERR " + error);
    co_return;
  }
  // Redis 7.0 frees every user but "default" on ACL LOAD, closing their clients.
  co_await KickClients(ctx, {});
  ctx.reply->Ok();
}

Task AclSave(Context& ctx) {
  const std::string& path = ctx.server->aclfile();
  if (path.empty()) {
    ctx.reply->Error(kErrNoAclFile);
    co_return;
  }
  std::string error;
  if (!ctx.server->acl().SaveFile(path, &error)) {
    LogWarning(error);
    ctx.reply->Error(
        "ERR There was an error trying to save the ACLs. Please check the server logs for more "
        "information");
    co_return;
  }
  ctx.reply->Ok();
}

Task AclHelp(Context& ctx) {
  static const char* kLines[] = {
      "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CAT [<category>]",
      "    List all commands that belong to <category>, or all command categories",
      "    when no category is specified.",
      "DELUSER <username> [<username> ...]",
      "    Delete a list of users.",
      "DRYRUN <username> <command> [<arg> ...]",
      "    Returns whether the user can execute the given command without executing the "
      "command.",
      "GETUSER <username>",
      "    Get the user's details.",
      "GENPASS [<bits>]",
      "    Generate a secure 256-bit user password. The optional `bits` argument can",
      "    be used to specify a different size.",
      "LIST",
      "    Show users details in config file format.",
      "LOAD",
      "    Reload users from the ACL file.",
      "LOG [<count> | RESET]",
      "    Show the ACL log entries.",
      "SAVE",
      "    Save the current config to the ACL file.",
      "SETUSER <username> <attribute> [<attribute> ...]",
      "    Create or modify a user with the specified attributes.",
      "USERS",
      "    List all the registered usernames.",
      "WHOAMI",
      "    Return the current connection username.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply->Array(std::size(kLines));
  for (const char* l : kLines) ctx.reply->Simple(l);
  co_return;
}

constexpr uint32_t kAclFlags = kCmdHome | kCmdNoScript | kCmdLoading | kCmdStale;
constexpr uint32_t kAclAdmin = kAclFlags | kCmdAdmin;
constexpr std::string_view kAdminCats = "@admin @slow @dangerous";

const CommandSpec kAclSubcommands[] = {
    {"acl|cat", -2, kAclFlags, 0, 0, 0, &AclCat, "@slow", "server",
     "List the ACL categories or the commands inside a category", "6.0.0"},
    {"acl|deluser", -3, kAclAdmin, 0, 0, 0, &AclDelUser, kAdminCats, "server",
     "Remove the specified ACL users and the associated rules", "6.0.0"},
    {"acl|dryrun", -4, kAclAdmin, 0, 0, 0, &AclDryRun, kAdminCats, "server",
     "Returns whether the user can execute the given command without executing the command.",
     "7.0.0"},
    {"acl|genpass", -2, kAclFlags, 0, 0, 0, &AclGenPass, "@slow", "server",
     "Generate a pseudorandom secure password to use for ACL users", "6.0.0"},
    {"acl|getuser", 3, kAclAdmin, 0, 0, 0, &AclGetUser, kAdminCats, "server",
     "Get the rules for a specific ACL user", "6.0.0"},
    {"acl|help", 2, kCmdHome | kCmdLoading | kCmdStale, 0, 0, 0, &AclHelp, "@slow", "server",
     "Show helpful text about the different subcommands", "6.0.0"},
    {"acl|list", 2, kAclAdmin, 0, 0, 0, &AclList, kAdminCats, "server",
     "List the current ACL rules in ACL config file format", "6.0.0"},
    {"acl|load", 2, kAclAdmin, 0, 0, 0, &AclLoad, kAdminCats, "server",
     "Reload the ACLs from the configured ACL file", "6.0.0"},
    {"acl|log", -2, kAclAdmin, 0, 0, 0, &AclLogCmd, kAdminCats, "server",
     "List latest events denied because of ACLs in place", "6.0.0"},
    {"acl|save", 2, kAclAdmin, 0, 0, 0, &AclSave, kAdminCats, "server",
     "Save the current ACL rules in the configured ACL file", "6.0.0"},
    {"acl|setuser", -3, kAclAdmin, 0, 0, 0, &AclSetUser, kAdminCats, "server",
     "Modify or create the rules for a specific ACL user", "6.0.0"},
    {"acl|users", 2, kAclAdmin, 0, 0, 0, &AclUsers, kAdminCats, "server",
     "List the username of all the configured ACL rules", "6.0.0"},
    {"acl|whoami", 2, kAclFlags, 0, 0, 0, &AclWhoAmI, "@slow", "server",
     "Return the name of the user associated to the current connection", "6.0.0"},
};

const CommandSpec kAclCommands[] = {
    {"acl", -2, kCmdHome, 0, 0, 0, nullptr, "@slow", "server",
     "A container for Access List Control commands ", "6.0.0", kAclSubcommands},
};

}  // namespace

std::span<const CommandSpec> AclCommands() { return kAclCommands; }

bool AclRefreshUser(Server& server, ClientState& cl) {
  const uint64_t version = server.acl().version();
  std::shared_ptr<const AclUser> u = server.acl().Find(cl.user);
  if (u == nullptr) return false;
  SetUser(cl, std::move(u), version);
  return true;
}

bool AclPermitOrReply(Server& server, ClientState& cl, const CommandSpec& spec,
                      std::span<const std::string_view> args) {
  AclVerdict v = server.acl().Check(*cl.acl_user, spec, args);
  switch (v.kind) {
    case AclVerdict::kOk:
      return true;
    case AclVerdict::kCommand:
      cl.writer.Error("NOPERM this user has no permissions to run the '" + std::string(spec.name) +
                      "' command");
      LogDenial(server, cl, "command", std::string(spec.name), cl.user);
      break;
    case AclVerdict::kKey:
      cl.writer.Error(
          "NOPERM this user has no permissions to access one of the keys used as "
          "arguments");
      LogDenial(server, cl, "key", std::string(args[v.arg]), cl.user);
      break;
    case AclVerdict::kChannel:
      cl.writer.Error(
          "NOPERM this user has no permissions to access one of the channels used as "
          "arguments");
      LogDenial(server, cl, "channel", std::string(args[v.arg]), cl.user);
      break;
  }
  return false;
}

bool AclAuthenticate(Server& server, ClientState& cl, std::string_view user,
                     std::string_view password, std::string_view command) {
  const uint64_t version = server.acl().version();
  std::shared_ptr<const AclUser> u = server.acl().Authenticate(user, password);
  if (u == nullptr) {
    LogDenial(server, cl, "auth", std::string(command), std::string(user));
    return false;
  }
  SetUser(cl, std::move(u), version);
  cl.authenticated = true;
  cl.conn->set_auth_required(false);
  return true;
}

}  // namespace lavik
