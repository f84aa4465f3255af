// HyperLogLog commands: PFADD, PFCOUNT, PFMERGE (doc/hyperloglog.md).
//
// An HLL is a string value in Redis 7.0's own bytes (base/hyperloglog.h), so GET, SET, DUMP
// and copies between Lavik and redis-server see the same thing. As in Redis, PFCOUNT of one
// key writes the recomputed cardinality back into the value's header when the cached one is
// stale, keeping the key's TTL. PFCOUNT of several keys and PFMERGE read their keys under the
// locks of every shard involved, so they see one moment of all of them, and PFMERGE's write
// happens before any of those keys can change.
#include <atomic>
#include <string>
#include <vector>

#include "base/hyperloglog.h"
#include "commands/families.h"
#include "commands/multi_shard.h"
#include "config/live_settings.h"
#include "notify/keyspace_events.h"
#include "protocol/errors.h"
#include "storage/store.h"

namespace lavik {
namespace {

// One key as an HLL command sees it: missing, an HLL string (copied), or the error it gives.
struct HllKey {
  KeyInfo info;
  std::string value;
  std::string error;  // WRONGTYPE (either text) or a read failure
};

// Reads `key` into *out. False with out->error set when the key is not an HLL or could not be
// read; true otherwise (out->info.exists says whether the key is there).
TaskOf<bool> ReadHll(Store& st, std::string_view key, int64_t now_ms, bool count_stats,
                     HllKey* out) {
  out->info = count_stats ? st.LookupRead(key, now_ms) : st.Lookup(key, now_ms);
  out->value.clear();
  if (!out->info.exists) co_return true;
  if (out->info.type != ValueType::kString) {
    out->error = kErrWrongType;
    co_return false;
  }
  ReadResult r = co_await st.ReadValue(key, out->info);
  if (r.status == ReadResult::Status::kError) {
    out->error = r.error;
    co_return false;
  }
  if (!r.ok()) {
    out->info.exists = false;  // gone while we read
    co_return true;
  }
  if (!hll::IsHll(r.value)) {
    out->error = kErrNotHll;
    co_return false;
  }
  out->value.assign(r.value.data(), r.value.size());
  co_return true;
}

// Reads every key of `plan` on its shard (the caller holds the plan's locks).
Task ReadAll(Context& ctx, KeyPlan& plan, bool count_stats, std::vector<HllKey>* keys) {
  keys->resize(plan.keys().size());
  for (int s : plan.shards()) {
    co_await plan.Run(s, [&, s](Store& st) -> Task {
      for (size_t i = 0; i < plan.keys().size(); ++i) {
        if (plan.shard_of(i) == s) {
          co_await ReadHll(st, plan.keys()[i], ctx.now_ms, count_stats, &(*keys)[i]);
        }
      }
    });
  }
}

// The register maximum over `keys` in argument order, as Redis checks them: the first key
// that is not an HLL or is corrupt decides the error. False after replying.
bool MergeKeysOrReply(Context& ctx, const std::vector<HllKey>& keys, uint8_t* max,
                      bool* any_dense) {
  for (const HllKey& k : keys) {
    if (!k.error.empty()) {
      ctx.reply->Error(k.error);
      return false;
    }
    if (!k.info.exists) continue;  // a missing key is an empty HLL
    if (hll::Encoding(k.value) == hll::kEncodingDense) *any_dense = true;
    if (!hll::MergeInto(k.value, max)) {
      ctx.reply->Error(kErrHllCorrupt);
      return false;
    }
  }
  return true;
}

Task PfAdd(Context& ctx) {
  Store& st = *ctx.store;
  const std::string_view key = ctx.args[1];
  const uint64_t max_bytes = static_cast<uint64_t>(LiveSettings::Get(Live().hll_sparse_max_bytes));
  while (true) {
    HllKey k;
    if (!co_await ReadHll(st, key, ctx.now_ms, false, &k)) {
      ctx.reply->Error(k.error);
      co_return;
    }
    bool updated = !k.info.exists;  // creating the key is an update, even with no elements
    bool corrupt = false;
    if (!k.info.exists) k.value = hll::NewSparse();
    for (size_t i = 2; i < ctx.args.size() && !corrupt; ++i) {
      hll::SetResult r = hll::Add(&k.value, ctx.args[i], max_bytes);
      if (r == hll::SetResult::kChanged) updated = true;
      corrupt = r == hll::SetResult::kCorrupt;
    }
    // On a corrupt payload Redis keeps what the elements before it changed (in place, cache
    // untouched) and replies the error: the value stays byte-identical to redis-server's.
    if (!updated) {
      if (corrupt) {
        ctx.reply->Error(kErrHllCorrupt);
      } else {
        ctx.reply->Integer(0);
      }
      co_return;
    }
    if (!corrupt) hll::InvalidateCache(&k.value);
    bool applied = false;
    WriteResult w = co_await st.WriteIf(key, k.info.exists ? k.info.loc : 0, ValueType::kString,
                                        k.value, k.info.expire_ms, &applied);
    if (!w.ok()) {
      ctx.reply->Error(w.error);
      co_return;
    }
    if (applied) {
      if (corrupt) {
        ctx.reply->Error(kErrHllCorrupt);
      } else {
        NotifyKeyspaceEvent(kNotifyString, "pfadd", key);
        ctx.reply->Integer(1);
      }
      co_return;
    }
  }
}

// PFCOUNT key: the cached cardinality, or a fresh estimate that is then cached in the value.
Task PfCountOne(Context& ctx) {
  Store& st = *ctx.store;
  const std::string_view key = ctx.args[1];
  bool first_try = true;
  while (true) {
    HllKey k;
    if (!co_await ReadHll(st, key, ctx.now_ms, first_try, &k)) {
      ctx.reply->Error(k.error);
      co_return;
    }
    first_try = false;
    if (!k.info.exists) {
      ctx.reply->Integer(0);
      co_return;
    }
    uint64_t card;
    if (hll::CachedCardinality(k.value, &card)) {
      ctx.reply->Integer(static_cast<int64_t>(card));
      co_return;
    }
    if (!hll::Count(k.value, &card)) {
      ctx.reply->Error(kErrHllCorrupt);
      co_return;
    }
    hll::SetCachedCardinality(&k.value, card);
    bool applied = false;
    WriteResult w = co_await st.WriteIf(key, k.info.loc, ValueType::kString, k.value,
                                        k.info.expire_ms, &applied);
    if (!w.ok()) {
      ctx.reply->Error(w.error);
      co_return;
    }
    if (applied) {
      ctx.reply->Integer(static_cast<int64_t>(card));
      co_return;
    }
  }
}

// PFCOUNT key key...: the estimate of the union; no key is modified.
Task PfCount(Context& ctx) {
  if (ctx.args.size() == 2) {
    co_await PfCountOne(ctx);
    co_return;
  }
  KeyPlan plan(ctx, ctx.args.subspan(1));
  std::vector<HllKey> keys;
  co_await plan.Lock();
  co_await ReadAll(ctx, plan, true, &keys);
  co_await plan.Unlock();
  std::vector<uint8_t> max(hll::kRegisters, 0);
  bool any_dense = false;
  if (!MergeKeysOrReply(ctx, keys, max.data(), &any_dense)) co_return;
  ctx.reply->Integer(static_cast<int64_t>(hll::CountRegisters(max.data())));
}

// PFMERGE dest src...: dest (itself one of the inputs) gets the register maximum; it turns
// dense if any input is dense, and keeps its TTL.
Task PfMerge(Context& ctx) {
  KeyPlan plan(ctx, ctx.args.subspan(1));
  std::vector<HllKey> keys;
  std::vector<uint8_t> max(hll::kRegisters, 0);
  bool any_dense = false;
  bool ok = false;
  std::string error;
  co_await plan.Lock();
  co_await ReadAll(ctx, plan, false, &keys);
  if (MergeKeysOrReply(ctx, keys, max.data(), &any_dense)) {
    HllKey& dest = keys[0];
    if (!dest.info.exists) dest.value = hll::NewSparse();
    if (any_dense && !hll::SparseToDense(&dest.value)) {
      ctx.reply->Error(kErrHllCorrupt);
    } else {
      hll::ApplyMax(&dest.value, max.data(),
                    static_cast<uint64_t>(LiveSettings::Get(Live().hll_sparse_max_bytes)));
      hll::InvalidateCache(&dest.value);
      const int64_t expire = dest.info.exists ? dest.info.expire_ms : 0;
      co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
        WriteResult w = co_await st.Write(plan.keys()[0], ValueType::kString, dest.value, expire);
        if (!w.ok()) error = w.error;
        if (w.ok()) NotifyKeyspaceEvent(kNotifyString, "pfadd", plan.keys()[0]);
      });
      ok = true;
    }
  }
  co_await plan.Unlock();
  if (!ok) co_return;  // replied above
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else {
    ctx.reply->Ok();
  }
}

const CommandSpec kHyperLogLogCommands[] = {
    {"pfadd", -2, kCmdWrite | kCmdDenyOom | kCmdFast, 1, 1, 1, &PfAdd, "@write @hyperloglog @fast",
     "hyperloglog", "Adds the specified elements to the specified HyperLogLog.", "2.8.9"},
    {"pfcount", -2, kCmdReadOnly, 1, -1, 1, &PfCount, "@read @hyperloglog @slow", "hyperloglog",
     "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
     "2.8.9"},
    {"pfmerge", -2, kCmdWrite | kCmdDenyOom, 1, -1, 1, &PfMerge, "@write @hyperloglog @slow",
     "hyperloglog", "Merge N different HyperLogLogs into a single one.", "2.8.9"},
};

}  // namespace

std::span<const CommandSpec> HyperLogLogCommands() { return kHyperLogLogCommands; }

}  // namespace lavik
