#include "commands/command_keys.h"

#include <algorithm>
#include <iterator>

#include "base/ascii.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "commands/numkeys.h"

namespace lavik {
namespace {

struct KeyFlagsRow {
  std::string_view command;  // lowercase; a subcommand as "container|sub"
  std::string_view specs;    // each key spec's flags, separated by '|'
};

// Redis 7.0.15's key specs' flags (COMMAND INFO), without "incomplete" and "variable_flags",
// sorted by name. Commands Lavik does not have yet are listed so they report Redis's flags the
// day they arrive.
constexpr KeyFlagsRow kKeyFlags[] = {
    {"append", "RW insert"},
    {"bitcount", "RO access"},
    {"bitfield", "RW access update"},
    {"bitfield_ro", "RO access"},
    {"bitop", "OW update|RO access"},
    {"bitpos", "RO access"},
    {"blmove", "RW access delete|RW insert"},
    {"blmpop", "RW access delete"},
    {"blpop", "RW access delete"},
    {"brpop", "RW access delete"},
    {"brpoplpush", "RW access delete|RW insert"},
    {"bzmpop", "RW access delete"},
    {"bzpopmax", "RW access delete"},
    {"bzpopmin", "RW access delete"},
    {"copy", "RO access|OW update"},
    {"decr", "RW access update"},
    {"decrby", "RW access update"},
    {"del", "RM delete"},
    {"dump", "RO access"},
    {"eval", "RW access update"},
    {"eval_ro", "RO access"},
    {"evalsha", "RW access update"},
    {"evalsha_ro", "RO access"},
    {"exists", "RO"},
    {"expire", "RW update"},
    {"expireat", "RW update"},
    {"expiretime", "RO access"},
    {"fcall", "RW access update"},
    {"fcall_ro", "RO access"},
    {"geoadd", "RW update"},
    {"geodist", "RO access"},
    {"geohash", "RO access"},
    {"geopos", "RO access"},
    {"georadius", "RO access|OW update|OW update"},
    {"georadius_ro", "RO access"},
    {"georadiusbymember", "RO access|OW update|OW update"},
    {"georadiusbymember_ro", "RO access"},
    {"geosearch", "RO access"},
    {"geosearchstore", "OW update|RO access"},
    {"get", "RO access"},
    {"getbit", "RO access"},
    {"getdel", "RW access delete"},
    {"getex", "RW access update"},
    {"getrange", "RO access"},
    {"getset", "RW access update"},
    {"hdel", "RW delete"},
    {"hexists", "RO"},
    {"hget", "RO access"},
    {"hgetall", "RO access"},
    {"hincrby", "RW access update"},
    {"hincrbyfloat", "RW access update"},
    {"hkeys", "RO access"},
    {"hlen", "RO"},
    {"hmget", "RO access"},
    {"hmset", "RW update"},
    {"hrandfield", "RO access"},
    {"hscan", "RO access"},
    {"hset", "RW update"},
    {"hsetnx", "RW insert"},
    {"hstrlen", "RO"},
    {"hvals", "RO access"},
    {"incr", "RW access update"},
    {"incrby", "RW access update"},
    {"incrbyfloat", "RW access update"},
    {"lcs", "RO access"},
    {"lindex", "RO access"},
    {"linsert", "RW insert"},
    {"llen", "RO"},
    {"lmove", "RW access delete|RW insert"},
    {"lmpop", "RW access delete"},
    {"lpop", "RW access delete"},
    {"lpos", "RO access"},
    {"lpush", "RW insert"},
    {"lpushx", "RW insert"},
    {"lrange", "RO access"},
    {"lrem", "RW delete"},
    {"lset", "RW update"},
    {"ltrim", "RW delete"},
    {"memory|usage", "RO"},
    {"mget", "RO access"},
    {"migrate", "RW access delete|RW access delete"},
    {"move", "RW access update"},
    {"mset", "OW update"},
    {"msetnx", "OW insert"},
    {"object|encoding", "RO"},
    {"object|freq", "RO"},
    {"object|idletime", "RO"},
    {"object|refcount", "RO"},
    {"persist", "RW update"},
    {"pexpire", "RW update"},
    {"pexpireat", "RW update"},
    {"pexpiretime", "RO access"},
    {"pfadd", "RW insert"},
    {"pfcount", "RW access"},
    {"pfdebug", "RW access"},
    {"pfmerge", "RW access insert|RO access"},
    {"psetex", "OW update"},
    {"pttl", "RO access"},
    {"rename", "RW access delete|OW update"},
    {"renamenx", "RW access delete|OW insert"},
    {"restore", "OW update"},
    {"restore-asking", "OW update"},
    {"rpop", "RW access delete"},
    {"rpoplpush", "RW access delete|RW insert"},
    {"rpush", "RW insert"},
    {"rpushx", "RW insert"},
    {"sadd", "RW insert"},
    {"scard", "RO"},
    {"sdiff", "RO access"},
    {"sdiffstore", "OW update|RO access"},
    {"set", "RW access update"},
    {"setbit", "RW access update"},
    {"setex", "OW update"},
    {"setnx", "OW insert"},
    {"setrange", "RW update"},
    {"sinter", "RO access"},
    {"sintercard", "RO access"},
    {"sinterstore", "RW update|RO access"},
    {"sismember", "RO"},
    {"smembers", "RO access"},
    {"smismember", "RO access"},
    {"smove", "RW access delete|RW insert"},
    {"sort", "RO access|RO access|OW update"},
    {"sort_ro", "RO access|RO access"},
    {"spop", "RW access delete"},
    {"spublish", "not_key"},
    {"srandmember", "RO access"},
    {"srem", "RW delete"},
    {"sscan", "RO access"},
    {"ssubscribe", "not_key"},
    {"strlen", "RO"},
    {"substr", "RO access"},
    {"sunion", "RO access"},
    {"sunionstore", "OW update|RO access"},
    {"sunsubscribe", "not_key"},
    {"touch", "RO"},
    {"ttl", "RO access"},
    {"type", "RO"},
    {"unlink", "RM delete"},
    {"watch", "RO"},
    {"xack", "RW update"},
    {"xadd", "RW update"},
    {"xautoclaim", "RW delete"},
    {"xclaim", "RW update"},
    {"xdel", "RW delete"},
    {"xgroup|create", "RW insert"},
    {"xgroup|createconsumer", "RW insert"},
    {"xgroup|delconsumer", "RW delete"},
    {"xgroup|destroy", "RW delete"},
    {"xgroup|setid", "RW update"},
    {"xinfo|consumers", "RO access"},
    {"xinfo|groups", "RO access"},
    {"xinfo|stream", "RO access"},
    {"xlen", "RO"},
    {"xpending", "RO access"},
    {"xrange", "RO access"},
    {"xread", "RO access"},
    {"xreadgroup", "RO access"},
    {"xrevrange", "RO access"},
    {"xsetid", "RW update"},
    {"xtrim", "RW delete"},
    {"zadd", "RW update"},
    {"zcard", "RO"},
    {"zcount", "RO access"},
    {"zdiff", "RO access"},
    {"zdiffstore", "OW update|RO access"},
    {"zincrby", "RW access update"},
    {"zinter", "RO access"},
    {"zintercard", "RO access"},
    {"zinterstore", "OW update|RO access"},
    {"zlexcount", "RO access"},
    {"zmpop", "RW access delete"},
    {"zmscore", "RO access"},
    {"zpopmax", "RW access delete"},
    {"zpopmin", "RW access delete"},
    {"zrandmember", "RO access"},
    {"zrange", "RO access"},
    {"zrangebylex", "RO access"},
    {"zrangebyscore", "RO access"},
    {"zrangestore", "OW update|RO access"},
    {"zrank", "RO access"},
    {"zrem", "RW delete"},
    {"zremrangebylex", "RW delete"},
    {"zremrangebyrank", "RW delete"},
    {"zremrangebyscore", "RW delete"},
    {"zrevrange", "RO access"},
    {"zrevrangebylex", "RO access"},
    {"zrevrangebyscore", "RO access"},
    {"zrevrank", "RO access"},
    {"zscan", "RO access"},
    {"zscore", "RO access"},
    {"zunion", "RO access"},
    {"zunionstore", "OW update|RO access"},
};

std::string_view SpecsOf(std::string_view command) {
  const auto* end = std::end(kKeyFlags);
  const auto* it = std::lower_bound(
      std::begin(kKeyFlags), end, command,
      [](const KeyFlagsRow& row, std::string_view name) { return row.command < name; });
  return it != end && it->command == command ? it->specs : std::string_view();
}

int SpecCount(std::string_view command) {
  std::string_view specs = SpecsOf(command);
  return specs.empty() ? 1 : static_cast<int>(std::count(specs.begin(), specs.end(), '|')) + 1;
}

bool IsScript(std::string_view n) {
  return n == "eval" || n == "evalsha" || n == "eval_ro" || n == "evalsha_ro" || n == "fcall" ||
         n == "fcall_ro";
}

// EVAL script numkeys key ... / FCALL function numkeys key ...
bool ScriptKeys(std::span<const std::string_view> args, std::vector<KeyRef>* out) {
  int64_t n;
  if (args.size() < 3 || !ParseInt64(args[2], &n) || n < 0 ||
      n > static_cast<int64_t>(args.size()) - 3) {
    return false;
  }
  for (int i = 3; i < 3 + n; ++i) out->push_back({i, 0});
  return true;
}

// MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw] [AUTH2 user pw] [KEYS key ...]:
// the key argument, or — when it is empty — the keys after KEYS.
bool MigrateKeys(std::span<const std::string_view> args, std::vector<KeyRef>* out) {
  for (size_t i = 6; i < args.size(); ++i) {
    if (EqualsNoCase(args[i], "auth")) {
      ++i;
    } else if (EqualsNoCase(args[i], "auth2")) {
      i += 2;
    } else if (EqualsNoCase(args[i], "keys")) {
      if (!args[3].empty()) return false;  // a key and KEYS both
      for (size_t k = i + 1; k < args.size(); ++k) out->push_back({static_cast<int>(k), 1});
      return true;
    }
  }
  out->push_back({3, 0});
  return true;
}

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA] [STORE dst]:
// the last STORE's destination (the patterns name no keys outside a cluster).
void SortKeys(std::span<const std::string_view> args, std::vector<KeyRef>* out) {
  out->push_back({1, 0});
  int store = 0;
  for (size_t i = 2; i < args.size(); ++i) {
    if (EqualsNoCase(args[i], "limit")) {
      i += 2;
    } else if (EqualsNoCase(args[i], "by") || EqualsNoCase(args[i], "get")) {
      ++i;
    } else if (EqualsNoCase(args[i], "store") && i + 1 < args.size()) {
      store = static_cast<int>(++i);
    }
  }
  if (store != 0) out->push_back({store, 2});
}

// GEORADIUS[BYMEMBER] key ... [STORE key] [STOREDIST key]: the first of each keyword, searched
// from where the options start, STORE's before STOREDIST's (their key specs' order).
void GeoradiusKeys(std::span<const std::string_view> args, size_t options,
                   std::vector<KeyRef>* out) {
  out->push_back({1, 0});
  const std::string_view keywords[] = {"store", "storedist"};
  for (int s = 0; s < 2; ++s) {
    for (size_t i = options; i + 1 < args.size(); ++i) {
      if (EqualsNoCase(args[i], keywords[s])) {
        out->push_back({static_cast<int>(i + 1), s + 1});
        break;
      }
    }
  }
}

}  // namespace

bool CommandKeys(const CommandSpec& spec, std::span<const std::string_view> args,
                 std::vector<KeyRef>* out) {
  const std::string_view n = spec.name;
  const int argc = static_cast<int>(args.size());
  if (IsScript(n)) return ScriptKeys(args, out);
  if (n == "migrate") return MigrateKeys(args, out);
  if (n == "sort" || n == "sort_ro") {
    SortKeys(args, out);
    return true;
  }
  if (n == "georadius" || n == "georadiusbymember") {
    GeoradiusKeys(args, n == "georadius" ? 6 : 5, out);
    return true;
  }
  if (spec.first_key > 0 && spec.first_key < argc) {
    const int last = std::min(spec.last_key < 0 ? argc + spec.last_key : spec.last_key, argc - 1);
    const int step = std::max(spec.key_step, 1);
    // Two-spec commands name their keys in spec order: source then destination (LMOVE,
    // RENAME) or destination then sources (SINTERSTORE, BITOP).
    const int last_spec = SpecCount(n) - 1;
    for (int i = spec.first_key, k = 0; i <= last; i += step, ++k) {
      out->push_back({i, std::min(k, last_spec)});
    }
  }
  if (!(spec.flags & kCmdMovableKeys)) return true;
  int first, last;
  const bool ok = spec.first_key == 0 ? NumkeysKeyRange(spec, args, &first, &last)
                                      : NumkeysStoreSources(spec, args, &first, &last);
  if (!ok) return false;
  for (int i = first; i <= last; ++i) out->push_back({i, spec.first_key == 0 ? 0 : 1});
  return true;
}

bool StoredKeyArgsSlow(const CommandSpec& spec, std::span<const std::string_view> args, int db,
                       std::string* arena, std::vector<std::string_view>* out) {
  // Scripts see their KEYS as the client sent them; their redis.call commands are rewritten.
  if (IsScript(spec.name) || !CommandHasKeys(spec)) return false;
  std::vector<KeyRef> keys;
  CommandKeys(spec, args, &keys);
  std::vector<bool> is_key(args.size());
  bool change = false;
  for (const KeyRef& k : keys) {
    is_key[static_cast<size_t>(k.arg)] = true;
    change = change || NeedsDbPrefix(db, args[static_cast<size_t>(k.arg)]);
  }
  if (!change) return false;
  size_t total = 0;
  for (std::string_view a : args) total += a.size() + 3;
  arena->clear();
  arena->reserve(total);  // no reallocation below: the views stay valid
  out->clear();
  for (size_t i = 0; i < args.size(); ++i) {
    const size_t at = arena->size();
    if (is_key[i]) {
      arena->append(DbKey(db, args[i]));
    } else {
      arena->append(args[i]);
    }
    out->emplace_back(arena->data() + at, arena->size() - at);
  }
  return true;
}

bool CommandHasKeys(const CommandSpec& spec) {
  // As Redis's doesCommandHaveKeys: a command whose only arguments of the kind are channels
  // (SPUBLISH, SSUBSCRIBE, SUNSUBSCRIBE: key specs marked not_key) has none.
  const std::string_view specs = SpecsOf(spec.name);
  return spec.first_key > 0 || (spec.flags & kCmdMovableKeys) ||
         (!specs.empty() && specs != "not_key");
}

KeyRange LegacyKeyRange(const CommandSpec& spec) {
  if (SpecsOf(spec.name) != "not_key") return {spec.first_key, spec.last_key, spec.key_step};
  return {1, spec.arity < 0 ? -1 : spec.arity - 2, 1};
}

bool KeysAreOptional(const CommandSpec& spec) { return IsScript(spec.name); }

std::string_view KeySpecFlags(const CommandSpec& spec, std::span<const std::string_view> args,
                              int index) {
  if (spec.name == "set") {
    // SET ... GET reads the old value; without GET it overwrites blindly.
    for (size_t i = 3; i < args.size(); ++i) {
      if (EqualsNoCase(args[i], "get")) return "RW access update";
    }
    return "OW update";
  }
  if (spec.name == "bitfield") {
    for (size_t i = 2; i < args.size(); ++i) {
      if (EqualsNoCase(args[i], "set") || EqualsNoCase(args[i], "incrby")) {
        return "RW access update";
      }
    }
    return "RO access";
  }
  std::string_view specs = SpecsOf(spec.name);
  for (int i = 0; i < index && !specs.empty(); ++i) {
    const size_t bar = specs.find('|');
    specs = bar == std::string_view::npos ? std::string_view() : specs.substr(bar + 1);
  }
  return specs.substr(0, specs.find('|'));
}

}  // namespace lavik
