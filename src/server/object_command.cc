// OBJECT ENCODING / FREQ / REFCOUNT / HELP (doc/commands.md, "OBJECT").
//
// Lavik keeps every value as one record in its own encoding (doc/collections.md), not in Redis's
// in-memory encodings, so ENCODING answers what Redis 7.0 would pick for the value as it is now:
// a string is "int" (a canonical 64-bit integer of at most 20 characters), "embstr" (at most 44
// bytes) or "raw"; a list is "quicklist" (Redis 7.0 has no other list encoding); a hash or a
// sorted set is "listpack" while within hash-max-listpack-entries/-value (zset-max-listpack-*),
// else "hashtable" / "skiplist"; a set is "intset" while every member is an integer and there
// are at most set-max-intset-entries of them, else "hashtable"; a stream is "stream". Unlike
// Redis, a collection that shrinks back under the limits reports the compact encoding again.
// REFCOUNT is always 1: Lavik shares no values between keys. FREQ and IDLETIME: Lavik keeps no
// access counter or time per key (its index entry is 8 bytes and stays so), so where Redis would
// answer a number they answer an error that says so; under the other kind of maxmemory-policy
// they give Redis's own errors, and a missing key is nil as in Redis.
#include "server/object_command.h"

#include <cstdint>
#include <string>
#include <vector>

#include "base/numbers.h"
#include "commands/collection_access.h"
#include "commands/multi_shard.h"
#include "protocol/errors.h"
#include "server/server.h"
#include "storage/list_record.h"

namespace lavik {
namespace {

// Redis's string2ll: no sign but '-', no leading zeros, no spaces, fits in 64 bits.
bool CanonicalInt(std::string_view s) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  if (s[i] == '0') return s.size() == 1;
  int64_t v;
  for (size_t j = i; j < s.size(); ++j) {
    if (s[j] < '0' || s[j] > '9') return false;
  }
  return ParseInt64(s, &v);
}

std::string_view StringEncoding(std::string_view v) {
  if (CanonicalInt(v)) return "int";
  return v.size() <= 44 ? "embstr" : "raw";
}

int64_t ConfigInt(Server* server, std::string_view name) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string_view pattern[] = {name};
  server->ConfigGet(pattern, &out);
  int64_t v = 0;
  if (!out.empty()) ParseInt64(out[0].second, &v);
  return v;
}

struct Limits {
  int64_t entries = 0;  // at most this many entries
  int64_t value = 0;    // no field, member or value longer than this
  bool Within(const CollectionView& v, bool values) const {
    if (static_cast<int64_t>(v.size()) > entries) return false;
    for (uint32_t i = 0; i < v.size(); ++i) {
      if (static_cast<int64_t>(v.field(i).size()) > value) return false;
      if (values && static_cast<int64_t>(v.value(i).size()) > value) return false;
    }
    return true;
  }
};

// Reads the key on its worker and names the encoding ("" if the key does not exist).
Task EncodingOf(Context& ctx, std::string_view key, std::string* out, std::string* error) {
  Server* server = ctx.server;
  KeyPlan plan(ctx, std::vector<std::string_view>{key});
  Limits hash{ConfigInt(server, "hash-max-listpack-entries"),
              ConfigInt(server, "hash-max-listpack-value")};
  Limits zset{ConfigInt(server, "zset-max-listpack-entries"),
              ConfigInt(server, "zset-max-listpack-value")};
  const int64_t intset_entries = ConfigInt(server, "set-max-intset-entries");
  co_await plan.Lock();
  co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
    const KeyInfo info = st.Lookup(key, ctx.now_ms);
    if (!info.exists) co_return;
    switch (info.type) {
      case ValueType::kString: {
        ReadResult r = co_await st.ReadValue(key, info);
        if (!r.ok()) {
          *error = r.status == ReadResult::Status::kError ? r.error : std::string(kErrNoSuchKey);
          co_return;
        }
        *out = StringEncoding(r.value);
        co_return;
      }
      case ValueType::kList:
        *out = "quicklist";
        co_return;
      case ValueType::kStream:
        *out = "stream";
        co_return;
      default:
        break;
    }
    CollectionRead c;
    if (!co_await ReadCollection(st, key, info.type, ctx.now_ms, false, false, &c, error)) {
      co_return;
    }
    if (info.type == ValueType::kHash) {
      *out = hash.Within(c.view, true) ? "listpack" : "hashtable";
    } else if (info.type == ValueType::kZSet) {
      *out = zset.Within(c.view, false) ? "listpack" : "skiplist";
    } else {
      bool ints = static_cast<int64_t>(c.view.size()) <= intset_entries;
      for (uint32_t i = 0; ints && i < c.view.size(); ++i) ints = CanonicalInt(c.view.field(i));
      *out = ints ? "intset" : "hashtable";
    }
  });
  co_await plan.Unlock();
}

Task ObjectEncoding(Context& ctx) {
  std::string encoding, error;
  co_await EncodingOf(ctx, ctx.args[2], &encoding, &error);
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else if (encoding.empty()) {
    ctx.reply->Null();
  } else {
    ctx.reply->Bulk(encoding);
  }
}

Task KeyExists(Context& ctx, std::string_view key, bool* exists) {
  KeyPlan plan(ctx, std::vector<std::string_view>{key});
  co_await plan.On(plan.shard_of(0),
                   [&](Store& st) { *exists = st.Lookup(key, ctx.now_ms).exists; });
}

Task ObjectRefcount(Context& ctx) {
  bool exists = false;
  co_await KeyExists(ctx, ctx.args[2], &exists);
  if (exists) {
    ctx.reply->Integer(1);
  } else {
    ctx.reply->Null();
  }
}

bool LfuPolicy(Server* server) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string_view pattern[] = {"maxmemory-policy"};
  server->ConfigGet(pattern, &out);
  return !out.empty() && out[0].second.find("lfu") != std::string::npos;
}

// FREQ and IDLETIME: nil for a missing key; Redis's error under the other kind of policy; and
// where Redis would answer a number, an error saying Lavik has none (never a made-up figure).
Task ObjectAccess(Context& ctx, bool freq) {
  bool exists = false;
  co_await KeyExists(ctx, ctx.args[2], &exists);
  if (!exists) {
    ctx.reply->Null();
    co_return;
  }
  const bool lfu = LfuPolicy(ctx.server);
  if (freq) {
    ctx.reply->Error(lfu ? kErrNoFreqTracking : kErrNoLfu);
  } else {
    ctx.reply->Error(lfu ? kErrLfuNoIdle : kErrNoIdleTracking);
  }
}

Task ObjectFreq(Context& ctx) { return ObjectAccess(ctx, true); }
Task ObjectIdletime(Context& ctx) { return ObjectAccess(ctx, false); }

Task ObjectHelp(Context& ctx) {
  static const char* kLines[] = {
      "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply->Array(std::size(kLines));
  for (const char* line : kLines) ctx.reply->Simple(line);
  co_return;
}

constexpr uint32_t kR = kCmdReadOnly | kCmdHome;

const CommandSpec kObjectSubcommands[] = {
    {"object|encoding", 3, kR, 2, 2, 1, &ObjectEncoding, "@keyspace @read @slow", "generic",
     "Returns the internal encoding of a Redis object.", "2.2.3"},
    {"object|freq", 3, kR, 2, 2, 1, &ObjectFreq, "@keyspace @read @slow", "generic",
     "Returns the logarithmic access frequency counter of a Redis object.", "4.0.0"},
    {"object|idletime", 3, kR, 2, 2, 1, &ObjectIdletime, "@keyspace @read @slow", "generic",
     "Returns the time since the last access to a Redis object.", "2.2.3"},
    {"object|refcount", 3, kR, 2, 2, 1, &ObjectRefcount, "@keyspace @read @slow", "generic",
     "Returns the reference count of a value of a key.", "2.2.3"},
    {"object|help", 2, kCmdLoading | kCmdStale | kCmdHome, 0, 0, 0, &ObjectHelp, "@keyspace @slow",
     "generic", "Returns helpful text about the different subcommands.", "6.2.0"},
};

const CommandSpec kObjectCommands[] = {
    {"object", -2, 0, 0, 0, 0, nullptr, "@slow", "generic",
     "A container for object introspection commands.", "2.2.3", kObjectSubcommands},
};

}  // namespace

std::span<const CommandSpec> ObjectCommands() { return kObjectCommands; }

}  // namespace lavik
