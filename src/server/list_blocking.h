// Blocking list commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP): their registration table and
// the per-worker timer that ends waits on timeout or when the client hangs up.
//
// Thread safety: StartListBlocking runs on (or before starting) the worker; everything else runs
// on the blocked client's home worker.
#pragma once

#include <cstdint>
#include <span>

#include "commands/command.h"
#include "runtime/worker.h"

namespace lavik {

std::span<const CommandSpec> ListBlockingCommands();

// Clients blocked in a list command right now, over all workers (INFO blocked_clients).
uint64_t ListBlockedClients();

// Adds the worker's timer that times out blocked clients and notices their hang-ups.
void StartListBlocking(Worker* w);

}  // namespace lavik
