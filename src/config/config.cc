#include "config/config.h"

#include <limits.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "base/numbers.h"
#include "config/config_registry.h"

#ifndef LAVIK_VERSION
#define LAVIK_VERSION "0.1.0"
#endif

namespace lavik {
namespace {

constexpr int kMaxThreads = 256;

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Lower(c);
  return out;
}

bool EqualsNoCase(std::string_view a, std::string_view b) { return ToLower(a) == ToLower(b); }

std::string Quoted(std::string_view value) { return "'" + std::string(value) + "'"; }

// ---- Flag values --------------------------------------------------------------

bool ParseBool(std::string_view v, bool* out) {
  if (EqualsNoCase(v, "yes") || EqualsNoCase(v, "true")) {
    *out = true;
  } else if (EqualsNoCase(v, "no") || EqualsNoCase(v, "false")) {
    *out = false;
  } else {
    return false;
  }
  return true;
}

// Each applier checks one flag's value and stores it. `where` names the flag
// for the error ("--port" or "lavik.conf:3: port"); the error is the whole
// message after "lavik: ", empty on success.
using Applier = std::string (*)(std::string_view v, std::string_view where, Config* c);

std::string Invalid(std::string_view where, std::string_view v, std::string_view what) {
  return std::string(where) + ": " + Quoted(v) + " is not " + std::string(what);
}

// Integer flag in [lo, hi]; on error says "'v' is not a valid <noun> (lo-hi)".
template <typename T>
std::string ApplyInt(std::string_view v, std::string_view where, int64_t lo, int64_t hi,
                     std::string_view noun, T* out) {
  int64_t n;
  if (!ParseInt64(v, &n) || n < lo || n > hi) {
    return Invalid(where, v,
                   "a valid " + std::string(noun) + " (" + std::to_string(lo) + "-" +
                       std::to_string(hi) + ")");
  }
  *out = static_cast<T>(n);
  return {};
}

std::string ApplyBool(std::string_view v, std::string_view where, bool* out) {
  if (!ParseBool(v, out)) return Invalid(where, v, "a boolean (yes, no, true or false)");
  return {};
}

std::string ApplyPath(std::string_view v, std::string_view where, std::string* out) {
  if (v.empty()) return std::string(where) + ": the path must not be empty";
  *out = std::string(v);
  return {};
}

std::string ApplyBind(std::string_view v, std::string_view where, Config* c) {
  std::string normalized;
  Status s = ConfigRegistry::Normalize("bind", v, nullptr, &normalized);
  if (!s.ok) return std::string(where) + ": too many addresses (at most 16)";
  if (normalized.empty()) return Invalid(where, v, "a list of addresses");
  c->bind = normalized;
  return {};
}

std::string ApplyPort(std::string_view v, std::string_view where, Config* c) {
  return ApplyInt(v, where, 0, 65535, "port", &c->port);
}

std::string ApplyThreads(std::string_view v, std::string_view where, Config* c) {
  int64_t n;
  if (!ParseInt64(v, &n) || n < 0 || n > kMaxThreads) {
    return Invalid(where, v, "a valid thread count (1-256, or 0 for one per CPU)");
  }
  c->threads = static_cast<int>(n);
  return {};
}

std::string ApplyNoPinWorkers(std::string_view v, std::string_view where, Config* c) {
  bool no_pin;
  std::string err = ApplyBool(v, where, &no_pin);
  if (err.empty()) c->pin_workers = !no_pin;
  return err;
}

std::string ApplyPinWorkers(std::string_view v, std::string_view where, Config* c) {
  return ApplyBool(v, where, &c->pin_workers);
}

std::string ApplyDataFile(std::string_view v, std::string_view where, Config* c) {
  return ApplyPath(v, where, &c->data_file);
}

std::string ApplyLogDir(std::string_view v, std::string_view where, Config* c) {
  return ApplyPath(v, where, &c->log_dir);
}

std::string ApplyLoadRdb(std::string_view v, std::string_view where, Config* c) {
  return ApplyPath(v, where, &c->load_rdb);
}

std::string ApplyMetricsPort(std::string_view v, std::string_view where, Config* c) {
  return ApplyInt(v, where, 0, 65535, "port", &c->metrics_port);
}

std::string ApplyNetwork(std::string_view v, std::string_view where, Config* c) {
  if (v != "kernel")
    return std::string(where) + ": " + Quoted(v) + " is not supported (only 'kernel')";
  c->network = std::string(v);
  return {};
}

std::string ApplyStorage(std::string_view v, std::string_view where, Config* c) {
  if (v == "spdk") return std::string(where) + " spdk: this build was built without SPDK support";
  if (v != "uring")
    return std::string(where) + ": " + Quoted(v) + " is not supported (only 'uring')";
  c->storage = std::string(v);
  return {};
}

std::string ApplyRegisteredBuffer(std::string_view v, std::string_view where, Config* c) {
  return ApplyInt(v, where, 0, 65536, "size in MiB", &c->registered_buffer_mb_per_worker);
}

std::string ApplyShutdownCheckpoint(std::string_view v, std::string_view where, Config* c) {
  return ApplyBool(v, where, &c->shutdown_checkpoint);
}

std::string ApplyRequirepass(std::string_view v, std::string_view, Config* c) {
  c->requirepass = std::string(v);
  return {};
}

std::string ApplyAppendfsync(std::string_view v, std::string_view where, Config* c) {
  for (AppendFsync mode : {AppendFsync::kAlways, AppendFsync::kEverysec, AppendFsync::kNo}) {
    if (EqualsNoCase(v, AppendFsyncName(mode))) {
      c->appendfsync = mode;
      return {};
    }
  }
  return Invalid(where, v, "one of always, everysec, no");
}

std::string ApplyDataFileSize(std::string_view v, std::string_view where, Config* c) {
  if (!ParseDataSize(v, &c->data_file_size)) {
    return Invalid(where, v, "a valid size (bytes, or a number with K, M, G or T)");
  }
  return {};
}

std::string ApplyCacheMb(std::string_view v, std::string_view where, Config* c) {
  return ApplyInt(v, where, 0, INT32_MAX, "size in MiB", &c->cache_mb);
}

std::string ApplyMaxMemory(std::string_view v, std::string_view where, Config* c) {
  uint64_t bytes;
  if (!ConfigRegistry::ParseMemory(v, &bytes) || bytes > static_cast<uint64_t>(INT64_MAX)) {
    return Invalid(where, v, "a valid memory size (bytes, or a number with k, kb, mb, gb...)");
  }
  c->max_memory = static_cast<int64_t>(bytes);
  return {};
}

std::string ApplyTombRaider(std::string_view v, std::string_view where, Config* c) {
  return ApplyInt(v, where, 0, INT64_MAX, "interval in milliseconds", &c->tomb_raider_interval_ms);
}

std::string ApplyMaxclients(std::string_view v, std::string_view where, Config* c) {
  return ApplyInt(v, where, 1, UINT32_MAX, "client count", &c->maxclients);
}

std::string ApplyLoglevel(std::string_view v, std::string_view where, Config* c) {
  for (LogLevel level :
       {LogLevel::kDebug, LogLevel::kVerbose, LogLevel::kNotice, LogLevel::kWarning}) {
    if (EqualsNoCase(v, LogLevelName(level))) {
      c->loglevel = level;
      return {};
    }
  }
  return Invalid(where, v, "one of debug, verbose, notice, warning");
}

// ---- Flag table ---------------------------------------------------------------

enum class Arity {
  kBool,  // no value, or =yes|no|true|false, or a following yes|no|true|false
  kOne,   // exactly one value
  kMany,  // one or more words, joined with spaces (Redis style, e.g. bind)
};

struct Flag {
  std::string_view name;
  Arity arity;
  std::string_view usage;  // "--port N" etc.
  std::string_view help;   // with the default
  Applier apply;
};

constexpr Flag kFlags[] = {
    {"bind", Arity::kMany, "--bind ADDR", "address(es) to listen on (default 127.0.0.1)",
     ApplyBind},
    {"port", Arity::kOne, "--port N", "TCP port, 0-65535 (default 6379)", ApplyPort},
    {"threads", Arity::kOne, "--threads N", "worker threads, 1-256 (default: one per CPU)",
     ApplyThreads},
    {"no-pin-workers", Arity::kBool, "--no-pin-workers",
     "do not pin workers to CPUs (default: pinned)", ApplyNoPinWorkers},
    {"pin-workers", Arity::kBool, "--pin-workers=yes|no", "pin workers to CPUs (default yes)",
     ApplyPinWorkers},
    {"data-file", Arity::kOne, "--data-file PATH",
     "data file or device (default ./data/lavik.data)", ApplyDataFile},
    {"data-file-size", Arity::kOne, "--data-file-size SIZE",
     "size limit, e.g. 512M or 10G (default 0: unlimited)", ApplyDataFileSize},
    {"log-dir", Arity::kOne, "--log-dir DIR", "log directory (default ./logs)", ApplyLogDir},
    {"load-rdb", Arity::kOne, "--load-rdb FILE", "import a dump.rdb at start-up", ApplyLoadRdb},
    {"metrics-port", Arity::kOne, "--metrics-port N", "Prometheus metrics port (default 0: off)",
     ApplyMetricsPort},
    {"network", Arity::kOne, "--network kernel", "network backend (default kernel)", ApplyNetwork},
    {"storage", Arity::kOne, "--storage uring", "storage backend (default uring)", ApplyStorage},
    {"registered-buffer-mb-per-worker", Arity::kOne, "--registered-buffer-mb-per-worker N",
     "registered io_uring buffers per worker, MiB (default 16)", ApplyRegisteredBuffer},
    {"cache-mb", Arity::kOne, "--cache-mb N",
     "DRAM value cache, MiB (default: a quarter of RAM or of the memory cgroup limit)",
     ApplyCacheMb},
    {"max-memory", Arity::kOne, "--max-memory BYTES",
     "DRAM limit, e.g. 4gb; 0 = none (default: 80% of RAM or of the memory cgroup limit)",
     ApplyMaxMemory},
    {"appendfsync", Arity::kOne, "--appendfsync always|everysec|no",
     "when writes are synced (default everysec)", ApplyAppendfsync},
    {"shutdown-checkpoint", Arity::kBool, "--shutdown-checkpoint",
     "save the index on clean shutdown (default off)", ApplyShutdownCheckpoint},
    {"tomb-raider-interval-ms", Arity::kOne, "--tomb-raider-interval-ms N",
     "tombstone sweep interval (default 86400000)", ApplyTombRaider},
    {"requirepass", Arity::kOne, "--requirepass PASS",
     "password clients must AUTH with (default none)", ApplyRequirepass},
    {"maxclients", Arity::kOne, "--maxclients N", "most concurrent clients (default 10000)",
     ApplyMaxclients},
    {"loglevel", Arity::kOne, "--loglevel debug|verbose|notice|warning",
     "log verbosity (default notice)", ApplyLoglevel},
};

const Flag* FindFlag(std::string_view name) {
  for (const Flag& flag : kFlags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

bool IsBoolWord(std::string_view v) {
  bool ignored;
  return ParseBool(v, &ignored);
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string UsageText() {
  std::string text =
      "Usage: lavik [CONFIG_FILE] [OPTIONS]\n"
      "\n"
      "Options take '--name value' or '--name=value'. A config file (redis.conf\n"
      "syntax) uses the same names without '--'; options override it.\n"
      "\n";
  constexpr size_t kHelpColumn = 28;
  for (const Flag& flag : kFlags) {
    std::string line = "  " + std::string(flag.usage);
    // A long flag gets its description on the next line.
    if (line.size() + 2 > kHelpColumn) {
      text += line + "\n";
      line.clear();
    }
    line.resize(kHelpColumn, ' ');
    text += line + std::string(flag.help) + "\n";
  }
  text +=
      "  --version                 print the version and exit\n"
      "  --help                    print this help and exit\n"
      "\n"
      "Any other CONFIG GET parameter is accepted as well, e.g. --maxmemory 1gb.";
  return text;
}

// ---- Applying settings ----------------------------------------------------------

void SetExtra(Config* config, std::string_view name, std::string value) {
  for (auto& [existing, old] : config->extra_params) {
    if (existing == name) {
      old = std::move(value);
      return;
    }
  }
  config->extra_params.emplace_back(std::string(name), std::move(value));
}

const std::string* FindExtra(const Config& config, std::string_view name) {
  for (const auto& [existing, value] : config.extra_params) {
    if (existing == name) return &value;
  }
  return nullptr;
}

// A registry parameter that is not a flag (maxmemory, save, defrag-paused...).
// `append` joins the value to an earlier one, for repeated `save` lines.
std::string ApplyParameter(std::string_view name, std::string_view value, std::string_view where,
                           bool append, Config* config) {
  std::string_view canonical = ConfigRegistry::CanonicalName(name);
  const std::string* current = FindExtra(*config, canonical);
  std::string combined(value);
  if (append && current != nullptr && !current->empty() && !value.empty()) {
    combined = *current + " " + combined;
  }
  std::string normalized;
  Status s = ConfigRegistry::Normalize(canonical, combined, current, &normalized);
  if (!s.ok) return std::string(where) + ": " + s.error;
  SetExtra(config, canonical, std::move(normalized));
  return {};
}

std::string JoinWords(const std::vector<std::string>& words, size_t from) {
  std::string out;
  for (size_t i = from; i < words.size(); ++i) {
    if (i > from) out += ' ';
    out += words[i];
  }
  return out;
}

// Reads the whole of `path` into `text`; returns the error message or "".
std::string ReadFile(const std::string& path, std::string* text) {
  FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) {
    return "cannot open config file " + Quoted(path) + ": " + std::strerror(errno);
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), file)) > 0) text->append(buf, n);
  int err = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (err != 0) return "cannot read config file " + Quoted(path) + ": " + std::strerror(err);
  return {};
}

// Applies a config file; returns the error message (after "lavik: ") or "".
std::string ApplyConfigFile(const std::string& path, Config* config) {
  std::string text;
  std::string err = ReadFile(path, &text);
  if (!err.empty()) return err;
  std::vector<std::string> words;
  bool saw_save = false;
  std::string_view rest = text;
  for (int number = 1; !rest.empty(); ++number) {
    size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    std::string where_line = path + ":" + std::to_string(number) + ": ";
    if (!SplitConfigLine(line, &words)) return where_line + "unbalanced quotes";
    std::string name = ToLower(words[0]);
    std::string where = where_line + name;
    size_t nvalues = words.size() - 1;
    if (const Flag* flag = FindFlag(name)) {
      std::string value;
      if (flag->arity == Arity::kBool && nvalues == 0) {
        value = "yes";
      } else if (flag->arity == Arity::kMany && nvalues >= 1) {
        value = JoinWords(words, 1);
      } else if (nvalues == 1) {
        value = words[1];
      } else {
        return where + (nvalues == 0 ? ": missing value" : ": expected one value");
      }
      err = flag->apply(value, where, config);
    } else if (!ConfigRegistry::CanonicalName(name).empty()) {
      if (nvalues == 0) return where + ": missing value";
      // Like redis.conf: the first `save` line replaces the default, later
      // ones add save points.
      bool append = name == "save" && saw_save;
      saw_save = saw_save || name == "save";
      err = ApplyParameter(name, JoinWords(words, 1), where, append, config);
    } else if (name == "rename-command") {
      // Applied to the command table by the server (Server::Run), which knows the commands.
      if (nvalues != 2) return where + ": expected a command name and its new name";
      config->renamed_commands.emplace_back(words[1], words[2]);
    } else if (name == "include" || name == "user" || name == "loadmodule" || name == "sentinel") {
      err = where_line + "directive " + Quoted(name) + " is not supported";
    } else {
      err = where_line + "unknown directive " + Quoted(words[0]);
    }
    if (!err.empty()) return err;
  }
  return {};
}

struct CliSetting {
  std::string name;  // lower case, without "--"
  std::string value;
  const Flag* flag;  // nullptr for a registry parameter
};

ParseOutcome Exit(int code, std::string message) {
  return {ParseOutcome::kExit, code, std::move(message)};
}

ParseOutcome Fail(std::string message) { return Exit(2, "lavik: " + message); }

}  // namespace

std::string_view AppendFsyncName(AppendFsync mode) {
  switch (mode) {
    case AppendFsync::kAlways:
      return "always";
    case AppendFsync::kEverysec:
      return "everysec";
    case AppendFsync::kNo:
      return "no";
  }
  return "everysec";
}

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kVerbose:
      return "verbose";
    case LogLevel::kNotice:
      return "notice";
    case LogLevel::kWarning:
      return "warning";
  }
  return "notice";
}

uint64_t AvailableMemoryBytes() {
  uint64_t best = 0;
  {
    std::ifstream meminfo("/proc/meminfo");
    std::string name;
    uint64_t kb = 0;
    while (meminfo >> name >> kb) {
      if (name == "MemTotal:") {
        best = kb * 1024;
        break;
      }
      meminfo.ignore(256, '\n');
    }
  }
  // The cgroup this process lives in may allow less.
  std::ifstream groups("/proc/self/cgroup");
  std::string line;
  while (std::getline(groups, line)) {
    std::string limit_file;
    size_t colon = line.rfind(':');
    if (colon == std::string::npos) continue;
    std::string path = line.substr(colon + 1);
    if (line.find(":memory:") != std::string::npos) {
      limit_file = "/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes";
    } else if (line.rfind("0::", 0) == 0) {
      limit_file = "/sys/fs/cgroup" + path + "/memory.max";
    }
    if (limit_file.empty()) continue;
    std::ifstream f(limit_file);
    uint64_t limit = 0;
    if (f >> limit && limit > 0 && (best == 0 || limit < best)) best = limit;
  }
  return best;
}

int DefaultThreads() {
  int count = 0;
  // Sized for machines with more CPUs than a plain cpu_set_t holds.
  for (size_t cpus = CPU_SETSIZE; cpus <= 65536 && count == 0; cpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (set == nullptr) break;
    size_t bytes = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(bytes, set);
    if (sched_getaffinity(0, bytes, set) == 0) {
      count = CPU_COUNT_S(bytes, set);
    } else if (errno != EINVAL) {
      cpus = SIZE_MAX / 4;  // a real failure: stop growing
    }
    CPU_FREE(set);
  }
  if (count <= 0) count = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  return std::clamp(count, 1, kMaxThreads);
}

namespace {

// The character a backslash escape inside double quotes stands for.
char Unescape(char e) {
  switch (e) {
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'b':
      return '\b';
    case 'a':
      return '\a';
    default:
      return e;
  }
}

}  // namespace

bool SplitConfigLine(std::string_view line, std::vector<std::string>* words) {
  words->clear();
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = Lower(c);
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
  };
  size_t i = 0;
  while (true) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == line.size()) return true;
    std::string word;
    char quote = 0;  // the quote we are inside, or 0
    while (true) {
      if (i == line.size()) {
        if (quote != 0) return false;  // unterminated quotes
        break;
      }
      char c = line[i];
      if (quote == '"') {
        if (c == '\\' && i + 3 < line.size() && line[i + 1] == 'x' && hex(line[i + 2]) >= 0 &&
            hex(line[i + 3]) >= 0) {
          word += static_cast<char>(hex(line[i + 2]) * 16 + hex(line[i + 3]));
          i += 4;
          continue;
        }
        if (c == '\\' && i + 1 < line.size()) {
          word += Unescape(line[i + 1]);
          i += 2;
          continue;
        }
      } else if (quote == '\'' && c == '\\' && i + 1 < line.size() && line[i + 1] == '\'') {
        word += '\'';
        i += 2;
        continue;
      }
      if (quote != 0 && c == quote) {
        // The closing quote must end the word.
        if (i + 1 < line.size() && !is_space(line[i + 1])) return false;
        quote = 0;
        ++i;
        break;
      }
      if (quote == 0 && (c == '"' || c == '\'')) {
        quote = c;
      } else if (quote == 0 && is_space(c)) {
        break;
      } else {
        word += c;
      }
      ++i;
    }
    words->push_back(std::move(word));
  }
}

bool ParseDataSize(std::string_view text, uint64_t* bytes) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  uint64_t value;
  if (digits == 0 || !ParseUint64(text.substr(0, digits), &value)) return false;
  std::string unit = ToLower(text.substr(digits));
  int shift = 0;
  if (!unit.empty()) {
    size_t pos = std::string_view("kmgt").find(unit[0]);
    std::string_view rest = std::string_view(unit).substr(1);
    if (pos == std::string_view::npos || !(rest.empty() || rest == "b" || rest == "ib")) {
      return false;
    }
    shift = 10 * static_cast<int>(pos + 1);
  }
  if (shift > 0 && value > (UINT64_MAX >> shift)) return false;
  *bytes = value << shift;
  return true;
}

ParseOutcome ParseCommandLine(int argc, const char* const* argv, Config* config) {
  int i = 1;
  bool has_file = argc > 1 && argv[1][0] != '-';
  if (has_file) {
    config->config_file = argv[1];
    i = 2;
  }
  // Pass 1: the shape of the command line, so --help works and flag typos are
  // reported before the config file is read.
  std::vector<CliSetting> settings;
  for (; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return Exit(0, UsageText());
    if (arg == "--version" || arg == "-v") return Exit(0, "lavik " LAVIK_VERSION);
    if (!StartsWith(arg, "-")) return Fail("unexpected argument " + Quoted(arg) + " (see --help)");
    size_t eq = arg.find('=');
    std::string_view spelled = arg.substr(0, eq);
    std::string name = ToLower(spelled.substr(StartsWith(spelled, "--") ? 2 : 1));
    const Flag* flag = FindFlag(name);
    if (!StartsWith(spelled, "--") ||
        (flag == nullptr && ConfigRegistry::CanonicalName(name).empty())) {
      return Fail("unknown flag " + Quoted(spelled) + " (see --help)");
    }
    CliSetting setting{name, {}, flag};
    Arity arity = flag != nullptr ? flag->arity : Arity::kMany;
    auto next_is_value = [&] { return i + 1 < argc && !StartsWith(argv[i + 1], "--"); };
    if (eq != std::string_view::npos) {
      setting.value = std::string(arg.substr(eq + 1));
    } else if (arity == Arity::kBool) {
      setting.value = (i + 1 < argc && IsBoolWord(argv[i + 1])) ? argv[++i] : "yes";
    } else if (!next_is_value()) {
      return Fail(std::string(spelled) + ": missing value");
    } else if (arity == Arity::kOne) {
      setting.value = argv[++i];
    } else {
      // Redis style: `--save 900 1 300 10`, `--bind 127.0.0.1 ::1`.
      setting.value = argv[++i];
      while (next_is_value()) setting.value += std::string(" ") + argv[++i];
    }
    settings.push_back(std::move(setting));
  }
  // Pass 2: the config file. Pass 3: the flags, which override it.
  if (has_file) {
    std::string err = ApplyConfigFile(config->config_file, config);
    if (!err.empty()) return Fail(err);
  }
  for (const CliSetting& setting : settings) {
    std::string where = "--" + setting.name;
    std::string err = setting.flag != nullptr
                          ? setting.flag->apply(setting.value, where, config)
                          : ApplyParameter(setting.name, setting.value, where, false, config);
    if (!err.empty()) return Fail(err);
  }
  // As Redis's loadServerConfigFromString: a cluster node's master comes from nodes.conf.
  const std::string* cluster = FindExtra(*config, "cluster-enabled");
  const std::string* master = FindExtra(*config, "replicaof");
  if (cluster != nullptr && *cluster == "yes" && master != nullptr && !master->empty()) {
    return Fail("replicaof directive not allowed in cluster mode");
  }
  if (config->threads == 0) config->threads = DefaultThreads();
  return {ParseOutcome::kRun, 0, {}};
}

// Declared in config_registry.h; defined here, with Config, so that the registry (the table of
// parameters, which parsing the command line needs) does not depend on Config.
void ConfigRegistry::LoadFrom(const Config& config) {
  // Values that fail here were already rejected by ParseCommandLine(), so the
  // results are not checked: a bad one keeps its default.
  SetInitial("bind", config.bind);
  SetInitial("port", std::to_string(config.port));
  SetInitial("threads", std::to_string(config.threads));
  SetInitial("pin-workers", config.pin_workers ? "yes" : "no");
  SetInitial("data-file", config.data_file);
  SetInitial("log-dir", config.log_dir);
  SetInitial("metrics-port", std::to_string(config.metrics_port));
  SetInitial("network", config.network);
  SetInitial("storage", config.storage);
  SetInitial("registered-buffer-mb-per-worker",
             std::to_string(config.registered_buffer_mb_per_worker));
  SetInitial("shutdown-checkpoint", config.shutdown_checkpoint ? "yes" : "no");
  SetInitial("requirepass", config.requirepass);
  SetInitial("appendfsync", AppendFsyncName(config.appendfsync));
  SetInitial("data-file-size", std::to_string(config.data_file_size));
  SetInitial("cache-mb", std::to_string(config.cache_mb));
  if (config.max_memory >= 0) SetInitial("max-memory", std::to_string(config.max_memory));
  SetInitial("tomb-raider-interval-ms", std::to_string(config.tomb_raider_interval_ms));
  SetInitial("maxclients", std::to_string(config.maxclients));
  SetInitial("loglevel", LogLevelName(config.loglevel));
  std::string cwd(PATH_MAX, '\0');
  if (getcwd(cwd.data(), cwd.size()) != nullptr) {
    cwd.resize(std::strlen(cwd.c_str()));
    SetInitial("dir", cwd);
  }
  for (const auto& [name, value] : config.extra_params) SetInitial(name, value);
}

}  // namespace lavik
