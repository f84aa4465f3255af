#include "base/random.h"

#include <chrono>
#include <cstdint>
#include <unordered_set>
#include <utility>

namespace lavik {

namespace {

uint64_t NextRandom() {
  thread_local uint64_t state =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      reinterpret_cast<uintptr_t>(&state);
  // splitmix64: fast, and plenty for picking members.
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t RandomBelow(uint64_t n) {
  // Lemire's multiply-shift; the bias for n far below 2^64 is negligible here.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(NextRandom()) * n) >> 64);
}

std::vector<uint32_t> DistinctRandomIndices(uint32_t n, uint32_t count) {
  std::vector<uint32_t> out;
  out.reserve(count);
  if (count > n / 4) {
    // A large share: partial Fisher-Yates over all indices.
    std::vector<uint32_t> all(n);
    for (uint32_t i = 0; i < n; ++i) all[i] = i;
    for (uint32_t i = 0; i < count; ++i) {
      std::swap(all[i], all[i + RandomBelow(n - i)]);
      out.push_back(all[i]);
    }
    return out;
  }
  // A small share of a large collection: draw until enough distinct ones came up.
  std::unordered_set<uint32_t> seen;
  while (out.size() < count) {
    const auto i = static_cast<uint32_t>(RandomBelow(n));
    if (seen.insert(i).second) out.push_back(i);
  }
  return out;
}

}  // namespace lavik
