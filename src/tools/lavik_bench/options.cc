#include "tools/lavik_bench/options.h"

#include <arpa/inet.h>

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "base/numbers.h"

namespace lavik::bench {
namespace {

// Upper bounds that keep the arithmetic (buffers, schedules) far from overflow; far above what
// one client machine can drive anyway.
constexpr int64_t kMaxConnections = 100000;
constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxPipeline = 100000;
constexpr int64_t kMaxValueSize = 512 << 20;  // proto-max-bulk-len
constexpr double kMaxSeconds = 365.0 * 24 * 3600;

bool ParseIntIn(std::string_view s, int64_t lo, int64_t hi, int64_t* out) {
  int64_t v;
  if (!ParseInt64(s, &v) || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// A finite, non-negative decimal such as "10", "0.5" or "2.5e5" (no hex, inf or nan).
bool ParseNonNegativeDouble(std::string_view s, double* out) {
  if (s.empty() || s.find_first_not_of("0123456789.eE+-") != std::string_view::npos) return false;
  double v;
  if (!ParseDouble(s, &v) || !std::isfinite(v) || v < 0) return false;
  *out = v;
  return true;
}

bool ParseRatio(std::string_view s, int* get, int* set) {
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos) return false;
  int64_t g, st;
  if (!ParseIntIn(s.substr(0, colon), 0, 1000000, &g) ||
      !ParseIntIn(s.substr(colon + 1), 0, 1000000, &st) || g + st == 0) {
    return false;
  }
  *get = static_cast<int>(g);
  *set = static_cast<int>(st);
  return true;
}

// Applies one option; `value` is empty for flags. Returns false with *error set.
bool Apply(std::string_view name, std::string_view value, Options* o, std::string* error) {
  int64_t i = 0;
  uint64_t u = 0;
  auto bad = [&](const char* what) {
    *error = "invalid value for --" + std::string(name) + ": '" + std::string(value) +
             "' (expected " + what + ")";
    return false;
  };
  if (name == "host") {
    if (value == "localhost") value = "127.0.0.1";
    in_addr addr;
    const std::string v(value);
    if (inet_pton(AF_INET, v.c_str(), &addr) != 1) return bad("an IPv4 address");
    o->host = v;
  } else if (name == "port") {
    if (!ParseIntIn(value, 1, 65535, &i)) return bad("1..65535");
    o->port = static_cast<int>(i);
  } else if (name == "connections") {
    if (!ParseIntIn(value, 1, kMaxConnections, &i)) return bad("1..100000");
    o->connections = static_cast<int>(i);
  } else if (name == "threads") {
    if (!ParseIntIn(value, 1, kMaxThreads, &i)) return bad("1..1024");
    o->threads = static_cast<int>(i);
  } else if (name == "pipeline") {
    if (!ParseIntIn(value, 1, kMaxPipeline, &i)) return bad("1..100000");
    o->pipeline = static_cast<int>(i);
  } else if (name == "ratio") {
    if (!ParseRatio(value, &o->get_ratio, &o->set_ratio)) return bad("GET:SET such as 1:0, 1:10");
  } else if (name == "key-min") {
    if (!ParseUint64(value, &u)) return bad("a non-negative integer");
    o->key_min = u;
  } else if (name == "key-max") {
    if (!ParseUint64(value, &u)) return bad("a non-negative integer");
    o->key_max = u;
  } else if (name == "key-pattern") {
    if (value == "random") {
      o->key_pattern = KeyPattern::kRandom;
    } else if (value == "sequential") {
      o->key_pattern = KeyPattern::kSequential;
    } else {
      return bad("random or sequential");
    }
  } else if (name == "value-size") {
    if (!ParseIntIn(value, 0, kMaxValueSize, &i)) return bad("0..536870912");
    o->value_size = static_cast<int>(i);
  } else if (name == "duration") {
    if (!ParseNonNegativeDouble(value, &o->duration_s) || o->duration_s <= 0 ||
        o->duration_s > kMaxSeconds) {
      return bad("seconds > 0");
    }
  } else if (name == "warmup") {
    if (!ParseNonNegativeDouble(value, &o->warmup_s) || o->warmup_s > kMaxSeconds) {
      return bad("seconds >= 0");
    }
  } else if (name == "rate") {
    if (!ParseNonNegativeDouble(value, &o->rate) || o->rate <= 0) return bad("requests/s > 0");
  } else if (name == "seed") {
    if (!ParseUint64(value, &u)) return bad("a non-negative integer");
    o->seed = u;
    o->seed_given = true;
  } else {
    *error = "unknown option --" + std::string(name);
    return false;
  }
  return true;
}

bool IsFlag(std::string_view name) { return name == "fill" || name == "json" || name == "help"; }

bool TakesValue(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "host",    "port",        "connections", "threads",  "pipeline", "ratio", "key-min",
      "key-max", "key-pattern", "value-size",  "duration", "warmup",   "rate",  "seed"};
  for (const std::string_view n : kNames) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

bool ParseOptions(int argc, const char* const* argv, Options* out, std::string* error) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    std::string_view arg = argv[k];
    if (arg == "-h") arg = "--help";
    if (arg.size() < 3 || arg.substr(0, 2) != "--") {
      *error = "unexpected argument '" + std::string(arg) + "' (options start with --)";
      return false;
    }
    arg.remove_prefix(2);
    std::string_view name = arg;
    std::string_view value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (IsFlag(name)) {
      if (has_value) {
        *error = "--" + std::string(name) + " takes no value";
        return false;
      }
      if (name == "fill") o.fill = true;
      if (name == "json") o.json = true;
      if (name == "help") o.help = true;
      continue;
    }
    if (!TakesValue(name)) {
      *error = "unknown option --" + std::string(name);
      return false;
    }
    if (!has_value) {
      if (k + 1 >= argc) {
        *error = "missing value for --" + std::string(name);
        return false;
      }
      value = argv[++k];
    }
    if (!Apply(name, value, &o, error)) return false;
  }
  if (o.help) {
    *out = o;
    return true;
  }
  if (o.key_min > o.key_max) {
    *error = "--key-min must not exceed --key-max";
    return false;
  }
  if (o.key_max == UINT64_MAX) {
    // key_max + 1 must fit in 64 bits (it ends the last --fill range).
    *error = "--key-max must be below 18446744073709551615";
    return false;
  }
  if (o.threads > o.connections) {
    *error = "--threads must not exceed --connections";
    return false;
  }
  if (o.fill && o.rate > 0) {
    *error = "--fill and --rate cannot be combined";
    return false;
  }
  *out = o;
  return true;
}

std::string UsageText() {
  return R"(Usage: lavik-bench [options]

Redis load generator. Keys are decimal numbers without prefix ("1".."N").

Connection:
  --host ADDR          IPv4 address (default 127.0.0.1)
  --port N             (default 6379)
  --connections N      total connections (default 50)
  --threads N          client threads, each an epoll loop over its share (default 1)

Workload:
  --ratio G:S          GET:SET requests per cycle, e.g. 1:0, 0:1, 10:1 (default 1:0);
                       GET first, unlike memtier's SET:GET
  --key-min N          (default 1)
  --key-max N          (default 1000000)
  --key-pattern P      random (uniform) or sequential: each connection walks the keys
                       upward from its own starting point, wrapping (default random)
  --value-size N       bytes per SET value (default 1024)
  --pipeline N         requests in flight per connection (default 1)
  --seed N             base PRNG seed; each connection derives its own (default: clock)

Run:
  --duration S         measured seconds (default 10)
  --warmup S           seconds of load before measuring, not recorded (default 0)
  --rate R             open loop: R requests/s in total, evenly spread over the connections;
                       latency counts from each request's scheduled send time. A point is
                       sustained only if the achieved rate is >= 97% of R.
  --fill               write every key key-min..key-max exactly once (SET, pipelined,
                       split over the connections), print keys written and rate, exit
  --json               print one JSON object instead of text
  --help

Exit status: 0 ok; 1 a connection failed, or --fill was not exact; 2 bad command line.
)";
}

}  // namespace lavik::bench
