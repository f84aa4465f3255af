#include "commands/list_access.h"

namespace lavik {

TaskOf<bool> ReadList(Store& st, std::string_view key, int64_t now_ms, bool count_stats, bool copy,
                      ListRead* out, std::string* error) {
  out->info = count_stats ? st.LookupRead(key, now_ms) : st.Lookup(key, now_ms);
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
  if (copy) {
    out->copy.assign(bytes.data(), bytes.size());
    bytes = out->copy;
  }
  if (!out->view.Parse(bytes) || out->view.empty()) {
    *error = "ERR data corruption: the list record of this key does not decode";
    co_return false;
  }
  co_return true;
}

}  // namespace lavik
