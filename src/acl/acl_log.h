// AclLog: ACL LOG's entries — denied commands, keys, channels and failed AUTHs, newest first.
// An entry equal to one of the 10 newest (same reason, context, object and user, within 60 s)
// is merged into it (count + 1, moved to the front), as Redis 7.0 does; at most acllog-max-len
// (default 128) are kept.
//
// Thread safety: every member may be called from any thread (one mutex; denials are rare).
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace lavik {

struct AclLogEntry {
  uint64_t count = 1;
  std::string_view reason;   // "command", "key", "channel", "auth"
  std::string_view context;  // "toplevel" (no MULTI or scripts yet)
  std::string object;
  std::string username;
  int64_t created_ms = 0;  // of the newest merged event (age-seconds counts from it)
  std::string client_info;
};

class AclLog {
 public:
  void Add(AclLogEntry entry);
  // Up to `count` newest entries.
  std::vector<AclLogEntry> Newest(size_t count) const;
  void Reset();
  // acllog-max-len: applied, as Redis, when the next entry is added.
  void set_max_len(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    max_len_ = n;
  }

 private:
  static constexpr int64_t kGroupingMs = 60000;
  static constexpr size_t kScan = 10;

  mutable std::mutex mu_;
  std::deque<AclLogEntry> entries_;  // newest first
  size_t max_len_ = 128;
};

}  // namespace lavik
