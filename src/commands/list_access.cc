#include "commands/list_access.h"

#include "commands/list_chunks.h"

namespace lavik {

TaskOf<bool> ReadList(Store& st, std::string_view key, int64_t now_ms, bool count_stats, bool copy,
                      ListRead* out, std::string* error, ListScope scope) {
  uint64_t retried_loc = 0;
  while (true) {
    out->info = count_stats ? st.LookupRead(key, now_ms) : st.Lookup(key, now_ms);
    count_stats = false;  // a retry is the same command: count it once
    if (!out->info.exists) co_return true;
    if (out->info.type != ValueType::kList) {
      *error = kErrWrongType;
      co_return false;
    }
    out->record = co_await st.ReadValue(key, out->info);
    if (out->record.status == ReadResult::Status::kError) {
      *error = out->record.error;
      co_return false;
    }
    if (!out->record.ok()) {
      out->info = KeyInfo{};  // gone while we read
      co_return true;
    }
    std::string_view bytes = out->record.value;
    if (IsChunkRoot(bytes)) {
      ListChunkRead r = co_await ReadListChunks(st, scope, out, error);
      if (r == ListChunkRead::kError) co_return false;
      if (r == ListChunkRead::kRetry) {
        // A writer replaced a chunk after we read the root: read the root again. The same root
        // twice means the chunk is really gone.
        if (out->info.loc == retried_loc) {
          *error = kErrListCorrupt;
          co_return false;
        }
        retried_loc = out->info.loc;
        continue;
      }
      co_return true;
    }
    if (copy) {
      out->copy.assign(bytes.data(), bytes.size());
      bytes = out->copy;
    }
    if (!out->view.Parse(bytes) || out->view.empty()) {
      *error = kErrListCorrupt;
      co_return false;
    }
    out->size = out->view.size();
    out->base = 0;
    co_return true;
  }
}

}  // namespace lavik
