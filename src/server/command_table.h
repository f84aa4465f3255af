// CommandTable: every registered command, looked up case-insensitively by name. Built once at
// start-up from the families' tables (plain data); read-only afterwards, so any thread may use it.
#pragma once

#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/command.h"

namespace lavik {

// Families that live in this layer (they need the server's state).
std::span<const CommandSpec> ConnectionCommands();
std::span<const CommandSpec> ServerCommands();
std::span<const CommandSpec> ObservabilityCommands();  // SLOWLOG, LATENCY
std::span<const CommandSpec> AclCommands();            // acl_commands.cc
std::span<const CommandSpec> PubSubCommands();         // SUBSCRIBE, PUBLISH, PUBSUB...

class CommandTable {
 public:
  CommandTable();

  // nullptr if no such command (the caller replies "unknown command").
  const CommandSpec* Find(std::string_view name) const;
  // A container's subcommand (CLIENT SETNAME), case-insensitive; nullptr if unknown.
  static const CommandSpec* FindSubcommand(const CommandSpec& container, std::string_view name);
  // Arity check, Redis rules (positive: exact; negative: at least).
  static bool ArityOk(const CommandSpec& spec, size_t argc) {
    return spec.arity > 0 ? argc == static_cast<size_t>(spec.arity)
                          : argc >= static_cast<size_t>(-spec.arity);
  }

  const std::vector<const CommandSpec*>& all() const { return all_; }

 private:
  void Add(std::span<const CommandSpec> family);

  std::unordered_map<std::string_view, const CommandSpec*> by_name_;
  std::vector<const CommandSpec*> all_;
};

}  // namespace lavik
