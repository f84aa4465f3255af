#include "cluster/cluster_route.h"

#include <string>
#include <vector>

#include "base/slot.h"
#include "client/services.h"
#include "cluster/cluster.h"
#include "commands/command_keys.h"
#include "storage/store.h"

namespace lavik {
namespace {

using cluster::RouteTable;

void Redirect(ReplyWriter& w, std::string_view kind, int slot, const std::string& endpoint) {
  std::string e(kind);
  e += ' ';
  e += std::to_string(slot);
  e += ' ';
  e += endpoint;
  w.Error(e);
}

struct KeyScan {
  int slot = -1;
  std::string_view first;
  bool multiple = false;
  bool cross = false;
};

bool IsShardChannelCommand(const CommandSpec& spec) {
  return (spec.flags & kCmdPubSub) &&
         (spec.name == "spublish" || spec.name == "ssubscribe" || spec.name == "sunsubscribe");
}

// The call's key arguments (fixed positions without the general walk: the common case). The
// shard channels of SSUBSCRIBE, SUNSUBSCRIBE and SPUBLISH route like keys (Redis's key specs
// mark them not_key: they are no stored keys, so the command table gives them no positions).
const std::vector<KeyRef>& KeysOfCall(const CommandSpec& spec,
                                      std::span<const std::string_view> args) {
  thread_local std::vector<KeyRef> keys;
  keys.clear();
  if (spec.flags & kCmdMovableKeys) {
    CommandKeys(spec, args, &keys);
  } else if (spec.first_key > 0 && spec.first_key < int(args.size())) {
    const int argc = int(args.size());
    int last = spec.last_key < 0 ? argc + spec.last_key : spec.last_key;
    if (last >= argc) last = argc - 1;
    for (int i = spec.first_key; i <= last; i += spec.key_step) keys.push_back({i, 0});
  } else if (IsShardChannelCommand(spec)) {
    const int last = spec.name == "spublish" ? 1 : int(args.size()) - 1;
    for (int i = 1; i <= last && i < int(args.size()); ++i) keys.push_back({i, 0});
  }
  return keys;
}

// Adds one command's keys to the scan; false once they span slots.
bool ScanKeys(const CommandSpec& spec, std::span<const std::string_view> args, KeyScan* scan) {
  for (const KeyRef& k : KeysOfCall(spec, args)) {
    std::string_view key = args[k.arg];
    const int slot = KeyHashSlot(key);
    if (scan->slot < 0) {
      scan->slot = slot;
      scan->first = key;
    } else if (key != scan->first) {
      if (slot != scan->slot) {
        scan->cross = true;
        return false;
      }
      scan->multiple = true;
    }
  }
  return true;
}

}  // namespace

bool ClusterRouteOrReply(Cluster& cluster, const CommandSpec& spec,
                         std::span<const std::string_view> args,
                         const std::vector<TxState::Queued>* queued, bool asking, bool readonly,
                         ReplyWriter& w, uint32_t* open) {
  *open = 0;
  KeyScan scan;
  bool write = (spec.flags & kCmdWrite) != 0;
  if (queued != nullptr) {
    for (const TxState::Queued& q : *queued) {
      thread_local std::vector<std::string_view> views;
      views.assign(q.args.begin(), q.args.end());
      write |= (q.spec->flags & kCmdWrite) != 0;
      if (!ScanKeys(*q.spec, views, &scan)) break;
    }
  } else {
    ScanKeys(spec, args, &scan);
  }
  if (scan.cross) {
    w.Error("CROSSSLOT Keys in request don't hash to the same slot");
    return false;
  }
  if (scan.slot < 0) return true;  // no keys: any node serves it
  const RouteTable& t = cluster.Routes();
  const int slot = scan.slot;
  const uint16_t owner = t.owner[slot];
  if (owner == RouteTable::kNone) {
    w.Error("CLUSTERDOWN Hash slot not served");
    return false;
  }
  const bool migrating = owner == RouteTable::kSelf && t.migrating[slot] != RouteTable::kNone;
  const bool importing = !migrating && t.importing[slot];
  if (!t.ok) {
    if (!t.allow_reads_when_down) {
      w.Error("CLUSTERDOWN The cluster is down");
      return false;
    }
    if (write) {
      w.Error("CLUSTERDOWN The cluster is down and only accepts read commands");
      return false;
    }
  }
  if ((migrating || importing) && spec.name == "migrate") return true;
  if (migrating || (importing && (asking || spec.name == "restore-asking"))) {
    uint32_t bits = migrating ? open_slot::kMigrating : open_slot::kImporting;
    if (scan.multiple) bits |= open_slot::kMultipleKeys;
    *open = open_slot::Pack(bits, slot);
    return true;
  }
  // READONLY on a replica: reads of its master's slots are served here; so are the shard
  // channel commands, READONLY or not (Redis's getNodeByQuery, pubsubshard_included).
  if (owner != RouteTable::kSelf &&
      !((readonly || IsShardChannelCommand(spec)) && !write && owner == t.my_master)) {
    Redirect(w, "MOVED", slot, t.endpoints[owner]);
    return false;
  }
  return true;
}

std::string ClusterScriptCallCheck(const Services& services, const CommandSpec& spec,
                                   std::span<const std::string_view> args, int* slot) {
  constexpr std::string_view kNonLocal =
      "Script attempted to access a non local key in a cluster node";
  *slot = -1;
  KeyScan scan;
  ScanKeys(spec, args, &scan);
  if (scan.cross) return std::string(kNonLocal);
  if (scan.slot < 0) return "";
  const RouteTable& t = services.cluster->Routes();
  const uint16_t owner = t.owner[scan.slot];
  if (owner == RouteTable::kNone) return std::string(kNonLocal);
  if (!t.ok) {
    if (!t.allow_reads_when_down) {
      return "Script attempted to execute a command while the cluster is down";
    }
    if (spec.flags & kCmdWrite) {
      return "Script attempted to execute a write command while the cluster is down and readonly";
    }
  }
  if (owner != RouteTable::kSelf && !t.importing[scan.slot]) return std::string(kNonLocal);
  *slot = scan.slot;
  return "";
}

namespace {

// Redis's verdict for an open slot once the missing keys are counted: "" to run, else the error.
std::string OpenSlotVerdict(Cluster& cluster, uint32_t open, int missing) {
  if (missing == 0) return "";
  const int slot = open_slot::SlotOf(open);
  if (open & open_slot::kMultipleKeys) {
    return "TRYAGAIN Multiple keys request during rehashing of slot";
  }
  if (!(open & open_slot::kMigrating)) return "";
  const RouteTable& t = cluster.Routes();
  const uint16_t to = t.migrating[slot];
  if (to == RouteTable::kNone) return "";  // the migration ended meanwhile
  return "ASK " + std::to_string(slot) + " " + t.endpoints[to];
}

int MissingKeys(Store& store, const CommandSpec& spec, std::span<const std::string_view> args,
                int64_t now_ms) {
  int missing = 0;
  for (const KeyRef& k : KeysOfCall(spec, args)) {
    if (!store.Lookup(args[k.arg], now_ms).exists) ++missing;
  }
  return missing;
}

}  // namespace

bool OpenSlotRejectsOrReply(Cluster& cluster, uint32_t open, Store& store, const CommandSpec& spec,
                            std::span<const std::string_view> args, int64_t now_ms,
                            ReplyWriter& w) {
  const std::string error = OpenSlotVerdict(cluster, open, MissingKeys(store, spec, args, now_ms));
  if (error.empty()) return false;
  w.Error(error);
  return true;
}

std::string ExecOpenSlotRedirect(const Services& services, uint32_t open, Store& store,
                                 const std::vector<TxState::Queued>& queue, int64_t now_ms) {
  int missing = 0;
  std::vector<std::string_view> views;
  for (const TxState::Queued& q : queue) {
    views.assign(q.args.begin(), q.args.end());
    missing += MissingKeys(store, *q.spec, views, now_ms);
  }
  return OpenSlotVerdict(*services.cluster, open, missing);
}

}  // namespace lavik
