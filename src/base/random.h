// Cheap per-thread randomness for picking members (SPOP, SRANDMEMBER, RANDOMKEY-style draws):
// splitmix64 seeded from the clock; not for anything that needs to be unpredictable.
#pragma once

#include <cstdint>
#include <vector>

namespace lavik {

// A uniformly distributed value below n (n > 0); per-thread generator.
uint64_t RandomBelow(uint64_t n);

// `count` distinct indices below n (count <= n), in random order.
std::vector<uint32_t> DistinctRandomIndices(uint32_t n, uint32_t count);

}  // namespace lavik
