// SlowLog: the commands that took at least slowlog-log-slower-than microseconds, newest first,
// at most slowlog-max-len of them, as Redis 7.0's SLOWLOG shows them.
//
// An entry keeps a trimmed copy of the arguments (at most 32; strings over 128 bytes cut) with
// secrets redacted, so the log never holds a large value or a password.
//
// Thread safety: every method may be called from any thread. The threshold is an atomic read by
// the request path; the log itself is behind a mutex, taken only for commands that qualify.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lavik {

class SlowLog {
 public:
  static constexpr size_t kMaxArgc = 32;
  static constexpr size_t kMaxString = 128;

  struct Entry {
    uint64_t id = 0;
    int64_t time_s = 0;       // Unix time when the command finished
    int64_t duration_us = 0;  // from dispatch to complete reply
    std::vector<std::string> argv;
    std::string peer;  // "ip:port"
    std::string name;  // client name, may be empty
  };

  // slowlog-log-slower-than: microseconds; negative disables the log, 0 logs every command.
  void set_threshold_us(int64_t us) { threshold_us_.store(us, std::memory_order_relaxed); }
  int64_t threshold_us() const { return threshold_us_.load(std::memory_order_relaxed); }
  // slowlog-max-len; a shorter log takes effect at the next Push, as in Redis.
  void set_max_len(int64_t n);

  // Adds an entry (the caller checked the threshold) and drops the oldest beyond max-len.
  void Push(std::span<const std::string_view> argv, int64_t duration_us, int64_t time_s,
            std::string_view peer, std::string_view name);
  // The newest `count` entries (all if count < 0), newest first.
  std::vector<Entry> Get(int64_t count) const;
  size_t Len() const;
  void Reset();  // entry ids keep counting, as in Redis

  // The arguments as an entry keeps them: at most kMaxArgc, the last of those replaced by
  // "... (N more arguments)"; strings longer than kMaxString cut to it plus
  // "... (N more bytes)"; secrets (AUTH, HELLO AUTH, CONFIG SET requirepass...) as
  // "(redacted)".
  static std::vector<std::string> TrimArgv(std::span<const std::string_view> argv);

 private:
  std::atomic<int64_t> threshold_us_{10000};
  mutable std::mutex mu_;
  std::deque<Entry> entries_;  // newest at the front
  size_t max_len_ = 128;
  uint64_t next_id_ = 0;
};

}  // namespace lavik
