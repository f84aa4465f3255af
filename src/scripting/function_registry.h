// FunctionRegistry: the libraries FUNCTION LOAD has registered (Redis 7.0 functions), shared by
// every worker. Each worker's functions Lua state loads a library's code lazily, on the first
// FCALL of one of its functions there, and is rebuilt when the registry's generation moves
// (LOAD, DELETE, FLUSH). Libraries live in memory only: they do not survive a restart yet.
//
// Thread safety: every method may be called from any thread (one mutex).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lavik {

struct FunctionInfo {
  std::string name;
  std::optional<std::string> description;
  std::vector<std::string> flags;  // as given (no-writes, allow-oom, ...)
  bool no_writes = false;
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

class FunctionRegistry {
 public:
  static FunctionRegistry& Get();

  // FUNCTION LOAD [REPLACE]: error text, or "" with *name set.
  std::string Load(std::string_view code, bool replace, std::string* name);
  bool Delete(std::string_view name);
  void Flush();
  std::vector<FunctionLibrary> List() const;
  // The library of function `name` (its code) and the function's no-writes flag.
  bool Find(std::string_view name, std::string* library, std::string* code, bool* no_writes) const;
  size_t library_count() const;
  size_t function_count() const;
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mu_;
  std::map<std::string, FunctionLibrary, std::less<>> libraries_;
  std::map<std::string, std::string, std::less<>> function_library_;  // function → library
  std::atomic<uint64_t> generation_{0};
};

}  // namespace lavik
