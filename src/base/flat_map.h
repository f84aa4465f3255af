// FlatMap: an open-addressing hash map from a nonzero 64-bit key that is already a good hash
// (a key fingerprint) to a small trivially copyable value. One array, linear probing,
// backward-shift deletion (no tombstones): a lookup touches one or two cache lines, where a
// node-based std::unordered_map chases three pointers.
//
// Key 0 marks an empty slot, so it is kept aside in its own field. Thread safety: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "base/prefetch.h"

namespace lavik {

template <typename V>
class FlatMap {
  static_assert(std::is_trivially_copyable_v<V>);

 public:
  FlatMap() { slots_.resize(kMinSlots); }

  V* Find(uint64_t key) {
    if (key == 0) return has_zero_ ? &zero_value_ : nullptr;
    size_t mask = slots_.size() - 1;
    for (size_t i = key & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == 0) return nullptr;
    }
  }
  const V* Find(uint64_t key) const { return const_cast<FlatMap*>(this)->Find(key); }
  // A hint: loads key's home slot into the CPU's cache.
  void Prefetch(uint64_t key) const { lavik::Prefetch(&slots_[key & (slots_.size() - 1)]); }

  // Inserts or replaces.
  void Put(uint64_t key, V value) {
    if (key == 0) {
      size_ += has_zero_ ? 0 : 1;
      has_zero_ = true;
      zero_value_ = value;
      return;
    }
    if ((size_ + 1) * 10 > slots_.size() * 7) Rehash(slots_.size() * 2);  // load <= 0.7
    size_t mask = slots_.size() - 1;
    for (size_t i = key & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.key == key) {
        s.value = value;
        return;
      }
      if (s.key == 0) {
        s.key = key;
        s.value = value;
        ++size_;
        return;
      }
    }
  }

  bool Erase(uint64_t key) {
    if (key == 0) {
      if (!has_zero_) return false;
      has_zero_ = false;
      --size_;
      return true;
    }
    size_t mask = slots_.size() - 1;
    size_t i = key & mask;
    while (slots_[i].key != key) {
      if (slots_[i].key == 0) return false;
      i = (i + 1) & mask;
    }
    // Backward shift: pull later entries of the probe run into the hole.
    size_t hole = i;
    for (size_t j = (hole + 1) & mask; slots_[j].key != 0; j = (j + 1) & mask) {
      size_t home = slots_[j].key & mask;
      // Move j into the hole unless its home lies cyclically in (hole, j].
      bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    if (slots_.size() > kMinSlots && size_ * 10 < slots_.size()) Rehash(slots_.size() / 2);
    return true;
  }

  size_t size() const { return size_; }
  size_t memory_bytes() const { return slots_.capacity() * sizeof(Slot); }
  void Clear() {
    has_zero_ = false;
    slots_.assign(kMinSlots, Slot{});
    slots_.shrink_to_fit();
    size_ = 0;
  }

 private:
  static constexpr size_t kMinSlots = 16;
  struct Slot {
    uint64_t key = 0;
    V value{};
  };
  void Rehash(size_t n) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(n, Slot{});
    size_ = has_zero_ ? 1 : 0;
    for (const Slot& s : old) {
      if (s.key != 0) Put(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;  // includes the zero key
  bool has_zero_ = false;
  V zero_value_{};
};

}  // namespace lavik
