#include "acl/acl_log.h"

#include <algorithm>

namespace lavik {

void AclLog::Add(AclLogEntry e) {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t scan = std::min(kScan, entries_.size());
  for (size_t i = 0; i < scan; ++i) {
    AclLogEntry& cur = entries_[i];
    int64_t delta = cur.created_ms - e.created_ms;
    if (delta < 0) delta = -delta;
    if (cur.reason == e.reason && cur.context == e.context && delta <= kGroupingMs &&
        cur.object == e.object && cur.username == e.username) {
      AclLogEntry merged = std::move(cur);
      merged.count++;
      merged.created_ms = e.created_ms;
      merged.client_info = std::move(e.client_info);
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
      entries_.push_front(std::move(merged));
      return;
    }
  }
  entries_.push_front(std::move(e));
  while (entries_.size() > max_len_) entries_.pop_back();
}

std::vector<AclLogEntry> AclLog::Newest(size_t count) const {
  std::lock_guard<std::mutex> lock(mu_);
  count = std::min(count, entries_.size());
  return std::vector<AclLogEntry>(entries_.begin(),
                                  entries_.begin() + static_cast<std::ptrdiff_t>(count));
}

void AclLog::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
}

}  // namespace lavik
