// Software prefetch hints that the compiler keeps.
//
// GCC treats __builtin_prefetch as free of side effects: a small function that only prefetches can
// be found "const" by its interprocedural analysis, and a call to it that is not inlined first is
// then deleted (seen with g++ 12 -O2: ValueCache::PrefetchSlot compiled to a bare `ret`). The empty
// volatile asm naming the address keeps each hint, at no cost in instructions.
#pragma once

namespace lavik {

// Loads the line holding p into every cache level (a read is coming).
inline void Prefetch(const void* p) {
  __builtin_prefetch(p, 0, 3);
  asm volatile("" : : "r"(p));
}

// Into the outer levels only (L2 and below): for bytes read soon after, in bulk (a value to copy),
// which should not push the lines a lookup needs out of L1.
inline void PrefetchOuter(const void* p) {
  __builtin_prefetch(p, 0, 2);
  asm volatile("" : : "r"(p));
}

// Claims the line holding p for a write that is coming (x86 PREFETCHW: the line arrives owned,
// so the stores to it do not wait for the ownership request; a no-op on CPUs without it).
inline void PrefetchForWrite(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1, 3);
  asm volatile("" : : "r"(p));
#endif
}

}  // namespace lavik
