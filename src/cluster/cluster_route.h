// The request path's cluster check (Redis 7.0's getNodeByQuery + clusterRedirectClient): every
// command that names keys must find them all in one slot this node serves, or the client is
// redirected (-MOVED slot ip:port, -ASK slot ip:port) or refused (-CROSSSLOT, -TRYAGAIN,
// -CLUSTERDOWN). The dispatcher calls it only in cluster mode.
//
// Cost: the keys' CRC16 (the dispatcher computes the same for routing to a worker), one atomic
// load to see whether the routing table changed, and table lookups. A slot that is MIGRATING or
// IMPORTING here also needs to know which keys exist: that is answered on the keys' worker just
// before the command runs (OpenSlotRejectsOrReply), since only that worker may read its index.
//
// Thread safety: call on the connection's worker (the check) or the keys' worker (the open-slot
// step); both read the Cluster's published table only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "commands/command.h"
#include "transaction/transaction.h"

namespace lavik {

class Cluster;
class Store;
struct Services;

// Context::cluster_open packs an open slot's facts for the run site.
namespace open_slot {
inline constexpr uint32_t kMigrating = 1, kImporting = 2, kMultipleKeys = 4, kAsking = 8;
inline uint32_t Pack(uint32_t bits, int slot) { return bits | (uint32_t(slot) << 16); }
inline int SlotOf(uint32_t packed) { return int(packed >> 16); }
}  // namespace open_slot

// True if the command may run on this node. Otherwise the error is written to `w` and the
// command must not run (an open MULTI is flagged by the caller, EXEC discards its queue).
// `queued`: EXEC's queued commands (their keys are checked together), else null.
// *open: non-zero when the keys' slot is MIGRATING or IMPORTING here (see above).
bool ClusterRouteOrReply(Cluster& cluster, const CommandSpec& spec,
                         std::span<const std::string_view> args,
                         const std::vector<TxState::Queued>* queued, bool asking, bool readonly,
                         ReplyWriter& w, uint32_t* open);

// On the keys' worker, before the handler: counts the command's keys missing from `store` and
// answers -ASK / -TRYAGAIN as Redis does for an open slot. True if it answered (do not run).
bool OpenSlotRejectsOrReply(Cluster& cluster, uint32_t open, Store& store, const CommandSpec& spec,
                            std::span<const std::string_view> args, int64_t now_ms, ReplyWriter& w);

// EXEC's open-slot step (transaction.h's ExecOpenSlotCheck): the same verdict over the keys of
// every queued command, on the slot's worker; "" or the -ASK/-TRYAGAIN text.
std::string ExecOpenSlotRedirect(const Services& services, uint32_t open, Store& store,
                                 const std::vector<TxState::Queued>& queue, int64_t now_ms);

// A script's redis.call (Redis's scriptVerifyClusterState, services.cluster_script_check): ""
// if the command's keys are in one slot this node serves and the cluster state allows it, else
// the error the script raises. *slot: the keys' slot (-1: none). A slot MIGRATING or IMPORTING
// here counts as served (the script holds every shard; doc/cluster.md).
std::string ClusterScriptCallCheck(const Services& services, const CommandSpec& spec,
                                   std::span<const std::string_view> args, int* slot);

}  // namespace lavik
