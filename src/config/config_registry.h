// ConfigRegistry: the runtime parameters that CONFIG GET and CONFIG SET see.
//
// It holds every parameter redis-server 7.0.15 lists under CONFIG GET * (same
// names and aliases, defaults, types, ranges, and the same error texts), the
// few hidden ones Redis answers only by exact name, and Lavik's own parameters
// (data-file, threads, cache-mb, defrag-paused, ...). A parameter Lavik does
// not act on is still validated by its type, stored and shown, so tooling
// written for Redis can read and write it. Values are kept as the text CONFIG
// GET shows: memory sizes in plain bytes, booleans as yes/no, enums in their
// canonical lower case.
//
// CONFIG SET follows Redis 7.0: a multi-parameter SET is atomic. Names are
// checked first (unknown, immutable, protected, duplicate), then every value
// is validated, and only then are values stored and change hooks run; when a
// hook refuses, every stored value is put back and the hooks that already ran
// are called again with the old values.
//
// Thread safety: none. The server owns one registry and uses it from a single
// thread (startup, then whichever thread runs CONFIG); callers serialize.
// Change hooks run on that thread, inside Set().
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lavik {

struct Config;

// Outcome of a registry operation. `error` is the complete RESP error text
// without the leading '-', e.g. "ERR Unknown option or number of arguments for
// CONFIG SET - 'foo'". (Kept here until src/base grows a shared Status.)
struct Status {
  bool ok = true;
  std::string error;

  static Status Ok() { return {}; }
  static Status Error(std::string message) { return {false, std::move(message)}; }
};

class ConfigRegistry {
 public:
  using ChangeHook = std::function<Status(std::string_view value)>;

  // Every parameter at its built-in default. `dir` is empty until LoadFrom().
  ConfigRegistry();

  // Takes the start-up values: the Lavik flags that mirror parameters (bind,
  // port, threads, requirepass, appendfsync, maxclients, loglevel, ...), `dir`
  // as the current working directory, then `config.extra_params` in order.
  // Immutable parameters are written too and no hook runs: the server starts
  // from the same Config. Values in Config were validated by
  // ParseCommandLine(); one that is not valid here is skipped.
  void LoadFrom(const Config& config);

  // CONFIG SET name value [name value ...]. Returns Status::Ok() or the exact
  // Redis 7.0 error; on error nothing changed. An empty list is a no-op (the
  // command layer rejects an odd or zero argument count itself). Protected
  // parameters (dir, dbfilename) are refused unless enable-protected-configs
  // is yes, or local and `local_client` (a loopback or unix-socket client).
  Status Set(const std::vector<std::pair<std::string, std::string>>& params,
             bool local_client = false);

  // Start-up write of one parameter, for the server's own initial values: like
  // Set() but immutable and protected parameters are allowed and no hook runs.
  // The error is the bare reason ("argument must be a memory value").
  Status SetInitial(std::string_view name, std::string_view value);

  // CONFIG GET pattern [pattern ...]: appends (name, value) pairs to `out`. A
  // pattern without glob characters (*?[) is an exact, case-insensitive name
  // and is echoed as given; it also finds hidden parameters. A glob pattern
  // matches case-insensitively against every visible name and alias, and the
  // matches come out in name order. A parameter name appears at most once.
  void Get(std::span<const std::string_view> patterns,
           std::vector<std::pair<std::string, std::string>>* out) const;

  // Current value of a parameter (any case, alias or not), as CONFIG GET shows
  // it, except that notify-keyspace-events keeps the 'n' Redis hides under 'A'
  // ("AnKE"); nullptr if there is no such parameter. Valid until the next write.
  const std::string* Value(std::string_view name) const;

  // True for parameters whose values are secrets (requirepass, masterauth,
  // masteruser): callers redact them in SLOWLOG, MONITOR and logs.
  bool IsSensitive(std::string_view name) const;

  // Calls `apply` with the new value each time CONFIG SET changes parameter
  // `name` (aliases share the hook). A non-ok Status rejects the whole SET:
  // its error text becomes the reason in "ERR CONFIG SET failed (possibly
  // related to argument 'x') - <reason>". Hooks of one parameter run in
  // registration order. Returns false if `name` is not a parameter.
  bool OnChange(std::string name, ChangeHook apply);

  // For config-file and command-line parsing, which run before any registry
  // exists. CanonicalName: the primary name of parameter `name` (any case,
  // alias or not), or "" if there is none. Normalize: checks `value` for
  // parameter `name`, immutable ones included, and writes the value as the
  // registry would store it; `current` is the value it replaces (only
  // client-output-buffer-limit looks at it), nullptr meaning the default. The
  // error is the bare reason, as for SetInitial().
  static std::string_view CanonicalName(std::string_view name);
  static Status Normalize(std::string_view name, std::string_view value, const std::string* current,
                          std::string* normalized);

  // Redis memtoull: digits with an optional unit b, k, kb, m, mb, g, gb (any
  // case; k = 1000, kb = 1024, ...). No sign, spaces or fractions. An empty
  // number counts as 0, as in Redis. Overflow saturates at UINT64_MAX (Redis
  // wraps on unit overflow; nothing sane depends on that).
  static bool ParseMemory(std::string_view text, uint64_t* out);

 private:
  std::string Shown(size_t param) const;        // what CONFIG GET shows of a stored value
  std::vector<std::string> values_;             // by parameter index
  std::vector<std::vector<ChangeHook>> hooks_;  // by parameter index
};

}  // namespace lavik
