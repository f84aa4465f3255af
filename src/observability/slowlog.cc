#include "observability/slowlog.h"

#include "base/ascii.h"

namespace lavik {
namespace {

// Whether argument i of this command is a secret Redis redacts in the slow log.
bool IsSecret(std::span<const std::string_view> argv, size_t i) {
  if (i == 0) return false;
  std::string_view cmd = argv[0];
  if (EqualsNoCase(cmd, "auth")) return true;
  if (EqualsNoCase(cmd, "hello")) {
    // HELLO [protover [AUTH user pass] [SETNAME name]]: the user and password.
    for (size_t j = 2; j + 2 < argv.size(); ++j) {
      if (EqualsNoCase(argv[j], "auth") && (i == j + 1 || i == j + 2)) return true;
    }
    return false;
  }
  if (EqualsNoCase(cmd, "config") && argv.size() > 1 && EqualsNoCase(argv[1], "set")) {
    // CONFIG SET name value ...: the values of sensitive parameters.
    if (i < 3 || (i - 2) % 2 != 1) return false;
    std::string_view param = argv[i - 1];
    return EqualsNoCase(param, "requirepass") || EqualsNoCase(param, "masterauth") ||
           EqualsNoCase(param, "masteruser") || EqualsNoCase(param, "tls-key-file-pass") ||
           EqualsNoCase(param, "tls-client-key-file-pass");
  }
  return false;
}

}  // namespace

std::vector<std::string> SlowLog::TrimArgv(std::span<const std::string_view> argv) {
  const size_t n = argv.size() > kMaxArgc ? kMaxArgc : argv.size();
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t j = 0; j < n; ++j) {
    if (n != argv.size() && j == n - 1) {
      out.push_back("... (" + std::to_string(argv.size() - n + 1) + " more arguments)");
    } else if (IsSecret(argv, j)) {
      out.push_back("(redacted)");
    } else if (argv[j].size() > kMaxString) {
      out.push_back(std::string(argv[j].substr(0, kMaxString)) + "... (" +
                    std::to_string(argv[j].size() - kMaxString) + " more bytes)");
    } else {
      out.emplace_back(argv[j]);
    }
  }
  return out;
}

void SlowLog::set_max_len(int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  // As Redis: the log is trimmed to the new length when the next entry arrives.
  max_len_ = n < 0 ? 0 : static_cast<size_t>(n);
}

void SlowLog::Push(std::span<const std::string_view> argv, int64_t duration_us, int64_t time_s,
                   std::string_view peer, std::string_view name) {
  Entry e;
  e.argv = TrimArgv(argv);  // outside the lock: the copy is the expensive part
  e.time_s = time_s;
  e.duration_us = duration_us;
  e.peer = std::string(peer);
  e.name = std::string(name);
  std::lock_guard<std::mutex> lock(mu_);
  e.id = next_id_++;
  entries_.push_front(std::move(e));
  while (entries_.size() > max_len_) entries_.pop_back();
}

std::vector<SlowLog::Entry> SlowLog::Get(int64_t count) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = entries_.size();
  if (count >= 0 && static_cast<size_t>(count) < n) n = static_cast<size_t>(count);
  return std::vector<Entry>(entries_.begin(), entries_.begin() + static_cast<ptrdiff_t>(n));
}

size_t SlowLog::Len() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void SlowLog::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
}

}  // namespace lavik
