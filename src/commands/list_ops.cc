#include "commands/list_ops.h"

#include <algorithm>

#include "base/ascii.h"
#include "base/numbers.h"
#include "commands/list_access.h"
#include "protocol/errors.h"

namespace lavik {

bool ResolveIndex(uint32_t size, int64_t index, uint32_t* out) {
  if (index < 0) index += size;
  if (index < 0 || index >= static_cast<int64_t>(size)) return false;
  *out = static_cast<uint32_t>(index);
  return true;
}

bool ClampRange(uint32_t size, int64_t start, int64_t stop, uint32_t* from, uint32_t* to) {
  const auto n = static_cast<int64_t>(size);
  if (start < 0) start = std::max<int64_t>(start + n, 0);
  if (stop < 0) stop += n;
  if (start > stop || start >= n) return false;
  if (stop >= n) stop = n - 1;
  *from = static_cast<uint32_t>(start);
  *to = static_cast<uint32_t>(stop);
  return true;
}

void PushElements(std::vector<std::string_view>* e, std::span<const std::string_view> add,
                  bool left) {
  if (!left) {
    e->insert(e->end(), add.begin(), add.end());
    return;
  }
  e->insert(e->begin(), add.rbegin(), add.rend());
}

void PopElements(std::vector<std::string_view>* e, uint64_t count, bool left,
                 std::vector<std::string>* out) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(count, e->size()));
  if (left) {
    for (size_t i = 0; i < n; ++i) out->emplace_back((*e)[i]);
    e->erase(e->begin(), e->begin() + static_cast<std::ptrdiff_t>(n));
  } else {
    for (size_t i = 0; i < n; ++i) out->emplace_back((*e)[e->size() - 1 - i]);
    e->resize(e->size() - n);
  }
}

int64_t RemoveElements(std::vector<std::string_view>* e, std::string_view element, int64_t count) {
  // |INT64_MIN| does not fit: any count that large means "all" in practice.
  const uint64_t limit = count == 0  ? UINT64_MAX
                         : count < 0 ? (count == INT64_MIN ? UINT64_MAX : uint64_t(-count))
                                     : uint64_t(count);
  uint64_t removed = 0;
  if (count >= 0) {
    auto keep = e->begin();
    for (auto it = e->begin(); it != e->end(); ++it) {
      if (removed < limit && *it == element) {
        ++removed;
      } else {
        *keep++ = *it;
      }
    }
    e->erase(keep, e->end());
  } else {
    std::vector<std::string_view> kept;
    kept.reserve(e->size());
    for (auto it = e->rbegin(); it != e->rend(); ++it) {
      if (removed < limit && *it == element) {
        ++removed;
      } else {
        kept.push_back(*it);
      }
    }
    e->assign(kept.rbegin(), kept.rend());
  }
  return static_cast<int64_t>(removed);
}

std::vector<int64_t> FindPositions(const ListView& v, std::string_view element, int64_t rank,
                                   int64_t count, int64_t maxlen) {
  std::vector<int64_t> out;
  const int64_t n = v.size();
  // A rank of INT64_MIN has no positive counterpart; it can never be reached anyway.
  const uint64_t skip =
      rank > 0 ? uint64_t(rank) - 1 : (rank == INT64_MIN ? UINT64_MAX : uint64_t(-rank) - 1);
  uint64_t matches = 0;
  for (int64_t k = 0; k < n && (maxlen == 0 || k < maxlen); ++k) {
    const int64_t i = rank > 0 ? k : n - 1 - k;
    if (v.element(static_cast<uint32_t>(i)) != element) continue;
    if (matches++ < skip) continue;
    out.push_back(i);
    if (count != 0 && static_cast<int64_t>(out.size()) >= count) break;
  }
  return out;
}

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
  if (rotate_whole) co_return;
  co_await plan.Run(plan.shard_of(1), [&](Store& st) -> Task {
    const std::string_view one[] = {out->element};
    co_await RewriteList(
        st, dst, ctx.now_ms, to_left ? ListScope::Head(1) : ListScope::Tail(1),
        [&](const ListWindow&, bool, std::vector<std::string_view>* d) {
          PushElements(d, one, to_left);
          return Rewrite::kWrite;
        },
        &out->error);
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
          &out->error);
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
    ctx.reply->Bulk(r.key);
    ctx.reply->Array(r.elements.size());
    for (const std::string& s : r.elements) ctx.reply->Bulk(s);
  }
}

}  // namespace lavik
