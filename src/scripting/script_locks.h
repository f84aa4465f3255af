// The shard locks a script holds for its whole run (doc/threading.md, "Scripts"): every shard,
// in ascending order. A script that waits for a lock held by another script gives up with that
// script's -BUSY error once the other passes busy-reply-threshold, as Redis answers it.
//
// Thread safety: LockAllShards/UnlockAllShards run on the script's worker; the awaiter hops to
// each shard's worker and back. IsScriptLockWaiter is called on the shard's worker.
#pragma once

#include <string_view>

#include "commands/command.h"
#include "runtime/mailbox.h"
#include "runtime/task_of.h"

namespace lavik {

// Takes every shard's lock for `owner`. Returns "" once all are held, or the -BUSY text of the
// script that holds one (past its threshold): then no shard is held.
TaskOf<std::string_view> LockAllShards(Context& ctx, const void* owner);

// Releases them without waiting for the remote ones: an unlock message is posted from this
// worker before anything this client sends next, so mailbox order keeps the next command
// behind it.
void UnlockAllShards(Context& ctx);

// Whether a shard's queued item is a script waiting for its lock; running it again (item->run)
// while a script is busy makes that script give up with -BUSY.
bool IsScriptLockWaiter(const MailboxItem* item);

}  // namespace lavik
