#include "storage/chunk_format.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <random>

#include "base/slot.h"

namespace lavik {
namespace {

constexpr size_t kRootHeader = 32;
constexpr size_t kRootEntry = 24;

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // little-endian hosts only (as the record format)
  return v;
}

template <typename T>
void Put(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out->append(b, sizeof(T));
}

// For each slot, two bytes (no '}') whose CRC16 lands in it. CRC16 of a 2-byte message is a
// bijection on 16-bit values, so each slot has four candidates; at most two contain '}'.
const std::array<uint16_t, kNumSlots>& SlotTags() {
  static const std::array<uint16_t, kNumSlots> tags = [] {
    std::array<uint16_t, kNumSlots> t{};
    std::array<bool, kNumSlots> set{};
    for (uint32_t v = 0; v < 65536; ++v) {
      const char b[2] = {static_cast<char>(v & 0xFF), static_cast<char>(v >> 8)};
      if (b[0] == '}' || b[1] == '}') continue;
      const uint16_t slot = Crc16(std::string_view(b, 2)) % kNumSlots;
      if (!set[slot]) {
        set[slot] = true;
        t[slot] = static_cast<uint16_t>(v);
      }
    }
    return t;
  }();
  return tags;
}

}  // namespace

std::string ChunkKey(uint16_t slot, uint64_t id, uint64_t number) {
  std::string k(kChunkKeyPrefix);
  Put<uint16_t>(&k, SlotTags()[slot % kNumSlots]);
  k.push_back('}');
  Put<uint64_t>(&k, id);
  Put<uint64_t>(&k, number);
  return k;
}

bool IsChunkKey(std::string_view key) { return key.starts_with(kChunkKeyPrefix); }

bool ParseChunkKey(std::string_view key, uint16_t* slot, uint64_t* id, uint64_t* number) {
  const size_t tag = kChunkKeyPrefix.size();
  if (!IsChunkKey(key) || key.size() != tag + 2 + 1 + 16 || key[tag + 2] != '}') return false;
  *slot = KeyHashSlot(key);
  *id = Load<uint64_t>(key.data() + tag + 3);
  *number = Load<uint64_t>(key.data() + tag + 11);
  return true;
}

uint64_t ChunkRoot::TakeNumber() {
  thread_local uint64_t floor = 0;
  const uint64_t n = std::max(next_number, floor);
  floor = n + 1;
  next_number = n + 1;
  return n;
}

size_t ChunkRoot::ChunkOf(uint64_t k) const {
  // The last chunk whose first key is <= k (chunks[0].first is 0).
  size_t lo = 0, hi = chunks.size();
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (chunks[mid].first <= k) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

bool ParseChunkRoot(std::string_view v, ChunkRoot* out) {
  if (v.size() < kRootHeader || static_cast<uint8_t>(v[0]) != kRootVersion) return false;
  const char* p = v.data();
  out->flags = static_cast<uint8_t>(p[1]);
  out->slot = Load<uint16_t>(p + 2);
  const uint32_t n = Load<uint32_t>(p + 4);
  out->total = Load<uint64_t>(p + 8);
  out->id = Load<uint64_t>(p + 16);
  out->next_number = Load<uint64_t>(p + 24);
  const bool has_tail = (out->flags & kRootFlagTail) != 0;
  if (n == 0 || (v.size() - kRootHeader) / kRootEntry < n ||
      (!has_tail && v.size() != kRootHeader + size_t{n} * kRootEntry)) {
    return false;
  }
  out->tail.clear();
  if (has_tail) out->tail.assign(v.substr(kRootHeader + size_t{n} * kRootEntry));
  out->chunks.resize(n);
  uint64_t sum = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const char* e = p + kRootHeader + size_t{i} * kRootEntry;
    ChunkRef& c = out->chunks[i];
    c.first = Load<uint64_t>(e);
    c.number = Load<uint64_t>(e + 8);
    c.count = Load<uint32_t>(e + 16);
    if (i == 0 ? c.first != 0 : c.first <= out->chunks[i - 1].first) return false;
    sum += c.count;
  }
  return sum == out->total;
}

std::string EncodeChunkRoot(const ChunkRoot& r) {
  std::string out;
  out.reserve(kRootHeader + r.chunks.size() * kRootEntry + r.tail.size());
  out.push_back(static_cast<char>(kRootVersion));
  out.push_back(static_cast<char>(r.flags));
  Put<uint16_t>(&out, r.slot);
  Put<uint32_t>(&out, static_cast<uint32_t>(r.chunks.size()));
  Put<uint64_t>(&out, r.total);
  Put<uint64_t>(&out, r.id);
  Put<uint64_t>(&out, r.next_number);
  for (const ChunkRef& c : r.chunks) {
    Put<uint64_t>(&out, c.first);
    Put<uint64_t>(&out, c.number);
    Put<uint32_t>(&out, c.count);
    Put<uint32_t>(&out, 0);
  }
  if ((r.flags & kRootFlagTail) != 0) out.append(r.tail);
  return out;
}

uint64_t NewChunkedId() {
  thread_local std::mt19937_64 gen(
      std::random_device{}() ^
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  uint64_t id = 0;
  while (id == 0) id = gen();
  return id;
}

// --- ChunkRegistry ---

void ChunkRegistry::NoteWrite(uint64_t fp, std::string_view value, bool is_collection) {
  ChunkRoot root;
  const bool is_root = is_collection && IsChunkRoot(value) && ParseChunkRoot(value, &root);
  if (!is_root && roots_.empty()) return;  // the common case: no chunked collection here
  auto it = roots_.find(fp);
  if (it != roots_.end()) {
    if (is_root && it->second.id == root.id) {
      // The same collection, rewritten: the writer deletes the chunks it replaced itself.
      it->second.numbers.clear();
      for (const ChunkRef& c : root.chunks) it->second.numbers.push_back(c.number);
      return;
    }
    Forget(fp, true);
  }
  if (is_root) NoteRead(fp, root);
}

void ChunkRegistry::NoteRead(uint64_t fp, const ChunkRoot& root) {
  auto [it, inserted] = roots_.try_emplace(fp);
  if (!inserted) {
    // Known: every write of the root went through NoteWrite, so its chunk list is current.
    if (it->second.id == root.id) return;
    // A stale entry (a fingerprint reused without a death seen): drop it without sweeping.
    auto r = refs_.find(it->second.id);
    if (r != refs_.end() && --r->second == 0) refs_.erase(r);
  }
  it->second.id = root.id;
  it->second.slot = root.slot;
  it->second.numbers.clear();
  for (const ChunkRef& c : root.chunks) it->second.numbers.push_back(c.number);
  ++refs_[root.id];
}

void ChunkRegistry::KeyDying(uint64_t fp) {
  if (roots_.empty()) return;
  Forget(fp, true);
}

void ChunkRegistry::Forget(uint64_t fp, bool sweep) {
  auto it = roots_.find(fp);
  if (it == roots_.end()) return;
  Known k = std::move(it->second);
  roots_.erase(it);
  auto r = refs_.find(k.id);
  if (r != refs_.end() && --r->second > 0) return;  // another key (RENAME) still refers to it
  if (r != refs_.end()) refs_.erase(r);
  if (!sweep) return;
  for (uint64_t n : k.numbers) queue_.push_back(Dead{k.slot, k.id, n});
}

void ChunkRegistry::QueueUnreferenced(const ChunkRoot& root) {
  if (refs_.count(root.id) != 0) return;
  for (const ChunkRef& c : root.chunks) queue_.push_back(Dead{root.slot, root.id, c.number});
}

void ChunkRegistry::Clear() {
  roots_.clear();
  refs_.clear();
  queue_.clear();
}

std::vector<ChunkRegistry::Dead> ChunkRegistry::Take(size_t max) {
  std::vector<Dead> out;
  while (!queue_.empty() && out.size() < max) {
    out.push_back(queue_.front());
    queue_.pop_front();
  }
  return out;
}

}  // namespace lavik
