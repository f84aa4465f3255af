// The first step every typed read of a key takes (collections, lists, streams): look the key up,
// check its type, read its record. What the record holds (one record or a chunk root) is the
// caller's to decode.
//
// Thread safety: runs on the worker that owns the key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/task_of.h"
#include "storage/store.h"

namespace lavik {

enum class TypedRead {
  kMissing,  // no such key, or it went while the read was in flight (*info is then cleared)
  kFound,    // *record holds its bytes, valid until the next call on the Store
  kError,    // *error: WRONGTYPE or an I/O error
};

// Looks `key` up (counting a keyspace hit or miss if `count_stats`) and, if it is of `type`,
// reads its record.
TaskOf<TypedRead> ReadTypedRecord(Store& st, std::string_view key, ValueType type, int64_t now_ms,
                                  bool count_stats, KeyInfo* info, ReadResult* record,
                                  std::string* error);

}  // namespace lavik
