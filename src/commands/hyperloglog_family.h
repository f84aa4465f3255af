// What the HyperLogLog commands (hyperloglog_family.cc) take from the server's configuration.
//
// hll-sparse-max-bytes: the largest sparse HLL (header included) before PFADD/PFMERGE turn it
// dense. The server sets it at start-up and on every CONFIG SET of the parameter; the
// commands read it on whichever worker they run.
//
// Thread safety: both functions may be called from any thread (a relaxed atomic).
#pragma once

#include <cstdint>

namespace lavik {

void SetHllSparseMaxBytes(uint64_t bytes);
uint64_t HllSparseMaxBytes();

}  // namespace lavik
