#include "storage/store.h"

#include <time.h>

namespace lavik {
namespace {

int64_t MonotonicUs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

}  // namespace

bool Store::ExpireIfNeeded(Entry* e, int64_t now_ms) {
  if (e->expire_ms == 0 || e->expire_ms > now_ms) return false;
  keys_.Erase(e);
  ++stats_.expired_keys;
  return true;
}

Entry* Store::Lookup(std::string_view key, int64_t now_ms) {
  Entry* e = keys_.Find(key);
  if (e != nullptr && ExpireIfNeeded(e, now_ms)) return nullptr;
  return e;
}

Entry* Store::LookupRead(std::string_view key, int64_t now_ms) {
  Entry* e = Lookup(key, now_ms);
  if (e != nullptr) {
    ++stats_.keyspace_hits;
  } else {
    ++stats_.keyspace_misses;
  }
  return e;
}

Entry* Store::LookupOrCreate(std::string_view key, int64_t now_ms, bool* created) {
  Entry* e = Lookup(key, now_ms);
  *created = e == nullptr;
  if (e == nullptr) e = keys_.Insert(key);
  return e;
}

void Store::WriteString(Entry* e, std::string_view value) {
  e->type = ValueType::kString;
  e->value.assign(value.data(), value.size());
}

void Store::Delete(Entry* e) { keys_.Erase(e); }

size_t Store::ActiveExpireCycle(int64_t now_ms, int64_t budget_us) {
  // Redis's sampling loop: look at 20 random keys with a TTL, delete the expired ones, and go
  // again while more than a quarter of the sample was expired (the time budget bounds the work).
  const int64_t deadline = MonotonicUs() + budget_us;
  size_t deleted = 0;
  while (keys_.expires() > 0) {
    size_t sampled = 0;
    size_t expired = 0;
    for (; sampled < 20 && keys_.expires() > 0; ++sampled) {
      rnd_ = rnd_ * 6364136223846793005ULL + 1442695040888963407ULL;
      Entry* e = keys_.RandomExpiring(rnd_ >> 11);
      if (ExpireIfNeeded(e, now_ms)) ++expired;
    }
    deleted += expired;
    if (expired * 4 <= sampled || MonotonicUs() >= deadline) break;
  }
  return deleted;
}

uint64_t Store::Scan(uint64_t cursor, size_t count, int64_t now_ms,
                     const std::function<void(Entry*)>& fn) const {
  if (keys_.size() == 0) return 0;
  size_t emitted = 0;
  size_t budget = count > SIZE_MAX / 10 ? SIZE_MAX : count * 10;
  do {
    cursor = keys_.ScanBucket(cursor, [&](Entry* e) {
      if (e->expire_ms != 0 && e->expire_ms <= now_ms) return;
      ++emitted;
      fn(e);
    });
  } while (cursor != 0 && --budget > 0 && emitted < count);
  return cursor;
}

}  // namespace lavik
