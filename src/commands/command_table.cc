#include "commands/command_table.h"

#include <strings.h>

namespace lavik {
namespace {

// Lowercases into buf; false if the name cannot be a command (too long).
bool Lower(std::string_view name, char* buf, size_t cap, std::string_view* out) {
  if (name.size() > cap) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    buf[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
  }
  *out = std::string_view(buf, name.size());
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
    return {};
  }
  std::string name(to);
  for (char& c : name) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
  if (by_name_.count(name) != 0) return "Target command name already exists";
  by_name_.erase(it);
  by_name_.emplace(new_names_.emplace_back(std::move(name)), spec);
  return {};
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  char buf[64];
  std::string_view lower;
  if (!Lower(name, buf, sizeof(buf), &lower)) return nullptr;
  auto it = by_name_.find(lower);
  return it == by_name_.end() ? nullptr : it->second;
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
