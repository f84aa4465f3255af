#include "commands/typed_read.h"

#include "protocol/errors.h"

namespace lavik {

TaskOf<TypedRead> ReadTypedRecord(Store& st, std::string_view key, ValueType type, int64_t now_ms,
                                  bool count_stats, KeyInfo* info, ReadResult* record,
                                  std::string* error) {
  *info = count_stats ? st.LookupRead(key, now_ms) : st.Lookup(key, now_ms);
  if (!info->exists) co_return TypedRead::kMissing;
  if (info->type != type) {
    *error = kErrWrongType;
    co_return TypedRead::kError;
  }
  *record = co_await st.ReadValue(key, *info);
  if (record->status == ReadResult::Status::kError) {
    *error = record->error;
    co_return TypedRead::kError;
  }
  if (!record->ok()) {
    *info = KeyInfo{};  // gone while we read
    co_return TypedRead::kMissing;
  }
  co_return TypedRead::kFound;
}

}  // namespace lavik
