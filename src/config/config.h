// Start-up configuration: the command line and an optional Redis-style config
// file, turned into a plain Config.
//
//   lavik [CONFIG_FILE] [--flag value | --flag=value | --bool-flag[=yes|no]]...
//
// The config file, if any, is the first argument; flags given on the command
// line override it. File lines are `name value...` with the flag names (no
// "--"), '#' comment lines and blank lines; values may be quoted as in
// redis.conf ("a b", 'c', "\x41\n"). Any other parameter that CONFIG GET knows
// (a standard Redis one such as maxmemory or save, or defrag-paused) is
// accepted in the file and on the command line, validated, and kept in
// Config::extra_params for ConfigRegistry::LoadFrom(); that way a Redis user's
// redis.conf or `--save '' --appendonly no` keeps working.
//
// Thread safety: the functions are reentrant; ParseCommandLine reads the file
// system (the config file, the CPU affinity mask).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lavik {

enum class AppendFsync { kAlways, kEverysec, kNo };
enum class LogLevel { kDebug, kVerbose, kNotice, kWarning };

// Lower-case names as the flags, config files and CONFIG GET spell them.
std::string_view AppendFsyncName(AppendFsync mode);
std::string_view LogLevelName(LogLevel level);

struct Config {
  std::string bind = "127.0.0.1";  // one or more addresses, separated by single spaces
  int port = 6379;                 // 0..65535
  int threads = 0;                 // 0 = DefaultThreads(); 1..256 after ParseCommandLine
  bool pin_workers = true;
  std::string data_file = "./data/lavik.data";
  std::string log_dir = "./logs";
  int metrics_port = 0;  // 0 = no metrics endpoint
  std::string network = "kernel";
  std::string storage = "uring";
  int registered_buffer_mb_per_worker = 16;  // 0..65536; pinned by io_uring, so resident
  bool shutdown_checkpoint = false;
  std::string requirepass;  // empty = no AUTH required
  AppendFsync appendfsync = AppendFsync::kEverysec;
  uint64_t data_file_size = 0;  // bytes; 0 = unlimited
  int64_t cache_mb = -1;    // -1: a quarter of the memory available (RAM or memory cgroup limit)
  int64_t max_memory = -1;  // bytes; -1: 80% of the memory available; 0: no limit
  int64_t tomb_raider_interval_ms = 86400000;
  int64_t maxclients = 10000;  // 1..4294967295
  LogLevel loglevel = LogLevel::kNotice;
  std::string load_rdb;  // --load-rdb: a dump.rdb to import at start-up (replication/rdb_file.h)

  std::string config_file;  // as given on the command line; empty if none
  // Other registry parameters from the file or command line, by canonical
  // name, each value already normalized; later entries replace earlier ones.
  std::vector<std::pair<std::string, std::string>> extra_params;
  // rename-command lines of the config file, in order: (command, new name or "" to disable).
  std::vector<std::pair<std::string, std::string>> renamed_commands;
};

// Number of CPUs in this process's affinity mask (sched_getaffinity), clamped
// to 1..256; the online CPU count if the mask cannot be read.
int DefaultThreads();

// Memory this process may use: physical RAM, or a smaller memory cgroup (v1 or v2) limit.
uint64_t AvailableMemoryBytes();

struct ParseOutcome {
  enum Kind { kRun, kExit } kind;
  int exit_code;
  // For kExit: what main prints, without a trailing newline. --help and
  // --version (exit 0) go to stdout, errors (exit 2) to stderr as one line,
  // e.g. "lavik: --port: '70000' is not a valid port (0-65535)". Empty for kRun.
  std::string message;
};

// Fills `config` (which should start default-constructed) from argv. On kRun
// every field is valid and `threads` is resolved. On kExit `config` may be
// partly written.
ParseOutcome ParseCommandLine(int argc, const char* const* argv, Config* config);

// Splits one config-file line into words like redis.conf's sdssplitargs:
// whitespace separates words; "double quotes" take \n \r \t \b \a \\ \" and
// \xHH escapes; 'single quotes' take only \'; a closing quote must be followed
// by whitespace or the end. Returns false on unbalanced quotes.
bool SplitConfigLine(std::string_view line, std::vector<std::string>* words);

// A size for --data-file-size: bytes, or a number with K, M, G or T (any case,
// optionally followed by B or iB), all powers of 1024 as with fallocate -l:
// "512M", "1G", "10g", "4096". False on junk or overflow.
bool ParseDataSize(std::string_view text, uint64_t* bytes);

}  // namespace lavik
