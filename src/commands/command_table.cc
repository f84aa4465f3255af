#include "commands/command_table.h"

#include <strings.h>

#include <cstdint>

namespace lavik {
namespace {

// FNV-1a, one byte at a time: Find's index hashes the lowercase name.
constexpr uint64_t kFnvOffset = 14695981039346656037ull;
inline uint64_t FnvStep(uint64_t h, char c) {
  return (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
}

uint64_t NameHash(std::string_view lower) {
  uint64_t h = kFnvOffset;
  for (char c : lower) h = FnvStep(h, c);
  return h;
}

// Lowercases into buf, hashing the lowercase bytes on the way (NameHash's value, in *hash);
// false if the name cannot be a command (too long).
inline bool Lower(std::string_view name, char* buf, size_t cap, std::string_view* out,
                  uint64_t* hash = nullptr) {
  if (name.size() > cap) return false;
  uint64_t h = kFnvOffset;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    buf[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
    h = FnvStep(h, buf[i]);
  }
  *out = std::string_view(buf, name.size());
  if (hash != nullptr) *hash = h;
  return true;
}

}  // namespace

CommandTable::CommandTable(std::span<const std::span<const CommandSpec>> families) {
  for (std::span<const CommandSpec> family : families) {
    for (const CommandSpec& spec : family) {
      by_name_.emplace(spec.name, &spec);
      all_.push_back(&spec);
    }
  }
  by_original_name_ = by_name_;
  BuildIndex();
}

void CommandTable::BuildIndex() {
  size_t size = 16;
  while (size < by_name_.size() * 4) size *= 2;
  index_.assign(size, Slot{});
  for (const auto& [name, spec] : by_name_) {
    for (size_t i = NameHash(name) & (size - 1);; i = (i + 1) & (size - 1)) {
      if (index_[i].spec == nullptr) {
        index_[i] = Slot{name, spec};
        break;
      }
    }
  }
}

const CommandSpec* CommandTable::FindOriginal(std::string_view name) const {
  auto it = by_original_name_.find(name);
  return it == by_original_name_.end() ? nullptr : it->second;
}

std::string CommandTable::Rename(std::string_view from, std::string_view to) {
  char buf[64];
  std::string_view lower;
  auto it = Lower(from, buf, sizeof(buf), &lower) ? by_name_.find(lower) : by_name_.end();
  if (it == by_name_.end()) return "No such command in rename-command";
  const CommandSpec* spec = it->second;
  if (to.empty()) {
    by_name_.erase(it);
    std::erase(all_, spec);
    BuildIndex();
    return {};
  }
  std::string name(to);
  for (char& c : name) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
  if (by_name_.count(name) != 0) return "Target command name already exists";
  by_name_.erase(it);
  by_name_.emplace(new_names_.emplace_back(std::move(name)), spec);
  BuildIndex();
  return {};
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  char buf[64];
  std::string_view lower;
  uint64_t h;
  if (!Lower(name, buf, sizeof(buf), &lower, &h)) return nullptr;
  const size_t mask = index_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = index_[i];
    if (s.spec == nullptr) return nullptr;
    if (s.name == lower) return s.spec;
  }
}

const CommandSpec* CommandTable::FindSubcommand(const CommandSpec& container,
                                                std::string_view name) {
  for (const CommandSpec& sub : container.subcommands) {
    // Subcommand names are stored as "container|sub".
    std::string_view short_name = sub.name.substr(sub.name.find('|') + 1);
    if (short_name.size() == name.size() &&
        strncasecmp(short_name.data(), name.data(), name.size()) == 0) {
      return &sub;
    }
  }
  return nullptr;
}

}  // namespace lavik
