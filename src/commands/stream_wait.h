// Clients blocked in XREAD/XREADGROUP BLOCK, per key, and the wake-up on XADD: the stream
// counterpart of list_wait.h, reusing its ListWaiter (claim flag, post home, WaitForList).
//
// A stream differs from a list in who is served: an XADD does not hand its entry to one client,
// every reader blocked on the key may want it (XREAD readers all get it; XREADGROUP readers of
// different groups too). So SignalStreamReady claims every unclaimed waiter of the key; each
// retries its read under the shard locks and blocks again if nothing new is there for it.
//
// Thread safety: the queues are per worker (thread-local) and touched only there, like the list
// queues; a waiter's `claimed` flag is what is shared across workers.
#pragma once

#include <memory>
#include <string_view>

#include "commands/list_wait.h"

namespace lavik {

// On the key's worker: queues `w` for `key`. Must run while the reader holds the key's shard
// lock, after finding nothing to read, so that no XADD falls between the check and the queueing.
void QueueStreamWaiter(std::string_view key, std::shared_ptr<ListWaiter> w);
// On the key's worker: drops `w` from the key's queue.
void DequeueStreamWaiter(std::string_view key, const ListWaiter* w);
// On the key's worker, after an XADD to `key`: wakes every unclaimed waiter of the key.
void SignalStreamReady(Shard& shard, std::string_view key);
// On the worker of a key that expired, known only by its fingerprint (Index::Fingerprint): wakes
// the waiters of the stream keys with that fingerprint (a collision only wakes a reader that
// then blocks again).
void SignalStreamExpired(uint64_t fp);
// On a worker whose keys were all dropped (FLUSHALL): wakes every unclaimed waiter queued there,
// so XREADGROUP readers fail with Redis's "no longer exists" errors and XREAD readers block again.
void SignalAllStreamWaiters();

}  // namespace lavik
