// SORT and SORT_RO (Redis 7.0 sort.c semantics): sort the elements of a list, set or sorted set
// numerically or bytewise (ALPHA), by their own value or by a weight read through a BY pattern,
// reply them or the values GET patterns name, or STORE them as a list.
//
// Keys named by BY/GET patterns are known only once the source is read, and they may live on
// any worker. Redis runs SORT atomically, so when a pattern reads keys (BY or GET with a '*';
// not "#", not a BY without '*' which means "do not sort") the command locks every shard
// (KeyPlan::CoverAllShards): the simplest correct choice, at the price of serialising against
// every other multi-shard command while it runs. Without such a pattern only the source (and
// the STORE destination) are locked.
//
// Known differences: a set sorted BY a constant ("BY nosort", no STORE) comes out in Lavik's
// stored order (member hash) where Redis uses its encoding's order (neither is specified);
// ALPHA compares bytes, as Redis does under the C/C.UTF-8 collation.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "commands/collection_access.h"
#include "commands/families.h"
#include "commands/list_access.h"
#include "commands/multi_shard.h"
#include "commands/zset_common.h"
#include "protocol/errors.h"

namespace lavik {
namespace {

constexpr std::string_view kErrSortScore = "ERR One or more scores can't be converted into double";

// A BY or GET pattern, split once: "#" (the element itself), a pattern without '*' (names no
// key) or prefix '*' postfix ["->" field] (the key's string value, or that field of its hash).
struct SortPattern {
  enum class Kind { kSelf, kConstant, kKey };
  Kind kind = Kind::kConstant;
  std::string_view prefix, postfix, field;

  // The stored key (base/db_key.h) the pattern names for `element` in physical database `db`.
  std::string KeyFor(std::string_view element, int db) const {
    std::string key;
    key.reserve(prefix.size() + element.size() + postfix.size());
    key.append(prefix).append(element).append(postfix);
    return DbKey(db, key);
  }
};

SortPattern ParsePattern(std::string_view p) {
  SortPattern out;
  if (p == "#") {
    out.kind = SortPattern::Kind::kSelf;
    return out;
  }
  const size_t star = p.find('*');
  if (star == std::string_view::npos) return out;
  out.kind = SortPattern::Kind::kKey;
  out.prefix = p.substr(0, star);
  out.postfix = p.substr(star + 1);
  // The first "->" after the '*' starts a hash field, unless nothing follows it.
  const size_t arrow = out.postfix.find("->");
  if (arrow != std::string_view::npos && arrow + 2 < out.postfix.size()) {
    out.field = out.postfix.substr(arrow + 2);
    out.postfix = out.postfix.substr(0, arrow);
  }
  return out;
}

struct SortArgs {
  bool desc = false;
  bool alpha = false;
  bool dontsort = false;  // some BY had no '*'
  bool has_by = false;    // the last BY has a '*': weights are read through `by`
  SortPattern by;
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  std::vector<SortPattern> gets;
  bool store = false;
  std::string_view store_key;

  bool ReadsPatternKeys() const {
    if (has_by && !dontsort) return true;
    for (const SortPattern& g : gets) {
      if (g.kind == SortPattern::Kind::kKey) return true;
    }
    return false;
  }
};

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA]
// [STORE destination]; SORT_RO has no STORE. Options may come in any order, the last wins.
bool ParseSortArgsOrReply(Context& ctx, bool readonly, SortArgs* a) {
  const auto& args = ctx.args;
  for (size_t j = 2; j < args.size(); ++j) {
    const std::string_view o = args[j];
    const size_t left = args.size() - j - 1;
    if (EqualsNoCase(o, "asc")) {
      a->desc = false;
    } else if (EqualsNoCase(o, "desc")) {
      a->desc = true;
    } else if (EqualsNoCase(o, "alpha")) {
      a->alpha = true;
    } else if (EqualsNoCase(o, "limit") && left >= 2) {
      if (!ParseInt64(args[j + 1], &a->limit_start) || !ParseInt64(args[j + 2], &a->limit_count)) {
        ctx.reply->Error(kErrNotInteger);
        return false;
      }
      j += 2;
    } else if (!readonly && EqualsNoCase(o, "store") && left >= 1) {
      a->store = true;
      a->store_key = args[++j];
    } else if (EqualsNoCase(o, "by") && left >= 1) {
      a->by = ParsePattern(args[++j]);
      a->has_by = a->by.kind == SortPattern::Kind::kKey;
      if (!a->has_by) a->dontsort = true;  // sticky: a later BY with '*' still does not sort
    } else if (EqualsNoCase(o, "get") && left >= 1) {
      a->gets.push_back(ParsePattern(args[++j]));
    } else {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
  }
  return true;
}

// One value a pattern names: the key's string value or its hash's field (Redis's
// lookupKeyByPattern). A missing key, a key of another type or a missing field is not found.
struct PatternRead {
  std::string key;
  std::string_view field;
  bool found = false;
  std::string value;
};

Task ReadPatternKey(Store& st, int64_t now_ms, PatternRead* r, std::string* error) {
  const KeyInfo info = st.LookupRead(r->key, now_ms);
  if (!info.exists) co_return;
  if (r->field.empty()) {
    if (info.type != ValueType::kString) co_return;
    ReadResult v = co_await st.ReadValue(r->key, info);
    if (v.status == ReadResult::Status::kError) *error = v.error;
    if (!v.ok()) co_return;
    r->found = true;
    r->value.assign(v.value.data(), v.value.size());
    co_return;
  }
  if (info.type != ValueType::kHash) co_return;
  CollectionRead h;
  if (!co_await ReadCollection(st, r->key, ValueType::kHash, now_ms, false, false, &h, error,
                               ReadScope::Members(std::span(&r->field, 1)))) {
    co_return;
  }
  const int64_t i = h.view.Find(r->field);
  if (i < 0) co_return;
  r->found = true;
  const std::string_view v = h.view.value(static_cast<uint32_t>(i));
  r->value.assign(v.data(), v.size());
}

// Reads every request on the shard of its key (under the plan's locks: every shard).
Task ReadPatternKeys(Context& ctx, KeyPlan& plan, std::vector<PatternRead>* reads,
                     std::string* error) {
  std::vector<std::vector<size_t>> by_shard(ctx.shards->size());
  for (size_t i = 0; i < reads->size(); ++i) {
    by_shard[ctx.shards->ShardOf((*reads)[i].key)].push_back(i);
  }
  for (int s = 0; s < ctx.shards->size() && error->empty(); ++s) {
    if (by_shard[s].empty()) continue;
    co_await plan.Run(s, [&, s](Store& st) -> Task {
      for (size_t i : by_shard[s]) {
        if (!error->empty()) break;
        co_await ReadPatternKey(st, ctx.now_ms, &(*reads)[i], error);
      }
    });
  }
}

enum class SourceType { kList, kSet, kZSet };

// The elements of the list, set or sorted set at `key` (copies; a missing key is an empty
// list) in its own order: list order, a set's stored order, a sorted set's score order when
// `score_order` (else its stored order). False with *error on WRONGTYPE or an I/O error.
TaskOf<bool> ReadSortSource(Store& st, std::string_view key, int64_t now_ms, bool score_order,
                            SourceType* type, std::vector<std::string>* out, std::string* error) {
  const KeyInfo info = st.LookupRead(key, now_ms);
  *type = SourceType::kList;
  if (!info.exists) co_return true;
  if (info.type == ValueType::kList) {
    ListRead l;
    if (!co_await ReadList(st, key, now_ms, false, false, &l, error)) co_return false;
    for (uint32_t i = 0; i < l.view.size(); ++i) out->emplace_back(l.view.element(i));
    co_return true;
  }
  if (info.type != ValueType::kSet && info.type != ValueType::kZSet) {
    *error = kErrWrongType;
    co_return false;
  }
  *type = info.type == ValueType::kSet ? SourceType::kSet : SourceType::kZSet;
  CollectionRead c;
  if (!co_await ReadCollection(st, key, info.type, now_ms, false, false, &c, error)) {
    co_return false;
  }
  if (*type == SourceType::kZSet && score_order) {
    for (const ZEntry& e : SortedEntries(c.view)) out->emplace_back(e.member);
  } else {
    for (uint32_t i = 0; i < c.view.size(); ++i) out->emplace_back(c.view.field(i));
  }
  co_return true;
}

// Redis's weight of a sort element: strtod over the whole C string (so leading blanks, "inf",
// hex floats and "" (= 0) pass), failing on trailing bytes, overflow or NaN.
bool ParseSortWeight(const std::string& s, double* out) {
  char* end = nullptr;
  errno = 0;
  *out = std::strtod(s.c_str(), &end);
  return *end == '\0' && errno != ERANGE && !std::isnan(*out);
}

struct SortItem {
  const std::string* element;
  double score = 0;
  const PatternRead* by = nullptr;  // ALPHA BY: the weight read (nullptr when not found)
};

// Sorts `items` as Redis's sortCompare orders them (DESC reverses the whole comparison).
// Redis 7.0 on glibc sorts with a merge sort, so equal items keep their source order.
void SortItems(std::vector<SortItem>* items, const SortArgs& a) {
  auto cmp = [&](const SortItem& x, const SortItem& y) -> int {
    if (!a.alpha) {
      if (x.score != y.score) return x.score < y.score ? -1 : 1;
      return x.element->compare(*y.element);
    }
    if (!a.has_by) return x.element->compare(*y.element);
    if (x.by == nullptr || y.by == nullptr) {
      if (x.by == y.by) return 0;
      return x.by == nullptr ? -1 : 1;
    }
    return x.by->value.compare(y.by->value);
  };
  std::stable_sort(items->begin(), items->end(), [&](const SortItem& x, const SortItem& y) {
    const int c = cmp(x, y);
    return a.desc ? c > 0 : c < 0;
  });
}

// Replaces `key` with a list of `elements` (deleting it when there are none), dropping any
// value, type and TTL it had.
Task StoreSortResult(Context& ctx, KeyPlan& plan, std::string_view key,
                     const std::vector<std::string_view>& elements, std::string* error) {
  co_await plan.Run(plan.shard_of(1), [&](Store& st) -> Task {
    if (elements.empty()) {
      bool existed = false;
      WriteResult w = co_await st.Delete(key, ctx.now_ms, &existed);
      if (!w.ok()) *error = w.error;
      if (w.ok() && existed) NotifyKeyspaceEvent(kNotifyGeneric, "del", key);
      co_return;
    }
    while (error->empty()) {
      ListRead cur;  // the new list replaces whatever is there (we hold the shard's lock)
      cur.info = st.Lookup(key, ctx.now_ms);
      cur.info.expire_ms = 0;
      bool applied = false;
      if (!co_await StoreListWindow(st, key, cur, ListScope::All(), elements, &applied, error)) {
        co_return;
      }
      if (applied) {
        NotifyKeyspaceEvent(kNotifyList, "sortstore", key);
        co_return;
      }
    }
  });
}

// What SORT replies: the selected values in order (GET values not found are nulls).
struct SortOutput {
  std::vector<const std::string*> values;  // nullptr: not found
  std::vector<PatternRead> gets;           // owns the GET values
};

// The sort itself, under the plan's locks: reads the source, weights and GET values.
Task RunSort(Context& ctx, KeyPlan& plan, SortArgs& a, std::vector<std::string>* elements,
             SortOutput* out, std::string* error) {
  SourceType type = SourceType::kList;
  co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
    co_await ReadSortSource(st, ctx.args[1], ctx.now_ms, a.dontsort, &type, elements, error);
  });
  if (!error->empty()) co_return;
  // A set has no order of its own: stored unsorted it would differ between replicas, so Redis
  // sorts it (ALPHA) when the result is stored.
  if (a.dontsort && type == SourceType::kSet && a.store) {
    a.dontsort = false;
    a.alpha = true;
    a.has_by = false;
  }
  const auto n = static_cast<int64_t>(elements->size());
  int64_t start = std::clamp<int64_t>(a.limit_start, 0, n);
  const int64_t count = std::clamp<int64_t>(a.limit_count, -1, n);
  int64_t end = count < 0 ? n - 1 : start + count - 1;
  if (start >= n) {
    start = n - 1;
    end = n - 2;
  }
  end = std::min(end, n - 1);

  std::vector<SortItem> items;
  items.reserve(elements->size());
  for (const std::string& e : *elements) items.push_back({&e});
  if (a.dontsort) {
    // Lists and sorted sets keep their order, read from the tail for DESC; sets as they are.
    if (a.desc && type != SourceType::kSet) std::reverse(items.begin(), items.end());
  } else {
    std::vector<PatternRead> weights;
    if (a.has_by) {
      weights.resize(items.size());
      for (size_t i = 0; i < items.size(); ++i) {
        weights[i].key = a.by.KeyFor(*items[i].element, ctx.db);
        weights[i].field = a.by.field;
      }
      co_await ReadPatternKeys(ctx, plan, &weights, error);
      if (!error->empty()) co_return;
    }
    bool bad_score = false;
    for (size_t i = 0; i < items.size(); ++i) {
      const PatternRead* w = a.has_by ? &weights[i] : nullptr;
      if (w != nullptr && !w->found) continue;  // a missing weight is 0 (ALPHA: sorts first)
      if (a.alpha) {
        items[i].by = w;
      } else if (!ParseSortWeight(w != nullptr ? w->value : *items[i].element, &items[i].score)) {
        bad_score = true;
      }
    }
    if (bad_score) {
      *error = kErrSortScore;
      co_return;
    }
    SortItems(&items, a);
  }

  for (int64_t j = start; j <= end; ++j) {
    const SortItem& it = items[static_cast<size_t>(j)];
    if (a.gets.empty()) out->values.push_back(it.element);
    for (const SortPattern& g : a.gets) {
      if (g.kind == SortPattern::Kind::kSelf) {
        out->values.push_back(it.element);
      } else if (g.kind == SortPattern::Kind::kConstant) {
        out->values.push_back(nullptr);
      } else {
        out->values.push_back(nullptr);  // filled in below from out->gets
        out->gets.push_back({g.KeyFor(*it.element, ctx.db), g.field, false, {}});
      }
    }
  }
  if (out->gets.empty()) co_return;
  co_await ReadPatternKeys(ctx, plan, &out->gets, error);
  size_t next = 0;
  for (size_t v = 0; v < out->values.size(); ++v) {
    const SortPattern& g = a.gets[v % a.gets.size()];
    if (g.kind != SortPattern::Kind::kKey) continue;
    const PatternRead& r = out->gets[next++];
    if (r.found) out->values[v] = &r.value;
  }
}

Task SortGeneric(Context& ctx, bool readonly) {
  SortArgs a;
  if (!ParseSortArgsOrReply(ctx, readonly, &a)) co_return;
  std::vector<std::string_view> keys{ctx.args[1]};
  if (a.store) keys.push_back(a.store_key);
  KeyPlan plan(ctx, std::move(keys));
  if (a.ReadsPatternKeys()) plan.CoverAllShards();
  std::vector<std::string> elements;
  SortOutput out;
  std::string error;
  co_await plan.Lock();
  co_await RunSort(ctx, plan, a, &elements, &out, &error);
  if (error.empty() && a.store) {
    static const std::string kEmpty;
    std::vector<std::string_view> list;
    list.reserve(out.values.size());
    for (const std::string* v : out.values) list.emplace_back(v != nullptr ? *v : kEmpty);
    co_await StoreSortResult(ctx, plan, a.store_key, list, &error);
  }
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else if (a.store) {
    ctx.reply->Integer(static_cast<int64_t>(out.values.size()));
  } else {
    ctx.reply->Array(out.values.size());
    for (const std::string* v : out.values) {
      if (v != nullptr) {
        ctx.reply->Bulk(*v);
      } else {
        ctx.reply->Null();
      }
    }
  }
}

Task Sort(Context& ctx) { co_await SortGeneric(ctx, false); }
Task SortRo(Context& ctx) { co_await SortGeneric(ctx, true); }

const CommandSpec kSortCommands[] = {
    {"sort", -2, kCmdWrite | kCmdDenyOom | kCmdMovableKeys, 1, 1, 1, &Sort,
     "@write @set @sortedset @list @slow @dangerous", "generic",
     "Sort the elements in a list, set or sorted set", "1.0.0"},
    {"sort_ro", -2, kCmdReadOnly | kCmdMovableKeys, 1, 1, 1, &SortRo,
     "@read @set @sortedset @list @slow @dangerous", "generic",
     "Sort the elements in a list, set or sorted set. Read-only variant of SORT.", "7.0.0"},
};

}  // namespace

std::span<const CommandSpec> SortCommands() { return kSortCommands; }

}  // namespace lavik
