// DUMP key / RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f]
// (Redis 7.0 cluster.c dumpCommand / restoreCommand). The payload is Redis's (rdb/payload.h), so
// values move between Lavik and redis-server both ways. The value is taken and re-created
// through key_copy.h (a chunked collection is read whole and written as one record, which its
// next write chunks again), under the key's shard lock. Lavik keeps no LRU clock or LFU counter,
// so IDLETIME and FREQ are checked as Redis checks them and otherwise have no effect.
#include <cstdint>

#include "base/ascii.h"
#include "base/numbers.h"
#include "commands/families.h"
#include "commands/key_copy.h"
#include "commands/multi_shard.h"
#include "commands/rdb_limits.h"
#include "notify/keyspace_events.h"
#include "protocol/errors.h"
#include "rdb/payload.h"

namespace lavik {
namespace {

constexpr std::string_view kErrPayloadVersion = "ERR DUMP payload version or checksum are wrong";
constexpr std::string_view kErrBadDataFormat = "ERR Bad data format";

Task Dump(Context& ctx) {
  KeyPlan plan(ctx, ctx.args.subspan(1, 1));
  KeyCopy value;
  std::string error, payload;
  co_await plan.Lock();
  co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
    co_await ReadKeyCopy(st, ctx.args[1], ctx.now_ms, &value, &error);
  });
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else if (!value.exists) {
    ctx.reply->Null();
  } else if (!rdb::CreateDumpPayload(value.type, value.record, LiveEncodeLimits(), &payload)) {
    ctx.reply->Error("ERR DUMP of a damaged value");
  } else {
    ctx.reply->Bulk(payload);
  }
}

struct RestoreArgs {
  bool replace = false;
  bool absttl = false;
  int64_t ttl = 0;
};

// The options, in Redis's order of checks: each option as it comes, then the TTL (after the
// BUSYKEY check, which the caller makes in between).
bool ParseRestoreOptionsOrReply(Context& ctx, RestoreArgs* a) {
  bool idle = false, freq = false;
  for (size_t j = 4; j < ctx.args.size(); ++j) {
    const std::string_view opt = ctx.args[j];
    const bool more = j + 1 < ctx.args.size();
    int64_t v;
    if (EqualsNoCase(opt, "replace")) {
      a->replace = true;
    } else if (EqualsNoCase(opt, "absttl")) {
      a->absttl = true;
    } else if (EqualsNoCase(opt, "idletime") && more && !freq) {
      if (!ParseInt64(ctx.args[++j], &v)) return ctx.reply->Error(kErrNotInteger), false;
      if (v < 0) return ctx.reply->Error("ERR Invalid IDLETIME value, must be >= 0"), false;
      idle = true;
    } else if (EqualsNoCase(opt, "freq") && more && !idle) {
      if (!ParseInt64(ctx.args[++j], &v)) return ctx.reply->Error(kErrNotInteger), false;
      if (v < 0 || v > 255) {
        ctx.reply->Error("ERR Invalid FREQ value, must be >= 0 and <= 255");
        return false;
      }
      freq = true;
    } else {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
  }
  return true;
}

Task Restore(Context& ctx) {
  RestoreArgs a;
  if (!ParseRestoreOptionsOrReply(ctx, &a)) co_return;
  const std::string_view key = ctx.args[1];
  KeyPlan plan(ctx, ctx.args.subspan(1, 1));
  std::string_view reply;  // an error, or "" for +OK
  std::string error;
  co_await plan.Lock();
  co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
    const bool exists = st.Lookup(key, ctx.now_ms).exists;
    if (exists && !a.replace) {
      reply = kErrBusyKey;
      co_return;
    }
    if (!ParseInt64(ctx.args[2], &a.ttl)) {
      reply = kErrNotInteger;
      co_return;
    }
    if (a.ttl < 0) {
      reply = "ERR Invalid TTL value, must be >= 0";
      co_return;
    }
    KeyCopy copy;
    copy.exists = true;
    switch (rdb::DecodeDumpPayload(ctx.args[3], &copy.type, &copy.record)) {
      case rdb::PayloadStatus::kOk:
        break;
      case rdb::PayloadStatus::kBadVersionOrChecksum:
        reply = kErrPayloadVersion;
        co_return;
      case rdb::PayloadStatus::kBadFormat:
        reply = kErrBadDataFormat;
        co_return;
    }
    if (a.ttl != 0) {
      // A relative TTL that overflows is already far in the future: saturate.
      copy.expire_ms = a.absttl                         ? a.ttl
                       : a.ttl > INT64_MAX - ctx.now_ms ? INT64_MAX
                                                        : a.ttl + ctx.now_ms;
    }
    if (copy.expire_ms != 0 && copy.expire_ms <= ctx.now_ms) {
      // Already expired: the key is not created (and REPLACE removes the old one), as in Redis.
      bool existed = false;
      if (exists) {
        WriteResult w = co_await st.Delete(key, ctx.now_ms, &existed);
        if (!w.ok()) error = w.error;
        if (existed) NotifyKeyspaceEvent(kNotifyGeneric, "del", key);
      }
      co_return;
    }
    if (co_await WriteKeyCopy(st, key, copy, &error)) NotifyKeyWritten(key, exists, "restore");
  });
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else if (!reply.empty()) {
    ctx.reply->Error(reply);
  } else {
    ctx.reply->Ok();
  }
}

const CommandSpec kDumpCommands[] = {
    {"dump", 2, kCmdReadOnly, 1, 1, 1, &Dump, "@keyspace @read @slow", "generic",
     "Return a serialized version of the value stored at the specified key.", "2.6.0"},
    {"restore", -4, kCmdWrite | kCmdDenyOom, 1, 1, 1, &Restore, "@keyspace @write @slow @dangerous",
     "generic", "Create a key using the provided serialized value, previously obtained using DUMP.",
     "2.6.0"},
    // What MIGRATE sends in cluster mode: RESTORE that implies ASKING (kCmdAsking; the cluster
    // dispatcher lets it write an importing slot). Outside a cluster it is RESTORE.
    {"restore-asking", -4, kCmdWrite | kCmdDenyOom | kCmdAsking, 1, 1, 1, &Restore,
     "@keyspace @write @slow @dangerous", "server",
     "An internal command for migrating keys in a cluster", "3.0.0"},
};

}  // namespace

std::span<const CommandSpec> DumpCommands() { return kDumpCommands; }

}  // namespace lavik
