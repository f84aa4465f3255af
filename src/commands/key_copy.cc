// COPY source destination [DB destination-db] [REPLACE] (Redis 7.0 copyCommand): under both
// keys' shard locks the value is read on the source's worker and written, TTL included, on the
// destination's. DB n names the destination's database (its stored key, base/db_key.h).
#include "commands/key_copy.h"

#include <cstdint>

#include "base/ascii.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "commands/collection_access.h"
#include "commands/list_chunks.h"
#include "commands/multi_shard.h"
#include "commands/stream_chunked.h"
#include "notify/keyspace_events.h"
#include "protocol/errors.h"

namespace lavik {

TaskOf<bool> ReadKeyCopy(Store& st, std::string_view key, int64_t now_ms, KeyCopy* out,
                         std::string* error) {
  const KeyInfo info = st.LookupRead(key, now_ms);  // DUMP and COPY read it, as Redis counts
  out->exists = info.exists;
  if (!info.exists) co_return true;
  ReadResult r = co_await st.ReadValue(key, info);
  if (!r.ok()) {
    *error = r.status == ReadResult::Status::kError ? r.error : std::string(kErrNoSuchKey);
    co_return false;
  }
  out->type = info.type;
  out->record.assign(r.value.data(), r.value.size());
  out->expire_ms = info.expire_ms;
  // A chunked value's chunks belong to this key: the copy takes the entries themselves.
  if (info.type == ValueType::kList) {
    co_return co_await ListAsOneRecord(st, key, now_ms, &out->record, error);
  }
  if (info.type == ValueType::kStream) {
    co_return co_await StreamAsOneRecord(st, key, now_ms, &out->record, error);
  }
  co_return co_await CollectionAsOneRecord(st, key, info.type, now_ms, &out->record, error);
}

TaskOf<bool> WriteKeyCopy(Store& st, std::string_view key, const KeyCopy& copy,
                          std::string* error) {
  WriteResult w = co_await st.Write(key, copy.type, copy.record, copy.expire_ms);
  if (!w.ok()) {
    *error = w.error;
    co_return false;
  }
  co_return true;
}

void NotifyKeyWritten(std::string_view key, bool replaced, std::string_view event) {
  if (replaced) NotifyKeyspaceEvent(kNotifyNew, "new", key);
  NotifyKeyspaceEvent(kNotifyGeneric, event, key);
}

namespace {

Task Copy(Context& ctx) {
  const std::string_view src = ctx.args[1];
  std::string dst(ctx.args[2]);
  bool replace = false;
  bool other_db = false;
  for (size_t j = 3; j < ctx.args.size(); ++j) {
    if (EqualsNoCase(ctx.args[j], "replace")) {
      replace = true;
    } else if (EqualsNoCase(ctx.args[j], "db") && j + 1 < ctx.args.size()) {
      int64_t db;
      if (!ParseInt64(ctx.args[j + 1], &db)) {
        ctx.reply->Error(kErrNotInteger);
        co_return;
      }
      if (db < INT32_MIN || db > INT32_MAX) {
        ctx.reply->Error(kErrNotInt32);
        co_return;
      }
      if (db < 0 || db >= DbMap::Count()) {
        ctx.reply->Error(kErrDbIndexRange);
        co_return;
      }
      dst = DbKey(DbMap::Physical(static_cast<int>(db)), ClientKey(ctx.args[2]));
      other_db = db != 0;
      ++j;
    } else {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
  }
  if (DbMap::ClusterMode() && other_db) {
    ctx.reply->Error("ERR Copying to another database is not allowed in cluster mode");
    co_return;
  }
  if (src == dst) {
    ctx.reply->Error("ERR source and destination objects are the same");
    co_return;
  }
  KeyPlan plan(ctx, std::vector<std::string_view>{src, dst});
  KeyCopy value;
  std::string error;
  bool copied = false;
  co_await plan.Lock();
  co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
    co_await ReadKeyCopy(st, src, ctx.now_ms, &value, &error);
  });
  if (error.empty() && value.exists) {
    co_await plan.Run(plan.shard_of(1), [&](Store& st) -> Task {
      const bool dst_exists = st.Lookup(dst, ctx.now_ms).exists;
      if (!replace && dst_exists) co_return;
      copied = co_await WriteKeyCopy(st, dst, value, &error);
      if (copied) NotifyKeyWritten(dst, dst_exists, "copy_to");
    });
  }
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else {
    ctx.reply->Integer(copied ? 1 : 0);
  }
}

const CommandSpec kCopyCommands[] = {
    {"copy", -3, kCmdWrite | kCmdDenyOom, 1, 2, 1, &Copy, "@keyspace @write @slow", "generic",
     "Copies the value of a key to a new key.", "6.2.0"},
};

}  // namespace

std::span<const CommandSpec> CopyCommands() { return kCopyCommands; }

}  // namespace lavik
