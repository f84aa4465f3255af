#include "server/command_table.h"

#include <strings.h>

#include "commands/families.h"
#include "commands/key_copy.h"
#include "server/list_blocking.h"
#include "server/object_command.h"
#include "server/reset_command.h"
#include "server/stream_blocking.h"
#include "server/transaction.h"

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

CommandTable::CommandTable() {
  Add(StringCommands());
  Add(KeyCommands());
  Add(CopyCommands());
  Add(DumpCommands());
  Add(HashCommands());
  Add(SetCommands());
  Add(ListCommands());
  Add(ListBlockingCommands());
  Add(ZSetSingleKeyCommands());
  Add(ZSetMultiKeyCommands());
  Add(ZSetBlockingCommands());
  Add(StreamCommands());
  Add(StreamGroupCommands());
  Add(StreamInfoCommands());
  Add(StreamReadCommands());
  Add(ConnectionCommands());
  Add(ResetCommands());
  Add(ObjectCommands());
  Add(ServerCommands());
  Add(ObservabilityCommands());
  Add(AclCommands());
  Add(PubSubCommands());
  Add(TransactionCommands());
}

void CommandTable::Add(std::span<const CommandSpec> family) {
  for (const CommandSpec& spec : family) {
    by_name_.emplace(spec.name, &spec);
    all_.push_back(&spec);
  }
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
