#include "commands/list_ops.h"

#include <algorithm>

#include "base/ascii.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "commands/list_access.h"
#include "notify/keyspace_events.h"
#include "protocol/errors.h"

namespace lavik {

bool ParseSideOrReply(Context& ctx, std::string_view arg, bool* left) {
  if (EqualsNoCase(arg, "left")) {
    *left = true;
  } else if (EqualsNoCase(arg, "right")) {
    *left = false;
  } else {
    ctx.reply->Error(kErrSyntax);
    return false;
  }
  return true;
}

Task MoveOnce(Context& ctx, KeyPlan& plan, bool from_left, bool to_left, MoveResult* out) {
  const std::string_view src = plan.keys()[0], dst = plan.keys()[1];
  ListRead from;
  co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
    co_await ReadList(st, src, ctx.now_ms, false, false, &from, &out->error, ListScope::Count());
  });
  if (!out->error.empty() || !from.info.exists) co_return;
  co_await plan.On(plan.shard_of(1), [&](Store& st) {
    KeyInfo info = st.Lookup(dst, ctx.now_ms);
    if (info.exists && info.type != ValueType::kList) out->error = kErrWrongType;
  });
  if (!out->error.empty()) co_return;
  // The plan's locks keep other writers out from here on. Popping and pushing touch only the
  // edge chunks of a chunked list (list_chunks.h); a one-record list rotated onto itself is
  // still a single rewrite.
  const bool rotate_whole = src == dst && !from.chunked;
  const ListScope pop_scope = rotate_whole ? ListScope::All()
                              : from_left  ? ListScope::Head(1)
                                           : ListScope::Tail(1);
  co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
    co_await RewriteList(
        st, src, ctx.now_ms, pop_scope,
        [&](const ListWindow&, bool exists, std::vector<std::string_view>* e) {
          out->moved = exists;
          if (!exists) return Rewrite::kUnchanged;
          std::vector<std::string> popped;
          PopElements(e, 1, from_left, &popped);
          out->element = std::move(popped[0]);
          if (rotate_whole) {
            const std::string_view one[] = {out->element};
            PushElements(e, one, to_left);
          }
          return Rewrite::kWrite;
        },
        &out->error);
  });
  if (!out->error.empty() || !out->moved) {
    out->moved = false;
    co_return;
  }
  out->dst_shard = plan.shard_of(1);
  // Redis's order: the push, then the pop, then "del" of an emptied source — all reported from
  // the destination's worker, after the push, so they arrive in that order.
  auto notify = [&]() {
    NotifyKeyspaceEvent(kNotifyList, to_left ? "lpush" : "rpush", dst);
    NotifyKeyspaceEvent(kNotifyList, from_left ? "lpop" : "rpop", src);
    if (from.size == 1 && src != dst) NotifyKeyspaceEvent(kNotifyGeneric, "del", src);
  };
  if (rotate_whole) {
    notify();
    co_return;
  }
  co_await plan.Run(plan.shard_of(1), [&](Store& st) -> Task {
    const std::string_view one[] = {out->element};
    co_await RewriteList(
        st, dst, ctx.now_ms, to_left ? ListScope::Head(1) : ListScope::Tail(1),
        [&](const ListWindow&, bool, std::vector<std::string_view>* d) {
          PushElements(d, one, to_left);
          return Rewrite::kWrite;
        },
        &out->error);
    if (out->error.empty()) notify();
  });
}

bool ParseMPopArgsOrReply(Context& ctx, size_t numkeys_at, MPopArgs* a) {
  int64_t numkeys;
  if (!ParseInt64(ctx.args[numkeys_at], &numkeys) || numkeys <= 0) {
    ctx.reply->Error("ERR numkeys should be greater than 0");
    return false;
  }
  const size_t where = numkeys_at + 1 + static_cast<size_t>(numkeys);
  if (numkeys > static_cast<int64_t>(ctx.args.size()) || where >= ctx.args.size()) {
    ctx.reply->Error(kErrSyntax);
    return false;
  }
  if (!ParseSideOrReply(ctx, ctx.args[where], &a->left)) return false;
  bool counted = false;
  for (size_t j = where + 1; j < ctx.args.size(); ++j) {
    if (!counted && EqualsNoCase(ctx.args[j], "count") && j + 1 < ctx.args.size()) {
      ++j;
      if (!ParseInt64(ctx.args[j], &a->count) || a->count <= 0) {
        ctx.reply->Error("ERR count should be greater than 0");
        return false;
      }
      counted = true;
    } else {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
  }
  a->numkeys = static_cast<size_t>(numkeys);
  return true;
}

Task MPopOnce(Context& ctx, KeyPlan& plan, const MPopArgs& a, PopResult* out) {
  for (size_t i = 0; i < plan.keys().size(); ++i) {
    const std::string_view key = plan.keys()[i];
    bool popped = false;
    co_await plan.Run(plan.shard_of(i), [&](Store& st) -> Task {
      co_await RewriteList(
          st, key, ctx.now_ms, a.left ? ListScope::Head(a.count) : ListScope::Tail(a.count),
          [&](const ListWindow&, bool exists, std::vector<std::string_view>* e) {
            out->elements.clear();
            if (!exists) return Rewrite::kUnchanged;
            PopElements(e, static_cast<uint64_t>(a.count), a.left, &out->elements);
            return Rewrite::kWrite;
          },
          &out->error, a.left ? "lpop" : "rpop");
      popped = out->error.empty() && !out->elements.empty();
    });
    if (!out->error.empty()) co_return;
    if (popped) {
      out->key.assign(key);
      co_return;
    }
  }
}

void ReplyMPop(Context& ctx, const PopResult& r) {
  if (!r.error.empty()) {
    ctx.reply->Error(r.error);
  } else if (r.key.empty() && r.elements.empty()) {
    ctx.reply->NullArray();
  } else {
    ctx.reply->Array(2);
    ctx.reply->Bulk(ClientKey(r.key));
    ctx.reply->Array(r.elements.size());
    for (const std::string& s : r.elements) ctx.reply->Bulk(s);
  }
}

}  // namespace lavik
