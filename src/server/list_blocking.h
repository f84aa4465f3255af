// Blocking list commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP): their registration table and
// the per-worker timer that ends waits on timeout or when the client hangs up.
//
// Thread safety: StartListBlocking runs on (or before starting) the worker; everything else runs
// on the blocked client's home worker.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "commands/command.h"
#include "commands/list_wait.h"
#include "runtime/worker.h"

namespace lavik {

std::span<const CommandSpec> ListBlockingCommands();

// Clients blocked in a list command right now, over all workers (INFO blocked_clients).
uint64_t ListBlockedClients();

// Adds the worker's timer that times out blocked clients and notices their hang-ups.
void StartListBlocking(Worker* w);

// For other blocking families (XREAD/XREADGROUP): on the client's home worker, puts a waiter
// under the timer above (deadline, hang-up, shutdown) and counts it in blocked_clients, until
// it is untracked.
void TrackBlockedWaiter(std::shared_ptr<ListWaiter> w);
void UntrackBlockedWaiter(const std::shared_ptr<ListWaiter>& w);

}  // namespace lavik
