// CommandTable: every registered command, looked up case-insensitively by name. Built once at
// start-up from the families' tables (plain data); read-only afterwards, so any thread may use it.
// Find runs on every request. A name of up to 15 bytes (all but a few commands) is loaded into two
// words, lowercased eight bytes at a time, and compared as those words in a small open-addressing
// index: no loop over its bytes and no memcmp. A longer name is lowercased and hashed a byte at a
// time into a second index.
#pragma once

#include <cstdint>
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
  // A name of up to kShortMax bytes, lowercase, as two words: its bytes in order from the low
  // byte of `lo`, zero-padded, and its length in the top byte of `hi`.
  static constexpr size_t kShortMax = 15;
  struct ShortSlot {
    uint64_t lo = 0;
    uint64_t hi = 0;
    const CommandSpec* spec = nullptr;  // nullptr: a free slot
  };
  // by_name_ again, as Find's indexes: power-of-two sizes, at most a quarter full, linear
  // probing; short_index_ holds the names of up to kShortMax bytes, index_ the longer ones.
  void BuildIndex();
  // Find of a name longer than kShortMax.
  [[gnu::noinline]] const CommandSpec* FindLong(std::string_view name) const;

  std::vector<ShortSlot> short_index_;
  int short_shift_ = 64;   // 64 - log2(short_index_.size())
  size_t short_mask_ = 0;  // short_index_.size() - 1
  std::vector<Slot> index_;
  std::unordered_map<std::string_view, const CommandSpec*> by_name_;
  std::unordered_map<std::string_view, const CommandSpec*> by_original_name_;
  std::vector<const CommandSpec*> all_;
  std::deque<std::string> new_names_;  // the keys of renamed entries in by_name_
};

}  // namespace lavik
