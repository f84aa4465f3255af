#include "config/config_registry.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "base/ascii.h"
#include "base/glob.h"
#include "base/numbers.h"
#include "config/config_values.h"

namespace lavik {
namespace {

using namespace config_values;  // NOLINT: the parsers named in the table below

enum class Type : uint8_t { kBool, kInt, kMemory, kEnum, kString, kSpecial };

// Parameter flags.
constexpr uint8_t kImmutable = 1;  // CONFIG SET refuses; only start-up may write
constexpr uint8_t kProtected = 2;  // refused unless enable-protected-configs allows it
constexpr uint8_t kSensitive = 4;  // value is a secret
constexpr uint8_t kHidden = 8;     // CONFIG GET finds it by exact name only

constexpr int64_t kI32Min = INT32_MIN;
constexpr uint64_t kI32Max = INT32_MAX;
constexpr uint64_t kU32Max = UINT32_MAX;
constexpr uint64_t kI64Max = INT64_MAX;
constexpr uint64_t kU64Max = UINT64_MAX;

// Validates `in` for a special parameter; `current` is the stored value (some
// parameters, like client-output-buffer-limit, change only the parts named).
// Writes the normalized value to `out` or the bare reason to `err`.
using SpecialParser = bool (*)(std::string_view in, std::string_view current, std::string* out,
                               std::string* err);

// How CONFIG GET shows a stored value that keeps more than Redis prints (nullptr: as stored).
using ShownValue = std::string (*)(std::string_view stored);

struct ParamSpec {
  const char* name;
  const char* alias;  // nullptr if none
  Type type;
  uint8_t flags;
  int64_t min;  // kInt and kMemory bounds, inclusive
  uint64_t max;
  const char* enum_values;  // kEnum: comma-separated, in Redis's order
  SpecialParser special;    // kSpecial
  const char* default_value;
  ShownValue shown = nullptr;
};

constexpr ParamSpec Bool(const char* name, const char* def, uint8_t flags = 0,
                         const char* alias = nullptr) {
  return {name, alias, Type::kBool, flags, 0, 0, nullptr, nullptr, def};
}
constexpr ParamSpec Int(const char* name, int64_t min, uint64_t max, const char* def,
                        uint8_t flags = 0, const char* alias = nullptr) {
  return {name, alias, Type::kInt, flags, min, max, nullptr, nullptr, def};
}
constexpr ParamSpec Mem(const char* name, int64_t min, uint64_t max, const char* def,
                        uint8_t flags = 0, const char* alias = nullptr) {
  return {name, alias, Type::kMemory, flags, min, max, nullptr, nullptr, def};
}
constexpr ParamSpec Enum(const char* name, const char* values, const char* def, uint8_t flags = 0) {
  return {name, nullptr, Type::kEnum, flags, 0, 0, values, nullptr, def};
}
constexpr ParamSpec Str(const char* name, const char* def, uint8_t flags = 0,
                        const char* alias = nullptr) {
  return {name, alias, Type::kString, flags, 0, 0, nullptr, nullptr, def};
}
constexpr ParamSpec Special(const char* name, SpecialParser parser, const char* def,
                            uint8_t flags = 0, const char* alias = nullptr) {
  return {name, alias, Type::kSpecial, flags, 0, 0, nullptr, parser, def};
}

// ---- The table --------------------------------------------------------------

// Every parameter of redis-server 7.0.15 (CONFIG GET * there lists these
// names plus the aliases; the last five are hidden), then Lavik's own. Ranges
// and enum orders are Redis's (they appear in error texts). Defaults are
// Redis's except where Lavik differs: bind (127.0.0.1), save ("" since Lavik
// takes no RDB snapshots), dir (the working directory, set by LoadFrom).
constexpr ParamSpec kSpecs[] = {
    Enum("acl-pubsub-default", "allchannels,resetchannels", "resetchannels"),
    Str("aclfile", "", kImmutable),
    Int("acllog-max-len", 0, kI64Max, "128"),
    Int("active-defrag-cycle-max", 1, 99, "25"),
    Int("active-defrag-cycle-min", 1, 99, "1"),
    Mem("active-defrag-ignore-bytes", 1, kI64Max, "104857600"),
    Int("active-defrag-max-scan-fields", 1, kI64Max, "1000"),
    Int("active-defrag-threshold-lower", 0, 1000, "10"),
    Int("active-defrag-threshold-upper", 0, 1000, "100"),
    Int("active-expire-effort", 1, 10, "1"),
    Bool("activedefrag", "no"),
    Bool("activerehashing", "yes"),
    Bool("always-show-logo", "no", kImmutable),
    Bool("aof-disable-auto-gc", "no"),
    Bool("aof-load-truncated", "yes"),
    Bool("aof-rewrite-incremental-fsync", "yes"),
    Bool("aof-timestamp-enabled", "no"),
    Bool("aof-use-rdb-preamble", "yes"),
    Str("aof_rewrite_cpulist", "", kImmutable),
    Str("appenddirname", "appendonlydir", kImmutable),
    Str("appendfilename", "appendonly.aof", kImmutable),
    Enum("appendfsync", "everysec,always,no", "everysec"),
    Bool("appendonly", "no"),
    Mem("auto-aof-rewrite-min-size", 0, kI64Max, "67108864"),
    Int("auto-aof-rewrite-percentage", 0, kI32Max, "100"),
    Str("bgsave_cpulist", "", kImmutable),
    Special("bind", ParseBind, "127.0.0.1"),
    Str("bind-source-addr", ""),
    Str("bio_cpulist", "", kImmutable),
    Int("busy-reply-threshold", 0, kI64Max, "5000", 0, "lua-time-limit"),
    Special("client-output-buffer-limit", ParseClientOutputBufferLimit,
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    Mem("client-query-buffer-limit", 1048576, kI64Max, "1073741824"),
    Bool("cluster-allow-pubsubshard-when-down", "yes"),
    Bool("cluster-allow-reads-when-down", "no"),
    Bool("cluster-allow-replica-migration", "yes"),
    Int("cluster-announce-bus-port", 0, 65535, "0"),
    Str("cluster-announce-hostname", ""),
    Str("cluster-announce-ip", ""),
    Int("cluster-announce-port", 0, 65535, "0"),
    Int("cluster-announce-tls-port", 0, 65535, "0"),
    Str("cluster-config-file", "nodes.conf", kImmutable),
    Bool("cluster-enabled", "no", kImmutable),
    Mem("cluster-link-sendbuf-limit", 0, kU64Max, "0"),
    Int("cluster-migration-barrier", 0, kI32Max, "1"),
    Int("cluster-node-timeout", 0, kI64Max, "15000"),
    Int("cluster-port", 0, 65535, "0", kImmutable),
    Enum("cluster-preferred-endpoint-type", "ip,hostname,unknown-endpoint", "ip"),
    Bool("cluster-replica-no-failover", "no", 0, "cluster-slave-no-failover"),
    Int("cluster-replica-validity-factor", 0, kI32Max, "10", 0, "cluster-slave-validity-factor"),
    Bool("cluster-require-full-coverage", "yes"),
    Bool("crash-log-enabled", "yes"),
    Bool("crash-memcheck-enabled", "yes"),
    Bool("daemonize", "no", kImmutable),
    Int("databases", 1, 16, "16", kImmutable),  // base/db_key.h kMaxDatabases
    Str("dbfilename", "dump.rdb", kProtected),
    Str("dir", "", kProtected),
    Bool("disable-thp", "yes", kImmutable),
    Bool("dynamic-hz", "yes"),
    Enum("enable-debug-command", "no,yes,local", "no", kImmutable),
    Enum("enable-module-command", "no,yes,local", "no", kImmutable),
    Enum("enable-protected-configs", "no,yes,local", "no", kImmutable),
    Int("hash-max-listpack-entries", 0, kI64Max, "512", 0, "hash-max-ziplist-entries"),
    Mem("hash-max-listpack-value", 0, kI64Max, "64", 0, "hash-max-ziplist-value"),
    Mem("hll-sparse-max-bytes", 0, kI64Max, "3000"),
    Int("hz", 0, kI32Max, "10"),
    Str("ignore-warnings", ""),
    Int("io-threads", 1, 128, "1", kImmutable),
    Bool("io-threads-do-reads", "no", kImmutable),
    Bool("jemalloc-bg-thread", "yes"),
    Int("latency-monitor-threshold", 0, kI64Max, "0"),
    Bool("latency-tracking", "yes"),
    Special("latency-tracking-info-percentiles", ParsePercentiles, "50 99 99.9"),
    Bool("lazyfree-lazy-eviction", "no"),
    Bool("lazyfree-lazy-expire", "no"),
    Bool("lazyfree-lazy-server-del", "no"),
    Bool("lazyfree-lazy-user-del", "no"),
    Bool("lazyfree-lazy-user-flush", "no"),
    Int("lfu-decay-time", 0, kI32Max, "1"),
    Int("lfu-log-factor", 0, kI32Max, "10"),
    Int("list-compress-depth", 0, kI32Max, "0"),
    Int("list-max-listpack-size", kI32Min, kI32Max, "-2", 0, "list-max-ziplist-size"),
    Str("logfile", "", kImmutable),
    Enum("loglevel", "debug,verbose,notice,warning", "notice"),
    Str("masterauth", "", kSensitive),
    Str("masteruser", "", kSensitive),
    Int("maxclients", 1, kU32Max, "10000"),
    Mem("maxmemory", 0, kU64Max, "0"),
    Special("maxmemory-clients", ParseMemoryOrPercent, "0"),
    Int("maxmemory-eviction-tenacity", 0, 100, "10"),
    Enum("maxmemory-policy",
         "volatile-lru,volatile-lfu,volatile-random,volatile-ttl,allkeys-lru,allkeys-lfu,"
         "allkeys-random,noeviction",
         "noeviction"),
    Int("maxmemory-samples", 1, kI32Max, "5"),
    Int("min-replicas-max-lag", 0, kI32Max, "10", 0, "min-slaves-max-lag"),
    Int("min-replicas-to-write", 0, kI32Max, "0", 0, "min-slaves-to-write"),
    Bool("no-appendfsync-on-rewrite", "no"),
    {"notify-keyspace-events", nullptr, Type::kSpecial, 0, 0, 0, nullptr, ParseKeyspaceEvents, "",
     ShowKeyspaceEvents},
    Enum("oom-score-adj", "no,yes,relative,absolute", "no"),
    Special("oom-score-adj-values", ParseOomScoreAdjValues, "0 200 800"),
    Str("pidfile", "", kImmutable),
    Int("port", 0, 65535, "6379"),
    Special("proc-title-template", ParseProcTitleTemplate, "{title} {listen-addr} {server-mode}"),
    Enum("propagation-error-behavior", "ignore,panic,panic-on-replicas", "ignore"),
    Bool("protected-mode", "yes"),
    Mem("proto-max-bulk-len", 1048576, kI64Max, "536870912"),
    Bool("rdb-del-sync-files", "no"),
    Bool("rdb-save-incremental-fsync", "yes"),
    Bool("rdbchecksum", "yes", kImmutable),
    Bool("rdbcompression", "yes"),
    Mem("repl-backlog-size", 1, kI64Max, "1048576"),
    Int("repl-backlog-ttl", 0, kI64Max, "3600"),
    Bool("repl-disable-tcp-nodelay", "no"),
    Enum("repl-diskless-load", "disabled,on-empty-db,swapdb", "disabled"),
    Bool("repl-diskless-sync", "yes"),
    Int("repl-diskless-sync-delay", 0, kI32Max, "5"),
    Int("repl-diskless-sync-max-replicas", 0, kI32Max, "0"),
    Int("repl-ping-replica-period", 1, kI32Max, "10", 0, "repl-ping-slave-period"),
    Int("repl-timeout", 1, kI32Max, "60"),
    Str("replica-announce-ip", "", 0, "slave-announce-ip"),
    Int("replica-announce-port", 0, 65535, "0", 0, "slave-announce-port"),
    Bool("replica-announced", "yes"),
    Bool("replica-ignore-disk-write-errors", "no"),
    Bool("replica-ignore-maxmemory", "yes", 0, "slave-ignore-maxmemory"),
    Bool("replica-lazy-flush", "no", 0, "slave-lazy-flush"),
    Int("replica-priority", 0, kI32Max, "100", 0, "slave-priority"),
    Bool("replica-read-only", "yes", 0, "slave-read-only"),
    Bool("replica-serve-stale-data", "yes", 0, "slave-serve-stale-data"),
    Special("replicaof", ParseReplicaOf, "", kImmutable, "slaveof"),
    Str("requirepass", "", kSensitive),
    Enum("sanitize-dump-payload", "no,yes,clients", "no"),
    Special("save", ParseSave, ""),
    Str("server_cpulist", "", kImmutable),
    Int("set-max-intset-entries", 0, kI64Max, "512"),
    Bool("set-proc-title", "yes", kImmutable),
    Special("shutdown-on-sigint", ParseShutdownOnSignal, "default"),
    Special("shutdown-on-sigterm", ParseShutdownOnSignal, "default"),
    Int("shutdown-timeout", 0, kI32Max, "10"),
    Int("slowlog-log-slower-than", -1, kI64Max, "10000"),
    Int("slowlog-max-len", 0, kI64Max, "128"),
    Int("socket-mark-id", 0, kU32Max, "0", kImmutable),
    Bool("stop-writes-on-bgsave-error", "yes"),
    Mem("stream-node-max-bytes", 0, kI64Max, "4096"),
    Int("stream-node-max-entries", 0, kI64Max, "100"),
    Enum("supervised", "upstart,systemd,auto,no", "no", kImmutable),
    Bool("syslog-enabled", "no", kImmutable),
    Enum("syslog-facility", "user,local0,local1,local2,local3,local4,local5,local6,local7",
         "local0", kImmutable),
    Str("syslog-ident", "redis", kImmutable),
    Int("tcp-backlog", 0, kI32Max, "511", kImmutable),
    Int("tcp-keepalive", 0, kI32Max, "300"),
    Int("timeout", 0, kI32Max, "0"),
    Enum("tls-auth-clients", "no,yes,optional", "yes"),
    Str("tls-ca-cert-dir", ""),
    Str("tls-ca-cert-file", ""),
    Str("tls-cert-file", ""),
    Str("tls-ciphers", ""),
    Str("tls-ciphersuites", ""),
    Str("tls-client-cert-file", ""),
    Str("tls-client-key-file", ""),
    Str("tls-client-key-file-pass", "", kSensitive),
    Bool("tls-cluster", "no"),
    Str("tls-dh-params-file", ""),
    Str("tls-key-file", ""),
    Str("tls-key-file-pass", "", kSensitive),
    Int("tls-port", 0, 65535, "0"),
    Bool("tls-prefer-server-ciphers", "no"),
    Str("tls-protocols", ""),
    Bool("tls-replication", "no"),
    Int("tls-session-cache-size", 0, kI32Max, "20480"),
    Int("tls-session-cache-timeout", 0, kI32Max, "300"),
    Bool("tls-session-caching", "yes"),
    Int("tracking-table-max-keys", 0, kI64Max, "1000000"),
    Str("unixsocket", "", kImmutable),
    Special("unixsocketperm", ParseOctal, "0", kImmutable),
    Int("zset-max-listpack-entries", 0, kI64Max, "128", 0, "zset-max-ziplist-entries"),
    Mem("zset-max-listpack-value", 0, kI64Max, "64", 0, "zset-max-ziplist-value"),
    // Hidden in Redis 7.0: CONFIG GET answers them only by exact name.
    Int("key-load-delay", kI32Min, kI32Max, "0", kHidden),
    Int("loading-process-events-interval-bytes", 1024, kI32Max, "2097152", kHidden),
    Int("rdb-key-save-delay", kI32Min, kI32Max, "0", kHidden),
    Bool("use-exit-on-panic", "no", kHidden),
    Int("watchdog-period", 0, kI32Max, "0", kHidden),
    // Lavik's own. Each mirrors a command-line flag of the same name except
    // defrag-paused, which exists only at run time, and replica-apply-window, set as Redis's
    // parameters are (--name value, the config file, CONFIG SET).
    Int("cache-mb", 0, kI32Max, "256"),
    Str("data-file", "./data/lavik.data", kImmutable),
    Mem("data-file-size", 0, kU64Max, "0", kImmutable),
    Bool("defrag-paused", "no"),
    Str("log-dir", "./logs", kImmutable),
    Mem("max-memory", 0, kI64Max, "0"),
    Int("metrics-port", 0, 65535, "0", kImmutable),
    Enum("network", "kernel", "kernel", kImmutable),
    Bool("pin-workers", "yes", kImmutable),
    Int("registered-buffer-mb-per-worker", 0, 65536, "16", kImmutable),
    Int("replica-apply-window", 0, 65536, "1024"),
    Bool("shutdown-checkpoint", "no"),
    Enum("storage", "uring", "uring", kImmutable),
    Int("threads", 0, 256, "0", kImmutable),
    Int("tomb-raider-interval-ms", 0, kI64Max, "86400000"),
};
constexpr size_t kNumParams = sizeof(kSpecs) / sizeof(kSpecs[0]);

// ---- Name index ---------------------------------------------------------------

struct NameEntry {
  std::string_view name;  // lower case
  uint16_t param;
};

// Every name and alias, sorted, for binary search and ordered CONFIG GET.
const std::vector<NameEntry>& Names() {
  static const std::vector<NameEntry> names = [] {
    std::vector<NameEntry> v;
    for (size_t i = 0; i < kNumParams; ++i) {
      v.push_back({kSpecs[i].name, static_cast<uint16_t>(i)});
      if (kSpecs[i].alias != nullptr) v.push_back({kSpecs[i].alias, static_cast<uint16_t>(i)});
    }
    std::sort(v.begin(), v.end(),
              [](const NameEntry& a, const NameEntry& b) { return a.name < b.name; });
    return v;
  }();
  return names;
}

// Index into Names() of `name` (any case), or -1.
int FindName(std::string_view name) {
  const std::vector<NameEntry>& names = Names();
  std::string lower = ToLower(name);
  auto it = std::lower_bound(names.begin(), names.end(), lower,
                             [](const NameEntry& e, const std::string& n) { return e.name < n; });
  if (it == names.end() || it->name != lower) return -1;
  return static_cast<int>(it - names.begin());
}

// Checks `value` against the parameter's type; the error is the bare reason.
Status ValidateValue(const ParamSpec& spec, std::string_view value, std::string_view current,
                     std::string* normalized) {
  switch (spec.type) {
    case Type::kBool:
      if (EqualsNoCase(value, "yes") || EqualsNoCase(value, "no")) {
        *normalized = ToLower(value);
        return Status::Ok();
      }
      return Status::Error("argument must be 'yes' or 'no'");
    case Type::kInt: {
      int64_t v;
      if (!ParseInt64(value, &v))
        return Status::Error("argument couldn't be parsed into an integer");
      if (v < spec.min || (v > 0 && static_cast<uint64_t>(v) > spec.max)) {
        return Status::Error(RangeError(spec.min, spec.max));
      }
      *normalized = std::to_string(v);
      return Status::Ok();
    }
    case Type::kMemory: {
      uint64_t v;
      if (!ConfigRegistry::ParseMemory(value, &v)) {
        return Status::Error("argument must be a memory value");
      }
      if (v < static_cast<uint64_t>(spec.min) || v > spec.max) {
        return Status::Error(RangeError(spec.min, spec.max));
      }
      *normalized = std::to_string(v);
      return Status::Ok();
    }
    case Type::kEnum: {
      std::string_view values = spec.enum_values;
      std::string list;
      while (!values.empty()) {
        size_t comma = values.find(',');
        std::string_view option = values.substr(0, comma);
        if (EqualsNoCase(value, option)) {
          *normalized = std::string(option);
          return Status::Ok();
        }
        list += list.empty() ? "" : ", ";
        list += option;
        values = comma == std::string_view::npos ? std::string_view() : values.substr(comma + 1);
      }
      return Status::Error("argument(s) must be one of the following: " + list);
    }
    case Type::kString:
      *normalized = std::string(value);
      return Status::Ok();
    case Type::kSpecial: {
      std::string err;
      if (!spec.special(value, current, normalized, &err)) return Status::Error(std::move(err));
      return Status::Ok();
    }
  }
  return Status::Error("unsupported parameter type");
}

Status SetFailed(std::string_view name, std::string_view reason) {
  return Status::Error("ERR CONFIG SET failed (possibly related to argument '" + std::string(name) +
                       "') - " + std::string(reason));
}

}  // namespace

// ---- ConfigRegistry -----------------------------------------------------------

ConfigRegistry::ConfigRegistry() : values_(kNumParams), hooks_(kNumParams) {
  for (size_t i = 0; i < kNumParams; ++i) values_[i] = kSpecs[i].default_value;
}

bool ConfigRegistry::ParseMemory(std::string_view text, uint64_t* out) {
  return config_values::ParseMemory(text, out);
}

std::string_view ConfigRegistry::CanonicalName(std::string_view name) {
  int index = FindName(name);
  return index < 0 ? std::string_view() : kSpecs[Names()[index].param].name;
}

Status ConfigRegistry::Normalize(std::string_view name, std::string_view value,
                                 const std::string* current, std::string* normalized) {
  int index = FindName(name);
  if (index < 0) return Status::Error("unknown parameter");
  const ParamSpec& spec = kSpecs[Names()[index].param];
  return ValidateValue(spec, value, current ? *current : spec.default_value, normalized);
}

Status ConfigRegistry::SetInitial(std::string_view name, std::string_view value) {
  int index = FindName(name);
  if (index < 0) return Status::Error("unknown parameter");
  size_t param = Names()[index].param;
  std::string normalized;
  Status s = ValidateValue(kSpecs[param], value, values_[param], &normalized);
  if (s.ok) values_[param] = std::move(normalized);
  return s;
}

Status ConfigRegistry::Set(const std::vector<std::pair<std::string, std::string>>& params,
                           bool local_client) {
  const std::vector<NameEntry>& names = Names();
  const std::string* protected_configs = Value("enable-protected-configs");
  const bool allow_protected =
      protected_configs != nullptr &&
      (*protected_configs == "yes" || (*protected_configs == "local" && local_client));
  std::vector<const NameEntry*> entries;
  entries.reserve(params.size());
  // Pass 1, names only, as Redis: an unknown or read-only name anywhere in the
  // list wins over a bad value earlier in it.
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].first;
    int index = FindName(name);
    if (index < 0) {
      return Status::Error("ERR Unknown option or number of arguments for CONFIG SET - '" + name +
                           "'");
    }
    const NameEntry& entry = names[index];
    uint8_t flags = kSpecs[entry.param].flags;
    if (flags & kImmutable) return SetFailed(name, "can't set immutable config");
    if ((flags & kProtected) && !allow_protected) {
      return SetFailed(name, "can't set protected config");
    }
    for (size_t j = 0; j < i; ++j) {
      // Redis compares the names given, so a name and its alias may both appear.
      if (entries[j] == &entry) return SetFailed(name, "duplicate parameter");
    }
    entries.push_back(&entry);
  }
  // Pass 2: every value, before anything changes.
  std::vector<std::string> next(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    size_t param = entries[i]->param;
    Status s = ValidateValue(kSpecs[param], params[i].second, values_[param], &next[i]);
    if (!s.ok) return SetFailed(entries[i]->name, s.error);
  }
  // Pass 3: store, then tell the hooks; undo everything if one refuses.
  std::vector<std::string> previous(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    size_t param = entries[i]->param;
    previous[i] = values_[param];
    values_[param] = next[i];
  }
  std::vector<size_t> notified;
  for (size_t i = 0; i < params.size(); ++i) {
    size_t param = entries[i]->param;
    if (next[i] == previous[i]) continue;
    notified.push_back(param);
    for (const ChangeHook& hook : hooks_[param]) {
      Status s = hook(values_[param]);
      if (s.ok) continue;
      for (size_t k = params.size(); k-- > 0;) values_[entries[k]->param] = previous[k];
      // Best effort: hooks that accepted the new value get the old one back.
      for (size_t p : notified) {
        for (const ChangeHook& undo : hooks_[p]) undo(values_[p]);
      }
      return SetFailed(entries[i]->name, s.error);
    }
  }
  return Status::Ok();
}

void ConfigRegistry::Get(std::span<const std::string_view> patterns,
                         std::vector<std::pair<std::string, std::string>>* out) const {
  const std::vector<NameEntry>& names = Names();
  std::vector<bool> seen(names.size());
  for (std::string_view pattern : patterns) {
    if (pattern.find_first_of("*?[") == std::string_view::npos) {
      int index = FindName(pattern);
      if (index >= 0 && !seen[index]) {
        seen[index] = true;
        out->emplace_back(std::string(pattern), Shown(names[index].param));
      }
      continue;
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (seen[i] || (kSpecs[names[i].param].flags & kHidden)) continue;
      if (GlobMatch(pattern, names[i].name, /*nocase=*/true)) {
        seen[i] = true;
        out->emplace_back(std::string(names[i].name), Shown(names[i].param));
      }
    }
  }
}

std::string ConfigRegistry::Shown(size_t param) const {
  const ShownValue shown = kSpecs[param].shown;
  return shown != nullptr ? shown(values_[param]) : values_[param];
}

const std::string* ConfigRegistry::Value(std::string_view name) const {
  int index = FindName(name);
  return index < 0 ? nullptr : &values_[Names()[index].param];
}

bool ConfigRegistry::IsSensitive(std::string_view name) const {
  int index = FindName(name);
  return index >= 0 && (kSpecs[Names()[index].param].flags & kSensitive);
}

bool ConfigRegistry::OnChange(std::string name, ChangeHook apply) {
  int index = FindName(name);
  if (index < 0) return false;
  hooks_[Names()[index].param].push_back(std::move(apply));
  return true;
}

}  // namespace lavik
