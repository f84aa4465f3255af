#include "commands/command_table.h"

#include <strings.h>

#include <bit>
#include <cstdint>

#include "storage/format.h"  // DecodeFixed32/64

namespace lavik {
namespace {

// FNV-1a, one byte at a time: Find's index hashes the lowercase name.
constexpr uint64_t kFnvOffset = 14695981039346656037ull;
inline uint64_t FnvStep(uint64_t h, char c) {
  return (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
}

uint64_t NameHash(std::string_view lower) {
  uint64_t h = kFnvOffset;
  for (char c : lower) h = FnvStep(h, c);
  return h;
}

// Lowercases into buf, hashing the lowercase bytes on the way (NameHash's value, in *hash);
// false if the name cannot be a command (too long).
inline bool Lower(std::string_view name, char* buf, size_t cap, std::string_view* out,
                  uint64_t* hash = nullptr) {
  if (name.size() > cap) return false;
  uint64_t h = kFnvOffset;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    buf[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
    h = FnvStep(h, buf[i]);
  }
  *out = std::string_view(buf, name.size());
  if (hash != nullptr) *hash = h;
  return true;
}

constexpr uint64_t kEachByte = 0x0101010101010101ull;

// Every ASCII capital among the eight bytes of `x` made lowercase; other bytes unchanged (a byte
// >= 0x80 never counts as a letter).
inline uint64_t LowerWord(uint64_t x) {
  const uint64_t low7 = x & (0x7F * kEachByte);
  const uint64_t from_a = low7 + (0x80 - 'A') * kEachByte;      // top bit: low7 >= 'A'
  const uint64_t past_z = low7 + (0x80 - 'Z' - 1) * kEachByte;  // top bit: low7 > 'Z'
  const uint64_t capital = from_a & ~past_z & ~x & (0x80 * kEachByte);
  return x | (capital >> 2);  // 0x80 >> 2 == 0x20, the case bit
}

// A name of at most 15 bytes as CommandTable::ShortSlot's two words, lowercase, reading only the
// name's own bytes (overlapping loads, never past its end).
inline void PackShort(std::string_view name, uint64_t* lo, uint64_t* hi) {
  const char* p = name.data();
  const size_t n = name.size();
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    a = DecodeFixed64(p);
    if (n > 8) b = LowerWord(DecodeFixed64(p + n - 8) >> (8 * (16 - n)));
  } else if (n >= 4) {
    a = uint64_t{DecodeFixed32(p)} | (uint64_t{DecodeFixed32(p + n - 4)} << (8 * (n - 4)));
  } else if (n > 0) {
    a = static_cast<unsigned char>(p[0]) |
        (static_cast<uint64_t>(static_cast<unsigned char>(p[n / 2])) << (8 * (n / 2))) |
        (static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << (8 * (n - 1)));
  }
  *lo = LowerWord(a);
  *hi = b | (static_cast<uint64_t>(n) << 56);
}

inline uint64_t ShortHash(uint64_t lo, uint64_t hi) {
  return (lo ^ (hi * 0x9E3779B97F4A7C15ull)) * 0xFF51AFD7ED558CCDull;
}

}  // namespace

CommandTable::CommandTable(std::span<const std::span<const CommandSpec>> families) {
  for (std::span<const CommandSpec> family : families) {
    for (const CommandSpec& spec : family) {
      by_name_.emplace(spec.name, &spec);
      all_.push_back(&spec);
    }
  }
  by_original_name_ = by_name_;
  BuildIndex();
}

namespace {

// An open-addressing index of `n` entries: a power of two at least four times n (and 16).
size_t IndexSize(size_t n) {
  size_t size = 16;
  while (size < n * 4) size *= 2;
  return size;
}

// Puts `slot` in the first free place from `start` on (linear probing).
template <typename SlotT>
void PutInIndex(std::vector<SlotT>* index, size_t start, const SlotT& slot) {
  const size_t mask = index->size() - 1;
  for (size_t i = start & mask;; i = (i + 1) & mask) {
    if ((*index)[i].spec == nullptr) {
      (*index)[i] = slot;
      return;
    }
  }
}

}  // namespace

void CommandTable::BuildIndex() {
  size_t short_names = 0;
  for (const auto& entry : by_name_) short_names += entry.first.size() <= kShortMax ? 1 : 0;
  const size_t size = IndexSize(short_names);
  short_index_.assign(size, ShortSlot{});
  short_shift_ = 64 - std::countr_zero(size);
  short_mask_ = size - 1;
  index_.assign(IndexSize(by_name_.size() - short_names), Slot{});
  for (const auto& [name, spec] : by_name_) {
    if (name.size() <= kShortMax) {
      uint64_t lo, hi;
      PackShort(name, &lo, &hi);
      PutInIndex(&short_index_, ShortHash(lo, hi) >> short_shift_, ShortSlot{lo, hi, spec});
    } else {
      PutInIndex(&index_, NameHash(name), Slot{name, spec});
    }
  }
}

const CommandSpec* CommandTable::FindOriginal(std::string_view name) const {
  auto it = by_original_name_.find(name);
  return it == by_original_name_.end() ? nullptr : it->second;
}

std::string CommandTable::Rename(std::string_view from, std::string_view to) {
  char buf[64];
  std::string_view lower;
  auto it = Lower(from, buf, sizeof(buf), &lower) ? by_name_.find(lower) : by_name_.end();
  if (it == by_name_.end()) return "No such command in rename-command";
  const CommandSpec* spec = it->second;
  if (to.empty()) {
    by_name_.erase(it);
    std::erase(all_, spec);
    BuildIndex();
    return {};
  }
  std::string name(to);
  for (char& c : name) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
  if (by_name_.count(name) != 0) return "Target command name already exists";
  by_name_.erase(it);
  by_name_.emplace(new_names_.emplace_back(std::move(name)), spec);
  BuildIndex();
  return {};
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  if (name.size() > kShortMax) [[unlikely]] {
    return FindLong(name);
  }
  uint64_t lo, hi;
  PackShort(name, &lo, &hi);
  for (size_t i = ShortHash(lo, hi) >> short_shift_;; i = (i + 1) & short_mask_) {
    const ShortSlot& s = short_index_[i];
    if (s.spec == nullptr) return nullptr;
    if (s.lo == lo && s.hi == hi) return s.spec;
  }
}

const CommandSpec* CommandTable::FindLong(std::string_view name) const {
  char buf[64];
  std::string_view lower;
  uint64_t h;
  if (!Lower(name, buf, sizeof(buf), &lower, &h)) return nullptr;
  const size_t mask = index_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = index_[i];
    if (s.spec == nullptr) return nullptr;
    if (s.name == lower) return s.spec;
  }
}

const CommandSpec* CommandTable::FindSubcommand(const CommandSpec& container,
                                                std::string_view name) {
  for (const CommandSpec& sub : container.subcommands) {
    // Subcommand names are stored as "container|sub".
    std::string_view short_name = sub.name.substr(sub.name.find('|') + 1);
    if (short_name.size() == name.size() &&
        strncasecmp(short_name.data(), name.data(), name.size()) == 0) {
      return &sub;
    }
  }
  return nullptr;
}

}  // namespace lavik
