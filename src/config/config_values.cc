// Value parsing for ConfigRegistry: the helpers and the parsers of Redis's
// "special" parameters (save, client-output-buffer-limit, notify-keyspace-events, ...).
#include "config/config_values.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/numbers.h"
#include "notify/keyspace_events.h"

namespace lavik {
namespace config_values {

bool ParseMemory(std::string_view text, uint64_t* out) {
  static constexpr struct {
    std::string_view suffix;
    uint64_t multiplier;
  } kUnits[] = {{"kb", 1024}, {"mb", 1024 * 1024}, {"gb", 1024 * 1024 * 1024},
                {"k", 1000},  {"m", 1000 * 1000},  {"g", 1000 * 1000 * 1000},
                {"b", 1}};
  uint64_t multiplier = 1;
  std::string_view digits = text;
  for (const auto& unit : kUnits) {
    if (text.size() >= unit.suffix.size() &&
        EqualsNoCase(text.substr(text.size() - unit.suffix.size()), unit.suffix)) {
      multiplier = unit.multiplier;
      digits = text.substr(0, text.size() - unit.suffix.size());
      break;
    }
  }
  uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    v = (v > (UINT64_MAX - digit) / 10) ? UINT64_MAX : v * 10 + digit;
  }
  *out = v > UINT64_MAX / multiplier ? UINT64_MAX : v * multiplier;
  return true;
}

constexpr uint64_t kI64Max = INT64_MAX;

// ---- Value helpers ----------------------------------------------------------

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Lower(c);
  return out;
}

// Redis splits multi-word values on single spaces (sdssplitlen): "a  b" has an
// empty middle token and "" has none.
std::vector<std::string_view> SplitSpaces(std::string_view s) {
  std::vector<std::string_view> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t sp = s.find(' ', start);
    out.push_back(s.substr(start, sp == std::string_view::npos ? sp : sp - start));
    if (sp == std::string_view::npos) return out;
    start = sp + 1;
  }
}

// Splits on runs of whitespace, dropping empty tokens.
std::vector<std::string_view> SplitWords(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += ' ';
    out += parts[i];
  }
  return out;
}

// strtoll's grammar without the leading whitespace: optional sign, at least
// one digit, nothing after. Saturates on overflow like strtoll. The parameters
// that Redis parses this way (save, client-output-buffer-limit seconds,
// oom-score-adj-values) accept "+5" and "007".
bool ParseLooseInt(std::string_view s, int64_t* out) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size()) return false;
  uint64_t limit = negative ? uint64_t{INT64_MAX} + 1 : uint64_t{INT64_MAX};
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    v = (v > (limit - digit) / 10) ? limit : v * 10 + digit;
  }
  *out = negative ? (v == limit ? INT64_MIN : -static_cast<int64_t>(v)) : static_cast<int64_t>(v);
  return true;
}

std::string RangeError(int64_t min, uint64_t max) {
  return "argument must be between " + std::to_string(min) + " and " + std::to_string(max) +
         " inclusive";
}

// ---- Special parameters -----------------------------------------------------

bool ParseSave(std::string_view in, std::string_view, std::string* out, std::string* err) {
  std::vector<std::string_view> tokens = SplitSpaces(in);
  std::vector<std::string> parts;
  bool ok = tokens.size() % 2 == 0;
  for (size_t i = 0; ok && i < tokens.size(); ++i) {
    int64_t v;
    // Pairs of "seconds changes": at least one second, any number of changes.
    ok = ParseLooseInt(tokens[i], &v) && v >= (i % 2 == 0 ? 1 : 0);
    parts.push_back(std::to_string(v));
  }
  if (!ok) {
    *err = "Invalid save parameters";
    return false;
  }
  *out = Join(parts);
  return true;
}

constexpr const char* kClientClasses[] = {"normal", "slave", "pubsub"};

int ClientClassIndex(std::string_view name) {
  if (EqualsNoCase(name, "normal")) return 0;
  if (EqualsNoCase(name, "slave") || EqualsNoCase(name, "replica")) return 1;
  if (EqualsNoCase(name, "pubsub")) return 2;
  return -1;
}

bool ParseClientOutputBufferLimit(std::string_view in, std::string_view current, std::string* out,
                                  std::string* err) {
  std::vector<std::string_view> tokens = SplitSpaces(in);
  if (tokens.size() % 4 != 0) {
    *err = "Wrong number of arguments in buffer limit configuration.";
    return false;
  }
  // The stored value always names all three classes in order, 4 words each.
  std::vector<std::string_view> words = SplitSpaces(current);
  std::vector<std::string> limits;
  for (size_t i = 0; i + 3 < words.size(); i += 4) {
    limits.push_back(std::string(words[i + 1]) + " " + std::string(words[i + 2]) + " " +
                     std::string(words[i + 3]));
  }
  limits.resize(3, "0 0 0");
  for (size_t i = 0; i < tokens.size(); i += 4) {
    int index = ClientClassIndex(tokens[i]);
    if (index < 0) {
      *err = "Invalid client class specified in buffer limit configuration.";
      return false;
    }
    uint64_t hard, soft;
    int64_t seconds;
    if (!ParseMemory(tokens[i + 1], &hard) || !ParseMemory(tokens[i + 2], &soft) ||
        !ParseLooseInt(tokens[i + 3], &seconds) || seconds < 0) {
      *err = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
      return false;
    }
    limits[index] =
        std::to_string(hard) + " " + std::to_string(soft) + " " + std::to_string(seconds);
  }
  out->clear();
  for (int i = 0; i < 3; ++i) {
    if (i > 0) *out += ' ';
    *out += std::string(kClientClasses[i]) + " " + limits[i];
  }
  return true;
}

bool ParsePercentiles(std::string_view in, std::string_view, std::string* out, std::string* err) {
  std::vector<std::string> parts;
  for (std::string_view token : SplitSpaces(in)) {
    double p;
    if (!ParseDouble(token, &p)) {
      *err = "Invalid latency-tracking-info-percentiles parameters";
      return false;
    }
    if (p > 100.0 || p < 0.0) {
      *err = "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
      return false;
    }
    // Redis prints "%f" and trims trailing zeros: 99.9 -> "99.9", 50 -> "50".
    char buf[400];
    std::string text(buf, static_cast<size_t>(std::snprintf(buf, sizeof(buf), "%f", p)));
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
    parts.push_back(std::move(text));
  }
  *out = Join(parts);
  return true;
}

namespace {

constexpr std::string_view kShutdownFlags[] = {"save", "nosave", "now", "force"};

// The words of `in` as flags (set[i]: kShutdownFlags[i]); false on a word that is none.
bool ShutdownFlagWords(std::string_view in, bool (&set)[std::size(kShutdownFlags)]) {
  const std::vector<std::string_view> words = SplitWords(in);
  for (std::string_view w : words) {
    if (EqualsNoCase(w, "default")) continue;
    size_t i = 0;
    while (i < std::size(kShutdownFlags) && !EqualsNoCase(w, kShutdownFlags[i])) ++i;
    if (i == std::size(kShutdownFlags)) return false;
    set[i] = true;
  }
  return !words.empty();
}

}  // namespace

bool ParseShutdownOnSignal(std::string_view in, std::string_view, std::string* out,
                           std::string* err) {
  bool set[std::size(kShutdownFlags)] = {};
  if (!ShutdownFlagWords(in, set)) {
    *err = "argument(s) must be one of the following: default, save, nosave, now, force";
    return false;
  }
  if (set[0] && set[1]) {
    *err = "shutdown options SAVE and NOSAVE can't be used simultaneously";
    return false;
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < std::size(kShutdownFlags); ++i) {
    if (set[i]) names.emplace_back(kShutdownFlags[i]);
  }
  *out = names.empty() ? "default" : Join(names);
  return true;
}

ShutdownFlags ShutdownOnSignalFlags(std::string_view stored) {
  bool set[std::size(kShutdownFlags)] = {};
  ShutdownFlagWords(stored, set);
  return ShutdownFlags{set[0], set[1], set[2], set[3]};
}

bool ParseMemoryOrPercent(std::string_view in, std::string_view, std::string* out,
                          std::string* err) {
  if (!in.empty() && in.back() == '%') {
    int64_t percent;
    if (!ParseInt64(in.substr(0, in.size() - 1), &percent) || percent < 0) {
      *err = "argument must be a memory or percent value";
      return false;
    }
    if (percent > 100) {
      *err = "percentage argument must be less or equal to 100";
      return false;
    }
    *out = percent == 0 ? "0" : std::to_string(percent) + "%";
    return true;
  }
  uint64_t bytes;
  if (!ParseMemory(in, &bytes)) {
    *err = "argument must be a memory or percent value";
    return false;
  }
  if (bytes > kI64Max) {
    *err = RangeError(0, kI64Max);
    return false;
  }
  *out = std::to_string(bytes);
  return true;
}

bool ParseKeyspaceEvents(std::string_view in, std::string_view, std::string* out,
                         std::string* err) {
  uint32_t flags;
  if (!ParseKeyspaceEventFlags(in, &flags)) {
    *err = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
    return false;
  }
  *out = KeyspaceEventFlagsString(flags, /*keep_new=*/true);
  return true;
}

std::string ShowKeyspaceEvents(std::string_view stored) {
  uint32_t flags = 0;
  ParseKeyspaceEventFlags(stored, &flags);
  return KeyspaceEventFlagsString(flags);
}

bool ParseOomScoreAdjValues(std::string_view in, std::string_view, std::string* out,
                            std::string* err) {
  std::vector<std::string_view> tokens = SplitSpaces(in);
  if (tokens.size() != 3) {
    *err = "wrong number of arguments";
    return false;
  }
  std::vector<std::string> parts;
  for (std::string_view token : tokens) {
    int64_t v;
    if (!ParseLooseInt(token, &v) || v < -2000 || v > 2000) {
      *err = "Invalid oom-score-adj-values, elements must be between -2000 and 2000.";
      return false;
    }
    parts.push_back(std::to_string(v));
  }
  *out = Join(parts);
  return true;
}

bool ParseBind(std::string_view in, std::string_view, std::string* out, std::string* err) {
  std::vector<std::string_view> words = SplitWords(in);
  if (words.size() > 16) {
    *err = "Too many bind addresses specified.";
    return false;
  }
  // Whether the addresses can be bound is for the server's change hook.
  *out = Join(std::vector<std::string>(words.begin(), words.end()));
  return true;
}

bool ParseReplicaOf(std::string_view in, std::string_view, std::string* out, std::string* err) {
  std::vector<std::string_view> words = SplitWords(in);
  if (words.size() != 2) {
    *err = "wrong number of arguments";
    return false;
  }
  if (EqualsNoCase(words[0], "no") && EqualsNoCase(words[1], "one")) {
    out->clear();
    return true;
  }
  int64_t port;
  if (!ParseLooseInt(words[1], &port) || port < 0 || port > 65535) {
    *err = "Invalid master port";
    return false;
  }
  *out = std::string(words[0]) + " " + std::to_string(port);
  return true;
}

bool ParseProcTitleTemplate(std::string_view in, std::string_view, std::string* out,
                            std::string* err) {
  static constexpr std::string_view kVars[] = {"{title}",      "{listen-addr}", "{server-mode}",
                                               "{port}",       "{tls-port}",    "{unixsocket}",
                                               "{config-file}"};
  bool ok = !in.empty() && in.front() != ' ' && in.back() != ' ';
  for (size_t i = 0; ok && i < in.size(); ++i) {
    if (in[i] != '{') continue;
    size_t close = in.find('}', i);
    ok = close != std::string_view::npos &&
         std::find(std::begin(kVars), std::end(kVars), in.substr(i, close - i + 1)) !=
             std::end(kVars);
    i = close;
  }
  if (!ok) {
    *err = "template format is invalid or contains unknown variables";
    return false;
  }
  *out = std::string(in);
  return true;
}

bool ParseOctal(std::string_view in, std::string_view, std::string* out, std::string* err) {
  uint64_t v = 0;
  bool ok = !in.empty();
  for (char c : in) {
    ok = ok && c >= '0' && c <= '7';
    if (ok) v = std::min<uint64_t>(v * 8 + static_cast<uint64_t>(c - '0'), 01000);  // saturate
  }
  if (!ok) {
    *err = "argument couldn't be parsed into an integer";
    return false;
  }
  if (v > 0777) {
    *err = RangeError(0, 0777);
    return false;
  }
  char buf[8];
  int n = std::snprintf(buf, sizeof(buf), "%o", static_cast<unsigned>(v));
  *out = std::string(buf, static_cast<size_t>(n));
  return true;
}

}  // namespace config_values
}  // namespace lavik
