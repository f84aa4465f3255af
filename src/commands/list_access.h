// Reading and rewriting a list key (storage/list_record.h) on the worker that owns it: the list
// counterpart of collection_access.h, shared by list_family.cc and list_blocking.cc.
//
// Thread safety: the helpers run on the worker that owns the key, like the handlers calling them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "commands/collection_access.h"
#include "storage/list_record.h"

namespace lavik {

struct ListRead {
  KeyInfo info;       // info.exists false: no such key (view is then empty)
  ReadResult record;  // the bytes, valid until the next call on the Store
  std::string copy;   // the bytes, when the caller asked for a copy
  ListView view;      // over `copy` if copied, else over `record`
};

// Reads the list at `key` (or learns it is missing): false with *error on WRONGTYPE, an I/O
// error or a damaged encoding. Never touches a reply.
TaskOf<bool> ReadList(Store& st, std::string_view key, int64_t now_ms, bool count_stats, bool copy,
                      ListRead* out, std::string* error);

// Read-modify-write of the list at `key`, retried if another write landed while it read; the TTL
// stays. `modify(view, exists, &elements)` gets the current elements in *elements and edits
// them; it returns kError (it replied itself), kUnchanged or kWrite (an empty result deletes
// the key).
template <typename Modify>
TaskOf<bool> RewriteList(Store& st, std::string_view key, int64_t now_ms, Modify modify,
                         std::string* error) {
  while (true) {
    ListRead cur;
    if (!co_await ReadList(st, key, now_ms, false, true, &cur, error)) co_return false;
    std::vector<std::string_view> elements = cur.view.Elements();
    Rewrite what = modify(cur.view, cur.info.exists, &elements);
    if (what == Rewrite::kError) co_return false;
    if (what == Rewrite::kUnchanged) co_return true;
    bool applied = false;
    if (!co_await StoreCollection(st, key, ValueType::kList, cur.info.exists ? cur.info.loc : 0,
                                  EncodeList(elements), cur.info.expire_ms, &applied, error)) {
      co_return false;
    }
    if (applied) co_return true;
  }
}

}  // namespace lavik
