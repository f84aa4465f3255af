#include "config/config.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "config/config_registry.h"

namespace lavik {
namespace {

// Runs ParseCommandLine on {"lavik", args...}.
ParseOutcome Parse(std::vector<std::string> args, Config* config) {
  std::vector<const char*> argv = {"lavik"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data(), config);
}

// The one-line error for `args`, or "RUN" if they parse.
std::string ErrorFor(std::vector<std::string> args) {
  Config config;
  ParseOutcome outcome = Parse(std::move(args), &config);
  if (outcome.kind == ParseOutcome::kRun) return "RUN";
  EXPECT_EQ(outcome.exit_code, 2);
  return outcome.message;
}

// A config file with `text`, removed when the test ends.
class TempConfigFile {
 public:
  explicit TempConfigFile(const std::string& text) {
    char name[] = "/tmp/lavik_config_test_XXXXXX";
    int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    path_ = name;
    EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fd);
  }
  ~TempConfigFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Extra(const Config& config, const std::string& name) {
  for (const auto& [key, value] : config.extra_params) {
    if (key == name) return value;
  }
  return "<unset>";
}

TEST(ConfigTest, DefaultsWithNoArguments) {
  Config config;
  ParseOutcome outcome = Parse({}, &config);
  ASSERT_EQ(outcome.kind, ParseOutcome::kRun);
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.message, "");
  EXPECT_EQ(config.bind, "127.0.0.1");
  EXPECT_EQ(config.port, 6379);
  EXPECT_EQ(config.threads, DefaultThreads());
  EXPECT_TRUE(config.pin_workers);
  EXPECT_EQ(config.data_file, "./data/lavik.data");
  EXPECT_EQ(config.log_dir, "./logs");
  EXPECT_EQ(config.metrics_port, 0);
  EXPECT_EQ(config.network, "kernel");
  EXPECT_EQ(config.storage, "uring");
  EXPECT_EQ(config.registered_buffer_mb_per_worker, 16);
  EXPECT_FALSE(config.shutdown_checkpoint);
  EXPECT_EQ(config.requirepass, "");
  EXPECT_EQ(config.appendfsync, AppendFsync::kEverysec);
  EXPECT_EQ(config.data_file_size, 0u);
  EXPECT_EQ(config.cache_mb, -1);  // auto: a quarter of the available memory
  EXPECT_EQ(config.tomb_raider_interval_ms, 86400000);
  EXPECT_EQ(config.maxclients, 10000);
  EXPECT_EQ(config.loglevel, LogLevel::kNotice);
  EXPECT_EQ(config.config_file, "");
  EXPECT_TRUE(config.extra_params.empty());
}

TEST(ConfigTest, DefaultThreadsCountsTheAffinityMask) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(DefaultThreads(), std::min(CPU_COUNT(&set), 256));
  EXPECT_GE(DefaultThreads(), 1);
}

TEST(ConfigTest, EveryFlagInBothForms) {
  const std::vector<std::string> kSpaced = {"--bind",
                                            "0.0.0.0",
                                            "--port",
                                            "7000",
                                            "--threads",
                                            "3",
                                            "--no-pin-workers",
                                            "--data-file",
                                            "/dev/nvme0n1",
                                            "--log-dir",
                                            "/var/log/lavik",
                                            "--metrics-port",
                                            "9121",
                                            "--network",
                                            "kernel",
                                            "--storage",
                                            "uring",
                                            "--registered-buffer-mb-per-worker",
                                            "0",
                                            "--shutdown-checkpoint",
                                            "--requirepass",
                                            "s3cret",
                                            "--appendfsync",
                                            "always",
                                            "--data-file-size",
                                            "10g",
                                            "--cache-mb",
                                            "1024",
                                            "--tomb-raider-interval-ms",
                                            "60000",
                                            "--maxclients",
                                            "50",
                                            "--loglevel",
                                            "warning"};
  std::vector<std::string> joined;
  for (size_t i = 0; i < kSpaced.size(); ++i) {
    const std::string& arg = kSpaced[i];
    if (arg == "--no-pin-workers" || arg == "--shutdown-checkpoint") {
      joined.push_back(arg + "=yes");
    } else {
      joined.push_back(arg + "=" + kSpaced[++i]);
    }
  }
  for (const auto& args : {kSpaced, joined}) {
    Config config;
    ASSERT_EQ(Parse(args, &config).kind, ParseOutcome::kRun);
    EXPECT_EQ(config.bind, "0.0.0.0");
    EXPECT_EQ(config.port, 7000);
    EXPECT_EQ(config.threads, 3);
    EXPECT_FALSE(config.pin_workers);
    EXPECT_EQ(config.data_file, "/dev/nvme0n1");
    EXPECT_EQ(config.log_dir, "/var/log/lavik");
    EXPECT_EQ(config.metrics_port, 9121);
    EXPECT_EQ(config.registered_buffer_mb_per_worker, 0);
    EXPECT_TRUE(config.shutdown_checkpoint);
    EXPECT_EQ(config.requirepass, "s3cret");
    EXPECT_EQ(config.appendfsync, AppendFsync::kAlways);
    EXPECT_EQ(config.data_file_size, uint64_t{10} << 30);
    EXPECT_EQ(config.cache_mb, 1024);
    EXPECT_EQ(config.tomb_raider_interval_ms, 60000);
    EXPECT_EQ(config.maxclients, 50);
    EXPECT_EQ(config.loglevel, LogLevel::kWarning);
  }
}

TEST(ConfigTest, BooleanFlagSpellings) {
  struct Case {
    std::vector<std::string> args;
    bool pin;
    bool checkpoint;
  };
  const Case kCases[] = {
      {{"--no-pin-workers"}, false, false},
      {{"--no-pin-workers=no"}, true, false},
      {{"--no-pin-workers=TRUE"}, false, false},
      {{"--pin-workers=no"}, false, false},
      {{"--shutdown-checkpoint", "yes"}, true, true},
      {{"--shutdown-checkpoint", "no", "--port", "1"}, true, false},
      {{"--shutdown-checkpoint=false"}, true, false},
      {{"--shutdown-checkpoint", "--no-pin-workers"}, false, true},
  };
  for (const Case& c : kCases) {
    Config config;
    ASSERT_EQ(Parse(c.args, &config).kind, ParseOutcome::kRun) << c.args[0];
    EXPECT_EQ(config.pin_workers, c.pin) << c.args[0];
    EXPECT_EQ(config.shutdown_checkpoint, c.checkpoint) << c.args[0];
  }
}

TEST(ConfigTest, ErrorsAreOneClearLine) {
  const std::pair<std::vector<std::string>, std::string> kCases[] = {
      {{"--frob"}, "lavik: unknown flag '--frob' (see --help)"},
      {{"--frob=1"}, "lavik: unknown flag '--frob' (see --help)"},
      {{"-x"}, "lavik: unknown flag '-x' (see --help)"},
      {{"--port", "70000"}, "lavik: --port: '70000' is not a valid port (0-65535)"},
      {{"--port=abc"}, "lavik: --port: 'abc' is not a valid port (0-65535)"},
      {{"--threads"}, "lavik: --threads: missing value"},
      {{"--threads", "--port", "1"}, "lavik: --threads: missing value"},
      {{"--threads", "300"},
       "lavik: --threads: '300' is not a valid thread count (1-256, or 0 for one per CPU)"},
      {{"--storage", "spdk"}, "lavik: --storage spdk: this build was built without SPDK support"},
      {{"--storage", "aio"}, "lavik: --storage: 'aio' is not supported (only 'uring')"},
      {{"--network", "dpdk"}, "lavik: --network: 'dpdk' is not supported (only 'kernel')"},
      {{"--appendfsync", "sometimes"},
       "lavik: --appendfsync: 'sometimes' is not one of always, everysec, no"},
      {{"--loglevel", "loud"},
       "lavik: --loglevel: 'loud' is not one of debug, verbose, notice, warning"},
      {{"--data-file-size", "1.5G"},
       "lavik: --data-file-size: '1.5G' is not a valid size (bytes, or a number with K, M, G or "
       "T)"},
      {{"--maxclients", "0"},
       "lavik: --maxclients: '0' is not a valid client count (1-4294967295)"},
      {{"--registered-buffer-mb-per-worker", "65537"},
       "lavik: --registered-buffer-mb-per-worker: '65537' is not a valid size in MiB (0-65536)"},
      {{"--metrics-port", "-1"}, "lavik: --metrics-port: '-1' is not a valid port (0-65535)"},
      {{"--no-pin-workers=maybe"},
       "lavik: --no-pin-workers: 'maybe' is not a boolean (yes, no, true or false)"},
      {{"--data-file="}, "lavik: --data-file: the path must not be empty"},
      {{"--port", "1", "stray"}, "lavik: unexpected argument 'stray' (see --help)"},
      {{"--maxmemory", "lots"}, "lavik: --maxmemory: argument must be a memory value"},
      {{"--save"}, "lavik: --save: missing value"},
      {{"missing.conf"},
       "lavik: cannot open config file 'missing.conf': No such file or directory"},
  };
  for (const auto& [args, message] : kCases) EXPECT_EQ(ErrorFor(args), message);
}

TEST(ConfigTest, FlagSyntaxErrorsComeBeforeTheConfigFile) {
  EXPECT_EQ(ErrorFor({"missing.conf", "--frob"}), "lavik: unknown flag '--frob' (see --help)");
  Config config;
  ParseOutcome outcome = Parse({"missing.conf", "--help"}, &config);
  EXPECT_EQ(outcome.kind, ParseOutcome::kExit);
  EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ConfigTest, HelpListsEveryFlagWithItsDefault) {
  Config config;
  for (const char* help : {"--help", "-h"}) {
    ParseOutcome outcome = Parse({"--port", "1", help, "--frob"}, &config);
    ASSERT_EQ(outcome.kind, ParseOutcome::kExit);
    EXPECT_EQ(outcome.exit_code, 0);
    const std::string& text = outcome.message;
    EXPECT_EQ(text.rfind("Usage: lavik", 0), 0u);
    EXPECT_NE(text.back(), '\n');
    for (const char* flag : {"--bind ADDR",
                             "--port N",
                             "--threads N",
                             "--no-pin-workers",
                             "--data-file PATH",
                             "--log-dir DIR",
                             "--metrics-port N",
                             "--network kernel",
                             "--storage uring",
                             "--registered-buffer-mb-per-worker N",
                             "--shutdown-checkpoint",
                             "--requirepass PASS",
                             "--appendfsync always|everysec|no",
                             "--data-file-size SIZE",
                             "--cache-mb N",
                             "--tomb-raider-interval-ms N",
                             "--maxclients N",
                             "--loglevel debug|verbose|notice|warning",
                             "--version",
                             "--help"}) {
      EXPECT_NE(text.find(flag), std::string::npos) << flag;
    }
    for (const char* def :
         {"default 127.0.0.1", "default 6379", "default ./data/lavik.data", "default ./logs",
          "default 16", "default everysec", "default: a quarter", "default 86400000",
          "default 10000", "default notice"}) {
      EXPECT_NE(text.find(def), std::string::npos) << def;
    }
  }
}

TEST(ConfigTest, Version) {
  Config config;
  for (const char* flag : {"--version", "-v"}) {
    ParseOutcome outcome = Parse({flag}, &config);
    EXPECT_EQ(outcome.kind, ParseOutcome::kExit);
    EXPECT_EQ(outcome.exit_code, 0);
    EXPECT_EQ(outcome.message.rfind("lavik ", 0), 0u);
    EXPECT_GT(outcome.message.size(), 6u);
    EXPECT_EQ(outcome.message.find('\n'), std::string::npos);
  }
}

TEST(ConfigTest, ConfigFileWithCommentsQuotesAndOverrides) {
  TempConfigFile file(
      "# Lavik test configuration\n"
      "\n"
      "   # indented comment with an 'unbalanced quote\n"
      "port 7000\n"
      "bind 127.0.0.1 ::1\n"
      "requirepass \"pass word\\x21\"\n"
      "loglevel 'warning'\n"
      "THREADS 2\r\n"
      "no-pin-workers yes\n"
      "shutdown-checkpoint\n"
      "data-file-size 512M\n"
      "maxmemory 1gb\n"
      "save 900 1\n"
      "save 300 10\n"
      "appendonly no\n"
      "slaveof 10.0.0.1 6380\n"
      "client-output-buffer-limit normal 1 2 3\n"
      "client-output-buffer-limit pubsub 4 5 6\n"
      "defrag-paused yes\n");
  Config config;
  ParseOutcome outcome = Parse({file.path(), "--port", "7001", "--appendonly=yes"}, &config);
  ASSERT_EQ(outcome.kind, ParseOutcome::kRun) << outcome.message;
  EXPECT_EQ(config.config_file, file.path());
  EXPECT_EQ(config.port, 7001);  // the flag wins over the file
  EXPECT_EQ(config.bind, "127.0.0.1 ::1");
  EXPECT_EQ(config.requirepass, "pass word!");
  EXPECT_EQ(config.loglevel, LogLevel::kWarning);
  EXPECT_EQ(config.threads, 2);
  EXPECT_FALSE(config.pin_workers);
  EXPECT_TRUE(config.shutdown_checkpoint);
  EXPECT_EQ(config.data_file_size, uint64_t{512} << 20);
  EXPECT_EQ(Extra(config, "maxmemory"), "1073741824");
  EXPECT_EQ(Extra(config, "save"), "900 1 300 10");
  EXPECT_EQ(Extra(config, "appendonly"), "yes");
  EXPECT_EQ(Extra(config, "replicaof"), "10.0.0.1 6380");
  EXPECT_EQ(Extra(config, "client-output-buffer-limit"),
            "normal 1 2 3 slave 268435456 67108864 60 pubsub 4 5 6");
  EXPECT_EQ(Extra(config, "defrag-paused"), "yes");

  // What the file said reaches CONFIG GET.
  ConfigRegistry registry;
  registry.LoadFrom(config);
  EXPECT_EQ(*registry.Value("maxmemory"), "1073741824");
  EXPECT_EQ(*registry.Value("slaveof"), "10.0.0.1 6380");
  EXPECT_EQ(*registry.Value("port"), "7001");
  EXPECT_EQ(*registry.Value("defrag-paused"), "yes");
}

TEST(ConfigTest, ConfigFileSaveResetAndEmptyValues) {
  TempConfigFile file("save \"\"\nrequirepass \"\"\n");
  Config config;
  ASSERT_EQ(Parse({file.path(), "--save", "60", "1000"}, &config).kind, ParseOutcome::kRun);
  EXPECT_EQ(Extra(config, "save"), "60 1000");
  EXPECT_EQ(config.requirepass, "");
  Config config2;
  ASSERT_EQ(Parse({file.path()}, &config2).kind, ParseOutcome::kRun);
  EXPECT_EQ(Extra(config2, "save"), "");
}

TEST(ConfigTest, RenameCommandLinesAreKeptInOrder) {
  TempConfigFile file("rename-command CONFIG c0nfig\nrename-command FLUSHALL \"\"\n");
  Config config;
  ASSERT_EQ(Parse({file.path()}, &config).kind, ParseOutcome::kRun);
  using Pair = std::pair<std::string, std::string>;
  EXPECT_EQ(config.renamed_commands, (std::vector<Pair>{{"CONFIG", "c0nfig"}, {"FLUSHALL", ""}}));
}

TEST(ConfigTest, ConfigFileErrorsNameTheLine) {
  struct Case {
    std::string text;
    std::string error_after_path;
  };
  const Case kCases[] = {
      {"port 7000\n\nfrob 1\n", ":3: unknown directive 'frob'"},
      {"port 70000\n", ":1: port: '70000' is not a valid port (0-65535)"},
      {"port\n", ":1: port: missing value"},
      {"port 1 2\n", ":1: port: expected one value"},
      {"requirepass \"abc\n", ":1: unbalanced quotes"},
      {"requirepass \"abc\"def\n", ":1: unbalanced quotes"},
      {"maxmemory lots\n", ":1: maxmemory: argument must be a memory value"},
      {"maxmemory\n", ":1: maxmemory: missing value"},
      {"include other.conf\n", ":1: directive 'include' is not supported"},
      {"rename-command FLUSHALL\n", ":1: rename-command: expected a command name and its new name"},
      {"storage spdk\n", ":1: storage spdk: this build was built without SPDK support"},
      {"shutdown-checkpoint maybe\n",
       ":1: shutdown-checkpoint: 'maybe' is not a boolean (yes, no, true or false)"},
      {"port 6379 # trailing comment\n", ":1: port: expected one value"},
  };
  for (const Case& c : kCases) {
    TempConfigFile file(c.text);
    EXPECT_EQ(ErrorFor({file.path()}), "lavik: " + file.path() + c.error_after_path) << c.text;
  }
}

TEST(ConfigTest, RedisParametersOnTheCommandLine) {
  Config config;
  ParseOutcome outcome = Parse({"--save", "", "--appendonly", "no", "--maxmemory", "2gb", "--save",
                                "900", "1", "--port", "7002", "--hz=20"},
                               &config);
  ASSERT_EQ(outcome.kind, ParseOutcome::kRun) << outcome.message;
  EXPECT_EQ(Extra(config, "save"), "900 1");
  EXPECT_EQ(Extra(config, "appendonly"), "no");
  EXPECT_EQ(Extra(config, "maxmemory"), "2147483648");
  EXPECT_EQ(Extra(config, "hz"), "20");
  EXPECT_EQ(config.port, 7002);
}

TEST(ConfigTest, FlagsThatMirrorRegistryParameters) {
  // Each of these is both a flag and a CONFIG GET parameter, so LoadFrom can
  // show what the server was started with.
  for (const char* name :
       {"bind", "port", "threads", "pin-workers", "data-file", "data-file-size", "log-dir",
        "metrics-port", "network", "storage", "registered-buffer-mb-per-worker",
        "shutdown-checkpoint", "requirepass", "appendfsync", "cache-mb", "tomb-raider-interval-ms",
        "maxclients", "loglevel", "max-memory"}) {
    EXPECT_EQ(ConfigRegistry::CanonicalName(name), name);
  }
}

TEST(ConfigTest, MaxMemoryTakesRedisUnits) {
  Config config;
  EXPECT_EQ(config.max_memory, -1);  // resolved by the server: 80% of the memory available
  ASSERT_EQ(Parse({"--max-memory", "2gb"}, &config).kind, ParseOutcome::kRun);
  EXPECT_EQ(config.max_memory, int64_t{2} << 30);
  Config zero;
  ASSERT_EQ(Parse({"--max-memory=0"}, &zero).kind, ParseOutcome::kRun);
  EXPECT_EQ(zero.max_memory, 0);
  EXPECT_EQ(ErrorFor({"--max-memory", "lots"}),
            "lavik: --max-memory: 'lots' is not a valid memory size (bytes, or a number with k, "
            "kb, mb, gb...)");
}

TEST(ConfigTest, SplitConfigLineFollowsRedisQuoting) {
  std::vector<std::string> words;
  ASSERT_TRUE(SplitConfigLine("  save  900   1  ", &words));
  EXPECT_EQ(words, (std::vector<std::string>{"save", "900", "1"}));
  ASSERT_TRUE(SplitConfigLine("a \"b c\" 'd e' \"\" ''", &words));
  EXPECT_EQ(words, (std::vector<std::string>{"a", "b c", "d e", "", ""}));
  ASSERT_TRUE(SplitConfigLine(R"("\x41\n\t\\\"" 'it\'s' 'a\nb' "\q")", &words));
  EXPECT_EQ(words, (std::vector<std::string>{"A\n\t\\\"", "it's", "a\\nb", "q"}));
  ASSERT_TRUE(SplitConfigLine("x\"y z\"", &words));  // a quote may open mid-word
  EXPECT_EQ(words, (std::vector<std::string>{"xy z"}));
  ASSERT_TRUE(SplitConfigLine("", &words));
  EXPECT_TRUE(words.empty());
  EXPECT_FALSE(SplitConfigLine("\"abc", &words));
  EXPECT_FALSE(SplitConfigLine("'abc", &words));
  EXPECT_FALSE(SplitConfigLine("\"abc\"x", &words));
}

TEST(ConfigTest, ParseDataSize) {
  const std::pair<const char*, uint64_t> kGood[] = {
      {"0", 0},
      {"4096", 4096},
      {"512M", uint64_t{512} << 20},
      {"1G", uint64_t{1} << 30},
      {"10g", uint64_t{10} << 30},
      {"2k", 2048},
      {"3T", uint64_t{3} << 40},
      {"1GB", uint64_t{1} << 30},
      {"1GiB", uint64_t{1} << 30},
      {"18446744073709551615", UINT64_MAX},
  };
  for (const auto& [text, bytes] : kGood) {
    uint64_t v = 0;
    EXPECT_TRUE(ParseDataSize(text, &v)) << text;
    EXPECT_EQ(v, bytes) << text;
  }
  for (const char* bad :
       {"", "G", "1.5G", "-1", "1X", "1 G", "1Gb ", "16777216T", "18446744073709551616", "1P"}) {
    uint64_t v;
    EXPECT_FALSE(ParseDataSize(bad, &v)) << bad;
  }
}

}  // namespace
}  // namespace lavik
