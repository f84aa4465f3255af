// COPY, and the one place a key's whole value is taken and re-created under another name
// (CopyKey), so that a value kept in several records (a chunked collection: a root record and
// internal chunk records) has a single helper to extend.
//
// Thread safety: ReadKeyCopy and WriteKeyCopy run on the worker that owns the key they touch.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "commands/command.h"
#include "runtime/task_of.h"
#include "storage/store.h"

namespace lavik {

// A key's value, detached from its store: enough to re-create it elsewhere.
struct KeyCopy {
  bool exists = false;
  ValueType type = ValueType::kString;
  std::string record;     // the value record's bytes (strings and one-record collections)
  int64_t expire_ms = 0;  // 0: no TTL
};

// Reads `key` into *out (out->exists false if it is missing), counting a keyspace hit or miss
// (a miss reports "keymiss"). False with *error on an I/O error.
TaskOf<bool> ReadKeyCopy(Store& st, std::string_view key, int64_t now_ms, KeyCopy* out,
                         std::string* error);
// Writes `copy` as `key`, replacing what is there (TTL included). False with *error on failure.
TaskOf<bool> WriteKeyCopy(Store& st, std::string_view key, const KeyCopy& copy, std::string* error);
// The keyspace events of a key written whole (COPY "copy_to", RESTORE "restore"): Redis deletes
// a replaced key and adds the new one, so "new" comes even then (the store saw a rewrite).
void NotifyKeyWritten(std::string_view key, bool replaced, std::string_view event);

std::span<const CommandSpec> CopyCommands();

}  // namespace lavik
