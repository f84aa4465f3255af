#include "config/config_registry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"

namespace lavik {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs Get(const ConfigRegistry& registry, std::vector<std::string_view> patterns) {
  Pairs out;
  registry.Get(patterns, &out);
  return out;
}

std::string SetError(ConfigRegistry& registry, Pairs params) {
  Status s = registry.Set(params);
  return s.ok ? "OK" : s.error;
}

std::string Failed(std::string_view name, std::string_view reason) {
  return "ERR CONFIG SET failed (possibly related to argument '" + std::string(name) + "') - " +
         std::string(reason);
}

// CONFIG GET * on a stock redis-server 7.0.15 (TLS build), name=value, minus
// `dir` and with Lavik's defaults for bind, daemonize, logfile, pidfile, port
// and save.
constexpr std::string_view kRedis70Defaults =
    "acl-pubsub-default=resetchannels\n"
    "aclfile=\n"
    "acllog-max-len=128\n"
    "active-defrag-cycle-max=25\n"
    "active-defrag-cycle-min=1\n"
    "active-defrag-ignore-bytes=104857600\n"
    "active-defrag-max-scan-fields=1000\n"
    "active-defrag-threshold-lower=10\n"
    "active-defrag-threshold-upper=100\n"
    "active-expire-effort=1\n"
    "activedefrag=no\n"
    "activerehashing=yes\n"
    "always-show-logo=no\n"
    "aof-disable-auto-gc=no\n"
    "aof-load-truncated=yes\n"
    "aof-rewrite-incremental-fsync=yes\n"
    "aof-timestamp-enabled=no\n"
    "aof-use-rdb-preamble=yes\n"
    "aof_rewrite_cpulist=\n"
    "appenddirname=appendonlydir\n"
    "appendfilename=appendonly.aof\n"
    "appendfsync=everysec\n"
    "appendonly=no\n"
    "auto-aof-rewrite-min-size=67108864\n"
    "auto-aof-rewrite-percentage=100\n"
    "bgsave_cpulist=\n"
    "bind=127.0.0.1\n"
    "bind-source-addr=\n"
    "bio_cpulist=\n"
    "busy-reply-threshold=5000\n"
    "client-output-buffer-limit=normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 "
    "60\n"
    "client-query-buffer-limit=1073741824\n"
    "cluster-allow-pubsubshard-when-down=yes\n"
    "cluster-allow-reads-when-down=no\n"
    "cluster-allow-replica-migration=yes\n"
    "cluster-announce-bus-port=0\n"
    "cluster-announce-hostname=\n"
    "cluster-announce-ip=\n"
    "cluster-announce-port=0\n"
    "cluster-announce-tls-port=0\n"
    "cluster-config-file=nodes.conf\n"
    "cluster-enabled=no\n"
    "cluster-link-sendbuf-limit=0\n"
    "cluster-migration-barrier=1\n"
    "cluster-node-timeout=15000\n"
    "cluster-port=0\n"
    "cluster-preferred-endpoint-type=ip\n"
    "cluster-replica-no-failover=no\n"
    "cluster-replica-validity-factor=10\n"
    "cluster-require-full-coverage=yes\n"
    "cluster-slave-no-failover=no\n"
    "cluster-slave-validity-factor=10\n"
    "crash-log-enabled=yes\n"
    "crash-memcheck-enabled=yes\n"
    "daemonize=no\n"
    "databases=16\n"
    "dbfilename=dump.rdb\n"
    "disable-thp=yes\n"
    "dynamic-hz=yes\n"
    "enable-debug-command=no\n"
    "enable-module-command=no\n"
    "enable-protected-configs=no\n"
    "hash-max-listpack-entries=512\n"
    "hash-max-listpack-value=64\n"
    "hash-max-ziplist-entries=512\n"
    "hash-max-ziplist-value=64\n"
    "hll-sparse-max-bytes=3000\n"
    "hz=10\n"
    "ignore-warnings=\n"
    "io-threads=1\n"
    "io-threads-do-reads=no\n"
    "jemalloc-bg-thread=yes\n"
    "latency-monitor-threshold=0\n"
    "latency-tracking=yes\n"
    "latency-tracking-info-percentiles=50 99 99.9\n"
    "lazyfree-lazy-eviction=no\n"
    "lazyfree-lazy-expire=no\n"
    "lazyfree-lazy-server-del=no\n"
    "lazyfree-lazy-user-del=no\n"
    "lazyfree-lazy-user-flush=no\n"
    "lfu-decay-time=1\n"
    "lfu-log-factor=10\n"
    "list-compress-depth=0\n"
    "list-max-listpack-size=-2\n"
    "list-max-ziplist-size=-2\n"
    "logfile=\n"
    "loglevel=notice\n"
    "lua-time-limit=5000\n"
    "masterauth=\n"
    "masteruser=\n"
    "maxclients=10000\n"
    "maxmemory=0\n"
    "maxmemory-clients=0\n"
    "maxmemory-eviction-tenacity=10\n"
    "maxmemory-policy=noeviction\n"
    "maxmemory-samples=5\n"
    "min-replicas-max-lag=10\n"
    "min-replicas-to-write=0\n"
    "min-slaves-max-lag=10\n"
    "min-slaves-to-write=0\n"
    "no-appendfsync-on-rewrite=no\n"
    "notify-keyspace-events=\n"
    "oom-score-adj=no\n"
    "oom-score-adj-values=0 200 800\n"
    "pidfile=\n"
    "port=6379\n"
    "proc-title-template={title} {listen-addr} {server-mode}\n"
    "propagation-error-behavior=ignore\n"
    "protected-mode=yes\n"
    "proto-max-bulk-len=536870912\n"
    "rdb-del-sync-files=no\n"
    "rdb-save-incremental-fsync=yes\n"
    "rdbchecksum=yes\n"
    "rdbcompression=yes\n"
    "repl-backlog-size=1048576\n"
    "repl-backlog-ttl=3600\n"
    "repl-disable-tcp-nodelay=no\n"
    "repl-diskless-load=disabled\n"
    "repl-diskless-sync=yes\n"
    "repl-diskless-sync-delay=5\n"
    "repl-diskless-sync-max-replicas=0\n"
    "repl-ping-replica-period=10\n"
    "repl-ping-slave-period=10\n"
    "repl-timeout=60\n"
    "replica-announce-ip=\n"
    "replica-announce-port=0\n"
    "replica-announced=yes\n"
    "replica-ignore-disk-write-errors=no\n"
    "replica-ignore-maxmemory=yes\n"
    "replica-lazy-flush=no\n"
    "replica-priority=100\n"
    "replica-read-only=yes\n"
    "replica-serve-stale-data=yes\n"
    "replicaof=\n"
    "requirepass=\n"
    "sanitize-dump-payload=no\n"
    "save=\n"
    "server_cpulist=\n"
    "set-max-intset-entries=512\n"
    "set-proc-title=yes\n"
    "shutdown-on-sigint=default\n"
    "shutdown-on-sigterm=default\n"
    "shutdown-timeout=10\n"
    "slave-announce-ip=\n"
    "slave-announce-port=0\n"
    "slave-ignore-maxmemory=yes\n"
    "slave-lazy-flush=no\n"
    "slave-priority=100\n"
    "slave-read-only=yes\n"
    "slave-serve-stale-data=yes\n"
    "slaveof=\n"
    "slowlog-log-slower-than=10000\n"
    "slowlog-max-len=128\n"
    "socket-mark-id=0\n"
    "stop-writes-on-bgsave-error=yes\n"
    "stream-node-max-bytes=4096\n"
    "stream-node-max-entries=100\n"
    "supervised=no\n"
    "syslog-enabled=no\n"
    "syslog-facility=local0\n"
    "syslog-ident=redis\n"
    "tcp-backlog=511\n"
    "tcp-keepalive=300\n"
    "timeout=0\n"
    "tls-auth-clients=yes\n"
    "tls-ca-cert-dir=\n"
    "tls-ca-cert-file=\n"
    "tls-cert-file=\n"
    "tls-ciphers=\n"
    "tls-ciphersuites=\n"
    "tls-client-cert-file=\n"
    "tls-client-key-file=\n"
    "tls-client-key-file-pass=\n"
    "tls-cluster=no\n"
    "tls-dh-params-file=\n"
    "tls-key-file=\n"
    "tls-key-file-pass=\n"
    "tls-port=0\n"
    "tls-prefer-server-ciphers=no\n"
    "tls-protocols=\n"
    "tls-replication=no\n"
    "tls-session-cache-size=20480\n"
    "tls-session-cache-timeout=300\n"
    "tls-session-caching=yes\n"
    "tracking-table-max-keys=1000000\n"
    "unixsocket=\n"
    "unixsocketperm=0\n"
    "zset-max-listpack-entries=128\n"
    "zset-max-listpack-value=64\n"
    "zset-max-ziplist-entries=128\n"
    "zset-max-ziplist-value=64\n";

TEST(ConfigRegistryTest, HoldsEveryRedis70ParameterWithItsDefault) {
  ConfigRegistry registry;
  std::map<std::string, std::string> all;
  for (auto& [name, value] : Get(registry, {"*"})) {
    EXPECT_TRUE(all.emplace(name, value).second) << "listed twice: " << name;
  }
  std::string_view rest = kRedis70Defaults;
  int count = 0;
  while (!rest.empty()) {
    std::string_view line = rest.substr(0, rest.find('\n'));
    rest.remove_prefix(line.size() + 1);
    size_t eq = line.find('=');
    std::string name(line.substr(0, eq));
    ++count;
    auto it = all.find(name);
    ASSERT_NE(it, all.end()) << name;
    EXPECT_EQ(it->second, line.substr(eq + 1)) << name;
  }
  EXPECT_EQ(count, 191);
  EXPECT_TRUE(all.count("dir"));
  // Lavik's own parameters are listed as well.
  for (const char* name :
       {"cache-mb", "data-file", "data-file-size", "defrag-paused", "log-dir", "max-memory",
        "metrics-port", "network", "pin-workers", "registered-buffer-mb-per-worker",
        "replica-apply-window", "shutdown-checkpoint", "storage", "threads",
        "tomb-raider-interval-ms"}) {
    EXPECT_TRUE(all.count(name)) << name;
  }
  EXPECT_EQ(all.size(), 192u + 15u);
  EXPECT_EQ(all["defrag-paused"], "no");
  EXPECT_EQ(all["replica-apply-window"], "1024");
  EXPECT_EQ(all["cache-mb"], "256");
}

TEST(ConfigRegistryTest, GetExactNameEchoesTheNameAsGiven) {
  ConfigRegistry registry;
  EXPECT_EQ(Get(registry, {"MAXMEMORY"}), (Pairs{{"MAXMEMORY", "0"}}));
  EXPECT_EQ(Get(registry, {"nonexistent"}), Pairs{});
  EXPECT_EQ(Get(registry, {"lua-time-limit"}), (Pairs{{"lua-time-limit", "5000"}}));
}

TEST(ConfigRegistryTest, GetGlobIsCaseInsensitiveAndSorted) {
  ConfigRegistry registry;
  Pairs expected = {{"maxmemory", "0"},
                    {"maxmemory-clients", "0"},
                    {"maxmemory-eviction-tenacity", "10"},
                    {"maxmemory-policy", "noeviction"},
                    {"maxmemory-samples", "5"}};
  EXPECT_EQ(Get(registry, {"MaxMem*"}), expected);
  EXPECT_EQ(Get(registry, {"h?"}), (Pairs{{"hz", "10"}}));
  EXPECT_EQ(Get(registry, {"[mh]z"}), (Pairs{{"hz", "10"}}));
  EXPECT_EQ(Get(registry, {"*time-limit*"}), (Pairs{{"lua-time-limit", "5000"}}));
}

TEST(ConfigRegistryTest, GetListsEachNameOnceAcrossPatterns) {
  ConfigRegistry registry;
  Pairs first_exact = Get(registry, {"MAXMEMORY", "maxmem*", "maxmemory"});
  ASSERT_EQ(first_exact.size(), 5u);
  EXPECT_EQ(first_exact[0], (std::pair<std::string, std::string>{"MAXMEMORY", "0"}));
  Pairs first_glob = Get(registry, {"maxmem*", "MAXMEMORY"});
  ASSERT_EQ(first_glob.size(), 5u);
  EXPECT_EQ(first_glob[0].first, "maxmemory");
  // A name and its alias are different names.
  EXPECT_EQ(Get(registry, {"*priority"}),
            (Pairs{{"replica-priority", "100"}, {"slave-priority", "100"}}));
  EXPECT_EQ(Get(registry, {"slave-priority", "replica-priority"}),
            (Pairs{{"slave-priority", "100"}, {"replica-priority", "100"}}));
}

TEST(ConfigRegistryTest, HiddenParametersAnswerOnlyToTheirExactName) {
  ConfigRegistry registry;
  EXPECT_EQ(Get(registry, {"KEY-LOAD-DELAY"}), (Pairs{{"KEY-LOAD-DELAY", "0"}}));
  EXPECT_EQ(Get(registry, {"key-load-dela?"}), Pairs{});
  EXPECT_EQ(Get(registry, {"loading-process-events-interval-bytes"}),
            (Pairs{{"loading-process-events-interval-bytes", "2097152"}}));
  EXPECT_EQ(SetError(registry, {{"key-load-delay", "5"}}), "OK");
}

TEST(ConfigRegistryTest, AliasesShareOneValue) {
  ConfigRegistry registry;
  EXPECT_EQ(SetError(registry, {{"slave-priority", "7"}}), "OK");
  EXPECT_EQ(*registry.Value("replica-priority"), "7");
  EXPECT_EQ(SetError(registry, {{"hash-max-listpack-entries", "9"}}), "OK");
  EXPECT_EQ(*registry.Value("HASH-MAX-ZIPLIST-ENTRIES"), "9");
  // Redis 7.0 does not treat a name and its alias as duplicates; the last wins.
  EXPECT_EQ(SetError(registry, {{"replica-priority", "1"}, {"slave-priority", "2"}}), "OK");
  EXPECT_EQ(*registry.Value("replica-priority"), "2");
  EXPECT_EQ(registry.Value("nope"), nullptr);
}

TEST(ConfigRegistryTest, SetErrorTextsMatchRedis70) {
  ConfigRegistry registry;
  EXPECT_EQ(SetError(registry, {{"foo", "1"}}),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'");
  EXPECT_EQ(SetError(registry, {{"FOO", "1"}}),
            "ERR Unknown option or number of arguments for CONFIG SET - 'FOO'");
  EXPECT_EQ(SetError(registry, {{"maxmemory", "abc"}}),
            Failed("maxmemory", "argument must be a memory value"));
  EXPECT_EQ(SetError(registry, {{"daemonize", "no"}}),
            Failed("daemonize", "can't set immutable config"));
  EXPECT_EQ(SetError(registry, {{"DAEMONIZE", "no"}}),
            Failed("DAEMONIZE", "can't set immutable config"));
  EXPECT_EQ(SetError(registry, {{"slaveof", "no one"}}),
            Failed("slaveof", "can't set immutable config"));
  EXPECT_EQ(SetError(registry, {{"dir", "/tmp"}}), Failed("dir", "can't set protected config"));
  EXPECT_EQ(SetError(registry, {{"maxmemory", "1"}, {"MAXMEMORY", "2"}}),
            Failed("MAXMEMORY", "duplicate parameter"));
  EXPECT_EQ(SetError(registry, {{"threads", "4"}}),
            Failed("threads", "can't set immutable config"));
  // Value errors name the parameter in lower case, as an alias if one was used.
  EXPECT_EQ(SetError(registry, {{"MaxMemory", "abc"}}),
            Failed("maxmemory", "argument must be a memory value"));
  EXPECT_EQ(SetError(registry, {{"SLAVE-PRIORITY", "x"}}),
            Failed("slave-priority", "argument couldn't be parsed into an integer"));
}

TEST(ConfigRegistryTest, SetChecksAllNamesBeforeAnyValue) {
  ConfigRegistry registry;
  EXPECT_EQ(SetError(registry, {{"maxmemory", "abc"}, {"foo", "1"}}),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'");
  EXPECT_EQ(SetError(registry, {{"hz", "x"}, {"daemonize", "no"}}),
            Failed("daemonize", "can't set immutable config"));
  EXPECT_EQ(SetError(registry, {{"maxmemory", "1"}, {"hz", "5"}, {"maxmemory", "abc"}}),
            Failed("maxmemory", "duplicate parameter"));
  EXPECT_EQ(SetError(registry, {{"hz", "x"}, {"maxmemory", "abc"}}),
            Failed("hz", "argument couldn't be parsed into an integer"));
}

TEST(ConfigRegistryTest, MultiSetIsAtomic) {
  ConfigRegistry registry;
  EXPECT_EQ(SetError(registry, {{"hz", "11"}, {"maxmemory", "abc"}}),
            Failed("maxmemory", "argument must be a memory value"));
  EXPECT_EQ(*registry.Value("hz"), "10");
  EXPECT_EQ(SetError(registry, {{"hz", "11"}, {"maxmemory", "1gb"}, {"appendfsync", "ALWAYS"}}),
            "OK");
  EXPECT_EQ(*registry.Value("hz"), "11");
  EXPECT_EQ(*registry.Value("maxmemory"), "1073741824");
  EXPECT_EQ(*registry.Value("appendfsync"), "always");
  EXPECT_TRUE(registry.Set({}).ok);
}

TEST(ConfigRegistryTest, TypedValidation) {
  ConfigRegistry registry;
  const std::string kBool = "argument must be 'yes' or 'no'";
  const std::string kNotInt = "argument couldn't be parsed into an integer";
  EXPECT_EQ(SetError(registry, {{"activerehashing", "YES"}}), "OK");
  EXPECT_EQ(*registry.Value("activerehashing"), "yes");
  for (const char* bad : {"1", "true", " yes", ""}) {
    EXPECT_EQ(SetError(registry, {{"activerehashing", bad}}), Failed("activerehashing", kBool));
  }
  for (const char* bad :
       {"+5", " 5", "05", "5 ", "0x5", "-0", "1e3", "", "1k", "9223372036854775808"}) {
    EXPECT_EQ(SetError(registry, {{"hz", bad}}), Failed("hz", kNotInt)) << bad;
  }
  EXPECT_EQ(SetError(registry, {{"hz", "2147483648"}}),
            Failed("hz", "argument must be between 0 and 2147483647 inclusive"));
  EXPECT_EQ(SetError(registry, {{"slowlog-log-slower-than", "-2"}}),
            Failed("slowlog-log-slower-than",
                   "argument must be between -1 and 9223372036854775807 inclusive"));
  EXPECT_EQ(SetError(registry, {{"maxclients", "0"}}),
            Failed("maxclients", "argument must be between 1 and 4294967295 inclusive"));
  EXPECT_EQ(SetError(registry, {{"list-max-listpack-size", "-2147483649"}}),
            Failed("list-max-listpack-size",
                   "argument must be between -2147483648 and 2147483647 inclusive"));
  EXPECT_EQ(SetError(registry, {{"client-query-buffer-limit", "1k"}}),
            Failed("client-query-buffer-limit",
                   "argument must be between 1048576 and 9223372036854775807 inclusive"));
  EXPECT_EQ(
      SetError(registry, {{"appendfsync", "sometimes"}}),
      Failed("appendfsync", "argument(s) must be one of the following: everysec, always, no"));
  EXPECT_EQ(SetError(registry, {{"maxmemory-policy", "ALLKEYS-LRU"}}), "OK");
  EXPECT_EQ(*registry.Value("maxmemory-policy"), "allkeys-lru");
  EXPECT_EQ(SetError(registry, {{"requirepass", "a b"}}), "OK");
  EXPECT_EQ(*registry.Value("requirepass"), "a b");
  // A parameter Lavik has no use for is still validated, stored and shown.
  EXPECT_EQ(SetError(registry, {{"lfu-log-factor", "3"}}), "OK");
  EXPECT_EQ(Get(registry, {"lfu-log-factor"}), (Pairs{{"lfu-log-factor", "3"}}));
}

TEST(ConfigRegistryTest, MemoryValuesFollowRedisMemtoull) {
  const std::pair<const char*, uint64_t> kGood[] = {{"0", 0},
                                                    {"01", 1},
                                                    {"1b", 1},
                                                    {"1k", 1000},
                                                    {"1K", 1000},
                                                    {"1kb", 1024},
                                                    {"1KB", 1024},
                                                    {"1Kb", 1024},
                                                    {"1m", 1000000},
                                                    {"1mb", 1048576},
                                                    {"1g", 1000000000},
                                                    {"1gb", 1073741824},
                                                    {"1gB", 1073741824},
                                                    {"", 0},
                                                    {"kb", 0},
                                                    {"18446744073709551615", UINT64_MAX},
                                                    {"99999999999999999999999", UINT64_MAX},
                                                    {"4294967295gb", 4611686017353646080u}};
  for (const auto& [text, bytes] : kGood) {
    uint64_t v = 7;
    EXPECT_TRUE(ConfigRegistry::ParseMemory(text, &v)) << text;
    EXPECT_EQ(v, bytes) << text;
  }
  for (const char* bad :
       {"abc", "-1", "-0", "+1", "0x10", " 1", "1 ", "1 gb", "1.5gb", "1t", "1tb", "1kk"}) {
    uint64_t v;
    EXPECT_FALSE(ConfigRegistry::ParseMemory(bad, &v)) << bad;
  }
  ConfigRegistry registry;
  EXPECT_EQ(SetError(registry, {{"maxmemory", "99999999999999999999999"}}), "OK");
  EXPECT_EQ(*registry.Value("maxmemory"), "18446744073709551615");
  EXPECT_EQ(SetError(registry, {{"hash-max-listpack-value", "9223372036854775808"}}),
            Failed("hash-max-listpack-value",
                   "argument must be between 0 and 9223372036854775807 inclusive"));
}

TEST(ConfigRegistryTest, SaveParameter) {
  ConfigRegistry registry;
  EXPECT_EQ(*registry.Value("save"), "");
  EXPECT_EQ(SetError(registry, {{"save", "0100 010 +5 0"}}), "OK");
  EXPECT_EQ(*registry.Value("save"), "100 10 5 0");
  for (const char* bad : {"100 10 50", "0 0", "-1 1", "1 -1", "  100   10  ", "5x 1", "100 10 "}) {
    EXPECT_EQ(SetError(registry, {{"save", bad}}), Failed("save", "Invalid save parameters"))
        << bad;
  }
  EXPECT_EQ(SetError(registry, {{"save", ""}}), "OK");
  EXPECT_EQ(*registry.Value("save"), "");
}

TEST(ConfigRegistryTest, ClientOutputBufferLimitChangesOnlyTheClassesNamed) {
  ConfigRegistry registry;
  EXPECT_EQ(SetError(registry, {{"client-output-buffer-limit", "normal 1 2 3"}}), "OK");
  EXPECT_EQ(*registry.Value("client-output-buffer-limit"),
            "normal 1 2 3 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
  EXPECT_EQ(
      SetError(registry, {{"client-output-buffer-limit", "replica 1mb 2mb 3 PUBSUB 1gb 1gb 0"}}),
      "OK");
  EXPECT_EQ(*registry.Value("client-output-buffer-limit"),
            "normal 1 2 3 slave 1048576 2097152 3 pubsub 1073741824 1073741824 0");
  EXPECT_EQ(SetError(registry, {{"client-output-buffer-limit", ""}}), "OK");
  const std::string kName = "client-output-buffer-limit";
  EXPECT_EQ(SetError(registry, {{kName, "normal  1 2 3"}}),
            Failed(kName, "Wrong number of arguments in buffer limit configuration."));
  EXPECT_EQ(SetError(registry, {{kName, "normal 1 2 3 master 1 2 3"}}),
            Failed(kName, "Invalid client class specified in buffer limit configuration."));
  for (const char* bad : {"normal x 2 3", "normal 1 2 x", "normal 1 2 -1", "normal -1 2 1"}) {
    EXPECT_EQ(SetError(registry, {{kName, bad}}),
              Failed(kName,
                     "Error in hard, soft or soft_seconds setting in buffer limit configuration."));
  }
  // A failed SET leaves every class alone, including the ones before the error.
  EXPECT_EQ(*registry.Value(kName),
            "normal 1 2 3 slave 1048576 2097152 3 pubsub 1073741824 1073741824 0");
}

TEST(ConfigRegistryTest, NotifyKeyspaceEventsPrintsLikeRedis) {
  ConfigRegistry registry;
  const std::pair<const char*, const char*> kCases[] = {{"KEA", "AKE"},
                                                        {"Kx$", "$xK"},
                                                        {"g$lshzxetmdnKE", "AKEm"},
                                                        {"ndmtezxhsl$g", "Am"},
                                                        {"dtezxhsl$KEmn", "$lshzxetdnKEm"},
                                                        {"mn", "nm"},
                                                        {"EK", "KE"},
                                                        {"tg", "gt"},
                                                        {"AAK", "AK"},
                                                        {"", ""}};
  for (const auto& [in, shown] : kCases) {
    EXPECT_EQ(SetError(registry, {{"notify-keyspace-events", in}}), "OK") << in;
    std::vector<std::pair<std::string, std::string>> got;
    const std::string_view name = "notify-keyspace-events";
    registry.Get({&name, 1}, &got);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].second, shown) << in;
  }
  // The stored value keeps the 'n' CONFIG GET hides under 'A' (the flags in force).
  EXPECT_EQ(SetError(registry, {{"notify-keyspace-events", "KEAn"}}), "OK");
  EXPECT_EQ(*registry.Value("notify-keyspace-events"), "AnKE");
  EXPECT_EQ(
      SetError(registry, {{"notify-keyspace-events", "Kq"}}),
      Failed("notify-keyspace-events", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."));
}

TEST(ConfigRegistryTest, OtherSpecialParameters) {
  ConfigRegistry registry;
  const std::string kPct = "latency-tracking-info-percentiles";
  EXPECT_EQ(SetError(registry, {{kPct, "50.12345678 1e1 99.99999999 -0 0x10"}}), "OK");
  EXPECT_EQ(*registry.Value(kPct), "50.123457 10 100 -0 16");
  EXPECT_EQ(SetError(registry, {{kPct, "50  99"}}),
            Failed(kPct, "Invalid latency-tracking-info-percentiles parameters"));
  EXPECT_EQ(
      SetError(registry, {{kPct, "100.0000001"}}),
      Failed(kPct, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"));

  const std::string kOom = "oom-score-adj-values";
  EXPECT_EQ(SetError(registry, {{kOom, "800 -200 +100"}}), "OK");
  EXPECT_EQ(*registry.Value(kOom), "800 -200 100");
  EXPECT_EQ(SetError(registry, {{kOom, "0  200   800"}}),
            Failed(kOom, "wrong number of arguments"));
  EXPECT_EQ(SetError(registry, {{kOom, "0 2001 800"}}),
            Failed(kOom, "Invalid oom-score-adj-values, elements must be between -2000 and 2000."));

  const std::string kClients = "maxmemory-clients";
  const std::pair<const char*, const char*> kClientCases[] = {
      {"10%", "10%"}, {"0%", "0"}, {"100%", "100%"}, {"1gb", "1073741824"}, {"10M", "10000000"}};
  for (const auto& [in, shown] : kClientCases) {
    EXPECT_EQ(SetError(registry, {{kClients, in}}), "OK");
    EXPECT_EQ(*registry.Value(kClients), shown);
  }
  EXPECT_EQ(SetError(registry, {{kClients, "101%"}}),
            Failed(kClients, "percentage argument must be less or equal to 100"));
  for (const char* bad : {"-1%", "%", "1.5%", "05%", "abc"}) {
    EXPECT_EQ(SetError(registry, {{kClients, bad}}),
              Failed(kClients, "argument must be a memory or percent value"));
  }

  const std::string kTitle = "proc-title-template";
  EXPECT_EQ(SetError(registry, {{kTitle, "{title} {port} x}"}}), "OK");
  for (const char* bad : {"", "{title", "{foo}", "x{}", " {title}"}) {
    EXPECT_EQ(SetError(registry, {{kTitle, bad}}),
              Failed(kTitle, "template format is invalid or contains unknown variables"));
  }

  EXPECT_EQ(SetError(registry, {{"bind", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17"}}),
            Failed("bind", "Too many bind addresses specified."));
  EXPECT_EQ(SetError(registry, {{"bind", "127.0.0.1   -::1"}}), "OK");
  EXPECT_EQ(*registry.Value("bind"), "127.0.0.1 -::1");
}

TEST(ConfigRegistryTest, SetInitialWritesImmutableParameters) {
  ConfigRegistry registry;
  EXPECT_TRUE(registry.SetInitial("databases", "1").ok);
  EXPECT_EQ(*registry.Value("databases"), "1");
  EXPECT_TRUE(registry.SetInitial("slaveof", "10.0.0.1 6380").ok);
  EXPECT_EQ(*registry.Value("replicaof"), "10.0.0.1 6380");
  EXPECT_EQ(registry.SetInitial("replicaof", "host 70000").error, "Invalid master port");
  EXPECT_TRUE(registry.SetInitial("unixsocketperm", "700").ok);
  EXPECT_EQ(*registry.Value("unixsocketperm"), "700");
  EXPECT_EQ(registry.SetInitial("unixsocketperm", "1000").error,
            "argument must be between 0 and 511 inclusive");
  EXPECT_EQ(registry.SetInitial("databases", "x").error,
            "argument couldn't be parsed into an integer");
  EXPECT_FALSE(registry.SetInitial("nope", "1").ok);
}

TEST(ConfigRegistryTest, StaticNormalize) {
  std::string normalized;
  EXPECT_EQ(ConfigRegistry::CanonicalName("SLAVEOF"), "replicaof");
  EXPECT_EQ(ConfigRegistry::CanonicalName("frob"), "");
  EXPECT_TRUE(ConfigRegistry::Normalize("maxmemory", "2gb", nullptr, &normalized).ok);
  EXPECT_EQ(normalized, "2147483648");
  EXPECT_EQ(ConfigRegistry::Normalize("maxmemory", "x", nullptr, &normalized).error,
            "argument must be a memory value");
  std::string current = "normal 1 1 1 slave 2 2 2 pubsub 3 3 3";
  EXPECT_TRUE(
      ConfigRegistry::Normalize("client-output-buffer-limit", "pubsub 4 4 4", &current, &normalized)
          .ok);
  EXPECT_EQ(normalized, "normal 1 1 1 slave 2 2 2 pubsub 4 4 4");
}

TEST(ConfigRegistryTest, ChangeHooksSeeNewValuesAndCanRefuse) {
  ConfigRegistry registry;
  std::vector<std::string> seen_pass, seen_clients;
  ASSERT_TRUE(registry.OnChange("requirepass", [&](std::string_view v) {
    seen_pass.emplace_back(v);
    return Status::Ok();
  }));
  ASSERT_TRUE(registry.OnChange("maxclients", [&](std::string_view v) {
    seen_clients.emplace_back(v);
    return v == "5" ? Status::Error("too few") : Status::Ok();
  }));
  EXPECT_FALSE(registry.OnChange("frob", [](std::string_view) { return Status::Ok(); }));

  EXPECT_EQ(SetError(registry, {{"requirepass", "s3cret"}, {"maxclients", "100"}}), "OK");
  EXPECT_EQ(seen_pass, std::vector<std::string>{"s3cret"});
  EXPECT_EQ(seen_clients, std::vector<std::string>{"100"});
  // Unchanged values do not call hooks.
  EXPECT_EQ(SetError(registry, {{"requirepass", "s3cret"}}), "OK");
  EXPECT_EQ(seen_pass.size(), 1u);

  // A refusal undoes the whole SET and replays the old value to earlier hooks.
  EXPECT_EQ(SetError(registry, {{"requirepass", "other"}, {"maxclients", "5"}, {"hz", "20"}}),
            Failed("maxclients", "too few"));
  EXPECT_EQ(*registry.Value("requirepass"), "s3cret");
  EXPECT_EQ(*registry.Value("maxclients"), "100");
  EXPECT_EQ(*registry.Value("hz"), "10");
  EXPECT_EQ(seen_pass, (std::vector<std::string>{"s3cret", "other", "s3cret"}));
  EXPECT_EQ(seen_clients, (std::vector<std::string>{"100", "5", "100"}));
}

TEST(ConfigRegistryTest, HookOnAliasFiresForEitherName) {
  ConfigRegistry registry;
  int calls = 0;
  registry.OnChange("slave-priority", [&](std::string_view) {
    ++calls;
    return Status::Ok();
  });
  EXPECT_EQ(SetError(registry, {{"replica-priority", "3"}}), "OK");
  EXPECT_EQ(SetError(registry, {{"slave-priority", "4"}}), "OK");
  EXPECT_EQ(calls, 2);
}

TEST(ConfigRegistryTest, SensitiveParameters) {
  ConfigRegistry registry;
  EXPECT_TRUE(registry.IsSensitive("requirepass"));
  EXPECT_TRUE(registry.IsSensitive("MASTERAUTH"));
  EXPECT_TRUE(registry.IsSensitive("masteruser"));
  EXPECT_FALSE(registry.IsSensitive("maxmemory"));
  EXPECT_FALSE(registry.IsSensitive("nope"));
}

TEST(ConfigRegistryTest, LoadFromTakesTheStartupConfig) {
  Config config;
  config.bind = "0.0.0.0 ::";
  config.port = 7000;
  config.threads = 3;
  config.pin_workers = false;
  config.data_file = "/dev/nvme0n1";
  config.log_dir = "/var/log/lavik";
  config.metrics_port = 9121;
  config.registered_buffer_mb_per_worker = 32;
  config.shutdown_checkpoint = true;
  config.requirepass = "pw";
  config.appendfsync = AppendFsync::kAlways;
  config.data_file_size = uint64_t{10} << 30;
  config.cache_mb = 1024;
  config.tomb_raider_interval_ms = 5000;
  config.maxclients = 50;
  config.loglevel = LogLevel::kWarning;
  config.max_memory = 1 << 30;
  config.extra_params = {{"maxmemory", "1073741824"}, {"daemonize", "yes"}, {"dir", "/data"}};
  ConfigRegistry registry;
  registry.LoadFrom(config);
  const std::pair<const char*, const char*> kExpected[] = {
      {"bind", "0.0.0.0 ::"},
      {"port", "7000"},
      {"threads", "3"},
      {"pin-workers", "no"},
      {"data-file", "/dev/nvme0n1"},
      {"log-dir", "/var/log/lavik"},
      {"metrics-port", "9121"},
      {"network", "kernel"},
      {"storage", "uring"},
      {"registered-buffer-mb-per-worker", "32"},
      {"shutdown-checkpoint", "yes"},
      {"requirepass", "pw"},
      {"appendfsync", "always"},
      {"data-file-size", "10737418240"},
      {"cache-mb", "1024"},
      {"tomb-raider-interval-ms", "5000"},
      {"maxclients", "50"},
      {"loglevel", "warning"},
      {"max-memory", "1073741824"},
      {"maxmemory", "1073741824"},
      {"daemonize", "yes"},
      {"dir", "/data"},
  };
  for (const auto& [name, value] : kExpected) EXPECT_EQ(*registry.Value(name), value) << name;
}

TEST(ConfigRegistryTest, LoadFromSetsDirToTheWorkingDirectory) {
  ConfigRegistry registry;
  EXPECT_EQ(*registry.Value("dir"), "");
  registry.LoadFrom(Config{});
  char cwd[PATH_MAX];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  EXPECT_EQ(*registry.Value("dir"), cwd);
  EXPECT_EQ(*registry.Value("bind"), "127.0.0.1");
  EXPECT_EQ(*registry.Value("port"), "6379");
}

}  // namespace
}  // namespace lavik
