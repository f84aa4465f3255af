// FunctionRegistry: the libraries FUNCTION LOAD has registered (Redis 7.0 functions), shared by
// every worker. Each worker's functions Lua state loads a library's code lazily, on the first
// FCALL of one of its functions there, and is rebuilt when the registry's generation moves
// (LOAD, DELETE, FLUSH, RESTORE).
//
// Durability: once Open() has named a file, every change is written there (the FUNCTION DUMP
// payload of the whole set, rdb/function_payload.h) and synced (base/durable_file.h) before it
// becomes visible and before the command replies; a change that cannot be written is refused.
// Open() loads the file at start-up.
//
// Thread safety: every method may be called from any thread. Changes are serialised by one
// mutex (held across the file write); reads take another, held only to copy.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scripting/script_flags.h"

namespace lavik {

struct FunctionInfo {
  std::string name;
  std::optional<std::string> description;
  std::vector<std::string> flags;  // as given (no-writes, allow-oom, ...)
  bool no_writes = false;
  bool allow_oom = false;
};

struct FunctionLibrary {
  std::string name;
  std::string code;
  std::vector<FunctionInfo> functions;
};

// The library name of FUNCTION LOAD's code from its metadata line ("#!lua name=<name>"), the
// engine checked and the name validated; Redis's error text ("ERR ...") or "".
std::string ReadLibraryMetadata(std::string_view code, std::string* name);
// Compiles and runs the code as FUNCTION LOAD does, with only redis.register_function,
// redis.log and the constants available; appends what it registers. Error text or ""
// (function_load.cc).
std::string ReadLibrary(std::string_view code, std::vector<FunctionInfo>* functions);

enum class RestorePolicy { kAppend, kReplace, kFlush };

class FunctionRegistry {
 public:
  static FunctionRegistry& Get();

  // Start-up, before clients are served: from now on changes are persisted in `path`; the
  // libraries it holds are loaded (none if it does not exist). False with *error if it cannot
  // be read or a library in it does not load.
  bool Open(const std::string& path, std::string* error);

  // FUNCTION LOAD [REPLACE]: error text, or "" with *name set.
  std::string Load(std::string_view code, bool replace, std::string* name);
  // FUNCTION DELETE: "ERR Library not found", a persistence error, or "".
  std::string Delete(std::string_view name);
  // FUNCTION FLUSH: a persistence error or "".
  std::string Flush();
  // FUNCTION RESTORE: adds these libraries (codes) under the policy, all or none, with Redis's
  // error texts; "" on success.
  std::string Restore(const std::vector<std::string>& codes, RestorePolicy policy);
  std::vector<FunctionLibrary> List() const;
  // Every library's code, in name order (FUNCTION DUMP, dump.rdb).
  std::vector<std::string> Codes() const;
  // The library of function `name` (its code) and the function's no-writes and allow-oom flags.
  bool Find(std::string_view name, std::string* library, std::string* code, bool* no_writes,
            bool* allow_oom = nullptr, ClusterScriptFlags* cluster = nullptr) const;
  size_t library_count() const;
  size_t function_count() const;
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  using Libraries = std::map<std::string, FunctionLibrary, std::less<>>;
  // Writes `next` to the file (if one is open), then makes it the current set. Called with
  // change_mu_ held. Error text or "".
  std::string Commit(Libraries next);
  Libraries Snapshot() const;
  bool Has(std::string_view name) const;

  std::mutex change_mu_;  // one change at a time, across its file write
  std::string path_;      // "" until Open(): nothing is persisted
  mutable std::mutex mu_;
  Libraries libraries_;
  std::map<std::string, std::string, std::less<>> function_library_;  // function → library
  std::atomic<uint64_t> generation_{0};
};

// For the dump.rdb writer and loader (rdb/ and server/ stay unaware of Lua): every library's
// code, and loading one library's code as FUNCTION LOAD REPLACE would ("" or Redis's error).
std::vector<std::string> FunctionLibraryCodes();
std::string LoadFunctionLibrary(std::string_view code);

}  // namespace lavik
