#include "scripting/function_registry.h"

#include <cctype>

#include "base/ascii.h"

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

std::string FunctionRegistry::Load(std::string_view code, bool replace, std::string* name) {
  FunctionLibrary lib;
  std::string error = ReadLibraryMetadata(code, &lib.name);
  if (!error.empty()) return error;
  if (!replace) {  // Redis refuses an existing library before running the new code
    std::lock_guard<std::mutex> lock(mu_);
    if (libraries_.count(lib.name) != 0) return "ERR Library '" + lib.name + "' already exists";
  }
  error = ReadLibrary(code, &lib.functions);
  if (!error.empty()) return error;
  lib.code.assign(code);
  std::lock_guard<std::mutex> lock(mu_);
  auto old = libraries_.find(lib.name);
  if (old != libraries_.end() && !replace) {
    return "ERR Library '" + lib.name + "' already exists";
  }
  for (const FunctionInfo& f : lib.functions) {
    auto it = function_library_.find(f.name);
    if (it != function_library_.end() && it->second != lib.name) {
      return "ERR Function " + f.name + " already exists";
    }
  }
  if (old != libraries_.end()) {
    for (const FunctionInfo& f : old->second.functions) function_library_.erase(f.name);
  }
  for (const FunctionInfo& f : lib.functions) function_library_[f.name] = lib.name;
  *name = lib.name;
  libraries_[lib.name] = std::move(lib);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return "";
}

bool FunctionRegistry::Delete(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = libraries_.find(name);
  if (it == libraries_.end()) return false;
  for (const FunctionInfo& f : it->second.functions) function_library_.erase(f.name);
  libraries_.erase(it);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

void FunctionRegistry::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  libraries_.clear();
  function_library_.clear();
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

std::vector<FunctionLibrary> FunctionRegistry::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<FunctionLibrary> out;
  for (const auto& [name, lib] : libraries_) out.push_back(lib);
  return out;
}

bool FunctionRegistry::Find(std::string_view name, std::string* library, std::string* code,
                            bool* no_writes) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = function_library_.find(name);
  if (it == function_library_.end()) return false;
  const FunctionLibrary& lib = libraries_.find(it->second)->second;
  *library = lib.name;
  *code = lib.code;
  for (const FunctionInfo& f : lib.functions) {
    if (f.name == name) *no_writes = f.no_writes;
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
