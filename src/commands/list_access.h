// Reading and rewriting a list key on the worker that owns it: the list counterpart of
// collection_access.h, shared by list_family.cc, list_ops.cc and list_blocking.cc.
//
// A list is either one record (storage/list_record.h) or, once large, a chunk root plus chunks
// in list order (commands/list_chunks.h, doc/collections.md "Lists"). Callers name the part of
// the list they need (ListScope); for a chunked list only the chunks covering it are read, and a
// rewrite writes back only the chunks whose elements changed. A one-record list is always read
// whole and its scope ignored, so a handler sees the same thing either way: a window of
// consecutive elements, the list index of its first element, and the length of the whole list.
//
// Thread safety: the helpers run on the worker that owns the key, like the handlers calling them.
//
// ReadList and StoreListWindow, which must know both layouts, are defined in list_chunks.cc;
// this header stays below list_chunks.h (it never includes it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "commands/collection_access.h"
#include "notify/keyspace_events.h"
#include "storage/chunked.h"
#include "storage/list_record.h"

namespace lavik {

// The part of a list a command reads or rewrites. Indices follow Redis (negative: from the tail).
struct ListScope {
  enum class Kind : uint8_t {
    kAll,    // every element (O(n))
    kCount,  // no element: the length only
    kRange,  // the elements [start, stop] (clamped as LRANGE does)
    kTrim,   // as kRange, and a rewrite drops everything outside it (LTRIM)
  };
  Kind kind = Kind::kAll;
  int64_t start = 0;
  int64_t stop = -1;

  static ListScope All() { return {}; }
  static ListScope Count() { return {Kind::kCount, 0, -1}; }
  static ListScope Range(int64_t start, int64_t stop) { return {Kind::kRange, start, stop}; }
  static ListScope Index(int64_t i) { return Range(i, i); }
  static ListScope Trim(int64_t start, int64_t stop) { return {Kind::kTrim, start, stop}; }
  // The first / last `n` elements (at least one: a push needs the edge chunk it lands in).
  static ListScope Head(int64_t n) { return Range(0, n > 1 ? n - 1 : 0); }
  static ListScope Tail(int64_t n) { return Range(n > 1 ? -n : -1, -1); }
};

struct ListRead {
  KeyInfo info;       // info.exists false: no such key (view is then empty)
  ReadResult record;  // the bytes, valid until the next call on the Store
  std::string copy;   // the bytes, when the caller asked for a copy (or a window of chunks)
  ListView view;      // the window: over `copy` if copied, else over `record` or a chunk
  uint64_t size = 0;  // elements in the whole list
  uint64_t base = 0;  // list index of view.element(0)
  // Chunked lists: the root and the chunks [first_chunk, end_chunk) the window covers.
  bool chunked = false;
  ChunkRoot root;
  size_t first_chunk = 0;
  size_t end_chunk = 0;
  std::vector<std::string> chunk_bytes;  // their bytes, in order
};

// Reads the list at `key` (or learns it is missing): false with *error on WRONGTYPE, an I/O
// error or a damaged encoding. Never touches a reply. `copy`: keep the bytes past later Store
// calls; `count_stats`: count a keyspace hit or miss.
TaskOf<bool> ReadList(Store& st, std::string_view key, int64_t now_ms, bool count_stats, bool copy,
                      ListRead* out, std::string* error, ListScope scope = {});

// Writes `elements` — the new contents of the window `cur` read with `scope` — if the key is
// still where `cur` found it, keeping its TTL (list_chunks.cc). *applied false: it changed
// meanwhile; read again.
TaskOf<bool> StoreListWindow(Store& st, std::string_view key, const ListRead& cur,
                             const ListScope& scope, const std::vector<std::string_view>& elements,
                             bool* applied, std::string* error);

// What a rewrite's modify callback learns besides the window's elements.
struct ListWindow {
  uint64_t size = 0;  // elements in the whole list before the edit (0: no such key)
  uint64_t base = 0;  // list index of the window's first element
  const ListView* view = nullptr;
};

// Read-modify-write of the window `scope` of the list at `key`, retried if another write landed
// while it read; the TTL stays. `modify(window, exists, &elements)` gets the window's elements
// in *elements and edits them; it returns kError (it replied itself), kUnchanged or kWrite (a
// list left empty is deleted). Once written, the keyspace event `event` is reported (unless
// empty: the caller reports), then "del" if the list was left empty.
template <typename Modify>
TaskOf<bool> RewriteList(Store& st, std::string_view key, int64_t now_ms, ListScope scope,
                         Modify modify, std::string* error, std::string_view event = {}) {
  while (true) {
    ListRead cur;
    if (!co_await ReadList(st, key, now_ms, false, true, &cur, error, scope)) co_return false;
    std::vector<std::string_view> elements = cur.view.Elements();
    const size_t window_before = elements.size();
    const ListWindow window{cur.size, cur.base, &cur.view};
    Rewrite what = modify(window, cur.info.exists, &elements);
    if (what == Rewrite::kError) co_return false;
    if (what == Rewrite::kUnchanged) co_return true;
    bool applied = false;
    if (!co_await StoreListWindow(st, key, cur, scope, elements, &applied, error)) {
      co_return false;
    }
    if (applied) {
      if (!event.empty()) {
        NotifyKeyspaceEvent(kNotifyList, event, key);
        if (cur.size - window_before + elements.size() == 0) {
          NotifyKeyspaceEvent(kNotifyGeneric, "del", key);
        }
      }
      co_return true;
    }
  }
}

// The whole-list form: `modify(view, exists, &elements)` sees every element (O(n) for a
// chunked list, though only the chunks whose elements changed are written back).
template <typename Modify>
TaskOf<bool> RewriteList(Store& st, std::string_view key, int64_t now_ms, Modify modify,
                         std::string* error, std::string_view event = {}) {
  co_return co_await RewriteList(
      st, key, now_ms, ListScope::All(),
      [&](const ListWindow& w, bool exists, std::vector<std::string_view>* e) {
        return modify(*w.view, exists, e);
      },
      error, event);
}

// RewriteList of ctx.args[1] by a handler running on its worker, reporting `event`; replies the
// error if it fails (as RewriteCollectionOrReply), so the caller replies only on success.
template <typename Modify>
TaskOf<bool> RewriteListOrReply(Context& ctx, std::string_view event, ListScope scope,
                                Modify modify) {
  std::string error;
  const bool ok = co_await RewriteList(*ctx.store, ctx.args[1], ctx.now_ms, std::move(scope),
                                       std::move(modify), &error, event);
  if (!ok) ctx.reply->Error(error);
  co_return ok;
}

// The whole-list form.
template <typename Modify>
TaskOf<bool> RewriteListOrReply(Context& ctx, std::string_view event, Modify modify) {
  co_return co_await RewriteListOrReply(
      ctx, event, ListScope::All(),
      [&](const ListWindow& w, bool exists, std::vector<std::string_view>* e) {
        return modify(*w.view, exists, e);
      });
}

}  // namespace lavik
