#include "storage/keyspace.h"

#include <xxhash.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace lavik {
namespace {

constexpr size_t kMinBuckets = 4;  // as Redis's initial table

uint64_t ReverseBits(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
  return __builtin_bswap64(v);
}

Entry* NewEntry(std::string_view key, uint64_t hash) {
  void* mem = std::malloc(sizeof(Entry) + key.size());
  if (mem == nullptr) throw std::bad_alloc();
  auto* e = new (mem) Entry{
      nullptr, hash, 0, 0, static_cast<uint32_t>(key.size()), ValueType::kString, std::string()};
  if (!key.empty()) std::memcpy(reinterpret_cast<char*>(e + 1), key.data(), key.size());
  return e;
}

void FreeEntry(Entry* e) {
  e->~Entry();
  std::free(e);
}

}  // namespace

std::string_view TypeName(ValueType t) {
  switch (t) {
    case ValueType::kString:
      return "string";
    case ValueType::kList:
      return "list";
    case ValueType::kSet:
      return "set";
    case ValueType::kZSet:
      return "zset";
    case ValueType::kHash:
      return "hash";
    case ValueType::kStream:
      return "stream";
  }
  return "none";
}

Keyspace::Keyspace() : buckets_(kMinBuckets, nullptr) {}

Keyspace::~Keyspace() { Clear(); }

uint64_t Keyspace::Hash(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

Entry* Keyspace::Find(std::string_view key) const {
  uint64_t h = Hash(key);
  for (Entry* e = buckets_[h & (buckets_.size() - 1)]; e != nullptr; e = e->next) {
    if (e->hash == h && e->key() == key) return e;
  }
  return nullptr;
}

Entry* Keyspace::Insert(std::string_view key) {
  if (size_ >= buckets_.size()) Resize(buckets_.size() * 2);
  uint64_t h = Hash(key);
  Entry* e = NewEntry(key, h);
  Entry*& head = buckets_[h & (buckets_.size() - 1)];
  e->next = head;
  head = e;
  ++size_;
  return e;
}

void Keyspace::Unlink(Entry* e) {
  Entry** link = &buckets_[e->hash & (buckets_.size() - 1)];
  while (*link != e) link = &(*link)->next;
  *link = e->next;
  --size_;
}

void Keyspace::Erase(Entry* e) {
  SetExpire(e, 0);
  Unlink(e);
  FreeEntry(e);
  // Shrink lazily (1/8 full) so a delete-heavy phase does not keep a huge table.
  if (buckets_.size() > kMinBuckets && size_ * 8 < buckets_.size()) Resize(buckets_.size() / 2);
}

Entry* Keyspace::Rekey(Entry* e, std::string_view new_key) {
  int64_t expire = e->expire_ms;
  ValueType type = e->type;
  std::string value = std::move(e->value);
  Erase(e);
  Entry* n = Insert(new_key);
  n->type = type;
  n->value = std::move(value);
  SetExpire(n, expire);
  return n;
}

void Keyspace::SetExpire(Entry* e, int64_t expire_ms) {
  if (e->expire_ms != 0 && expire_ms == 0) {
    Entry* last = expiring_.back();
    expiring_[e->expire_slot] = last;
    last->expire_slot = e->expire_slot;
    expiring_.pop_back();
  } else if (e->expire_ms == 0 && expire_ms != 0) {
    e->expire_slot = static_cast<uint32_t>(expiring_.size());
    expiring_.push_back(e);
  }
  e->expire_ms = expire_ms;
}

void Keyspace::Clear() {
  for (Entry*& head : buckets_) {
    while (head != nullptr) {
      Entry* e = head;
      head = e->next;
      FreeEntry(e);
    }
  }
  buckets_.assign(kMinBuckets, nullptr);
  buckets_.shrink_to_fit();
  size_ = 0;
  expiring_.clear();
  expiring_.shrink_to_fit();
}

void Keyspace::Resize(size_t new_buckets) {
  if (new_buckets < kMinBuckets) new_buckets = kMinBuckets;
  std::vector<Entry*> next(new_buckets, nullptr);
  for (Entry* head : buckets_) {
    while (head != nullptr) {
      Entry* e = head;
      head = e->next;
      Entry*& slot = next[e->hash & (new_buckets - 1)];
      e->next = slot;
      slot = e;
    }
  }
  buckets_.swap(next);
}

uint64_t Keyspace::ScanBucket(uint64_t cursor, const std::function<void(Entry*)>& fn) const {
  const uint64_t mask = buckets_.size() - 1;
  for (Entry* e = buckets_[cursor & mask]; e != nullptr; e = e->next) fn(e);
  // Increment the reversed cursor: the order stays valid when the table doubles or halves.
  cursor |= ~mask;
  cursor = ReverseBits(cursor);
  ++cursor;
  return ReverseBits(cursor);
}

Entry* Keyspace::Random(uint64_t rnd) const {
  if (size_ == 0) return nullptr;
  const uint64_t mask = buckets_.size() - 1;
  // Tables are at least 1/8 full, so a few probes find a non-empty bucket.
  for (uint64_t i = 0;; ++i) {
    uint64_t r = XXH3_64bits_withSeed(&i, sizeof(i), rnd);
    Entry* head = buckets_[r & mask];
    if (head == nullptr) continue;
    size_t len = 0;
    for (Entry* e = head; e != nullptr; e = e->next) ++len;
    size_t pick = (r >> 32) % len;
    while (pick-- > 0) head = head->next;
    return head;
  }
}

Entry* Keyspace::RandomExpiring(uint64_t rnd) const {
  if (expiring_.empty()) return nullptr;
  return expiring_[rnd % expiring_.size()];
}

}  // namespace lavik
