#include "cluster/cluster_commands.h"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/numbers.h"
#include "base/slot.h"
#include "client/client_state.h"
#include "client/services.h"
#include "cluster/cluster.h"
#include "commands/flush.h"
#include "commands/shards.h"
#include "commands/slot_keys.h"
#include "protocol/errors.h"
#include "runtime/shard_hop.h"
#include "storage/store.h"

namespace lavik {
namespace {

constexpr std::string_view kDisabled = "ERR This instance has cluster support disabled";

Cluster* ClusterOrReply(Context& ctx) {
  Cluster* c = ctx.services != nullptr ? ctx.services->cluster : nullptr;
  if (c == nullptr) ctx.reply->Error(kDisabled);
  return c;
}

// A slot argument of ADDSLOTS/DELSLOTS/SETSLOT (Redis's getSlotOrReply).
bool SlotOrReply(Context& ctx, std::string_view arg, int* slot) {
  int64_t v;
  if (!ParseInt64(arg, &v) || v < 0 || v >= kNumSlots) {
    ctx.reply->Error("ERR Invalid or out of range slot");
    return false;
  }
  *slot = int(v);
  return true;
}

void ReplyOkOr(Context& ctx, const std::string& err) {
  if (err.empty()) {
    ctx.reply->Ok();
  } else {
    ctx.reply->Error(err);
  }
}

// Keys of `slot` on the shard that owns it (db 0).
TaskOf<std::vector<std::string>> SlotKeys(Context& ctx, int slot, size_t max) {
  std::vector<std::string> keys;
  const int id = SlotShard(uint16_t(slot), ctx.shards->size());
  Shard* s = &ctx.shards->at(id);
  const int64_t now = ctx.now_ms;
  co_await ShardCall(s->worker,
                     [&, s]() { return KeysInSlot(s->store, uint16_t(slot), max, now, &keys); });
  co_return keys;
}

// How many db-0 keys `slot` holds, on the shard that owns it (a per-slot count: O(1)).
TaskOf<size_t> SlotKeyCount(Context& ctx, int slot) {
  size_t n = 0;
  Shard* s = &ctx.shards->at(SlotShard(uint16_t(slot), ctx.shards->size()));
  co_await ShardHop(s->worker, [&n, s, slot] { n = CountKeysInSlot(s->store, uint16_t(slot)); });
  co_return n;
}

TaskOf<size_t> TotalKeys(Context& ctx) {
  size_t total = 0;
  for (int id = 0; id < ctx.shards->size(); ++id) {
    Shard* s = &ctx.shards->at(id);
    co_await ShardHop(s->worker, [&total, s] { total += s->store.size(); });
  }
  co_return total;
}

Task ClusterInfo(Context& ctx) {
  if (Cluster* c = ClusterOrReply(ctx)) {
    std::string out;
    c->Info(&out);
    ctx.reply->Verbatim(out);
  }
  co_return;
}

Task ClusterNodes(Context& ctx) {
  if (Cluster* c = ClusterOrReply(ctx)) {
    std::string out;
    c->Nodes(&out);
    ctx.reply->Verbatim(out);
  }
  co_return;
}

Task ClusterSlots(Context& ctx) {
  if (Cluster* c = ClusterOrReply(ctx)) c->Slots(*ctx.reply);
  co_return;
}

Task ClusterShards(Context& ctx) {
  if (Cluster* c = ClusterOrReply(ctx)) c->Shards(*ctx.reply);
  co_return;
}

Task ClusterLinks(Context& ctx) {
  if (Cluster* c = ClusterOrReply(ctx)) c->Links(*ctx.reply);
  co_return;
}

Task ClusterMyId(Context& ctx) {
  if (Cluster* c = ClusterOrReply(ctx)) ctx.reply->Bulk(c->MyId());
  co_return;
}

Task ClusterKeySlot(Context& ctx) {
  if (ClusterOrReply(ctx) != nullptr) ctx.reply->Integer(KeyHashSlot(ctx.args[2]));
  co_return;
}

Task ClusterCountKeysInSlot(Context& ctx) {
  if (ClusterOrReply(ctx) == nullptr) co_return;
  int64_t slot;
  if (!ParseInt64(ctx.args[2], &slot)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  if (slot < 0 || slot >= kNumSlots) {
    ctx.reply->Error("ERR Invalid slot");
    co_return;
  }
  ctx.reply->Integer(int64_t(co_await SlotKeyCount(ctx, int(slot))));
}

Task ClusterGetKeysInSlot(Context& ctx) {
  if (ClusterOrReply(ctx) == nullptr) co_return;
  int64_t slot, max;
  if (!ParseInt64(ctx.args[2], &slot) || !ParseInt64(ctx.args[3], &max)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  if (max < 0 || slot < 0 || slot >= kNumSlots) {
    ctx.reply->Error("ERR Invalid slot or number of keys");
    co_return;
  }
  std::vector<std::string> keys = co_await SlotKeys(ctx, int(slot), size_t(max));
  ctx.reply->Array(keys.size());
  for (const std::string& k : keys) ctx.reply->Bulk(k);
}

// ADDSLOTS / DELSLOTS and their RANGE forms.
Task EditSlots(Context& ctx, bool del, bool range) {
  Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) co_return;
  std::vector<int> slots;
  if (range) {
    if (ctx.args.size() % 2 == 1) {
      ctx.reply->Error(WrongArityError(ctx.spec->name));
      co_return;
    }
    for (size_t i = 2; i + 1 < ctx.args.size(); i += 2) {
      int a, b;
      if (!SlotOrReply(ctx, ctx.args[i], &a) || !SlotOrReply(ctx, ctx.args[i + 1], &b)) co_return;
      if (a > b) {
        ctx.reply->Error("ERR start slot number " + std::to_string(a) +
                         " is greater than end slot number " + std::to_string(b));
        co_return;
      }
      for (int s = a; s <= b; ++s) slots.push_back(s);
    }
  } else {
    for (size_t i = 2; i < ctx.args.size(); ++i) {
      int s;
      if (!SlotOrReply(ctx, ctx.args[i], &s)) co_return;
      slots.push_back(s);
    }
  }
  ReplyOkOr(ctx, del ? c->DelSlots(slots) : c->AddSlots(slots));
}

Task ClusterAddSlots(Context& ctx) { co_await EditSlots(ctx, false, false); }
Task ClusterAddSlotsRange(Context& ctx) { co_await EditSlots(ctx, false, true); }
Task ClusterDelSlots(Context& ctx) { co_await EditSlots(ctx, true, false); }
Task ClusterDelSlotsRange(Context& ctx) { co_await EditSlots(ctx, true, true); }

Task ClusterFlushSlots(Context& ctx) {
  Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) co_return;
  if (co_await TotalKeys(ctx) != 0) {
    ctx.reply->Error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
    co_return;
  }
  c->FlushSlots();
  ctx.reply->Ok();
}

Task ClusterSetSlot(Context& ctx) {
  Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) co_return;
  int slot;
  if (!SlotOrReply(ctx, ctx.args[2], &slot)) co_return;
  std::string action;
  for (const char* a : {"migrating", "importing", "stable", "node"}) {
    if (EqualsNoCase(ctx.args[3], a)) action = a;
  }
  const size_t n = ctx.args.size();
  if (!((action == "migrating" && n == 5) || (action == "importing" && n == 5) ||
        (action == "stable" && n == 4) || (action == "node" && n == 5))) {
    ctx.reply->Error("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
    co_return;
  }
  size_t keys = 0;
  if (action == "node") keys = co_await SlotKeyCount(ctx, slot);
  ReplyOkOr(ctx, c->SetSlot(slot, action, n == 5 ? ctx.args[4] : std::string_view(), keys));
}

Task ClusterMeet(Context& ctx) {
  Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) co_return;
  int64_t port, bus;
  if (!ParseInt64(ctx.args[3], &port)) {
    ctx.reply->Error("ERR Invalid TCP base port specified: " + std::string(ctx.args[3]));
    co_return;
  }
  if (ctx.args.size() > 5) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  if (ctx.args.size() == 5) {
    if (!ParseInt64(ctx.args[4], &bus)) {
      ctx.reply->Error("ERR Invalid TCP bus port specified: " + std::string(ctx.args[4]));
      co_return;
    }
  } else {
    bus = port + 10000;
  }
  const std::string ip(ctx.args[2]);
  const bool in_range = port > 0 && port <= 65535 && bus > 0 && bus <= 65535;
  if (!in_range || !c->Meet(ip, int(port), int(bus)).empty()) {
    ctx.reply->Error("ERR Invalid node address specified: " + ip + ":" + std::string(ctx.args[3]));
    co_return;
  }
  ctx.reply->Ok();
}

Task ClusterForget(Context& ctx) {
  if (Cluster* c = ClusterOrReply(ctx)) ReplyOkOr(ctx, c->Forget(ctx.args[2]));
  co_return;
}

Task ClusterReset(Context& ctx) {
  Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) co_return;
  bool hard = false;
  if (ctx.args.size() == 3) {
    if (EqualsNoCase(ctx.args[2], "hard")) {
      hard = true;
    } else if (!EqualsNoCase(ctx.args[2], "soft")) {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
  } else if (ctx.args.size() > 3) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  const bool replica = !c->IsMaster();
  if (!replica && co_await TotalKeys(ctx) != 0) {
    ctx.reply->Error("ERR CLUSTER RESET can't be called with master nodes containing keys");
    co_return;
  }
  std::string error = c->Reset(hard);
  // As Redis's clusterReset: a replica turned into an empty master drops its master's data.
  if (error.empty() && replica) co_await FlushAllDatabases(ctx, &error);
  ReplyOkOr(ctx, error);
}

Task ClusterSaveConfig(Context& ctx) {
  if (Cluster* c = ClusterOrReply(ctx)) ReplyOkOr(ctx, c->SaveConfigOrError());
  co_return;
}

Task ClusterBumpEpoch(Context& ctx) {
  if (Cluster* c = ClusterOrReply(ctx)) {
    std::string reply;
    c->BumpEpoch(&reply);
    ctx.reply->Simple(reply);
  }
  co_return;
}

Task ClusterSetConfigEpoch(Context& ctx) {
  Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) co_return;
  int64_t epoch;
  if (!ParseInt64(ctx.args[2], &epoch)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  if (epoch < 0) {
    ctx.reply->Error("ERR Invalid config epoch specified: " + std::to_string(epoch));
    co_return;
  }
  ReplyOkOr(ctx, c->SetConfigEpoch(uint64_t(epoch)));
}

Task ClusterCountFailureReports(Context& ctx) {
  Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) co_return;
  int64_t count = 0;
  std::string err = c->CountFailureReports(ctx.args[2], &count);
  if (err.empty()) {
    ctx.reply->Integer(count);
  } else {
    ctx.reply->Error(err);
  }
}

Task ClusterReplicate(Context& ctx) {
  Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) co_return;
  const size_t keys = c->IsMaster() ? co_await TotalKeys(ctx) : 0;
  ReplyOkOr(ctx, c->Replicate(ctx.args[2], keys));
}

// REPLICAS / SLAVES: the NODES lines of the node's replicas.
Task ClusterReplicas(Context& ctx) {
  Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) co_return;
  std::string text;
  c->Nodes(&text);
  const std::string id(ctx.args[2]);
  std::vector<std::string> lines;
  bool known = false, master = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    std::vector<std::string> f;
    size_t a = 0;
    for (int i = 0; i < 4; ++i) {
      size_t b = line.find(' ', a);
      f.push_back(line.substr(a, b - a));
      a = b + 1;
    }
    if (f[0] == id) {
      known = true;
      master = f[2].find("master") != std::string::npos;
    }
    if (f[3] == id) lines.push_back(line);
  }
  if (!known) {
    ctx.reply->Error("ERR Unknown node " + id);
  } else if (!master) {
    ctx.reply->Error("ERR The specified node is not a master");
  } else {
    // In the order the node learned them, as Redis's master->slaves array.
    const std::vector<std::string> order = c->ReplicaNames(id);
    auto rank = [&](const std::string& line) {
      const std::string name = line.substr(0, line.find(' '));
      return std::find(order.begin(), order.end(), name) - order.begin();
    };
    std::stable_sort(lines.begin(), lines.end(),
                     [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    ctx.reply->Array(lines.size());
    for (const std::string& l : lines) ctx.reply->Bulk(l);
  }
}

Task ClusterFailover(Context& ctx) {
  Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) co_return;
  bool force = false, takeover = false;
  if (ctx.args.size() == 3) {
    if (EqualsNoCase(ctx.args[2], "force")) {
      force = true;
    } else if (EqualsNoCase(ctx.args[2], "takeover")) {
      force = takeover = true;
    } else {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
  } else if (ctx.args.size() > 3) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  ReplyOkOr(ctx, c->Failover(force, takeover));
}

Task ClusterHelp(Context& ctx) {
  if (ClusterOrReply(ctx) == nullptr) co_return;
  static const char* const kLines[] = {
      "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ADDSLOTS <slot> [<slot> ...]",
      "    Assign slots to current node.",
      "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
      "    Assign slots which are between <start-slot> and <end-slot> to current node.",
      "BUMPEPOCH",
      "    Advance the cluster config epoch.",
      "COUNT-FAILURE-REPORTS <node-id>",
      "    Return number of failure reports for <node-id>.",
      "COUNTKEYSINSLOT <slot>",
      "    Return the number of keys in <slot>.",
      "DELSLOTS <slot> [<slot> ...]",
      "    Delete slots information from current node.",
      "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
      "    Delete slots information which are between <start-slot> and <end-slot> from current "
      "node.",
      "FAILOVER [FORCE|TAKEOVER]",
      "    Promote current replica node to being a master.",
      "FORGET <node-id>",
      "    Remove a node from the cluster.",
      "GETKEYSINSLOT <slot> <count>",
      "    Return key names stored by current node in a slot.",
      "FLUSHSLOTS",
      "    Delete current node own slots information.",
      "INFO",
      "    Return information about the cluster.",
      "KEYSLOT <key>",
      "    Return the hash slot for <key>.",
      "MEET <ip> <port> [<bus-port>]",
      "    Connect nodes into a working cluster.",
      "MYID",
      "    Return the node id.",
      "NODES",
      "    Return cluster configuration seen by node. Output format:",
      "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
      "REPLICATE <node-id>",
      "    Configure current node as replica to <node-id>.",
      "RESET [HARD|SOFT]",
      "    Reset current node (default: soft).",
      "SET-CONFIG-EPOCH <epoch>",
      "    Set config epoch of current node.",
      "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
      "    Set slot state.",
      "REPLICAS <node-id>",
      "    Return <node-id> replicas.",
      "SAVECONFIG",
      "    Force saving cluster configuration on disk.",
      "SLOTS",
      "    Return information about slots range mappings. Each range is made of:",
      "    start, end, master and replicas IP addresses, ports and ids",
      "SHARDS",
      "    Return information about slot range mappings and the nodes associated with them.",
      "LINKS",
      "    Return information about all network links between this node and its peers.",
      "    Output format is an array where each array element is a map containing attributes "
      "of a link",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply->Array(std::size(kLines));
  for (const char* l : kLines) ctx.reply->Simple(l);
}

// ASKING: the next command may run on an IMPORTING slot; READONLY/READWRITE: reads of the
// master's slots served by its replica.
Task Asking(Context& ctx) {
  if (ClusterOrReply(ctx) == nullptr) co_return;
  ctx.client->cluster_asking = true;
  ctx.reply->Ok();
}

Task ReadOnly(Context& ctx) {
  if (ClusterOrReply(ctx) == nullptr) co_return;
  ctx.client->cluster_readonly = true;
  ctx.reply->Ok();
}

Task ReadWrite(Context& ctx) {
  if (ClusterOrReply(ctx) == nullptr) co_return;
  ctx.client->cluster_readonly = false;
  ctx.reply->Ok();
}

constexpr uint32_t kAdmin = kCmdAdmin | kCmdStale | kCmdHome;
constexpr uint32_t kStale = kCmdStale | kCmdHome;
constexpr std::string_view kAdminAcl = "@admin @slow @dangerous";

const CommandSpec kClusterSubcommands[] = {
    {"cluster|addslots", -3, kAdmin, 0, 0, 0, &ClusterAddSlots, kAdminAcl, "cluster",
     "Assign new hash slots to receiving node", "3.0.0"},
    {"cluster|addslotsrange", -4, kAdmin, 0, 0, 0, &ClusterAddSlotsRange, kAdminAcl, "cluster",
     "Assign new hash slots to receiving node", "7.0.0"},
    {"cluster|bumpepoch", 2, kAdmin, 0, 0, 0, &ClusterBumpEpoch, kAdminAcl, "cluster",
     "Advance the cluster config epoch", "3.0.0"},
    {"cluster|count-failure-reports", 3, kAdmin, 0, 0, 0, &ClusterCountFailureReports, kAdminAcl,
     "cluster", "Return the number of failure reports active for a given node", "3.0.0"},
    {"cluster|countkeysinslot", 3, kStale, 0, 0, 0, &ClusterCountKeysInSlot, "@slow", "cluster",
     "Return the number of local keys in the specified hash slot", "3.0.0"},
    {"cluster|delslots", -3, kAdmin, 0, 0, 0, &ClusterDelSlots, kAdminAcl, "cluster",
     "Set hash slots as unbound in receiving node", "3.0.0"},
    {"cluster|delslotsrange", -4, kAdmin, 0, 0, 0, &ClusterDelSlotsRange, kAdminAcl, "cluster",
     "Set hash slots as unbound in receiving node", "7.0.0"},
    {"cluster|failover", -2, kAdmin, 0, 0, 0, &ClusterFailover, kAdminAcl, "cluster",
     "Forces a replica to perform a manual failover of its master.", "3.0.0"},
    {"cluster|flushslots", 2, kAdmin, 0, 0, 0, &ClusterFlushSlots, kAdminAcl, "cluster",
     "Delete a node's own slots information", "3.0.0"},
    {"cluster|forget", 3, kAdmin, 0, 0, 0, &ClusterForget, kAdminAcl, "cluster",
     "Remove a node from the nodes table", "3.0.0"},
    {"cluster|getkeysinslot", 4, kStale, 0, 0, 0, &ClusterGetKeysInSlot, "@slow", "cluster",
     "Return local key names in the specified hash slot", "3.0.0"},
    {"cluster|help", 2, kCmdLoading | kStale, 0, 0, 0, &ClusterHelp, "@slow", "cluster",
     "Show helpful text about the different subcommands", "5.0.0"},
    {"cluster|info", 2, kStale, 0, 0, 0, &ClusterInfo, "@slow", "cluster",
     "Provides info about Redis Cluster node state", "3.0.0"},
    {"cluster|keyslot", 3, kStale, 0, 0, 0, &ClusterKeySlot, "@slow", "cluster",
     "Returns the hash slot of the specified key", "3.0.0"},
    {"cluster|links", 2, kStale, 0, 0, 0, &ClusterLinks, "@slow", "cluster",
     "Returns a list of all TCP links to and from peer nodes in cluster", "7.0.0"},
    {"cluster|meet", -4, kAdmin, 0, 0, 0, &ClusterMeet, kAdminAcl, "cluster",
     "Force a node cluster to handshake with another node", "3.0.0"},
    {"cluster|myid", 2, kStale, 0, 0, 0, &ClusterMyId, "@slow", "cluster", "Return the node id",
     "3.0.0"},
    {"cluster|nodes", 2, kStale, 0, 0, 0, &ClusterNodes, "@slow", "cluster",
     "Get Cluster config for the node", "3.0.0"},
    {"cluster|replicas", 3, kAdmin, 0, 0, 0, &ClusterReplicas, kAdminAcl, "cluster",
     "List replica nodes of the specified master node", "5.0.0"},
    {"cluster|replicate", 3, kAdmin, 0, 0, 0, &ClusterReplicate, kAdminAcl, "cluster",
     "Reconfigure a node as a replica of the specified master node", "3.0.0"},
    {"cluster|reset", -2, kAdmin | kCmdNoScript, 0, 0, 0, &ClusterReset, kAdminAcl, "cluster",
     "Reset a Redis Cluster node", "3.0.0"},
    {"cluster|saveconfig", 2, kAdmin, 0, 0, 0, &ClusterSaveConfig, kAdminAcl, "cluster",
     "Forces the node to save cluster state on disk", "3.0.0"},
    {"cluster|set-config-epoch", 3, kAdmin, 0, 0, 0, &ClusterSetConfigEpoch, kAdminAcl, "cluster",
     "Set the configuration epoch in a new node", "3.0.0"},
    {"cluster|setslot", -4, kAdmin, 0, 0, 0, &ClusterSetSlot, kAdminAcl, "cluster",
     "Bind a hash slot to a specific node", "3.0.0"},
    {"cluster|shards", 2, kStale, 0, 0, 0, &ClusterShards, "@slow", "cluster",
     "Get array of cluster slots to node mappings", "7.0.0"},
    {"cluster|slaves", 3, kAdmin, 0, 0, 0, &ClusterReplicas, kAdminAcl, "cluster",
     "List replica nodes of the specified master node", "3.0.0"},
    {"cluster|slots", 2, kStale, 0, 0, 0, &ClusterSlots, "@slow", "cluster",
     "Get array of Cluster slot to node mappings", "3.0.0"},
};

const CommandSpec kClusterCommands[] = {
    {"cluster", -2, 0, 0, 0, 0, nullptr, "@slow", "cluster", "A container for cluster commands",
     "3.0.0", kClusterSubcommands},
    {"asking", 1, kCmdFast | kCmdHome, 0, 0, 0, &Asking, "@fast @connection", "cluster",
     "Sent by cluster clients after an -ASK redirect", "3.0.0"},
    {"readonly", 1, kCmdLoading | kCmdStale | kCmdFast | kCmdHome, 0, 0, 0, &ReadOnly,
     "@fast @connection", "cluster",
     "Enables read queries for a connection to a cluster replica node", "3.0.0"},
    {"readwrite", 1, kCmdLoading | kCmdStale | kCmdFast | kCmdHome, 0, 0, 0, &ReadWrite,
     "@fast @connection", "cluster",
     "Disables read queries for a connection to a cluster replica node", "3.0.0"},
};

}  // namespace

std::span<const CommandSpec> ClusterCommands() { return kClusterCommands; }

}  // namespace lavik
