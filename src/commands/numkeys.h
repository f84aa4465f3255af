// Keys of commands that name them with a numkeys argument right after the command name
// (SINTERCARD numkeys key [key ...] ..., LMPOP, BLMPOP/BZMPOP timeout numkeys key ..., EVAL).
// Their CommandSpec reports no key range (first_key 0 with kCmdMovableKeys, Redis's legacy "0 0 0"
// triple), so code that must see every key asks here (through commands/command_keys.h: ACL
// key patterns, COMMAND GETKEYS).
//
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/numbers.h"
#include "commands/command.h"
#include "commands/stream_keys.h"

namespace lavik {

// True for such a command with a valid numkeys: its keys are args[*first..*last] (step 1).
// False otherwise (the command itself rejects a bad numkeys).
inline bool NumkeysKeyRange(const CommandSpec& spec, std::span<const std::string_view> args,
                            int* first, int* last) {
  if (spec.name == "xread" || spec.name == "xreadgroup") return StreamsKeyRange(args, first, last);
  // BLMPOP/BZMPOP timeout numkeys key ..., EVAL script numkeys key ...: numkeys comes second.
  const bool second = spec.name == "blmpop" || spec.name == "bzmpop" ||
                      spec.name.starts_with("eval") || spec.name.starts_with("fcall");
  const size_t at = second ? 2 : 1;
  if (!(spec.flags & kCmdMovableKeys) || spec.first_key != 0 || args.size() < at + 2) return false;
  int64_t n;
  if (!ParseInt64(args[at], &n) || n <= 0 || n > static_cast<int64_t>(args.size() - at) - 1) {
    return false;
  }
  *first = static_cast<int>(at + 1);
  *last = static_cast<int>(at + n);
  return true;
}

// The source keys of a STORE command with numkeys after the destination (ZUNIONSTORE dst
// numkeys key ...): its CommandSpec names only dst (Redis's "1 1 1" with movablekeys), so the
// sources are args[*first..*last]. False for other commands or a bad numkeys.
inline bool NumkeysStoreSources(const CommandSpec& spec, std::span<const std::string_view> args,
                                int* first, int* last) {
  if (!(spec.flags & kCmdMovableKeys) || spec.first_key != 1 || spec.last_key != 1 ||
      args.size() < 4) {
    return false;
  }
  int64_t n;
  if (!ParseInt64(args[2], &n) || n <= 0 || n > static_cast<int64_t>(args.size()) - 3) {
    return false;
  }
  *first = 3;
  *last = static_cast<int>(2 + n);
  return true;
}

}  // namespace lavik
