// What the cluster bus does to this node's data and clients, handed over to the workers:
//
// - The keys of slots this node lost (Redis 7.0's delKeysInSlot): when a PING or UPDATE shows a
//   higher config epoch owning a slot this node served, the slot's keys here are stale copies;
//   they are deleted on the slot's worker, each with a "del" keyspace event.
// - A PUBLISH (or PUBLISHSHARD) another node sent over the bus: delivered to this node's
//   subscribers from worker 0, in the order the bus received them.
//
// Thread safety: both may be called from any thread (the bus's); the work is posted to the
// workers. A slot's deletion waits behind a shard lock (EXEC, scripts) like any command.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace lavik {

class ShardSet;
struct Services;

void DeleteKeysInSlots(ShardSet& shards, const std::vector<uint16_t>& slots);

void PublishFromBus(const Services& services, bool shard, std::string_view channel,
                    std::string_view message);

}  // namespace lavik
