// CommandTable: every registered command, looked up case-insensitively by name. Built once at
// start-up from the families' tables (plain data); read-only afterwards, so any thread may use it.
// Find, on every request, probes a small open-addressing index hashed while the name is
// lowercased: no modulo by a prime and no second pass over the name, as std::unordered_map takes.
#pragma once

#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/command.h"

namespace lavik {

class CommandTable {
 public:
  // The families in registration order (COMMAND LIST order); the specs must outlive the table.
  explicit CommandTable(std::span<const std::span<const CommandSpec>> families);

  // nullptr if no such command (the caller replies "unknown command").
  const CommandSpec* Find(std::string_view name) const;
  // By the name it was registered under, whatever rename-command did (for the server's own
  // uses, such as the replica's FLUSHALL before a full sync).
  const CommandSpec* FindOriginal(std::string_view name) const;
  // rename-command from to, at start-up before any lookup from another thread: `to` empty
  // disables the command (COMMAND no longer lists it). The error is the reason, or "".
  std::string Rename(std::string_view from, std::string_view to);
  // A container's subcommand (CLIENT SETNAME), case-insensitive; nullptr if unknown.
  static const CommandSpec* FindSubcommand(const CommandSpec& container, std::string_view name);
  // Arity check, Redis rules (positive: exact; negative: at least).
  static bool ArityOk(const CommandSpec& spec, size_t argc) {
    return spec.arity > 0 ? argc == static_cast<size_t>(spec.arity)
                          : argc >= static_cast<size_t>(-spec.arity);
  }

  const std::vector<const CommandSpec*>& all() const { return all_; }

 private:
  struct Slot {
    std::string_view name;  // lowercase; empty for a free slot
    const CommandSpec* spec = nullptr;
  };
  // by_name_ again, as Find's index: power-of-two size, at most a quarter full, linear probing.
  void BuildIndex();

  std::vector<Slot> index_;
  std::unordered_map<std::string_view, const CommandSpec*> by_name_;
  std::unordered_map<std::string_view, const CommandSpec*> by_original_name_;
  std::vector<const CommandSpec*> all_;
  std::deque<std::string> new_names_;  // the keys of renamed entries in by_name_
};

}  // namespace lavik
