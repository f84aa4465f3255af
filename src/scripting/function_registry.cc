#include "scripting/function_registry.h"

#include <cctype>

#include "base/ascii.h"
#include "base/durable_file.h"
#include "base/log.h"
#include "rdb/function_payload.h"

namespace lavik {

FunctionRegistry& FunctionRegistry::Get() {
  static FunctionRegistry registry;
  return registry;
}

std::string ReadLibraryMetadata(std::string_view code, std::string* name) {
  if (!code.starts_with("#!")) return "ERR Missing library metadata";
  std::string_view line = code.substr(0, code.find('\n'));
  std::vector<std::string_view> parts;
  for (size_t i = 0; i < line.size();) {
    size_t j = line.find(' ', i);
    if (j == std::string_view::npos) j = line.size();
    if (j > i) parts.push_back(line.substr(i, j - i));
    i = j + 1;
  }
  const std::string_view engine = parts[0].substr(2);
  bool named = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (!parts[i].starts_with("name=")) {
      return "ERR Invalid metadata value given: " + std::string(parts[i]);
    }
    if (named) return "ERR Invalid metadata value, name argument was given multiple times";
    named = true;
    name->assign(parts[i].substr(5));
  }
  if (!named) return "ERR Library name was not given";
  if (engine.size() != 3 || !EqualsNoCase(engine, "lua")) {
    return "ERR Engine '" + std::string(engine) + "' not found";
  }
  bool valid = !name->empty();
  for (char c : *name) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!valid) {
    return "ERR Library names can only contain letters, numbers, or underscores(_) and must be "
           "at least one character long";
  }
  return "";
}

namespace {

// The function of `lib` already defined by another library of `libs`, or nullptr.
const FunctionInfo* Collision(const std::map<std::string, FunctionLibrary, std::less<>>& libs,
                              const FunctionLibrary& lib) {
  for (const FunctionInfo& f : lib.functions) {
    for (const auto& [name, other] : libs) {
      if (name == lib.name) continue;
      for (const FunctionInfo& g : other.functions) {
        if (g.name == f.name) return &f;
      }
    }
  }
  return nullptr;
}

// Reads a library's metadata and runs its code: Redis's error text or "".
std::string BuildLibrary(std::string_view code, FunctionLibrary* lib) {
  std::string error = ReadLibraryMetadata(code, &lib->name);
  if (error.empty()) error = ReadLibrary(code, &lib->functions);
  lib->code.assign(code);
  return error;
}

}  // namespace

bool FunctionRegistry::Open(const std::string& path, std::string* error) {
  std::string data;
  bool exists = false;
  if (!ReadWholeFile(path, &data, &exists, error)) return false;
  Libraries libs;
  if (exists) {
    std::vector<std::string> codes;
    std::string e;
    if (!rdb::DecodeFunctionsPayload(data, &codes, &e)) {
      *error = path + ": " + e;
      return false;
    }
    for (const std::string& code : codes) {
      FunctionLibrary lib;
      if (e = BuildLibrary(code, &lib); !e.empty()) {
        *error = path + ": " + e;
        return false;
      }
      libs[lib.name] = std::move(lib);
    }
  }
  std::lock_guard<std::mutex> change(change_mu_);
  path_.clear();  // what was read is already on disk
  Commit(std::move(libs));
  path_ = path;
  return true;
}

bool FunctionRegistry::Has(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return libraries_.find(name) != libraries_.end();
}

FunctionRegistry::Libraries FunctionRegistry::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return libraries_;
}

std::string FunctionRegistry::Commit(Libraries next) {
  if (!path_.empty()) {
    std::vector<std::string> codes;
    for (const auto& [name, lib] : next) codes.push_back(lib.code);
    std::string error;
    if (!WriteFileDurably(path_, rdb::EncodeFunctionsPayload(codes), &error)) {
      LogWarning("Failed persisting the function libraries: " + error);
      return "ERR Failed persisting the function libraries: " + error;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  libraries_ = std::move(next);
  function_library_.clear();
  for (const auto& [name, lib] : libraries_) {
    for (const FunctionInfo& f : lib.functions) function_library_[f.name] = name;
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return "";
}

std::string FunctionRegistry::Load(std::string_view code, bool replace, std::string* name) {
  FunctionLibrary lib;
  std::string error = ReadLibraryMetadata(code, &lib.name);
  if (!error.empty()) return error;
  const std::string exists = "ERR Library '" + lib.name + "' already exists";
  if (!replace && Has(lib.name)) return exists;  // before running the code
  error = ReadLibrary(code, &lib.functions);
  if (!error.empty()) return error;
  lib.code.assign(code);
  std::lock_guard<std::mutex> change(change_mu_);
  Libraries next = Snapshot();
  if (!replace && next.count(lib.name) != 0) return exists;
  if (const FunctionInfo* f = Collision(next, lib)) {
    return "ERR Function " + f->name + " already exists";
  }
  *name = lib.name;
  next[lib.name] = std::move(lib);
  return Commit(std::move(next));
}

std::string FunctionRegistry::Delete(std::string_view name) {
  std::lock_guard<std::mutex> change(change_mu_);
  Libraries next = Snapshot();
  auto it = next.find(name);
  if (it == next.end()) return "ERR Library not found";
  next.erase(it);
  return Commit(std::move(next));
}

std::string FunctionRegistry::Flush() {
  std::lock_guard<std::mutex> change(change_mu_);
  return Commit({});
}

std::string FunctionRegistry::Restore(const std::vector<std::string>& codes, RestorePolicy policy) {
  Libraries incoming;
  for (const std::string& code : codes) {
    FunctionLibrary lib;
    std::string error = ReadLibraryMetadata(code, &lib.name);
    if (!error.empty()) return error;
    if (incoming.count(lib.name) != 0) return "ERR Library '" + lib.name + "' already exists";
    if (error = BuildLibrary(code, &lib); !error.empty()) return error;
    if (const FunctionInfo* f = Collision(incoming, lib)) {
      return "ERR Function " + f->name + " already exists";
    }
    incoming[lib.name] = std::move(lib);
  }
  std::lock_guard<std::mutex> change(change_mu_);
  if (policy == RestorePolicy::kFlush) return Commit(std::move(incoming));
  Libraries next = Snapshot();
  for (const auto& [name, lib] : incoming) {
    if (next.count(name) == 0) continue;
    if (policy == RestorePolicy::kAppend) return "ERR Library " + name + " already exists";
    next.erase(name);
  }
  for (const auto& [name, lib] : incoming) {
    if (const FunctionInfo* f = Collision(next, lib)) {
      return "ERR Function " + f->name + " already exists";
    }
  }
  next.merge(incoming);
  return Commit(std::move(next));
}

std::vector<FunctionLibrary> FunctionRegistry::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<FunctionLibrary> out;
  for (const auto& [name, lib] : libraries_) out.push_back(lib);
  return out;
}

std::vector<std::string> FunctionRegistry::Codes() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, lib] : libraries_) out.push_back(lib.code);
  return out;
}

std::vector<std::string> FunctionLibraryCodes() { return FunctionRegistry::Get().Codes(); }

std::string LoadFunctionLibrary(std::string_view code) {
  std::string name;
  return FunctionRegistry::Get().Load(code, true, &name);
}

bool FunctionRegistry::Find(std::string_view name, std::string* library, std::string* code,
                            bool* no_writes, bool* allow_oom, ClusterScriptFlags* cluster) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = function_library_.find(name);
  if (it == function_library_.end()) return false;
  const FunctionLibrary& lib = libraries_.find(it->second)->second;
  *library = lib.name;
  *code = lib.code;
  for (const FunctionInfo& f : lib.functions) {
    if (f.name != name) continue;
    *no_writes = f.no_writes;
    if (allow_oom != nullptr) *allow_oom = f.allow_oom;
    if (cluster != nullptr) {
      for (const std::string& flag : f.flags) {
        if (flag == "no-cluster") cluster->no_cluster = true;
        if (flag == "allow-cross-slot-keys") cluster->allow_cross_slot = true;
      }
    }
  }
  return true;
}

size_t FunctionRegistry::library_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return libraries_.size();
}

size_t FunctionRegistry::function_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return function_library_.size();
}

}  // namespace lavik
