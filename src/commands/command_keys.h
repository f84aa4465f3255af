// Which arguments of a call are keys, for every command, and the key-spec flags Redis 7.0
// reports for each (COMMAND GETKEYS / GETKEYSANDFLAGS, ACL key patterns). Fixed positions come
// from the CommandSpec (first/last/step); movable keys from the arguments: a numkeys count
// (SINTERCARD, LMPOP, ZUNION, ZUNIONSTORE's sources, EVAL/FCALL), XREAD/XREADGROUP's STREAMS,
// SORT's STORE, GEORADIUS's STORE/STOREDIST and MIGRATE's KEYS.
//
// Thread safety: pure functions over immutable tables.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/db_key.h"
#include "commands/command.h"

namespace lavik {

struct KeyRef {
  int arg;   // index into args
  int spec;  // which of the command's key specs (Redis's order) it belongs to
};

// Appends the call's keys to *out in Redis's order (by key spec, then position). False if the
// arguments that locate movable keys are malformed (a bad numkeys, no balanced STREAMS list);
// *out then holds the keys found before the problem.
bool CommandKeys(const CommandSpec& spec, std::span<const std::string_view> args,
                 std::vector<KeyRef>* out);

// The call's arguments with every key in its stored form for physical database `db`
// (base/db_key.h), the strings in *arena and the views in *out. False, with nothing written, when
// no key changes (database 0 and no key starting with the prefix) and for scripts (EVAL, FCALL:
// their redis.call commands are rewritten instead).
// Inline for the common case, which costs least: in database 0 only a key that itself starts
// with the prefix changes, and most requests hold no argument starting with it.
bool StoredKeyArgsSlow(const CommandSpec& spec, std::span<const std::string_view> args, int db,
                       std::string* arena, std::vector<std::string_view>* out);
inline bool StoredKeyArgs(const CommandSpec& spec, std::span<const std::string_view> args, int db,
                          std::string* arena, std::vector<std::string_view>* out) {
  if (db == 0) {
    bool any = false;
    for (std::string_view a : args) any |= !a.empty() && a[0] == kDbKeyPrefix[0];
    if (!any) return false;
  }
  return StoredKeyArgsSlow(spec, args, db, arena, out);
}

// True if the command can name keys at all (fixed positions, movable keys or a key spec that is
// not a channel's).
bool CommandHasKeys(const CommandSpec& spec);

// COMMAND INFO's first / last / step: the table's, except for the shard-channel commands, whose
// channels Redis's legacy range covers (1 1 1, or 1 -1 1 for a variadic one) though no key is
// stored there; the rest of Lavik (ACL, routing, databases) sees no keys in them.
struct KeyRange {
  int first, last, step;
};
KeyRange LegacyKeyRange(const CommandSpec& spec);

// True for commands whose calls may name no key (EVAL, FCALL: Redis's no_mandatory_keys).
bool KeysAreOptional(const CommandSpec& spec);

// The flags of key spec `index` for this call, space-separated ("RW access delete"); SET and
// BITFIELD's depend on the arguments, as in Redis. Empty if the command has no such spec.
std::string_view KeySpecFlags(const CommandSpec& spec, std::span<const std::string_view> args,
                              int index);

}  // namespace lavik
