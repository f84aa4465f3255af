// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
//         [AUTH2 username password] [KEYS key [key ...]]
// (Redis 7.0 cluster.c migrateCommand). The keys go to the target as RESTORE commands carrying
// DUMP payloads (rdb/payload.h) with their remaining TTL, over a connection the worker keeps for
// 10 s (net/outbound_socket.h: io_uring on the worker, never blocking its loop). The keys' shards
// stay locked from the read to the deletion, and a key is deleted only after the target answered
// its RESTORE with +OK, so no acknowledged write is lost. doc/migrate.md.
//
// Thread safety: the handler runs on the connection's worker (kCmdHome); each worker has its
// own cache of target connections.
#pragma once

namespace lavik {

// MigrateCommands() (the registration table) is declared with the other families (families.h).

// Cluster hook (for src/cluster/): with cluster mode on, MIGRATE sends RESTORE-ASKING instead of
// RESTORE, as Redis does when cluster_enabled. Set once at start-up, before the workers run.
void SetMigrateRestoreAsking(bool on);

}  // namespace lavik
